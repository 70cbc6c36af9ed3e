"""What the fuzzer knows of the API: each route and verb with its schemas per microversion.

Read from the API itself, not copied: the paths and actions from ``ROUTE_LIST`` of
``novalite/api/openstack/compute/routes.py``, the body and query-string schemas from the
``validation.schema`` / ``validation.query_schema`` decorators of each controller method
(their closures hold the checker and its microversion range), and the schema of each
server action from the action controller's table. A route added to the table, or a
schema to a method, is fuzzed without touching this file.
"""
from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

from novalite.api.openstack import api_version_request
from novalite.api.openstack.compute import routes
from novalite.api.validation import validators


@dataclasses.dataclass(frozen=True)
class Schema:
    """A JSON schema and the microversions ``[min_version, max_version]`` it applies to."""

    schema: dict
    min_version: str | None
    max_version: str | None

    def applies(self, version: str) -> bool:
        req = api_version_request.APIVersionRequest(version)
        return req.matches(self.min_version, self.max_version)


@dataclasses.dataclass(frozen=True)
class Route:
    """One path template and verb, with what its controller method validates."""

    path: str
    method: str
    controller: str
    action: str
    # Left out of the repr: a failing example prints its route, not every schema.
    bodies: tuple[Schema, ...] = dataclasses.field(repr=False)
    queries: tuple[Schema, ...] = dataclasses.field(repr=False)

    @property
    def name(self) -> str:
        return '%s %s' % (self.method, self.path)

    def body_schemas(self, version: str) -> list[dict]:
        return [s.schema for s in self.bodies if s.applies(version)]

    def query_schemas(self, version: str) -> list[dict]:
        return [s.schema for s in self.queries if s.applies(version)]


def _checkers(method: Callable | None) -> list[tuple[validators.SchemaValidator, Any, Any]]:
    """The schema checkers the decorators stacked on ``method``, with their ranges."""
    found = []
    seen: set[int] = set()
    while method is not None and id(method) not in seen:
        seen.add(id(method))
        code = getattr(method, '__code__', None)
        closure = getattr(method, '__closure__', None)
        if code is not None and closure:
            cells = {}
            for name, cell in zip(code.co_freevars, closure, strict=True):
                try:
                    cells[name] = cell.cell_contents
                except ValueError:  # an empty cell
                    continue
            checker = cells.get('checker')
            if isinstance(checker, validators.SchemaValidator):
                found.append((checker, cells.get('min_version'), cells.get('max_version')))
        method = getattr(method, '__wrapped__', None)
    return found


def _action_schemas(controller: Any) -> list[Schema]:
    """Each server action's schema (the action controllers keep one per body key)."""
    table = getattr(controller, '_actions', None) or {}
    return [Schema(checker.validator.schema, None, None)
            for _name, checker, _handler in table.values()]


@functools.cache
def all_routes() -> tuple[Route, ...]:
    """Every (path, verb) of the route table, without the ``/{project_id}`` twin."""
    router = routes.APIRouterV21()
    found: list[Route] = []
    for entry in router.map.matchlist:
        path = entry.routepath
        if path.startswith(routes.PROJECT_ID_TOKEN):
            continue
        resource = entry.defaults['controller']
        action = entry.defaults['action']
        controller = resource.controller
        bodies: list[Schema] = []
        queries: list[Schema] = []
        for checker, low, high in _checkers(getattr(controller, action, None)):
            (bodies if checker.is_body else queries).append(
                Schema(checker.validator.schema, low, high))
        if action == 'action':
            bodies.extend(_action_schemas(controller))
        for method in entry.conditions['method']:
            found.append(Route(path, method, type(controller).__name__, action,
                               tuple(bodies), tuple(queries)))
    return tuple(found)


def versions() -> tuple[str, str]:
    """The lowest and highest microversion the API serves."""
    return (api_version_request.min_api_version().get_string(),
            api_version_request.max_api_version().get_string())
