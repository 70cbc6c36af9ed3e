"""Views of hypervisors (compute nodes), per microversion."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oslo_serialization import jsonutils

from novalite.api.openstack import api_version_request as avr

if TYPE_CHECKING:
    from novalite import objects
    from novalite.api.openstack import wsgi

# Usage fields shown until 2.87; 2.88 drops them (Placement is where usage lives).
_USAGE_FIELDS = ('current_workload', 'disk_available_least', 'free_disk_gb', 'free_ram_mb',
                 'local_gb', 'local_gb_used', 'memory_mb', 'memory_mb_used', 'running_vms',
                 'vcpus', 'vcpus_used')


def _id(req: wsgi.Request, obj: objects.ComputeNode | objects.Service) -> int | str:
    return obj.uuid if avr.is_supported(req, '2.53') else obj.id


def _cpu_info(req: wsgi.Request, node: objects.ComputeNode) -> Any:
    """A JSON string until 2.27, an object from 2.28."""
    raw = node.cpu_info or '{}'
    if not avr.is_supported(req, '2.28'):
        return raw
    try:
        return jsonutils.loads(raw)
    except ValueError:
        return {}


def hypervisor(req: wsgi.Request, node: objects.ComputeNode, service: objects.Service, is_up: bool,
               detail: bool = False,
               servers: list | None = None, with_servers: bool = False,
               uptime: str | None = None) -> dict:
    """One hypervisor; ``servers`` ([instance]) is shown when asked for, as a list of
    {name, uuid} (from 2.75 even when empty)."""
    body: dict = {
        'id': _id(req, node),
        'hypervisor_hostname': node.hypervisor_hostname,
        'state': 'up' if is_up else 'down',
        'status': 'disabled' if service.disabled else 'enabled',
    }
    if detail:
        if not avr.is_supported(req, '2.88'):
            for name in _USAGE_FIELDS:
                body[name] = getattr(node, name, None)
            body['cpu_info'] = _cpu_info(req, node)
        body['hypervisor_type'] = node.hypervisor_type
        body['hypervisor_version'] = node.hypervisor_version
        body['host_ip'] = str(node.host_ip) if node.host_ip is not None else None
        body['service'] = {'host': service.host, 'id': _id(req, service),
                           'disabled_reason': service.disabled_reason}
        if avr.is_supported(req, '2.88'):
            body['uptime'] = uptime
    if with_servers and (servers or avr.is_supported(req, '2.75')):
        body['servers'] = [{'name': i.name, 'uuid': i.uuid} for i in servers or []]
    return body


def statistics(nodes: list) -> dict:
    """The sums over ``nodes`` that GET /os-hypervisors/statistics shows (until 2.87)."""
    stats = {'count': len(nodes)}
    for name in _USAGE_FIELDS:
        stats[name] = sum(getattr(n, name, None) or 0 for n in nodes)
    return {'hypervisor_statistics': stats}
