"""Reading a guest's diagnostics on this host (the compute side of
GET /servers/{id}/diagnostics)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from oslo_log import log as logging

from novalite import exception
from novalite.compute import power_state, power_sync

if TYPE_CHECKING:
    from novalite import objects
    from novalite.compute.manager import ComputeManager
    from novalite.context import RequestContext

LOG = logging.getLogger(__name__)


def _check_running(mgr: ComputeManager, instance: objects.Instance) -> None:
    """Only a running guest has figures to report (Nova's rule).

    :raises InstanceInvalidState: the guest is not running (the API answers 409)
    """
    state = power_sync.query_power_state(mgr, instance)
    if state != power_state.RUNNING:
        raise exception.InstanceInvalidState(
            attr='power_state', instance_uuid=instance.uuid, method='get_diagnostics',
            state=power_state.STATE_MAP.get(state, state))


def get_instance_diagnostics(mgr: ComputeManager, context: RequestContext,
                             instance: objects.Instance) -> dict:
    """The standard-format diagnostics (2.48)."""
    _check_running(mgr, instance)
    LOG.info('Retrieving diagnostics of %s', instance.uuid)
    return mgr.driver.get_instance_diagnostics(instance)


def get_diagnostics(mgr: ComputeManager, context: RequestContext,
                    instance: objects.Instance) -> dict:
    """The driver's free-form diagnostics (before 2.48)."""
    _check_running(mgr, instance)
    LOG.info('Retrieving diagnostics of %s', instance.uuid)
    return mgr.driver.get_diagnostics(instance)
