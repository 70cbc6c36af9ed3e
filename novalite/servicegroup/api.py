"""The servicegroup API with its one driver: heartbeats stored in the services table."""
from __future__ import annotations

import datetime
from typing import Any

from oslo_log import log as logging
from oslo_utils import timeutils

from novalite.conf import CONF

LOG = logging.getLogger(__name__)


class API:
    """Answers "is this service up?" from the heartbeat columns of its row.

    ``Service.heartbeat()`` stamps ``last_seen_up`` every ``[DEFAULT] report_interval``
    seconds; a service whose last stamp is older than ``[DEFAULT] service_down_time``
    seconds, or that an operator forced down, is down.
    """

    def service_is_up(self, service: Any) -> bool:
        """:param service: an ``objects.Service`` (or anything with its fields).
        :returns: True when the service reported within ``service_down_time``.
        """
        if _field(service, 'forced_down'):
            return False
        last_heartbeat = (_field(service, 'last_seen_up') or _field(service, 'updated_at')
                          or _field(service, 'created_at'))
        if last_heartbeat is None:
            return False
        elapsed = (timeutils.utcnow(with_timezone=True) - _aware(last_heartbeat)).total_seconds()
        is_up = abs(elapsed) <= CONF.service_down_time
        if not is_up:
            LOG.debug('Service %s on %s is down: last heartbeat %.0f s ago',
                      _field(service, 'binary'), _field(service, 'host'), elapsed)
        return is_up


def _field(service: Any, name: str) -> Any:
    # An object field that was never loaded raises instead of returning None.
    is_set = getattr(service, 'obj_attr_is_set', None)
    if is_set is not None and not is_set(name):
        return None
    return getattr(service, name, None)


def _aware(value: datetime.datetime) -> datetime.datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=datetime.UTC)
