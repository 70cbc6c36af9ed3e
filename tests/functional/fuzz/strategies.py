"""Hypothesis strategies for hostile requests: paths, queries, headers and bodies.

A request is drawn for one route and microversion: the path template's placeholders
filled with a seeded id of the right kind or a malformed one, a query string from the
route's query schema plus unknown and repeated keys, the microversion and content
headers right or wrong, and a body that starts valid for the route's schema and is then
mutated (wrong types, extra or missing keys, deep nesting, huge, empty or unpaired
surrogate strings, nulls) or replaced by bytes that are not JSON.

Each request carries ``tags`` naming the hostile inputs it holds, so a failure can be
matched to the known classes of issue 20 (F1...F8).
"""
from __future__ import annotations

import dataclasses
import json
import re
import urllib.parse
from typing import Any

from hypothesis import strategies as st

from tests.functional.fuzz import catalog

MAX_INT64 = 2 ** 63 - 1
# Nesting deeper than Python's recursion limit (issue 20's F2) and a harmless depth.
DEEP = 1200
SHALLOW = 40
_DEEP_MARK = '\x00deep:%d\x00'

# Path ids that are not ids: each names the hostile input it is (for ``tags``).
HOSTILE_IDS: tuple[tuple[str, str], ...] = (
    ('9223372036854775808', 'big-int'),           # 2**63 (F5)
    ('18446744073709551616', 'big-int'),          # 2**64
    ('99999999999999999999999999999', 'big-int'),
    ('-1', ''), ('0', ''), ('1', ''), ('1.5', ''), ('1e10', ''), ('0x10', ''),
    ('not-a-uuid', ''), ('00000000-0000-0000-0000-00000000000g', ''),
    ('%ff', 'invalid-utf8'), ('%c3%28', 'invalid-utf8'), ('abc%80', 'invalid-utf8'),
    ('%ed%a0%80', 'invalid-utf8'),                # a surrogate's UTF-8 form (F1/F4)
    ('%00', ''), ('%20', ''), ('%E2%98%83', ''), ('..', ''), ('%2F', ''),
    ('a' * 300, ''), ('x' * 5000, ''), ('%25s%25n', ''), ("'%20OR%201=1--", ''),
    ('null', ''), ('true', ''), ('%5B%5D', ''), ('%7B%7D', ''),
)

HOSTILE_STRINGS: tuple[tuple[str, str], ...] = (
    ('', ''), (' ', ''), ('\x00', ''), ('\ud800', 'surrogate'), ('a\udfffb', 'surrogate'),
    ('\u2603', ''), ('\U0001f600', ''), ('a' * 256, ''), ('a' * 70000, ''),
    ("' OR 1=1 --", ''), ('%s%n', ''), ('<script>', ''), ('-1', ''), ('1e309', ''),
    ('NaN', ''), ('null', ''), ('true', ''), ('9223372036854775808', ''),
    ('not-a-uuid', ''), ('../../etc/passwd', ''), ('\n', ''),
)

NON_JSON_BODIES: tuple[bytes, ...] = (
    b'', b'{', b'}', b'{"a":', b'not json', b'\xff\xfe\x00', b'\x00', b'[]', b'null',
    b'"text"', b'1', b'{"a": 1}{', b'{"a": NaN}', b'{"a": Infinity}', b'\xef\xbb\xbf{}',
    b'{"\xff": 1}', b'{"a": "\xc3\x28"}', b'<xml/>',
)

ACCEPTS = (None, 'application/json', '*/*', 'application/xml', 'text/html',
           'application/json;q=0', 'text/plain, application/json;q=0.1', '\x7fbad',
           '', 'application/vnd.openstack.compute+json;version=2.1')
CONTENT_TYPES = (None, 'application/json', 'text/plain', 'application/xml',
                 'application/json; charset=latin-1', 'multipart/form-data; boundary=x',
                 '', 'application/octet-stream', '\xffbad/type')
BAD_VERSIONS = ('', '2', '3.0', '2.0', '2.9999', '1.1', 'latest', 'compute', 'x.y',
                '2.-1', '2.1.1', '\xff', ' 2.1', '99999999999999999999.1')

UNKNOWN_QUERY_KEYS = ('foo', 'sort_key', 'sort_dir', 'limit', 'marker', 'all_tenants',
                      'deleted', 'changes-since', 'changes-before', 'offset',
                      'project_id', 'name', 'status', 'host', 'detailed', '\u2603')
QUERY_VALUES = ('', '-1', '0', '1', 'abc', '9223372036854775808', '1.5', 'x' * 300,
                'true', 'None', 'display_name', 'created_at', 'asc', 'desc', 'x',
                '2024-01-01T00:00:00Z', 'not-a-date', '00000000-0000-0000-0000-000000000000')
