"""Availability zones: a compute host's zone is its aggregates' ``availability_zone``.

A host in no zoned aggregate is in ``[DEFAULT] default_availability_zone``; services
other than computes are in the ``internal`` zone. The scheduler's
AvailabilityZoneFilter reads the same aggregates, so the API and placement decisions
agree.
"""
from __future__ import annotations

from novalite import context as nl_context
from novalite import objects
from novalite.conf import CONF
from novalite.context import RequestContext
from novalite.objects.aggregate import AZ_KEY

INTERNAL_ZONE = 'internal'
COMPUTE_BINARY = 'novalite-compute'
# Seconds to wait for one cell's database before leaving it out.
CELL_TIMEOUT = 60


def zones_by_host(context: RequestContext) -> dict[str, str]:
    """{host: zone} for every host in a zoned aggregate (several zones joined by ',')."""
    zones: dict[str, set[str]] = {}
    for aggregate in objects.AggregateList.get_all(context):
        zone = aggregate.metadata.get(AZ_KEY)
        if zone:
            for host in aggregate.hosts:
                zones.setdefault(host, set()).add(zone)
    return {host: ','.join(sorted(names)) for host, names in zones.items()}


def host_zone(context: RequestContext, host: str) -> str:
    zones = sorted({a.availability_zone for a in
                    objects.AggregateList.get_by_host(context, host, key=AZ_KEY)
                    if a.availability_zone is not None})
    return ','.join(zones) or CONF.default_availability_zone


def service_zone(service: objects.Service, by_host: dict[str, str]) -> str:
    if service.binary != COMPUTE_BINARY:
        return INTERNAL_ZONE
    zone = by_host.get(service.host) if service.host is not None else None
    return zone or CONF.default_availability_zone


def all_services(context: RequestContext) -> list[objects.Service]:
    """The services of every cell (cell0 has none); cells that fail are left out."""
    cells = [c for c in objects.CellMappingList.get_all(context) if not c.is_cell0]
    results = nl_context.scatter_gather_cells(context, cells, CELL_TIMEOUT,
                                              objects.ServiceList.get_all)
    services: list[objects.Service] = []
    for result in results.values():
        if result is not nl_context.did_not_respond_sentinel and \
                not isinstance(result, Exception):
            services.extend(result)
    return services


def get_availability_zones(context: RequestContext,
                           services: list[objects.Service] | None = None
                           ) -> tuple[list[str], list[str]]:
    """(zones with an enabled service, zones whose services are all disabled), sorted.

    The internal zone is included; the API leaves it out where Nova does.
    """
    services = all_services(context) if services is None else services
    by_host = zones_by_host(context)
    available = {service_zone(s, by_host) for s in services if not s.disabled}
    unavailable = {service_zone(s, by_host) for s in services if s.disabled} - available
    return sorted(available), sorted(unavailable)
