"""The port audit of a compute host: ports Neutron still binds to this host for servers
that no longer need them.

A delete or a failed build releases its ports; with Neutron unreachable at that moment
the release is left undone (the delete itself goes on). This periodic task finishes it:
the ports bound to this host of a server that is deleted, gone, or in ERROR without
ever having run (a failed build) are released as the server's delete would have:
deleted if novalite made them, unbound if the user passed them in (the
``preserve_on_delete`` of the server's last network info).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from oslo_log import log as logging

from novalite.compute import vm_states
from novalite.network import client as neutron_client
from novalite.objects.instance import InstanceList

if TYPE_CHECKING:
    from novalite import objects
    from novalite.compute.manager import ComputeManager
    from novalite.context import RequestContext

LOG = logging.getLogger(__name__)


def _abandoned(instance: objects.Instance | None) -> bool:
    """Whether a server should hold no ports any more."""
    if instance is None or instance.deleted:
        return True
    return instance.vm_state == vm_states.ERROR and instance.launched_at is None


def audit_ports(mgr: ComputeManager, context: RequestContext) -> list[str]:
    """Release the abandoned ports bound to this host; returns their ids."""
    if not neutron_client.configured():
        return []
    admin = neutron_client.Client(None, admin=True)
    ports = [p for p in admin.list_ports(**{'binding:host_id': mgr.host})
             if (p.get('device_owner') or '').startswith('compute:') and p.get('device_id')]
    if not ports:
        return []
    by_server: dict[str, list[str]] = {}
    for port in ports:
        by_server.setdefault(port['device_id'], []).append(port['id'])
    instances = {i.uuid: i for i in
                 InstanceList.get_by_uuids(context, sorted(by_server))}
    released = []
    for uuid, port_ids in sorted(by_server.items()):
        instance = instances.get(uuid)
        if not _abandoned(instance):
            continue
        keep = [v['id'] for v in (instance.info_cache.network_info if instance else [])
                if v.get('preserve_on_delete')]
        try:
            mgr.network_api.deallocate_for_instance(context, _Owner(uuid), preserve=keep)
        except Exception as exc:
            LOG.warning('Port audit: could not release the ports of %s: %s', uuid, exc)
            continue
        LOG.info('Port audit: released ports %s of %s server %s', ', '.join(port_ids),
                 'deleted' if instance is None or instance.deleted else 'failed', uuid)
        released.extend(port_ids)
    return released


class _Owner:
    """The server a port names, by uuid only (it may exist nowhere any more)."""

    def __init__(self, uuid: str) -> None:
        self.uuid = uuid
        self.project_id: str | None = None
        self.availability_zone: str | None = None
        self.host: str | None = None
