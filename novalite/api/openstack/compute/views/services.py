"""Views of services (os-services), per microversion."""
from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any

from novalite import availability_zones
from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack.compute import binaries

if TYPE_CHECKING:
    from novalite import objects
    from novalite.api.openstack import wsgi
    from novalite.servicegroup import api as servicegroup


def _time(value: datetime.datetime | None) -> str | None:
    if value is None:
        return None
    if value.tzinfo is not None:
        value = value.astimezone(datetime.UTC).replace(tzinfo=None)
    return value.isoformat(timespec='microseconds')


def _field(service: objects.Service, name: str) -> Any:
    return getattr(service, name) if service.obj_attr_is_set(name) else None


class ViewBuilder:
    """``id`` is the service's uuid from 2.53 (its database id before), ``forced_down``
    appears from 2.11; ``zone`` is ``internal`` except for compute services; ``binary``
    is Nova's name of the daemon."""

    def __init__(self, servicegroup_api: servicegroup.API) -> None:
        self._servicegroup = servicegroup_api

    def basic(self, req: wsgi.Request, service: objects.Service,
              by_host: dict[str, str] | None = None) -> dict:
        if by_host is None:
            by_host = availability_zones.zones_by_host(req.context)
        zone = availability_zones.service_zone(service, by_host)
        updated = _field(service, 'last_seen_up') or _field(service, 'updated_at')
        body = {
            'id': service.uuid if avr.is_supported(req, '2.53') else service.id,
            'binary': binaries.to_api(service.binary),
            'host': service.host,
            'zone': zone,
            'status': 'disabled' if service.disabled else 'enabled',
            'state': 'up' if self._servicegroup.service_is_up(service) else 'down',
            'updated_at': _time(updated),
            'disabled_reason': service.disabled_reason,
        }
        if avr.is_supported(req, '2.11'):
            body['forced_down'] = service.forced_down
        return body

    def index(self, req: wsgi.Request, services: list) -> dict:
        # One aggregate read for the whole listing, not one per service.
        by_host = availability_zones.zones_by_host(req.context)
        return {'services': [self.basic(req, s, by_host) for s in services]}

    def show(self, req: wsgi.Request, service: objects.Service) -> dict:
        return {'service': self.basic(req, service)}
