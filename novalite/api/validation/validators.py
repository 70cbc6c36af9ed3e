"""The JSON-Schema validator of request bodies and query strings, with Nova's messages."""
from __future__ import annotations

import base64
import binascii
import re
import unicodedata
from collections.abc import Iterator
from typing import TYPE_CHECKING

import jsonschema
from jsonschema import validators as js_validators
from oslo_utils import uuidutils

from novalite import exception

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

format_checker = jsonschema.FormatChecker()


@format_checker.checks('uuid')
def _is_uuid(instance: object) -> bool:
    if not isinstance(instance, str):
        return True
    return uuidutils.is_uuid_like(instance)


# ipv4 and ipv6 are jsonschema's own formats (Python's ipaddress), as Nova's validator
# uses: stricter than oslo's netutils, which also takes IPv6 scope ids ("fe80::1%eth0")
# that the instance's address fields then fail to hold.


@format_checker.checks('base64')
def _is_base64(instance: object) -> bool:
    if not isinstance(instance, str):
        return True
    try:
        base64.b64decode(instance, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _printable(value: str) -> bool:
    # Unicode categories C* (controls, unassigned, private use) are not printable.
    return all(not unicodedata.category(ch).startswith('C') for ch in value)


class _NameError(exception.ValidationError):
    pass


@format_checker.checks('name', raises=_NameError)
def _is_name(instance: object) -> bool:
    """Printable, and no whitespace at either end (Nova's ``name`` format)."""
    if not isinstance(instance, str):
        return True
    if _printable(instance) and instance == instance.strip():
        return True
    raise _NameError(detail="An invalid 'name' value was provided. The name must be: "
                            "printable characters. Can not start or end with whitespace.")


@format_checker.checks('name_with_leading_trailing_spaces', raises=_NameError)
def _is_name_with_spaces(instance: object) -> bool:
    """Printable with one non-space character at least; spaces at the ends allowed (the
    API strips them): Nova's format of an aggregate's new name."""
    if not isinstance(instance, str):
        return True
    if _printable(instance) and instance.strip():
        return True
    raise _NameError(detail="An invalid 'name' value was provided. The name must be: "
                            "printable characters with at least one non space character")


@format_checker.checks('date-time')
def _is_date_time(instance: object) -> bool:
    from oslo_utils import timeutils
    if not isinstance(instance, str):
        return True
    try:
        timeutils.parse_isotime(instance)
    except ValueError:
        return False
    return True


_INT_RE = re.compile(r'^-?\d+$')


def _number_from_str(value: object) -> int | float | None:
    """The number an integer-or-string field holds ("512" counts as 512)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str):
        try:
            return int(value) if _INT_RE.match(value.strip()) else float(value)
        except ValueError:
            return None
    return None


_Draft4 = jsonschema.Draft4Validator


def _minimum(validator: Validator, minimum: float, instance: object,
             schema: dict) -> Iterator[jsonschema.ValidationError]:
    number = _number_from_str(instance)
    if number is None:
        return
    yield from _Draft4.VALIDATORS['minimum'](validator, minimum, number, schema)


def _maximum(validator: Validator, maximum: float, instance: object,
             schema: dict) -> Iterator[jsonschema.ValidationError]:
    number = _number_from_str(instance)
    if number is None:
        return
    yield from _Draft4.VALIDATORS['maximum'](validator, maximum, number, schema)


# Numeric bounds also apply to integers sent as strings, as Nova's validator does.
_Validator = js_validators.extend(_Draft4, {'minimum': _minimum, 'maximum': _maximum})


def _soft_additional_properties(validator: Validator, allowed: bool | dict, instance: object,
                                schema: dict) -> Iterator[jsonschema.ValidationError]:
    """The v2.0 compatible mode's additionalProperties: unknown keys are dropped, as
    the v2 API ignored them, except where ``patternProperties`` names the keys a body
    may carry (metadata), which stay checked."""
    # Draft 4's type 'object' is a dict: the isinstance only tells the checker so.
    if (not validator.is_type(instance, 'object') or not isinstance(instance, dict)
            or allowed is True):
        return
    known = schema.get('properties', {})
    patterns = '|'.join(schema.get('patternProperties', {}))
    extra = [key for key in instance if key not in known]
    if patterns:
        unexpected = [key for key in extra if not re.search(patterns, key)]
        if unexpected:
            yield jsonschema.ValidationError(
                'Additional properties are not allowed (%s %s unexpected)'
                % (', '.join(repr(key) for key in sorted(unexpected)),
                   'was' if len(unexpected) == 1 else 'were'))
        return
    for key in extra:
        del instance[key]


_LegacyV2Validator = js_validators.extend(
    _Validator, {'additionalProperties': _soft_additional_properties})


class SchemaValidator:
    """Validates one schema; errors become ``ValidationError`` with Nova's wording.

    With ``legacy_v2``, unknown body keys are dropped instead of refused (``/v2``).
    """

    def __init__(self, schema: dict, is_body: bool = True, legacy_v2: bool = False) -> None:
        validator_class = _LegacyV2Validator if legacy_v2 else _Validator
        self.validator = validator_class(schema, format_checker=format_checker)
        self.is_body = is_body

    def validate(self, value: object) -> None:
        try:
            self.validator.validate(value)
        except jsonschema.ValidationError as ex:
            if isinstance(ex.cause, exception.ValidationError):
                raise ex.cause from ex
            if ex.path:
                template = ('Invalid input for field/attribute %(path)s. Value: %(value)s. '
                            '%(message)s' if self.is_body else
                            'Invalid input for query parameters %(path)s. Value: %(value)s. '
                            '%(message)s')
                # A query parameter's path is (name, index in its list of values).
                path = ex.path.pop() if self.is_body else ex.path.popleft()
                detail = template % {'path': path, 'value': ex.instance,
                                     'message': ex.message}
            else:
                detail = ex.message
            raise exception.ValidationError(detail=detail) from ex
        except TypeError as ex:
            raise exception.ValidationError(detail=str(ex)) from ex
