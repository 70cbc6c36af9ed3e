"""A URL map for paste: exact paths for version documents, ``/+`` for path prefixes.

In api-paste.ini, ``/v2.1`` matches only ``/v2.1`` and ``/v2.1/`` (the unauthenticated
version document), ``/v2.1/+`` matches everything below it, and ``/`` is the fallback.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any
from urllib import parse

from novalite.api.openstack import faults

if TYPE_CHECKING:
    from _typeshed.wsgi import WSGIApplication
    from paste.deploy.loadwsgi import ConfigLoader


class URLMap:
    def __init__(self, exact: dict[str, Any], prefixes: dict[str, Any]) -> None:
        self.exact = exact
        # Longest prefix first, so /v2.1/+ wins over / for /v2.1/servers.
        self.prefixes = sorted(prefixes.items(), key=lambda kv: len(kv[0]), reverse=True)

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        refused = _refused_url(environ)
        if refused:
            # Checked once here, before any layer (routes, webob, the request log, the
            # version documents) decodes the URL and fails with a UnicodeDecodeError.
            return faults.json_fault(400, refused)(environ, start_response)
        path = environ.get('PATH_INFO', '') or '/'
        key = path.rstrip('/') or '/'
        if key in self.exact:
            return self._forward(self.exact[key], key if key != '/' else '', environ,
                                 start_response)
        for prefix, app in self.prefixes:
            if prefix == '' or path == prefix or path.startswith(prefix + '/'):
                return self._forward(app, prefix, environ, start_response)
        return faults.json_fault(404, 'The resource could not be found.')(
            environ, start_response)

    @staticmethod
    def _forward(app: WSGIApplication, prefix: str, environ: dict, start_response: Callable
                 ) -> Iterable[bytes]:
        environ = dict(environ)
        environ['SCRIPT_NAME'] = environ.get('SCRIPT_NAME', '') + prefix
        environ['PATH_INFO'] = environ.get('PATH_INFO', '')[len(prefix):]
        return app(environ, start_response)


def _refused_url(environ: dict) -> str | None:
    """Why the request's URL is not text the API can take, or None when it is.

    WSGI servers hand the path over percent-decoded and the query string raw, both as
    latin-1 strings of the bytes received; the API reads both as UTF-8. Nova answers 400
    for a query string that is not UTF-8 (webob's decoding error), and so does novalite,
    for the path too. A NUL (``%00``) is refused as well: PostgreSQL cannot compare a
    column with a string that holds one.
    """
    try:
        path = environ.get('PATH_INFO', '').encode('latin-1')
        path.decode('utf-8')
    except UnicodeError:
        return 'The URL path is not UTF-8 encoded'
    try:
        query = parse.unquote_to_bytes(environ.get('QUERY_STRING', '').encode('latin-1'))
        query.decode('utf-8')
    except UnicodeError:
        return 'Query string is not UTF-8 encoded'
    if b'\x00' in path or b'\x00' in query:
        return 'The URL holds a NUL character (%00)'
    return None


def urlmap_factory(loader: ConfigLoader, global_conf: dict, **local_conf: str) -> URLMap:
    exact: dict[str, Any] = {}
    prefixes: dict[str, Any] = {}
    for path, app_name in local_conf.items():
        app = loader.get_app(app_name, global_conf=global_conf)
        if path.endswith('/+'):
            prefixes[path[:-2].rstrip('/')] = app
        elif path == '/':
            exact['/'] = app
            prefixes[''] = app
        else:
            exact[path.rstrip('/')] = app
    return URLMap(exact, prefixes)
