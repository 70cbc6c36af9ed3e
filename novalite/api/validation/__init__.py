"""Decorators that validate request bodies and query strings against JSON Schemas."""
from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, ParamSpec, TypeVar

from novalite.api.validation import validators

if TYPE_CHECKING:
    from novalite.api.openstack import wsgi

_P = ParamSpec('_P')
_R = TypeVar('_R')


def _request_of(args: tuple, kwargs: dict) -> wsgi.Request:
    return kwargs['req'] if 'req' in kwargs else args[1]


def schema(request_body_schema: dict, min_version: str | None = None,
           max_version: str | None = None) -> Callable[[Callable[_P, _R]], Callable[_P, _R]]:
    """Validate the body against ``request_body_schema`` for requests in the range.

    Stack one decorator per microversion range; requests outside a range skip it.
    Requests through ``/v2`` (at 2.1) are checked with unknown keys dropped, as Nova's
    v2.0 compatible mode does.
    """
    checker = validators.SchemaValidator(request_body_schema)
    legacy_checker = validators.SchemaValidator(request_body_schema, legacy_v2=True)

    def decorator(func: Callable[_P, _R]) -> Callable[_P, _R]:
        @functools.wraps(func)
        def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            req = _request_of(args, kwargs)
            if req.api_version_request.matches(min_version, max_version):
                legacy = getattr(req, 'is_legacy_v2', None)
                (legacy_checker if legacy and legacy() else checker).validate(
                    kwargs.get('body'))
            return func(*args, **kwargs)
        wrapper.request_body_schema = True  # type: ignore[attr-defined]
        return wrapper
    return decorator


def no_body(func: Callable) -> Callable:
    """Mark a controller method that takes no request body (GET and DELETE routes, or
    actions whose URL says everything); the route-table test looks for a schema or this.
    """
    func.no_body = True  # type: ignore[attr-defined]
    return func


def query_schema(query_params_schema: dict, min_version: str | None = None,
                 max_version: str | None = None
                 ) -> Callable[[Callable[_P, _R]], Callable[_P, _R]]:
    """Validate the query string (each parameter a list of strings).

    When the schema allows additional properties, unknown parameters are dropped from
    the request before the controller sees them, as Nova does before 2.75.
    """
    checker = validators.SchemaValidator(query_params_schema, is_body=False)
    known = set(query_params_schema.get('properties', {}))
    # Parameters matching a patternProperties key are kept too (``property-*``).
    patterns = [re.compile(p) for p in query_params_schema.get('patternProperties', {})]
    lenient = query_params_schema.get('additionalProperties', True)

    def decorator(func: Callable[_P, _R]) -> Callable[_P, _R]:
        @functools.wraps(func)
        def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            req = _request_of(args, kwargs)
            if req.api_version_request.matches(min_version, max_version):
                if lenient:
                    for key in set(req.GET) - known:
                        if not any(p.match(key) for p in patterns):
                            del req.GET[key]
                checker.validate(req.GET.dict_of_lists())
            return func(*args, **kwargs)
        wrapper.query_params_schema = True  # type: ignore[attr-defined]
        return wrapper
    return decorator

