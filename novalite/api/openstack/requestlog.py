"""Middleware that names each API request (request id) and logs how it went."""
from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import webob
from oslo_log import log as logging

from novalite.api.openstack import Middleware

if TYPE_CHECKING:
    from _typeshed import OptExcInfo

LOG = logging.getLogger(__name__)

# The environ keys and headers oslo.middleware's RequestId uses, which oslo.context,
# keystonemiddleware and the other services read: novalite's filter is the same
# contract in plain WSGI.
ENV_REQUEST_ID = 'openstack.request_id'
ENV_GLOBAL_REQUEST_ID = 'openstack.global_request_id'
_INBOUND = 'HTTP_X_OPENSTACK_REQUEST_ID'
_GLOBAL_ID = re.compile(r'^req-[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}$')
_RESPONSE_HEADERS = ('x-openstack-request-id', 'x-compute-request-id')


class ComputeRequestId(Middleware):
    """Names each request ``req-<uuid>`` (``environ['openstack.request_id']``) and
    returns the name as ``X-Openstack-Request-Id`` and, as Nova does,
    ``X-Compute-Request-Id``. A caller's well-formed ``X-Openstack-Request-Id`` is kept
    as the global request id, which ties one user action across services together."""

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        inbound = environ.get(_INBOUND)
        if inbound and _GLOBAL_ID.match(inbound):
            environ[ENV_GLOBAL_REQUEST_ID] = inbound
        request_id = 'req-%s' % uuid.uuid4()
        environ[ENV_REQUEST_ID] = request_id

        def start_named(status: str, headers: list,
                        exc_info: OptExcInfo | None = None) -> Callable[[bytes], object]:
            present = {name.lower() for name, _value in headers}
            headers.extend((name, request_id) for name in _RESPONSE_HEADERS
                           if name not in present)
            return start_response(status, headers, exc_info)
        return self.application(environ, start_named)


class RequestLog(Middleware):
    """One INFO line per request: who, what, status, size, microversion and time."""

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        start = time.monotonic()
        seen: dict[str, Any] = {}

        def start_logged(status: str, headers: list,
                         exc_info: OptExcInfo | None = None) -> Callable[[bytes], object]:
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
