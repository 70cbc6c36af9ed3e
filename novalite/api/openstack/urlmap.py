"""A URL map for paste: exact paths for version documents, ``/+`` for path prefixes.

In api-paste.ini, ``/v2.1`` matches only ``/v2.1`` and ``/v2.1/`` (the unauthenticated
version document), ``/v2.1/+`` matches everything below it, and ``/`` is the fallback.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any


class URLMap:
    def __init__(self, exact: dict[str, Any], prefixes: dict[str, Any]) -> None:
        self.exact = exact
        # Longest prefix first, so /v2.1/+ wins over / for /v2.1/servers.
        self.prefixes = sorted(prefixes.items(), key=lambda kv: len(kv[0]), reverse=True)

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        path = environ.get('PATH_INFO', '') or '/'
        key = path.rstrip('/') or '/'
        if key in self.exact:
            return self._forward(self.exact[key], key if key != '/' else '', environ,
                                 start_response)
        for prefix, app in self.prefixes:
            if prefix == '' or path == prefix or path.startswith(prefix + '/'):
                return self._forward(app, prefix, environ, start_response)
        start_response('404 Not Found', [('Content-Type', 'text/plain')])
        return [b'Not Found']

    @staticmethod
    def _forward(app: Any, prefix: str, environ: dict, start_response: Callable
                 ) -> Iterable[bytes]:
        environ = dict(environ)
        environ['SCRIPT_NAME'] = environ.get('SCRIPT_NAME', '') + prefix
        environ['PATH_INFO'] = environ.get('PATH_INFO', '')[len(prefix):]
        return app(environ, start_response)


def urlmap_factory(loader: Any, global_conf: dict, **local_conf: str) -> URLMap:
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
