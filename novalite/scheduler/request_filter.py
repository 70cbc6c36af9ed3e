"""Request filters: narrow the Placement query before any host is looked at."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from oslo_log import log as logging

from novalite.scheduler.utils import ResourceRequest

LOG = logging.getLogger(__name__)

# The os-traits name; spelled out so the scheduler does not need that library.
COMPUTE_STATUS_DISABLED = 'COMPUTE_STATUS_DISABLED'

RequestFilter = Callable[[Any, Any, ResourceRequest], bool]


def compute_status_filter(context: Any, spec: Any, request: ResourceRequest) -> bool:
    """Skip providers of disabled compute services.

    The compute service tags its root provider with ``COMPUTE_STATUS_DISABLED`` while
    it is disabled, so Placement drops those providers itself.
    """
    request.forbidden_traits.add(COMPUTE_STATUS_DISABLED)
    return True


ALL_REQUEST_FILTERS: list[RequestFilter] = [compute_status_filter]


def process_reqspec(context: Any, spec: Any, request: ResourceRequest) -> None:
    """Apply every request filter to ``request`` (in place)."""
    for request_filter in ALL_REQUEST_FILTERS:
        if request_filter(context, spec, request):
            LOG.debug('Request filter %s applied', request_filter.__name__)
