"""The servicegroup API with its one driver: heartbeats stored in the services table."""
from __future__ import annotations

import datetime
from typing import Protocol

from oslo_log import log as logging
from oslo_utils import timeutils

from novalite.conf import CONF

LOG = logging.getLogger(__name__)


class ServiceRecord(Protocol):
    """What liveness reads of a service: an ``objects.Service``, or a row of the
    services table (the scheduler reads plain rows)."""

    @property
    def host(self) -> str | None: ...
    @property
    def binary(self) -> str | None: ...
    @property
    def forced_down(self) -> bool: ...
    @property
    def last_seen_up(self) -> datetime.datetime | None: ...
    @property
    def updated_at(self) -> datetime.datetime | None: ...
    @property
    def created_at(self) -> datetime.datetime | None: ...


class API:
    """Answers "is this service up?" from the heartbeat columns of its row.

    ``Service.heartbeat()`` stamps ``last_seen_up`` every ``[DEFAULT] report_interval``
    seconds; a service whose last stamp is older than ``[DEFAULT] service_down_time``
    seconds, or that an operator forced down, is down.
    """

    def service_is_up(self, service: ServiceRecord) -> bool:
        """:param service: the service's record; fields never loaded count as unset.
        :returns: True when the service reported within ``service_down_time``.
        """
        if _loaded(service, 'forced_down') and service.forced_down:
            return False
        last_heartbeat = _last_heartbeat(service)
        if last_heartbeat is None:
            return False
        elapsed = (timeutils.utcnow(with_timezone=True) - _aware(last_heartbeat)).total_seconds()
        is_up = abs(elapsed) <= CONF.service_down_time
        if not is_up:
            LOG.debug('Service %s on %s is down: last heartbeat %.0f s ago',
                      service.binary if _loaded(service, 'binary') else None,
                      service.host if _loaded(service, 'host') else None, elapsed)
        return is_up


def _loaded(service: ServiceRecord, name: str) -> bool:
    # An object field that was never loaded raises instead of returning None.
    is_set = getattr(service, 'obj_attr_is_set', None)
    return is_set is None or bool(is_set(name))


def _last_heartbeat(service: ServiceRecord) -> datetime.datetime | None:
    """The record's heartbeat; without one its last update, else its creation."""
    stamps = (service.last_seen_up if _loaded(service, 'last_seen_up') else None,
              service.updated_at if _loaded(service, 'updated_at') else None,
              service.created_at if _loaded(service, 'created_at') else None)
    return next((stamp for stamp in stamps if stamp), None)


def _aware(value: datetime.datetime) -> datetime.datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=datetime.UTC)
