"""The conductor's allocation healing task on MariaDB with the real Placement: an
allocation deleted by hand comes back and an orphan created by hand goes, within a run
of the task, each logged; with ``allocation_heal_action = report`` both are only
logged. Live servers' allocations are never touched."""
from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator

import pytest

from novalite.conductor.tasks import heal_allocations
from novalite.conf import CONF
from tests.fixtures.databases import DatabaseFactory
from tests.functional.mariadb_stack import MariaDBStack, boot_active, placement, provider_of

VERSION = '2.53'
HEAL_LOGGER = 'novalite.conductor.tasks.heal_allocations'
# Seconds to wait for what one run (every second here) does: a run walks every provider
# and server, which takes longer than its period on a loaded machine.
WAIT = 60


@pytest.fixture(scope='module')
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MariaDBStack]:
    tmp = tmp_path_factory.mktemp('healing-stack')
    factory = DatabaseFactory('mysql', str(tmp))
    stack = MariaDBStack(str(tmp), factory, overrides={
        ('conductor', 'allocation_heal_interval'): 1, (None, 'periodic_interval'): 1})
    try:
        stack.start()
        yield stack
    finally:
        stack.stop()
        factory.cleanup()


def _allocations(stack: MariaDBStack, consumer: str) -> dict:
    """{provider: resources} of the consumer (the providers' generations left out)."""
    allocations = stack.placement_get('/allocations/%s' % consumer)['allocations']
    return {rp: a['resources'] for rp, a in allocations.items()}


def _wait(what: str, check: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    raise AssertionError('not done in %d s: %s' % (WAIT, what))


def _logged(caplog: pytest.LogCaptureFixture, *words: str) -> bool:
    return any(all(w in r.getMessage() for w in words) for r in caplog.records
               if r.name == HEAL_LOGGER and r.levelno == logging.WARNING)


@pytest.fixture(scope='module')
def servers(stack: MariaDBStack) -> list[dict]:
    return boot_active(stack, 'heal.periodic', ('kept', 'broken'), VERSION)


def _orphan(stack: MariaDBStack, rp_uuid: str) -> str:
    consumer = str(uuid.uuid4())
    resp = placement(stack, 'PUT', '/allocations/%s' % consumer, json={
        'allocations': {rp_uuid: {'resources': {'VCPU': 1, 'MEMORY_MB': 64}}},
        'project_id': str(uuid.uuid4()), 'user_id': str(uuid.uuid4()),
        'consumer_generation': None, 'consumer_type': 'INSTANCE'})
    assert resp.status_code == 204, resp.text
    return consumer


def test_missing_and_orphan_allocations_are_repaired_and_logged(
        stack: MariaDBStack, servers: list[dict], caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger=HEAL_LOGGER)
    kept, broken = servers
    kept_before = _allocations(stack, kept['id'])
    broken_before = _allocations(stack, broken['id'])
    orphan = _orphan(stack, provider_of(stack, broken['OS-EXT-SRV-ATTR:host']))
    assert placement(stack, 'DELETE', '/allocations/%s' % broken['id']).status_code == 204

    _wait('orphan deleted', lambda: not _allocations(stack, orphan))
    _wait('allocation back', lambda: bool(_allocations(stack, broken['id'])))
    assert _allocations(stack, broken['id']) == broken_before
    _wait('both logged', lambda: _logged(caplog, 'deleted the orphan', orphan)
          and _logged(caplog, 'created the missing allocation', broken['id']))
    assert _allocations(stack, kept['id']) == kept_before
    assert not _logged(caplog, kept['id'])


def test_report_only_logs_and_changes_nothing(
        stack: MariaDBStack, servers: list[dict], caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger=HEAL_LOGGER)
    kept, broken = servers
    kept_before = _allocations(stack, kept['id'])
    CONF.set_override('allocation_heal_action', 'report', group='conductor')
    try:
        orphan = _orphan(stack, provider_of(stack, broken['OS-EXT-SRV-ATTR:host']))
        assert placement(stack, 'DELETE',
                          '/allocations/%s' % broken['id']).status_code == 204
        _wait('both reported', lambda: _logged(caplog, 'report only', orphan)
              and _logged(caplog, 'report only', broken['id']))
        assert _allocations(stack, orphan)
        assert _allocations(stack, broken['id']) == {}
        assert not _logged(caplog, 'deleted the orphan', orphan)
    finally:
        CONF.clear_override('allocation_heal_action', group='conductor')
    # Repair again: the next runs put things right.
    _wait('orphan deleted', lambda: not _allocations(stack, orphan))
    _wait('allocation back', lambda: bool(_allocations(stack, broken['id'])))
    assert _allocations(stack, kept['id']) == kept_before


def test_the_first_run_after_the_damage_repairs_it(
        stack: MariaDBStack, servers: list[dict], monkeypatch: pytest.MonkeyPatch) -> None:
    """Within one period: the first run of the task that starts after an allocation is
    deleted by hand and an orphan created by hand ends with both repaired."""
    _kept, broken = servers
    damaged = threading.Event()
    # For each run that started after the damage: (orphan gone, allocation back) at its end.
    after_damage: list[tuple[bool, bool]] = []
    real = heal_allocations.heal_all

    def observed(*args, **kwargs):
        started_after = damaged.is_set()
        result = real(*args, **kwargs)
        if started_after:
            after_damage.append((not _allocations(stack, orphan),
                                 bool(_allocations(stack, broken['id']))))
        return result

    monkeypatch.setattr(heal_allocations, 'heal_all', observed)
    orphan = _orphan(stack, provider_of(stack, broken['OS-EXT-SRV-ATTR:host']))
    assert placement(stack, 'DELETE', '/allocations/%s' % broken['id']).status_code == 204
    damaged.set()
    _wait('a run after the damage', lambda: bool(after_damage))
    assert after_damage[0] == (True, True)
