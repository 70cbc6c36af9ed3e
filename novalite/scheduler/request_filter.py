"""Request filters: narrow the Placement query before any host is looked at."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from oslo_log import log as logging

from novalite.compute.provider_tree import COMPUTE_STATUS_DISABLED
from novalite.scheduler.utils import ResourceRequest

if TYPE_CHECKING:
    from novalite import objects
    from novalite.context import RequestContext

LOG = logging.getLogger(__name__)

__all__ = ['COMPUTE_STATUS_DISABLED', 'ALL_REQUEST_FILTERS', 'compute_status_filter']

RequestFilter = Callable[['RequestContext', 'objects.RequestSpec', ResourceRequest], bool]


def compute_status_filter(context: RequestContext, spec: objects.RequestSpec,
                          request: ResourceRequest) -> bool:
    """Skip providers of disabled compute services.

    The compute host tags its root providers with ``COMPUTE_STATUS_DISABLED`` while its
    service is disabled (the resource tracker, each periodic run and at once on
    ``set_host_enabled``), so Placement drops those providers itself.
    """
    request.forbidden_traits.add(COMPUTE_STATUS_DISABLED)
    return True


ALL_REQUEST_FILTERS: list[RequestFilter] = [compute_status_filter]


def process_reqspec(context: RequestContext, spec: objects.RequestSpec,
                    request: ResourceRequest) -> None:
    """Apply every request filter to ``request`` (in place)."""
    for request_filter in ALL_REQUEST_FILTERS:
        if request_filter(context, spec, request):
            LOG.debug('Request filter %s applied', request_filter.__name__)
