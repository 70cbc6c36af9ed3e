"""The route table of the Compute API v2.1: every path, method and controller action.

Each path is served with and without a leading ``/{project_id}``. The plain routes are
connected first so that ``/servers/detail`` can never be read as project ``servers``.
A path that exists but not for the method gets 405 with an ``Allow`` header.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import routes
import routes.middleware
import webob.dec

from novalite import objects
from novalite.api.openstack import faults, wsgi
from novalite.api.openstack.compute import flavors, servers, services

# (path, {HTTP method: (controller name, action)}), in the order they are matched.
ROUTE_LIST: tuple[tuple[str, dict[str, tuple[str, str]]], ...] = (
    ('/flavors', {'GET': ('flavors', 'index'), 'POST': ('flavors', 'create')}),
    ('/flavors/detail', {'GET': ('flavors', 'detail')}),
    ('/flavors/{id}', {'GET': ('flavors', 'show'), 'DELETE': ('flavors', 'delete')}),
    ('/os-services', {'GET': ('services', 'index')}),
    ('/os-services/{id}', {'PUT': ('services', 'update')}),
    ('/servers', {'GET': ('servers', 'index'), 'POST': ('servers', 'create')}),
    ('/servers/detail', {'GET': ('servers', 'detail')}),
    ('/servers/{id}', {'GET': ('servers', 'show'), 'DELETE': ('servers', 'delete')}),
)


def _method_not_allowed(allowed: list[str]) -> Callable:
    @webob.dec.wsgify
    def app(req: webob.Request) -> webob.Response:
        return faults.json_fault(405, 'The method %s is not allowed for this resource.'
                                 % req.method, {'Allow': ', '.join(allowed)})
    return app


class APIRouterV21:
    """Routes a request to the Resource of its controller (``paste.app_factory``).

    :param controllers: override controllers by name (tests give servers a compute API
        double this way); the others are built with their defaults.
    """

    def __init__(self, controllers: dict[str, Any] | None = None) -> None:
        objects.register_all()
        built = {'flavors': flavors.FlavorsController(),
                 'servers': servers.ServersController(),
                 'services': services.ServiceController()}
        built.update(controllers or {})
        resources = {name: wsgi.Resource(ctrl) for name, ctrl in built.items()}
        self.map = routes.Mapper()
        for prefix in ('', '/{project_id}'):
            for path, methods in ROUTE_LIST:
                for method, (name, action) in methods.items():
                    self.map.connect(prefix + path, controller=resources[name],
                                     action=action, conditions={'method': [method]})
                self.map.connect(prefix + path,
                                 controller=_method_not_allowed(sorted(methods)))
        self._router = routes.middleware.RoutesMiddleware(self._dispatch, self.map,
                                                          use_method_override=False)

    @classmethod
    def factory(cls, global_conf: dict, **local_conf: Any) -> APIRouterV21:
        return cls()

    def __call__(self, environ: dict, start_response: Callable) -> Any:
        # /servers/ is /servers: clients differ in whether they add the slash.
        path = environ.get('PATH_INFO', '')
        if len(path) > 1 and path.endswith('/'):
            environ['PATH_INFO'] = path.rstrip('/')
        return self._router(environ, start_response)

    @staticmethod
    @webob.dec.wsgify
    def _dispatch(req: webob.Request) -> Any:
        match = req.environ['wsgiorg.routing_args'][1]
        if not match:
            return faults.json_fault(404, 'The resource could not be found.')
        return match['controller']


