"""The request body size limit: oslo.middleware's, refusing in the Compute API's format.

``[oslo_middleware] max_request_body_size`` is oslo.middleware's option, which Nova's
deployers already set. novalite's own HTTP server (waitress) refuses a longer declared
body before reading it, with the same limit; this filter keeps the limit under any other
WSGI server, and for bodies sent without a Content-Length (chunked), which it stops as
they grow past it.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import webob
import webob.exc
from oslo_config import cfg
from oslo_middleware import opts as oslo_opts
from oslo_middleware import sizelimit

from novalite.api.openstack import faults

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIEnvironment


def list_opts() -> dict[str, list[cfg.Opt]]:
    """oslo.middleware's option, in its group (for oslo-config-generator)."""
    return {group: list(group_opts) for group, group_opts in oslo_opts.list_opts_sizelimit()}


def max_body_size(conf: cfg.ConfigOpts) -> int:
    """``[oslo_middleware] max_request_body_size`` of ``conf``, registered if need be."""
    conf.register_opts(sizelimit.OPTS, group='oslo_middleware')
    return int(conf.oslo_middleware.max_request_body_size)


def too_large(limit: int) -> str:
    """The message of the 413 fault."""
    return 'Request is too large: larger than %d bytes.' % limit


class RequestBodySizeLimiter(sizelimit.RequestBodySizeLimiter):
    """oslo.middleware's limiter, whose 413 is a Nova fault (``overLimit``).

    oslo's filter answers its refusal with webob's own error page; here its logic runs
    as a direct call (``wsgify`` then lets the refusal propagate) and the refusal, or the
    one its reader raises when a body without a length grows too long while the
    application below reads it, is answered as the API answers every error.
    """

    @property
    def limit(self) -> int:
        return int(self._conf_get('max_request_body_size'))

    def __call__(self, environ: WSGIEnvironment,
                 start_response: StartResponse) -> Iterable[bytes]:
        try:
            response = super().__call__(webob.Request(environ))
        except webob.exc.HTTPRequestEntityTooLarge:
            response = faults.json_fault(413, too_large(self.limit))
        return response(environ, start_response)
