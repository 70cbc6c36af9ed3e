"""Shared pieces of the OpenStack API: the middleware base class and the CORS filter."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from oslo_config import cfg

if TYPE_CHECKING:
    from _typeshed import OptExcInfo
    from _typeshed.wsgi import WSGIApplication


class Middleware:
    """A WSGI filter: subclasses override ``__call__(environ, start_response)``.

    Plain WSGI, not webob's ``wsgify``: a request crosses five of these, and a wsgify
    layer builds a request and a response object of its own around the next one.
    ``factory`` is what ``paste.filter_factory`` points at in api-paste.ini.
    """

    def __init__(self, application: WSGIApplication, **local_conf: str) -> None:
        self.application = application
        self.local_conf = local_conf

    @classmethod
    def factory(cls, global_conf: dict,
                **local_conf: str) -> Callable[[WSGIApplication], Middleware]:
        def _filter(app: WSGIApplication) -> Middleware:
            return cls(app, **local_conf)
        return _filter

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        return self.application(environ, start_response)


def cors_filter_factory(global_conf: dict,
                        **local_conf: str) -> Callable[[WSGIApplication], WSGIApplication]:
    """oslo.middleware's CORS reading ``[cors]`` from the service's own configuration,
    or no layer at all when ``[cors] allowed_origin`` names no origin.

    Its own paste factory would either need the origins in api-paste.ini or parse a
    second configuration of its own, which misses ``--config-file`` of the service.
    Without an allowed origin the filter answers nothing and adds no header, yet would
    still wrap every request and response in webob objects of its own.
    """
    def _filter(app: WSGIApplication) -> WSGIApplication:
        if 'cors' not in cfg.CONF.list_all_sections():
            # No [cors] section, so no origin: and oslo.middleware stays unimported (its
            # package imports every middleware it has: jinja2, bcrypt; 3 MB a process).
            return app
        from oslo_middleware import cors
        layer = cors.CORS(app, cfg.CONF)  # registers the [cors] options
        return layer if cfg.CONF.cors.allowed_origin else app
    return _filter


# Set on requests that came in through /v2 (``wsgi.Request.is_legacy_v2``).
LEGACY_V2_KEY = 'openstack.legacy_v2'
_MICROVERSION_ENVIRON = ('HTTP_OPENSTACK_API_VERSION', 'HTTP_X_OPENSTACK_NOVA_API_VERSION')
_MICROVERSION_HEADERS = ('openstack-api-version', 'x-openstack-nova-api-version')


class LegacyV2CompatibleWrapper(Middleware):
    """The ``/v2`` endpoint: the v2.1 API frozen at 2.1, as Nova's v2.0 compatible mode.

    Clients of the old v2 API know no microversions: the headers that ask for one are
    dropped before the API reads them, and those that announce one (with their names in
    ``Vary``) are dropped from the response. The request is marked so the API can
    relax what v2 did not check (``Request.is_legacy_v2``).
    """

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        environ[LEGACY_V2_KEY] = True
        for key in _MICROVERSION_ENVIRON:
            environ.pop(key, None)

        def filtered_start_response(status: str, headers: list[tuple[str, str]],
                                    exc_info: OptExcInfo | None = None
                                    ) -> Callable[[bytes], object]:
            kept = []
            for name, value in headers:
                lowered = name.lower()
                if lowered in _MICROVERSION_HEADERS:
                    continue
                if lowered == 'vary':
                    value = ','.join(v.strip() for v in value.split(',')
                                     if v.strip().lower() not in _MICROVERSION_HEADERS)
                    if not value:
                        continue
                kept.append((name, value))
            return start_response(status, kept, exc_info)

        return self.application(environ, filtered_start_response)
