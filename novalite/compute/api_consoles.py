"""The API's side of a server's consoles (issue 23): state checks, then a call to the
server's host, which authorizes a console token for the guest's console."""
from __future__ import annotations

from typing import TYPE_CHECKING

from novalite import objects
from novalite.context import RequestContext

if TYPE_CHECKING:
    from novalite.compute.api import API


def get_vnc_console(api: API, context: RequestContext, instance: objects.Instance,
                    console_type: str) -> dict:
    raise NotImplementedError('get_vnc_console')


def get_serial_console(api: API, context: RequestContext, instance: objects.Instance,
                       console_type: str) -> dict:
    raise NotImplementedError('get_serial_console')
