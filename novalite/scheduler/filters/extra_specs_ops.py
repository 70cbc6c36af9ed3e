"""The operators of extra spec values matched against host capabilities or metadata.

A requirement is ``"<op> operand"`` or a bare value (exact string match):

- ``=``, ``==``, ``!=``, ``>=``, ``<=``: numeric (``=`` means at least, as in Nova);
- ``s==``, ``s!=``, ``s<``, ``s<=``, ``s>``, ``s>=``: string comparisons;
- ``<in>``: the operand is a substring of the value;
- ``<all-in>``: every operand word is in the value;
- ``<or>``: ``<or> a <or> b``: the value is one of the words.
"""
from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any


def _numeric(compare: Callable[[float, float], bool]) -> Callable[[str, str], bool]:
    def check(value: str, operand: str) -> bool:
        try:
            return compare(float(value), float(operand))
        except ValueError:
            return False
    return check


_OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    '=': _numeric(operator.ge),
    '==': _numeric(operator.eq),
    '!=': _numeric(operator.ne),
    '>=': _numeric(operator.ge),
    '<=': _numeric(operator.le),
    's==': operator.eq,
    's!=': operator.ne,
    's<': operator.lt,
    's<=': operator.le,
    's>': operator.gt,
    's>=': operator.ge,
    '<in>': lambda value, operand: operand in value,
    '<all-in>': lambda value, operands: all(o in value for o in operands),
}


def match(value: str | None, requirement: str) -> bool:
    """Whether ``value`` (a host's) satisfies ``requirement`` (an extra spec's)."""
    words = requirement.split()
    op = words[0] if words else None
    if op != '<or>' and op not in _OPERATORS:
        return value == requirement
    if value is None:
        return False
    operands = words[1:]
    if op == '<or>':
        # "<or> a <or> b": the odd positions are the choices.
        return value in operands[::2]
    if not operands:
        return False
    if op == '<all-in>':
        return _OPERATORS[op](value, operands)
    return _OPERATORS[op](value, operands[0])