RAW_QUERY_VALUES = (('%ff', 'invalid-utf8'), ('%ed%a0%80', 'invalid-utf8'),
                    ('%00', ''), ('%E2%98%83', ''), ('a%26b%3Dc', ''), ('%', ''))


@dataclasses.dataclass
class Caller:
    """Who sends the request: the identity headers Keystone's middleware would set."""

    name: str
    user_id: str
    project_id: str
    roles: tuple[str, ...]

    def headers(self) -> dict[str, str]:
        return {'X-Identity-Status': 'Confirmed', 'X-User-Id': self.user_id,
                'X-Project-Id': self.project_id, 'X-Roles': ','.join(self.roles),
                'X-Auth-Token': 'fuzz-%s' % self.name}

    @property
    def token(self) -> str:
        """The noauth2 token of this caller (for the HTTP server, which runs noauth2)."""
        return '%s:%s' % (self.user_id, self.project_id)


@dataclasses.dataclass
class Request:
    """One drawn request, as raw as it goes on the wire."""

    caller: Caller
    route: catalog.Route
    method: str
    path: str                      # percent-encoded, with the prefix (/v2.1 ...)
    query: str                     # percent-encoded, without '?'
    headers: dict[str, str]
    body: bytes | None
    content_length: int | str | None   # None: len(body); a str: sent as it is
    tags: set[str]

    def describe(self) -> str:
        body = self.body if self.body is None or len(self.body) < 400 else (
            self.body[:400] + b'...(%d bytes)' % len(self.body))
        return ('%s %s%s%s as %s\nheaders: %r\nbody: %r\ncontent-length: %s\ntags: %s'
                % (self.method, self.path, '?' if self.query else '', self.query,
                   self.caller.name, self.headers, body, self.content_length,
                   sorted(self.tags)))


def _schema_types(schema: dict) -> list[str]:
    kind = schema.get('type')
    if isinstance(kind, list):
        return kind
    if kind:
        return [kind]
    if 'properties' in schema or 'patternProperties' in schema:
        return ['object']
    return ['string']


def value_for(schema: dict, hints: dict[str, list], key: str = '', depth: int = 0
              ) -> st.SearchStrategy:
    """A value close to valid for ``schema``; ``hints`` name seeded ids by key."""
    if key in hints:
        return st.sampled_from(hints[key])
    for combinator in ('oneOf', 'anyOf'):
        if combinator in schema:
            return st.one_of([value_for(s, hints, key, depth) for s in schema[combinator]])
    if 'allOf' in schema:
        return value_for(schema['allOf'][0], hints, key, depth)
    if 'enum' in schema:
        return st.sampled_from(schema['enum'])
    if 'const' in schema:
        return st.just(schema['const'])
    return st.sampled_from(_schema_types(schema)).flatmap(
        lambda kind: _value_of_type(kind, schema, hints, key, depth))


def _value_of_type(kind: str, schema: dict, hints: dict[str, list], key: str,
                   depth: int) -> st.SearchStrategy:
    if kind == 'object':
        return _object_for(schema, hints, depth)
    if kind == 'array':
        items = schema.get('items', {'type': 'string'})
        if depth > 4 or isinstance(items, list):
            return st.just([])
        return st.lists(value_for(items, hints, key, depth + 1),
                        min_size=schema.get('minItems', 0), max_size=2)
    if kind == 'integer':
        low = schema.get('minimum', -1)
        high = schema.get('maximum', 100)
        return st.integers(min_value=max(low, -1), max_value=min(high, max(low, -1) + 100))
    if kind == 'number':
        return st.floats(allow_nan=False, allow_infinity=False, min_value=0, max_value=10)
    if kind == 'boolean':
        return st.booleans()
    if kind == 'null':
        return st.none()
    return _string_for(schema)


def _string_for(schema: dict) -> st.SearchStrategy:
    fmt = schema.get('format')
    if fmt == 'uuid':
        return st.uuids().map(str)
    if fmt == 'ipv4':
        return st.sampled_from(['10.0.0.5', '192.168.1.1'])
    if fmt == 'ipv6':
        return st.sampled_from(['::1', 'fe80::1'])
    if fmt == 'date-time':
        return st.just('2024-01-01T00:00:00Z')
    if fmt == 'base64':
        return st.just('aGVsbG8=')
    pattern = schema.get('pattern')
    low = schema.get('minLength', 1)
    high = min(schema.get('maxLength', 20), max(low, 20))
    plain = st.text(alphabet='abcdefghij0123456789', min_size=max(low, 1), max_size=high)
    if pattern:
        try:
            regex = re.compile(pattern)
        except re.error:
            return plain
        return plain.filter(lambda value: regex.search(value) is not None) | st.just('a')
    return plain


