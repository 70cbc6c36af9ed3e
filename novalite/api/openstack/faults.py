"""Error responses in Nova's body format, and the middleware that turns crashes into them."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import webob
import webob.exc
import webob.request
from oslo_log import log as logging
from oslo_serialization import jsonutils

from novalite import exception
from novalite.api.openstack import Middleware
from novalite.db import errors as db_errors

if TYPE_CHECKING:
    from _typeshed import OptExcInfo

LOG = logging.getLogger(__name__)

# The key of the fault body, by HTTP status, as clients of Nova expect it; any other
# status (406 among them, as in Nova) is a 'computeFault'.
FAULT_NAMES = {
    400: 'badRequest',
    401: 'unauthorized',
    403: 'forbidden',
    404: 'itemNotFound',
    405: 'badMethod',
    409: 'conflictingRequest',
    413: 'overLimit',
    415: 'badMediaType',
    429: 'overLimit',
    501: 'notImplemented',
    503: 'serviceUnavailable',
}

# Seconds a client is asked to wait when the database is unavailable: about the time a
# restarting MariaDB takes, or for a burst to release its connections.
DB_RETRY_AFTER = 5
DB_UNAVAILABLE = ('The database is unavailable or has no free connection at the moment; '
                  'retry later.')

GENERIC_ERROR = ('Unexpected API Error. Please report this with the novalite-api log if '
                 'possible.\n%s')


def fault_body(code: int, message: str, retry_after: str | None = None) -> dict:
    fault: dict[str, Any] = {'code': code, 'message': message}
    if retry_after is not None and code in (413, 429):
        fault['retryAfter'] = retry_after  # Nova repeats the header in these two
    return {FAULT_NAMES.get(code, 'computeFault'): fault}


def json_fault(code: int, message: str, headers: dict | None = None) -> webob.Response:
    """A ready response carrying Nova's fault body."""
    response = webob.Response(status=code, content_type='application/json', charset='utf-8')
    retry_after = (headers or {}).get('Retry-After')
    response.body = jsonutils.dump_as_bytes(
        fault_body(code, message, None if retry_after is None else str(retry_after)))
    for key, value in (headers or {}).items():
        response.headers[key] = value
    return response


def from_http_exception(exc: webob.exc.HTTPException) -> webob.Response:
    """A fault response from a webob HTTP error raised by a controller."""
    headers = {}
    if exc.code == 405 and exc.headers.get('Allow'):
        headers['Allow'] = exc.headers['Allow']
    if exc.code == 413 and exc.headers.get('Retry-After'):
        headers['Retry-After'] = exc.headers['Retry-After']
    message = exc.explanation or exc.title
    return json_fault(exc.code, message, headers)


def from_exception(exc: BaseException) -> webob.Response:
    """The one mapping of any exception to a fault response.

    A ``NovaliteException`` keeps its code and message, except a 500 that is not marked
    ``safe``: its text may leak internals, so the client gets the generic message and
    the log gets the traceback, like any unexpected exception. What would be a 500 but
    comes from a database that is unavailable (refusing connections, out of them,
    restarting) is a 503 with ``Retry-After``: the same request may succeed later.
    """
    if isinstance(exc, webob.exc.HTTPException):
        return from_http_exception(exc)
    if isinstance(exc, webob.request.DisconnectionError):
        # The body was shorter than its Content-Length: the client closed its side.
        return json_fault(400, 'The request body is shorter than its Content-Length.')
    if isinstance(exc, exception.NovaliteException):
        code = exc.code if isinstance(exc.code, int) else 500
        if code != 500 or exc.safe:
            if code >= 500:
                LOG.warning('API request failed with HTTP %s: %s', code, exc.format_message())
            return json_fault(code, exc.format_message())
    if db_errors.is_unavailable(exc):
        LOG.warning('API request failed, the database is unavailable: %s: %s',
                    type(exc).__name__, exc)
        return json_fault(503, DB_UNAVAILABLE, {'Retry-After': str(DB_RETRY_AFTER)})
    LOG.exception('Unexpected exception in API method')
    return json_fault(500, GENERIC_ERROR % type(exc))


class FaultWrapper(Middleware):
    """Catches whatever the layers below let escape and answers with a 500 fault.

    The response of the layers below is held back until they return without error (a
    layer may start its response and fail after), as webob's ``get_response`` did.
    """

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        started: list = []
        written: list[bytes] = []

        def start_below(status: str, headers: list, exc_info: OptExcInfo | None = None) -> Callable:
            started[:] = [status, headers]
            return written.append
        try:
            app_iter = self.application(environ, start_below)
            if not started:
                # An application that starts its response only when iterated.
                app_iter = _read_all(app_iter)
        except Exception as exc:
            return from_exception(exc)(environ, start_response)
        start_response(*started)
        return [*written, *app_iter] if written else app_iter


def _read_all(app_iter: Iterable[bytes]) -> list[bytes]:
    try:
        return list(app_iter)
    finally:
        close = getattr(app_iter, 'close', None)
        if close is not None:
            close()
