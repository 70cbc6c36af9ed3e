"""The os-hosts API's work: the hosts of every cell, a host's usage, and what its
compute service is asked over RPC (enable, maintenance, power).

Nova's ``HostAPI``: a host is found through its host mapping (the cell it is in) and its
compute service there; the answer is the compute driver's.
"""
from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Protocol

import oslo_messaging as messaging

from novalite import availability_zones, exception, objects
from novalite import context as nl_context
from novalite.availability_zones import COMPUTE_BINARY
from novalite.compute import rpcapi as compute_rpcapi
from novalite.objects.compute_node import ComputeNode
from novalite.objects.instance import Instance
from novalite.objects.service import Service

# One of HostAPI's questions to a host: (context, host, value) -> the host's answer.
HostCall = Callable[[nl_context.RequestContext, str, bool | str], str]


class ServiceGroup(Protocol):
    def service_is_up(self, service: Service) -> bool: ...


class HostAPI:
    """What os-hosts asks of hosts; collaborators through the constructor for tests."""

    def __init__(self, servicegroup_api: ServiceGroup,
                 rpcapi: compute_rpcapi.ComputeAPI | None = None) -> None:
        self._servicegroup = servicegroup_api
        self._rpcapi = rpcapi

    @property
    def rpcapi(self) -> compute_rpcapi.ComputeAPI:
        if self._rpcapi is None:
            self._rpcapi = compute_rpcapi.ComputeAPI()
        return self._rpcapi

    # -- reading -----------------------------------------------------------------------

    @staticmethod
    def list_hosts(context: nl_context.RequestContext, zone: str | None) -> list[dict]:
        """One row per enabled service of every cell (``zone``: only that zone's)."""
        by_host = availability_zones.zones_by_host(context)
        hosts = []
        for service in availability_zones.all_services(context):
            if service.disabled:
                continue
            service_zone = availability_zones.service_zone(service, by_host)
            if zone and service_zone != zone:
                continue
            hosts.append({'host_name': service.host, 'service': service.topic,
                          'zone': service_zone})
        return hosts

    @staticmethod
    def host_resources(context: nl_context.RequestContext, host: str) -> list[dict]:
        """Nova's resource table of ``host``: its first node's totals and use, the sum
        of its instances' flavors, then those sums per project.

        :raises HostMappingNotFound: the host is in no cell
        :raises ComputeHostNotFound: the host has no compute node
        """
        mapping = objects.HostMapping.get_by_host(context, host)
        with nl_context.target_cell(context, mapping.cell_mapping) as cctxt:
            nodes = sorted(objects.ComputeNodeList.get_all_by_host(cctxt, host),
                           key=lambda n: n.id)
            if not nodes:
                raise exception.ComputeHostNotFound(host=host)
            instances = list(objects.InstanceList.get_by_host(cctxt, host))
        return resource_table(host, nodes[0], instances)

    # -- asking the compute host -------------------------------------------------------

    @contextlib.contextmanager
    def _compute(self, context: nl_context.RequestContext, host: str
                 ) -> Iterator[nl_context.RequestContext]:
        """The context aimed at ``host``'s cell, once its compute service is known up.

        :raises HostMappingNotFound: the host is in no cell
        :raises ComputeHostNotFound: the host has no compute service
        :raises ComputeServiceUnavailable: its compute service is down, or did not answer
        """
        mapping = objects.HostMapping.get_by_host(context, host)
        with nl_context.target_cell(context, mapping.cell_mapping) as cctxt:
            service = objects.Service.get_by_host_and_binary(cctxt, host, COMPUTE_BINARY)
            if service is None:
                raise exception.ComputeHostNotFound(host=host)
            # A call to a dead host would wait out the RPC timeout and end in a 500.
            if not self._servicegroup.service_is_up(service):
                raise exception.ComputeServiceUnavailable(host=host)
            try:
                yield cctxt
            except messaging.MessagingTimeout as exc:
                raise exception.ComputeServiceUnavailable(host=host) from exc

    def set_host_enabled(self, context: nl_context.RequestContext, host: str,
                         enabled: bool) -> str:
        """:returns: ``enabled`` or ``disabled``, as the host's driver says"""
        with self._compute(context, host) as cctxt:
            return self.rpcapi.set_host_enabled(cctxt, host, enabled)

    def set_host_maintenance(self, context: nl_context.RequestContext, host: str,
                             mode: bool) -> str:
        """:returns: ``on_maintenance`` or ``off_maintenance``
        :raises NotImplementedError: the host's driver has no maintenance mode"""
        with self._compute(context, host) as cctxt:
            return self.rpcapi.host_maintenance_mode(cctxt, host_param=host, mode=mode,
                                                     host=host)

    def host_power_action(self, context: nl_context.RequestContext, host: str,
                          action: str) -> str:
        """:returns: the driver's answer (the fake driver's is the action)
        :raises NotImplementedError: the host's driver cannot power the host"""
        with self._compute(context, host) as cctxt:
            return self.rpcapi.host_power_action(cctxt, host, action)


def _row(host: str, project: str | None, cpu: int, memory_mb: int, disk_gb: int) -> dict:
    return {'resource': {'host': host, 'project': project, 'cpu': cpu,
                         'memory_mb': memory_mb, 'disk_gb': disk_gb}}


def resource_table(host: str, node: ComputeNode, instances: list[Instance]) -> list[dict]:
    """``(total)``, ``(used_now)`` and ``(used_max)`` rows, then one row per project."""
    rows = [_row(host, '(total)', node.vcpus, node.memory_mb, node.local_gb),
            _row(host, '(used_now)', node.vcpus_used, node.memory_mb_used,
                 node.local_gb_used)]
    by_project: dict[str | None, list[int]] = {}
    used = [0, 0, 0]
    for instance in instances:
        usage = (instance.vcpus or 0, instance.memory_mb or 0,
                 (instance.root_gb or 0) + (instance.ephemeral_gb or 0))
        sums = by_project.setdefault(instance.project_id, [0, 0, 0])
        for i, value in enumerate(usage):
            sums[i] += value
            used[i] += value
    rows.append(_row(host, '(used_max)', *used))
    rows += [_row(host, project, *sums) for project, sums in by_project.items()]
    return rows
