"""The host's side of a server's consoles (issue 23): a console token authorized for
the guest's VNC or serial port, and the proxies' check that a port is still the guest's."""
from __future__ import annotations

from typing import TYPE_CHECKING

from novalite import objects
from novalite.context import RequestContext

if TYPE_CHECKING:
    from novalite.compute.manager import ComputeManager


def get_vnc_console(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
                    console_type: str) -> dict:
    raise NotImplementedError('get_vnc_console')


def get_serial_console(mgr: ComputeManager, context: RequestContext,
                       instance: objects.Instance, console_type: str) -> dict:
    raise NotImplementedError('get_serial_console')


def validate_console_port(mgr: ComputeManager, context: RequestContext,
                          instance: objects.Instance, port: int, console_type: str) -> bool:
    raise NotImplementedError('validate_console_port')
