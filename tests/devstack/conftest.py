"""Devstack-style stacks for these tests, each torn down and checked for leftovers.

A module picks its stack with a module-level ``STACK`` dict of ``Stack`` keyword
arguments (``backend``, ``conf``, ``host_conf``); modules that ask for the same one run
one after the other and share it (the client modules, the volume modules), which saves
start-ups. Without RabbitMQ or the
database server the tests skip, except under ``CI``, where they fail.
"""
from __future__ import annotations

import json
import os

import pytest

from tests.devstack import network, session


def pytest_collection_modifyitems(items):
    # openstacksdk announces its own future API changes on every call.
    here = os.path.dirname(__file__)
    ours = [i for i, item in enumerate(items) if str(item.path).startswith(here)]
    for i in ours:
        items[i].add_marker(pytest.mark.filterwarnings('ignore::PendingDeprecationWarning'))
    for i, item in zip(ours, _grouped_by_stack([items[i] for i in ours]), strict=True):
        items[i] = item


def _grouped_by_stack(items: list) -> list:
    """``items`` with the modules that ask for the same stack next to each other (in
    the order each stack is first asked for; modules without a stack first), so that
    each stack starts once. Each module's own tests keep their order."""
    modules: dict[object, list] = {}
    for item in items:
        modules.setdefault(item.module, []).append(item)
    groups: dict[str | None, list] = {None: []}
    for module, tests in modules.items():
        uses = any('stack' in t.fixturenames for t in tests)
        key = json.dumps(getattr(module, 'STACK', {}), sort_keys=True) if uses else None
        groups.setdefault(key, []).extend(tests)
    return [item for tests in groups.values() for item in tests]


class _Current:
    """The one stack running now, and what it was asked for."""

    key: str | None = None
    stack = None

    @classmethod
    def close(cls) -> None:
        stack, cls.stack, cls.key = cls.stack, None, None
        if stack is not None:
            left = stack.down(check=False)
            print('\nstack %s down in %.1f s' % (stack.name, stack.timings['down']))
            assert not left, 'the stack left things behind: %s' % left


def pytest_runtest_setup(item):
    # A test without a stack runs with none up (the machine has two cores).
    if str(item.path).startswith(os.path.dirname(__file__)) and \
            'stack' not in item.fixturenames:
        _Current.close()


@pytest.fixture(scope='module')
def stack(request, tmp_path_factory):
    kwargs = getattr(request.module, 'STACK', {})
    if kwargs.get('network'):
        network.require_network()  # before any stack is closed or started
    key = json.dumps(kwargs, sort_keys=True)
    if _Current.key != key:
        _Current.close()
        label = request.module.__name__.rsplit('.', 1)[-1].removeprefix('test_')
        made = session.new_stack(str(tmp_path_factory.mktemp('devstack-' + label)), **kwargs)
        made.up()
        print('\nstack %s (%s) up in %.1f s' % (made.name, label, made.timings['up']))
        _Current.key, _Current.stack = key, made
    return _Current.stack


@pytest.fixture(scope='session', autouse=True)
def nothing_left_behind():
    """After the last test: no process, vhost or database of this session remains."""
    yield
    _Current.close()
    left = session.leftovers()
    assert not left, 'devstack tests left behind: %s' % left


@pytest.fixture(scope='module')
def volume_stack(stack):
    """The stack with the real Cinder on Ceph (keystone mode, two fake computes): a
    module using it sets ``STACK = tests.devstack.harness.cinder.VOLUME_STACK`` (so
    consecutive such modules share one) and calls ``require_volumes()`` first."""
    assert stack.cinder is not None, 'set STACK = VOLUME_STACK in the module'
    return stack
