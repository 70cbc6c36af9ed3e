"""/os-volumes_boot: Nova's old second name of /servers, served until 2.102 (404 after).

Only the servers controller's own methods and actions answer under this name, as in
Nova; the actions of the other server modules (pause, lock, ...) are unknown here.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import webob.exc

from novalite.api.openstack import wsgi
from novalite.api.openstack.compute import server_actions, servers

if TYPE_CHECKING:
    from novalite.compute.api import API as ComputeAPI

LAST_VERSION = '2.102'
# The actions Nova's servers controller defines itself.
SERVERS_ACTIONS = ('reboot', 'resize', 'confirmResize', 'revertResize', 'rebuild',
                   'createImage')


def until_removed(func: Callable) -> Callable:
    """``func`` for requests up to 2.102; a plain 404 from 2.103, as Nova answers."""
    @functools.wraps(func)
    def wrapper(self: object, req: wsgi.Request, *args: object, **kwargs: object) -> Any:
        if not req.api_version_request.matches(None, LAST_VERSION):
            raise webob.exc.HTTPNotFound()
        return func(self, req, *args, **kwargs)
    return wrapper


class VolumesBootController(servers.ServersController):
    index = until_removed(servers.ServersController.index)
    detail = until_removed(servers.ServersController.detail)
    show = until_removed(servers.ServersController.show)
    create = until_removed(servers.ServersController.create)
    update = until_removed(servers.ServersController.update)
    delete = until_removed(servers.ServersController.delete)


class VolumesBootActionsController(server_actions.ServerActionsController):
    def __init__(self, compute_api: ComputeAPI | None = None) -> None:
        super().__init__(compute_api)
        self._actions = {key: value for key, value in self._actions.items()
                         if key in SERVERS_ACTIONS}

    action = until_removed(server_actions.ServerActionsController.action)
