"""Shared pieces of the OpenStack API: the middleware base class and the CORS filter."""
from __future__ import annotations

from typing import Any

import webob.dec
from oslo_config import cfg
from oslo_middleware import cors


class Middleware:
    """A WSGI filter; subclasses override :meth:`process_request` or ``__call__``.

    ``factory`` is what ``paste.filter_factory`` points at in api-paste.ini.
    """

    def __init__(self, application: Any, **local_conf: Any) -> None:
        self.application = application
        self.local_conf = local_conf

    @classmethod
    def factory(cls, global_conf: dict, **local_conf: Any) -> Any:
        def _filter(app: Any) -> Middleware:
            return cls(app, **local_conf)
        return _filter

    def process_request(self, req: webob.Request) -> Any:
        """Return a response to answer at once, or None to pass the request on."""
        return None

    @webob.dec.wsgify
    def __call__(self, req: webob.Request) -> Any:
        response = self.process_request(req)
        if response is not None:
            return response
        return req.get_response(self.application)


def cors_filter_factory(global_conf: dict, **local_conf: Any) -> Any:
    """oslo.middleware's CORS reading ``[cors]`` from the service's own configuration.

    Its own paste factory would either need the origins in api-paste.ini or parse a
    second configuration of its own, which misses ``--config-file`` of the service.
    """
    def _filter(app: Any) -> cors.CORS:
        return cors.CORS(app, cfg.CONF)
    return _filter
