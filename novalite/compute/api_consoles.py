"""The API's side of a server's consoles (issue 23): state checks, then a call to the
server's host, which authorizes a console token for the guest's console."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from novalite import exception, objects
from novalite.compute import consoles, power_state, task_states, vm_states
from novalite.context import RequestContext

if TYPE_CHECKING:
    from novalite.compute.api import API

# Nova's: no console while the server is deleted or live-migrated.
_REJECTED_TASK_STATES = (task_states.DELETING, task_states.MIGRATING)
# A console needs a running guest (issue 23: 409 otherwise): a paused one still shows
# its screen; a stopped, suspended, shelved or deleted one has none.
_RUNNING_VM_STATES = (vm_states.ACTIVE, vm_states.PAUSED, vm_states.RESCUED,
                      vm_states.RESIZED, vm_states.ERROR)
_RUNNING_POWER_STATES = (power_state.RUNNING, power_state.PAUSED)


def check_console_state(instance: objects.Instance, method: str) -> None:
    """Nova's ``check_instance_host`` and ``reject_instance_state``, and a running guest.

    :raises Conflict: (409) the server has no host yet (Nova's InstanceNotReady)
    :raises InstanceInvalidState: (409) deleting, migrating or not running
    """
    if not instance.host or instance.vm_state == vm_states.BUILDING:
        raise consoles.not_ready(instance.uuid)
    if instance.task_state in _REJECTED_TASK_STATES:
        raise exception.InstanceInvalidState(attr='task_state', instance_uuid=instance.uuid,
                                             state=instance.task_state, method=method)
    if instance.vm_state not in _RUNNING_VM_STATES:
        raise exception.InstanceInvalidState(attr='vm_state', instance_uuid=instance.uuid,
                                             state=instance.vm_state, method=method)
    if instance.power_state not in _RUNNING_POWER_STATES:
        raise exception.InstanceInvalidState(
            attr='power_state', instance_uuid=instance.uuid, method=method,
            state=power_state.STATE_MAP.get(instance.power_state or power_state.NOSTATE))


def _connect(api: API, context: RequestContext, instance: objects.Instance, method: str,
             call: Callable[[RequestContext], dict]) -> dict:
    check_console_state(instance, method)
    with api.host_context(context, instance) as cctxt:
        connect_info = call(cctxt)
    return {'url': connect_info['access_url']}


def get_vnc_console(api: API, context: RequestContext, instance: objects.Instance,
                    console_type: str) -> dict:
    """{'url': the noVNC URL with a new token}.

    :raises ConsoleTypeInvalid, ConsoleTypeUnavailable: (400)
    :raises InstanceInvalidState, Conflict: (409) see ``check_console_state``
    :raises ServiceUnavailable: the server's host is down
    """
    return _connect(api, context, instance, 'get_vnc_console',
                    lambda cctxt: api.compute_rpcapi.get_vnc_console(cctxt, instance,
                                                                     console_type))


def get_serial_console(api: API, context: RequestContext, instance: objects.Instance,
                       console_type: str) -> dict:
    """{'url': the serial proxy's websocket URL with a new token}; raises as
    ``get_vnc_console``, and ConsoleNotAvailable (409) for a guest without one."""
    return _connect(api, context, instance, 'get_serial_console',
                    lambda cctxt: api.compute_rpcapi.get_serial_console(cctxt, instance,
                                                                        console_type))


def get_unavailable_console(api: API, context: RequestContext, instance: objects.Instance,
                            console_type: str) -> dict:
    """SPICE and MKS consoles: novalite has none, as a Nova whose ``[spice]`` and
    ``[mks] enabled`` are off (their defaults), after the same state checks.

    :raises ConsoleTypeUnavailable: (400) always, once the state checks passed
    """
    check_console_state(instance, 'get_%s_console' % console_type.split('-')[0])
    raise exception.ConsoleTypeUnavailable(console_type=console_type)
