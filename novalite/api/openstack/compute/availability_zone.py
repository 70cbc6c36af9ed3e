"""The os-availability-zone API: the zones of the services, and (admins) their hosts."""
from __future__ import annotations

import datetime
from typing import TYPE_CHECKING

from novalite import availability_zones as azs
from novalite.api import validation
from novalite.api.openstack import wsgi
from novalite.api.openstack.compute import binaries
from novalite.api.openstack.compute.schemas import empty_query, empty_query_v2102
from novalite.policies import availability_zone as az_policies
from novalite.servicegroup import api as servicegroup

if TYPE_CHECKING:
    from novalite import objects


def _time(value: datetime.datetime | None) -> str | None:
    if value is None:
        return None
    if value.tzinfo is not None:
        value = value.astimezone(datetime.UTC).replace(tzinfo=None)
    return value.isoformat(timespec='microseconds')


def _updated(service: objects.Service) -> datetime.datetime | None:
    for name in ('last_seen_up', 'updated_at'):
        if service.obj_attr_is_set(name) and getattr(service, name) is not None:
            return getattr(service, name)
    return None


class AvailabilityZoneController(wsgi.Controller):

    def __init__(self, servicegroup_api: servicegroup.API | None = None) -> None:
        super().__init__()
        self._servicegroup = servicegroup_api or servicegroup.API()

    @validation.query_schema(empty_query, '2.1', '2.101')
    @validation.query_schema(empty_query_v2102, '2.102')
    def index(self, req: wsgi.Request) -> dict:
        """Zones with an enabled service are available; the internal zone is hidden."""
        context = req.context
        context.can(az_policies.BASE % 'list', {})
        available, unavailable = azs.get_availability_zones(context.elevated())
        zones = [{'zoneName': z, 'zoneState': {'available': True}, 'hosts': None}
                 for z in available if z != azs.INTERNAL_ZONE]
        zones += [{'zoneName': z, 'zoneState': {'available': False}, 'hosts': None}
                  for z in unavailable if z != azs.INTERNAL_ZONE]
        return {'availabilityZoneInfo': zones}

    @validation.query_schema(empty_query, '2.1', '2.101')
    @validation.query_schema(empty_query_v2102, '2.102')
    def detail(self, req: wsgi.Request) -> dict:
        """Every available zone (internal too) with its hosts' enabled services."""
        context = req.context
        context.can(az_policies.BASE % 'detail', {})
        admin = context.elevated()
        services = azs.all_services(admin)
        available, unavailable = azs.get_availability_zones(admin, services)
        by_host = azs.zones_by_host(admin)
        hosts: dict[str, dict[str | None, dict]] = {}
        for service in services:
            if service.disabled:
                continue
            zone = azs.service_zone(service, by_host)
            hosts.setdefault(zone, {}).setdefault(service.host, {})[
                binaries.to_api(service.binary)] = {
                'available': self._servicegroup.service_is_up(service),
                'active': not service.disabled,
                'updated_at': _time(_updated(service)),
            }
        zones: list[dict[str, object]] = [{'zoneName': z, 'zoneState': {'available': True},
                  'hosts': hosts.get(z, {})} for z in available]
        zones += [{'zoneName': z, 'zoneState': {'available': False}, 'hosts': None}
                  for z in unavailable]
        return {'availabilityZoneInfo': zones}
