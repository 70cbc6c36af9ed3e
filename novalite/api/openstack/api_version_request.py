"""Compute API microversions: parsing, comparison and the supported range.

The history lists only the microversions whose behaviour novalite implements; every
other version in the range is accepted and behaves like the nearest one below it.

* 2.1  - the base v2.1 API
* 2.3  - more OS-EXT-SRV-ATTR fields in the server view (admins)
* 2.9  - ``locked`` in the server view
* 2.19 - server ``description``
* 2.26 - server ``tags`` in the server view
* 2.36 - the proxies to Glance (``/images``) and Neutron removed (404)
* 2.37 - ``networks`` required on server create; "auto" and "none"
* 2.38 - listing servers with an unknown status is a 400
* 2.39 - the image metadata proxy (``/images/{id}/metadata``) removed (404)
* 2.47 - the server view embeds the flavor instead of linking it
* 2.52 - ``tags`` on server create
* 2.55 - flavor ``description``
* 2.57 - ``personality`` removed from server create
* 2.61 - flavor ``extra_specs`` in the flavor view
* 2.66 - ``changes-before`` filter on server list
* 2.75 - unknown query parameters are a 400; flavor ``swap`` is 0, not ""
* 2.81 - ``POST /os-aggregates/{id}/images``: the aggregate's hosts pre-cache images
* 2.90 - server ``hostname`` on create
* 2.94 - the hostname may be a fully qualified domain name
* 2.96 - ``pinned_availability_zone`` in the server view
* 2.97 - ``/servers/{id}/shares`` (always empty: novalite attaches no Manila share)
* 2.98 - the image's properties embedded in the server view
* 2.100 - the server's ``scheduler_hints`` in the server view
* 2.101 - a volume attach answers 202 with no body (novalite refuses every attach: 400)
* 2.102 - flavors: a ``name`` filter, no ``rxtx_factor`` nor ``OS-FLV-DISABLED:disabled``;
  unknown query parameters are a 400 on the routes that still ignored them
* 2.103 - ``/os-volumes_boot`` removed
* 2.104 - ``pinned_availability_zone`` settable on server update (unpin or re-pin)
"""
from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

from novalite import exception

if TYPE_CHECKING:
    from novalite.api.openstack import wsgi

_MIN = '2.1'
_MAX = '2.104'
_VERSION_RE = re.compile(r'^([1-9]\d*)\.([1-9]\d*|0)$')


@functools.total_ordering
class APIVersionRequest:
    """A version ``major.minor``; a version built from ``None`` is the null version."""

    def __init__(self, version_string: str | None = None) -> None:
        self.ver_major = 0
        self.ver_minor = 0
        if version_string is not None:
            match = _VERSION_RE.match(version_string)
            if not match:
                raise exception.InvalidAPIVersionString(version=version_string)
            self.ver_major = int(match.group(1))
            self.ver_minor = int(match.group(2))

    def is_null(self) -> bool:
        return self.ver_major == 0 and self.ver_minor == 0

    def _key(self) -> tuple[int, int]:
        return self.ver_major, self.ver_minor

    def __eq__(self, other: object) -> bool:
        return isinstance(other, APIVersionRequest) and self._key() == other._key()

    def __lt__(self, other: APIVersionRequest) -> bool:
        return self._key() < other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return 'APIVersionRequest(%s)' % self.get_string()

    def matches(self, min_version: APIVersionRequest | str | None = None,
                max_version: APIVersionRequest | str | None = None) -> bool:
        """Whether this version is within [min_version, max_version]; None is unbounded."""
        key = (self.ver_major, self.ver_minor)
        low = _as_version(min_version)
        if low is not None and not low.is_null() and key < low._key():
            return False
        high = _as_version(max_version)
        if high is not None and not high.is_null() and key > high._key():
            return False
        return True

    def get_string(self) -> str:
        return '%d.%d' % self._key()


# Versions named in code ('2.47'), parsed once: a server view asks a dozen times.
_PARSED: dict[str, APIVersionRequest] = {}


def _as_version(value: APIVersionRequest | str | None) -> APIVersionRequest | None:
    if value is None or isinstance(value, APIVersionRequest):
        return value
    parsed = _PARSED.get(value)
    if parsed is None:
        parsed = APIVersionRequest(value)
        if len(_PARSED) < 1000:
            _PARSED[value] = parsed
    return parsed


MIN_VERSION = APIVersionRequest(_MIN)
MAX_VERSION = APIVersionRequest(_MAX)
# The last microversion of the proxies to the Networking and Image services (404
# from 2.36).
MAX_PROXY_API_SUPPORT_VERSION = '2.35'
# The last microversion of the image metadata proxy (404 from 2.39).
MAX_IMAGE_META_PROXY_API_VERSION = '2.38'


def min_api_version() -> APIVersionRequest:
    return MIN_VERSION


def max_api_version() -> APIVersionRequest:
    return MAX_VERSION


def is_supported(req: wsgi.Request, min_version: str = _MIN,
                 max_version: str | None = None) -> bool:
    """Whether the microversion of ``req`` is within the given bounds."""
    return req.api_version_request.matches(min_version, max_version)
