"""The host's side of a server's consoles (issue 23): a console token authorized for
the guest's VNC or serial port, and the proxies' check that a port is still the guest's."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from oslo_log import log as logging

from novalite import exception, objects
from novalite.compute import vm_states
from novalite.conf import CONF
from novalite.context import RequestContext
from novalite.virt import driver

if TYPE_CHECKING:
    from novalite.compute.manager import ComputeManager

LOG = logging.getLogger(__name__)

Console = driver.ConsoleVNC | driver.ConsoleSerial


def get_vnc_console(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                    console_type: str) -> dict:
    """A token for the guest's VNC server and the noVNC URL that carries it.

    :returns: {'token', 'access_url', 'host', 'port', 'internal_access_path'}
    :raises ConsoleTypeUnavailable: ``[vnc] enabled`` is off, or the driver has no VNC
    :raises ConsoleTypeInvalid: ``console_type`` is not 'novnc'
    :raises Conflict: (409) the guest is still being built (Nova's InstanceNotReady)
    """
    if not CONF.vnc.enabled:
        raise exception.ConsoleTypeUnavailable(console_type=console_type)
    if console_type != 'novnc':
        raise exception.ConsoleTypeInvalid(console_type=console_type)
    context = context.elevated()
    return _authorize(context, instance, console_type, CONF.vnc.novncproxy_base_url,
                      lambda: mgr.driver.get_vnc_console(context, instance))


def get_serial_console(mgr: ComputeManager, context: RequestContext,
                       instance: objects.Instance, console_type: str) -> dict:
    """A token for the guest's serial port and the websocket URL that carries it.

    :raises ConsoleTypeUnavailable: ``[serial_console] enabled`` is off
    :raises ConsoleTypeInvalid: ``console_type`` is not 'serial'
    :raises ConsoleNotAvailable: the guest has no serial port on TCP
    :raises Conflict: (409) the guest is still being built (Nova's InstanceNotReady)
    """
    if not CONF.serial_console.enabled:
        raise exception.ConsoleTypeUnavailable(console_type=console_type)
    if console_type != 'serial':
        raise exception.ConsoleTypeInvalid(console_type=console_type)
    context = context.elevated()
    return _authorize(context, instance, console_type, CONF.serial_console.base_url,
                      lambda: mgr.driver.get_serial_console(context, instance))


def validate_console_port(mgr: ComputeManager, context: RequestContext,
                          instance: objects.Instance, port: int, console_type: str) -> bool:
    """Whether ``port`` is still the guest's console of ``console_type`` (a proxy asks
    before it connects: the port may have gone to another guest since)."""
    if console_type == 'serial':
        console: Console = mgr.driver.get_serial_console(context, instance)
    else:
        console = mgr.driver.get_vnc_console(context, instance)
    # A proxy may send the port as text (Nova's proxies do).
    return str(console.port) == str(port)


def _authorize(context: RequestContext, instance: objects.Instance, console_type: str,
               access_url_base: str, find: Callable[[], Console]) -> dict:
    try:
        console = find()
    except exception.InstanceNotFound as exc:
        if instance.vm_state != vm_states.BUILDING:
            raise
        raise not_ready(instance.uuid) from exc
    token = objects.ConsoleAuthToken(
        context, console_type=console_type, host=console.host, port=console.port,
        internal_access_path=console.internal_access_path, instance_uuid=instance.uuid,
        access_url_base=access_url_base)
    token.authorize(CONF.consoleauth.token_ttl)
    LOG.debug('Authorized a %s console of %s', console_type, instance.uuid)
    return {'token': token.token, 'access_url': token.access_url, 'host': console.host,
            'port': console.port, 'internal_access_path': console.internal_access_path}


def not_ready(instance_uuid: str) -> exception.Conflict:
    """Nova's InstanceNotReady (409 from the API)."""
    return exception.InstanceNotReady(instance_id=instance_uuid)


def clean_tokens(context: RequestContext, instance_uuid: str) -> None:
    """Delete the server's console tokens (it is deleted, or moves to another host),
    when any console is enabled, as Nova does."""
    if CONF.vnc.enabled or CONF.serial_console.enabled:
        objects.ConsoleAuthToken.clean_console_auths_for_instance(context, instance_uuid)
