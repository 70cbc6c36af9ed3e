"""Requests, responses and the Resource that runs a controller method for one route.

The Resource is where the API turns every outcome into HTTP: the microversion is read,
the body parsed, the controller method called, and any exception mapped to a fault in
one place (:func:`novalite.api.openstack.faults.from_exception`).
"""
from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import microversion_parse
import webob
import webob.dec
import webob.exc
from oslo_log import log as logging
from oslo_serialization import jsonutils

from novalite import exception
from novalite.api.openstack import LEGACY_V2_KEY, faults
from novalite.api.openstack import api_version_request as avr

if TYPE_CHECKING:
    from novalite.context import RequestContext

LOG = logging.getLogger(__name__)

CONTEXT_KEY = 'novalite.context'
API_VERSION_HEADER = 'OpenStack-API-Version'
LEGACY_API_VERSION_HEADER = 'X-OpenStack-Nova-API-Version'
SERVICE_TYPE = 'compute'
_JSON_TYPES = ('application/json', 'application/vnd.openstack.compute+json')
_METHODS_WITH_BODY = ('POST', 'PUT', 'PATCH')


class Request(webob.Request):
    """A request that knows its microversion and its RequestContext."""

    @property
    def context(self) -> RequestContext:
        # Set by the auth middleware before any controller runs.
        return self.environ.get(CONTEXT_KEY)

    def is_legacy_v2(self) -> bool:
        """Whether the request came through the v2.0 compatible endpoint (``/v2``)."""
        return bool(self.environ.get(LEGACY_V2_KEY))

    @property
    def api_version_request(self) -> avr.APIVersionRequest:
        return self.environ.get('novalite.api_version_request', avr.MIN_VERSION)

    def set_api_version_request(self) -> None:
        """Read the microversion from the headers; the default is the minimum.

        :raises InvalidAPIVersionString: the header is not ``X.Y`` nor ``latest`` (400)
        :raises InvalidGlobalAPIVersion: the version is out of the supported range (406)
        """
        version = microversion_parse.get_version(
            self.headers, service_type=SERVICE_TYPE,
            legacy_headers=[LEGACY_API_VERSION_HEADER])
        if version is None:
            requested = avr.MIN_VERSION
        elif version.strip().lower() == 'latest':
            requested = avr.MAX_VERSION
        else:
            requested = avr.APIVersionRequest(version.strip())
            if not requested.matches(avr.MIN_VERSION, avr.MAX_VERSION):
                raise exception.InvalidGlobalAPIVersion(
                    req_ver=requested.get_string(), min_ver=avr.MIN_VERSION.get_string(),
                    max_ver=avr.MAX_VERSION.get_string())
        self.environ['novalite.api_version_request'] = requested


def _no_constant(name: str) -> float:
    """NaN, Infinity and -Infinity are no JSON (RFC 8259), though Python's parser takes
    them: no database column stores them (MariaDB refuses the statement)."""
    raise ValueError('%s is not a JSON number' % name)


def _finite_float(text: str) -> float:
    """A JSON number as a float; one too large for a float (1e400) is refused rather
    than read as an infinity."""
    value = float(text)
    if math.isinf(value):
        raise ValueError('%s is too large' % text)
    return value


def unstorable_string(document: object) -> str | None:
    """Why a string of the parsed JSON ``document`` (a key or a value, at any depth)
    cannot be stored, or None when every one can.

    JSON's escapes let a body carry what no database stores: a lone surrogate
    ("\\ud800", not Unicode text: SQLite and MariaDB refuse to encode it) and NUL
    ("\\u0000": PostgreSQL refuses it in text). Checked here, once, so no route and no
    field lets one reach the database, in the API or after its 202.
    """
    pending: list[object] = [document]
    while pending:  # no recursion: the document may be nested as deep as the parser took
        value = pending.pop()
        if isinstance(value, str):
            if value.isascii():
                if '\x00' in value:
                    return 'a string holds a NUL character (\\u0000)'
                continue
            try:
                value.encode('utf-8')
            except UnicodeEncodeError:
                return ('a string is not valid Unicode (it holds a lone surrogate escape '
                        'such as \\ud800)')
            if '\x00' in value:
                return 'a string holds a NUL character (\\u0000)'
        elif isinstance(value, dict):
            pending.extend(value)
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
    return None


class ResponseObject:
    """What a controller returns when the body alone is not enough (code, headers)."""

    def __init__(self, obj: object, code: int | None = None,
                 headers: dict[str, str] | None = None) -> None:
        self.obj = obj
        self.code = code
        self.headers = dict(headers or {})


def response(code: int) -> Callable:
    """Set the success status code of a controller method (default 200)."""
    def decorator(func: Callable) -> Callable:
        func.wsgi_code = code  # type: ignore[attr-defined]
        return func
    return decorator


# Implementations of one controller method by microversion range, keyed by the method's
# qualified name; every definition under that name shares one dispatcher.
_VERSIONED_METHODS: dict[str, list[tuple[avr.APIVersionRequest,
                                         avr.APIVersionRequest | None, Callable]]] = {}


