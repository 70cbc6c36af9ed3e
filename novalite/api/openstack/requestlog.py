"""Middleware that names each API request (request id) and logs how it went."""
from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

import webob
from oslo_log import log as logging
from oslo_middleware import request_id

from novalite.api.openstack import Middleware

LOG = logging.getLogger(__name__)


class ComputeRequestId(request_id.RequestId):
    """oslo.middleware's request id, also returned as ``X-Compute-Request-Id`` as in Nova."""

    compat_headers = ['x-compute-request-id']


class RequestLog(Middleware):
    """One INFO line per request: who, what, status, size, microversion and time."""

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        start = time.monotonic()
        seen: dict[str, Any] = {}

        def start_logged(status: str, headers: list, exc_info: Any = None) -> Any:
            seen['status'], seen['headers'] = status, headers
            return start_response(status, headers, exc_info)
        app_iter = self.application(environ, start_logged)
        if 'status' not in seen:
            # An application that starts its response only when iterated.
            body = list(app_iter)
            if hasattr(app_iter, 'close'):
                app_iter.close()
            app_iter = body
        headers = {k.lower(): v for k, v in seen.get('headers') or ()}
        LOG.info('%(remote)s "%(method)s %(uri)s" status: %(status)s len: %(len)s '
                 'microversion: %(microversion)s time: %(time).7f',
                 {'remote': environ.get('REMOTE_ADDR') or '-',
                  'method': environ.get('REQUEST_METHOD'),
                  'uri': webob.Request(environ).path_qs,
                  'status': int(str(seen.get('status', '500')).split(' ', 1)[0]),
                  'len': int(headers.get('content-length') or 0),
                  'microversion': headers.get('x-openstack-nova-api-version', '-'),
                  'time': time.monotonic() - start})
        return app_iter
