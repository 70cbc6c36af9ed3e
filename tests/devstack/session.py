"""What this test session made: its name prefix, its stacks, and the servers it needs."""
from __future__ import annotations

import os
import shutil
import uuid

import pytest

from tests.devstack.harness import backends, teardown
from tests.devstack.harness import stack as devstack

# Every name this session makes starts with this, so the final check finds strays.
PREFIX = '%s%s_' % (devstack.PREFIX, uuid.uuid4().hex[:6])
stacks: list[devstack.Stack] = []


def new_stack(state_dir: str, **kwargs) -> devstack.Stack:
    """A stack named under this session's prefix, remembered for the final check."""
    check_servers(kwargs.get('backend', 'mysql'))
    made = devstack.Stack(state_dir, name=PREFIX + uuid.uuid4().hex[:4], **kwargs)
    stacks.append(made)
    return made


def _unavailable(what: str, exc: Exception) -> None:
    msg = '%s unavailable for the devstack tests: %s' % (what, exc)
    if os.environ.get('CI'):
        pytest.fail(msg)
    pytest.skip(msg)


def check_servers(backend: str) -> None:
    """Skip (fail under ``CI``) without RabbitMQ or the database server."""
    if shutil.which('rabbitmqctl') is None:
        _unavailable('RabbitMQ', RuntimeError('rabbitmqctl not found'))
    try:
        backends.list_vhosts(PREFIX)
    except Exception as exc:
        _unavailable('RabbitMQ', exc)
    try:
        backends.list_databases(backend, PREFIX)
    except Exception as exc:
        _unavailable(backend, exc)


def leftovers() -> list[str]:
    """Processes, vhosts and databases of this session that still exist."""
    left = []
    for made in stacks:
        left += teardown.leftovers(made.record, made.state_dir)
    if stacks:
        left += ['vhost %s' % v for v in backends.list_vhosts(PREFIX)]
        for backend in {made.backend for made in stacks}:
            left += ['database %s' % d for d in backends.list_databases(backend, PREFIX)]
    return left