def api_version(min_version: str, max_version: str | None = None) -> Callable:
    """Make a controller method exist only for a microversion range.

    The same method name may be defined several times with disjoint ranges; a request
    outside all of them gets a 404, as in Nova.
    """
    def decorator(func: Callable) -> Callable:
        key = '%s.%s' % (func.__module__, func.__qualname__)
        variants = _VERSIONED_METHODS.setdefault(key, [])
        variants.append((avr.APIVersionRequest(min_version),
                         avr.APIVersionRequest(max_version) if max_version else None, func))
        variants.sort(key=lambda v: v[0], reverse=True)

        @functools.wraps(func)
        def dispatch(self: Controller, req: Request, *args: object, **kwargs: object) -> Any:
            version = req.api_version_request
            for low, high, impl in variants:
                if version.matches(low, high):
                    return impl(self, req, *args, **kwargs)
            raise webob.exc.HTTPNotFound(
                explanation='The resource could not be found for API version %s.'
                % version.get_string())
        return dispatch
    return decorator


_ViewBuilder = TypeVar('_ViewBuilder')


class Controller(Generic[_ViewBuilder]):
    """Base of the API controllers.

    An action method takes ``(req, **url_args)``, plus ``body`` for POST/PUT/PATCH, and
    returns a dict (the JSON body), None (no body) or a :class:`ResponseObject`.
    ``Controller[ViewBuilder]`` types ``_view_builder``: built from
    ``_view_builder_class``, or set by the subclass's ``__init__``.
    """

    _view_builder_class: Callable[[], _ViewBuilder] | None = None
    _view_builder: _ViewBuilder

    def __init__(self) -> None:
        if self._view_builder_class is not None:
            self._view_builder = self._view_builder_class()


class Resource:
    """The WSGI app of one controller: a route's ``action`` names the method to call."""

    def __init__(self, controller: Controller) -> None:
        self.controller = controller

    @webob.dec.wsgify(RequestClass=Request)
    def __call__(self, req: Request) -> webob.Response:
        try:
            req.set_api_version_request()
            result = self._process(req)
        except Exception as exc:
            result = faults.from_exception(exc)
        self._add_version_headers(req, result)
        return result

    def _process(self, req: Request) -> webob.Response:
        args = dict(req.urlvars)
        action = args.pop('action')
        args.pop('controller', None)
        args.pop('format', None)
        url_project = args.pop('project_id', None)
        context = req.context
        if url_project and context is not None and url_project != context.project_id:
            raise webob.exc.HTTPBadRequest(
                explanation="Malformed request URL: URL's project_id '%s' doesn't match "
                            "Context's project_id '%s'" % (url_project, context.project_id))
        method = getattr(self.controller, action)
        if req.method in _METHODS_WITH_BODY:
            args['body'] = self._parse_body(req)
        return self._serialize(method, method(req, **args))

    @staticmethod
    def _parse_body(req: Request) -> Any:
        if not req.body:
            return None
        if req.content_type and req.content_type not in _JSON_TYPES:
            raise webob.exc.HTTPUnsupportedMediaType(explanation='Unsupported Content-Type')
        try:
            body = jsonutils.loads(req.body, parse_constant=_no_constant,
                                   parse_float=_finite_float)
        except (ValueError, RecursionError) as exc:
            # RecursionError: arrays or objects nested too deep for the parser.
            raise webob.exc.HTTPBadRequest(explanation='Malformed request body') from exc
        problem = unstorable_string(body)
        if problem:
            raise webob.exc.HTTPBadRequest(explanation='Malformed request body: %s' % problem)
        return body

    @staticmethod
    def _serialize(method: Callable, result: object) -> webob.Response:
        code = getattr(method, 'wsgi_code', 200)
        headers: dict[str, str] = {}
        if isinstance(result, webob.Response):
            return result
        if isinstance(result, ResponseObject):
            code = result.code or code
            headers = result.headers
            result = result.obj
        resp = webob.Response(status=code)
        if result is None:
            del resp.content_type
        else:
            resp.content_type = 'application/json'
            resp.charset = 'utf-8'
            resp.body = jsonutils.dump_as_bytes(result)
        for key, value in headers.items():
            resp.headers[key] = value
        return resp

    @staticmethod
    def _add_version_headers(req: Request, resp: webob.Response) -> None:
        version = req.environ.get('novalite.api_version_request')
        if version is not None:
            resp.headers[API_VERSION_HEADER] = '%s %s' % (SERVICE_TYPE, version.get_string())
            resp.headers[LEGACY_API_VERSION_HEADER] = version.get_string()
        vary = [v.strip() for v in resp.headers.get('Vary', '').split(',') if v.strip()]
        for header in (API_VERSION_HEADER, LEGACY_API_VERSION_HEADER):
            if header not in vary:
                vary.append(header)
        resp.headers['Vary'] = ', '.join(vary)
