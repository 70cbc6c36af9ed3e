"""The request body size limit: oversized bodies get a 413 before anything reads them."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, BinaryIO

import webob.exc
from oslo_config import cfg

from novalite.api.openstack import Middleware, faults

# The option Nova's deployers already set: oslo.middleware's, in its group. A process
# that also loads oslo.middleware's own filter (an in-process Placement) registers it
# too, with its own help text; either registration serves both.
_OPT = cfg.IntOpt('max_request_body_size', default=114688,
                  help='Largest request body accepted, in bytes; a larger one is refused '
                       'with HTTP 413 before it is read.')
_GROUP = 'oslo_middleware'


def list_opts() -> dict[str, list[cfg.Opt]]:
    """This filter's option, in oslo.middleware's group (for oslo-config-generator)."""
    return {_GROUP: [_OPT]}


def max_body_size(conf: cfg.ConfigOpts) -> int:
    try:
        conf.register_opt(_OPT, group=_GROUP)
    except cfg.DuplicateOptError:
        pass
    return conf[_GROUP].max_request_body_size


def _message(limit: int) -> str:
    return 'Request is too large: larger than %d bytes.' % limit


def _too_large(limit: int) -> webob.exc.HTTPRequestEntityTooLarge:
    """Raised while the body is read; the API's fault handling answers it."""
    return webob.exc.HTTPRequestEntityTooLarge(explanation=_message(limit))


class _LimitedInput:
    """``wsgi.input`` of a request without Content-Length (chunked): reading past
    ``limit`` bytes raises the 413."""

    def __init__(self, stream: BinaryIO, limit: int) -> None:
        self._stream, self._limit, self._read = stream, limit, 0

    def _count(self, data: bytes) -> bytes:
        self._read += len(data)
        if self._read > self._limit:
            raise _too_large(self._limit)
        return data

    def read(self, size: int | None = None) -> bytes:
        return self._count(self._stream.read() if size is None or size < 0
                           else self._stream.read(size))

    def readline(self, size: int = -1) -> bytes:
        return self._count(self._stream.readline(size))

    def __iter__(self) -> Iterable[bytes]:
        for chunk in self._stream:
            yield self._count(chunk)


class RequestBodySizeLimiter(Middleware):
    """Refuses bodies over ``[oslo_middleware] max_request_body_size`` bytes (413).

    The limit is read once, when the pipeline is built (a restart applies a new one),
    so a request pays one header comparison.
    """

    def __init__(self, application: Any, **local_conf: Any) -> None:
        super().__init__(application, **local_conf)
        self.limit = max_body_size(cfg.CONF)

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        length = environ.get('CONTENT_LENGTH')
        if length:
            try:
                too_large = int(length) > self.limit
            except ValueError:
                too_large = False  # webob reads such a header as absent, as did oslo's
            if too_large:
                return faults.json_fault(413, _message(self.limit))(environ, start_response)
        elif 'wsgi.input' in environ and environ.get('REQUEST_METHOD') not in (
                'GET', 'HEAD', 'DELETE'):
            environ['wsgi.input'] = _LimitedInput(environ['wsgi.input'], self.limit)
        return self.application(environ, start_response)