def _object_for(schema: dict, hints: dict[str, list], depth: int) -> st.SearchStrategy:
    props = schema.get('properties', {})
    required = [k for k in schema.get('required', []) if k in props]
    optional = [k for k in props if k not in required]
    # Free-form keys (metadata, extra specs, hints): a schema for their values.
    free = list(schema.get('patternProperties', {}).values())
    if isinstance(schema.get('additionalProperties'), dict):
        free.append(schema['additionalProperties'])
    if depth > 4:
        return st.just({})

    @st.composite
    def build(draw: Any) -> dict:
        keys = required + [k for k in optional if draw(st.booleans())]
        value = {k: draw(value_for(props[k], hints, k, depth + 1)) for k in keys}
        if free and not props:
            for index in range(draw(st.integers(0, 2))):
                value['key%d' % index] = draw(value_for(free[0], hints, '', depth + 1))
        return value
    return build()


def hostile_value() -> st.SearchStrategy:
    """(value, tag): a JSON value that should not be where it is put."""
    plain = st.sampled_from([
        (None, ''), (0, ''), (-1, ''), (2 ** 64, 'big-int'), (1.5, ''), (1e308, ''),
        (True, ''), (False, ''), ([], ''), ({}, ''), ([None], ''), ({'': None}, ''),
        ([[[]]], ''), ({'a': {'b': {'c': {}}}}, ''),
        (_DEEP_MARK % SHALLOW, ''), (_DEEP_MARK % DEEP, 'deep-json')])
    return st.one_of(plain, st.sampled_from(HOSTILE_STRINGS),
                     st.text(max_size=8).map(lambda text: (text, _text_tag(text))))


def _text_tag(text: str) -> str:
    return 'surrogate' if any('\ud800' <= ch <= '\udfff' for ch in text) else ''


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every location inside ``value``: the key path of each dict value and list item."""
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found.extend(_paths(item, prefix + (key,)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.extend(_paths(item, prefix + (index,)))
    return found


def _at(value: Any, path: tuple) -> Any:
    for step in path:
        value = value[step]
    return value


def _replace(value: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    copy: Any = dict(value) if isinstance(value, dict) else list(value)
    copy[head] = _replace(value[head], rest, new)
    return copy


@st.composite
def mutated(draw: Any, value: Any, tags: set[str]) -> Any:
    """``value`` with one to three hostile changes."""
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        paths = _paths(value)
        path = draw(st.sampled_from(paths))
        target = _at(value, path)
        op = draw(st.sampled_from(['string', 'string', 'replace', 'replace', 'extra-key',
                                   'drop-key']))
        if op == 'string':
            # The structure kept, a string leaf's content bad: what gets stored.
            leaves = [p for p in paths if isinstance(_at(value, p), str)]
            if leaves:
                new, tag = draw(st.sampled_from(HOSTILE_STRINGS))
                tags.add(tag)
                value = _replace(value, draw(st.sampled_from(leaves)), new)
        elif op == 'replace':
            new, tag = draw(hostile_value())
            tags.add(tag)
            value = _replace(value, path, new)
        elif op == 'extra-key' and isinstance(target, dict):
            key, tag = draw(st.sampled_from(HOSTILE_STRINGS[:8] + (('extra', ''),)))
            new, new_tag = draw(hostile_value())
            tags.update((tag, new_tag))
            value = _replace(value, path, {**target, key: new})
        elif op == 'drop-key' and isinstance(target, dict) and target:
            gone = draw(st.sampled_from(sorted(target)))
            value = _replace(value, path, {k: v for k, v in target.items() if k != gone})
    return value


def encode_json(value: Any) -> bytes:
    """JSON bytes, the deep-nesting marks expanded (json.dumps itself would recurse)."""
    text = json.dumps(value)

    def deep(match: re.Match) -> str:
        depth = int(match.group(1))
        return '[' * depth + ']' * depth
    return re.sub(r'"\\u0000deep:(\d+)\\u0000"', deep, text).encode('utf-8')


def _has_access_ip(value: Any) -> bool:
    if isinstance(value, dict):
        return any(k in ('accessIPv4', 'accessIPv6') or _has_access_ip(v)
                   for k, v in value.items())
    if isinstance(value, list):
        return any(_has_access_ip(v) for v in value)
    return False


@st.composite
def body_for(draw: Any, route: catalog.Route, version: str, hints: dict[str, list],
             tags: set[str], hostile: bool) -> bytes | None:
    """A body for the route: a schema instance, mutated if ``hostile`` (or not JSON,
    or nested too deep, or where no body belongs)."""
    schemas = route.body_schemas(version)
    writes = route.method in ('POST', 'PUT')
    if not hostile:
        kind = 'schema' if writes else 'none'
    else:
        kind = draw(st.sampled_from(['mutate'] * 6 + ['raw', 'deep', 'none', 'schema']))
    if kind == 'none':
        return None
    if kind == 'raw':
        tags.add('non-json-body')
        return draw(st.sampled_from(NON_JSON_BODIES))
    schema = draw(st.sampled_from(schemas)) if schemas else {'type': 'object'}
    value = draw(value_for(schema, hints))
    if kind == 'deep':
        tags.add('deep-json')
        path = draw(st.sampled_from(_paths(value)))
        value = _replace(value, path, _DEEP_MARK % DEEP)
    elif kind == 'mutate':
        mutant = draw(mutated(value, tags))
        if mutant != value:
            tags.add('mutated-body')
        value = mutant
    if _has_access_ip(value):
        tags.add('access-ip')
    return encode_json(value)


def _quote(text: str) -> str:
    return urllib.parse.quote(text.encode('utf-8', 'surrogatepass'), safe='')


@st.composite
def path_id(draw: Any, valid: list[str], tags: set[str], hostile: bool) -> str:
    """One placeholder's value, percent-encoded: a seeded id or a hostile one."""
    if valid and (not hostile or draw(st.booleans())):
        return _quote(draw(st.sampled_from(valid)))
    tags.add('bad-id')
    choice = draw(st.integers(0, 3))
    if choice == 0:
        big = draw(st.integers(min_value=MAX_INT64 - 2, max_value=2 ** 70))
        if big > MAX_INT64:
            tags.add('big-int')
        return str(big)
    if choice == 1:
        text = draw(st.text(min_size=1, max_size=10))
        # A surrogate percent-encoded is bytes UTF-8 forbids.
        tags.add('invalid-utf8' if _text_tag(text) else '')
        return _quote(text)
    raw, tag = draw(st.sampled_from(HOSTILE_IDS))
    tags.add(tag)
    return raw


@st.composite
def query_for(draw: Any, route: catalog.Route, version: str, tags: set[str],
              hostile: bool) -> str:
    """A query string: known keys of the route's schema, unknown and repeated ones."""
    if not hostile:
        return ''
    keys = set(UNKNOWN_QUERY_KEYS)
    for schema in route.query_schemas(version):
        keys.update(schema.get('properties', {}))
    pairs: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        tags.add('query')
        key = draw(st.sampled_from(sorted(keys)))
        if draw(st.integers(0, 5)) == 0:
            raw, tag = draw(st.sampled_from(RAW_QUERY_VALUES))
            tags.add(tag)
            pairs.append('%s=%s' % (_quote(key), raw))
        else:
            pairs.append('%s=%s' % (_quote(key), _quote(draw(st.sampled_from(QUERY_VALUES)))))
    return '&'.join(pairs)


@st.composite
def headers_for(draw: Any, version: str, has_body: bool, tags: set[str],
                hostile: bool) -> dict[str, str]:
    """Microversion, Accept and Content-Type headers, right or wrong."""
    headers: dict[str, str] = {}
    if not hostile:
        headers['OpenStack-API-Version'] = 'compute %s' % version
        if has_body:
            headers['Content-Type'] = 'application/json'
        return headers
    how = draw(st.sampled_from(['new', 'old', 'both', 'none', 'bad', 'bad-old']))
    if how in ('new', 'both'):
        headers['OpenStack-API-Version'] = 'compute %s' % version
    if how in ('old', 'both'):
        headers['X-OpenStack-Nova-API-Version'] = version
    if how.startswith('bad'):
        tags.add('bad-version-header')
    if how == 'bad':
        headers['OpenStack-API-Version'] = draw(st.sampled_from(
            ['compute %s' % bad for bad in BAD_VERSIONS] + ['volume 2.1', 'compute', '']))
    if how == 'bad-old':
        headers['X-OpenStack-Nova-API-Version'] = draw(st.sampled_from(BAD_VERSIONS))
    # Mostly right, so that most requests get past content negotiation.
    accept = draw(st.sampled_from((None,) * 3 + ACCEPTS))
    if accept not in (None, 'application/json'):
        tags.add('odd-accept')
    if accept is not None:
        headers['Accept'] = accept
    if has_body:
        headers['Content-Type'] = draw(st.sampled_from(
            ('application/json',) * 3 + CONTENT_TYPES[2:]))
    elif draw(st.integers(0, 9)) == 0:
        headers['Content-Type'] = draw(st.sampled_from(CONTENT_TYPES[1:]))
    return headers
