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
import requests

from novalite.conductor.tasks import heal_allocations
from novalite.conf import CONF
from tests.fixtures.databases import DatabaseFactory
from tests.functional.mariadb_stack import MariaDBStack

VERSION = '2.53'
PLACEMENT_HEADERS = {'X-Auth-Token': 'admin', 'OpenStack-API-Version': 'placement 1.39'}
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


def _placement(stack: MariaDBStack, method: str, path: str, **kwargs) -> requests.Response:
    return requests.request(method, stack.placement.url + path, headers=PLACEMENT_HEADERS,
                            timeout=10, **kwargs)


def _allocations(stack: MariaDBStack, consumer: str) -> dict:
    """{provider: resources} of the consumer (the providers' generations left out)."""
    allocations = stack.placement_get('/allocations/%s' % consumer)['allocations']
    return {rp: a['resources'] for rp, a in allocations.items()}


def _provider(stack: MariaDBStack, host: str) -> str:
    return stack.placement_get('/resource_providers?name=%s' % host)[
        'resource_providers'][0]['uuid']


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
    resp = stack.request('POST', '/flavors', json={'flavor': {
        'name': 'heal.periodic', 'ram': 128, 'vcpus': 1, 'disk': 1}})
    assert resp.status_code == 200, resp.text
    flavor_id = resp.json()['flavor']['id']
    ids = []
    for name in ('kept', 'broken'):
        resp = stack.request('POST', '/servers', version=VERSION, json={'server': {
            'name': name, 'imageRef': stack.image['id'], 'flavorRef': flavor_id,
            'networks': 'none'}})
        assert resp.status_code == 202, resp.text
        ids.append(resp.json()['server']['id'])
    return [stack.wait_for_status(i, ('ACTIVE',), version=VERSION) for i in ids]


def _orphan(stack: MariaDBStack, rp_uuid: str) -> str:
    consumer = str(uuid.uuid4())
    resp = _placement(stack, 'PUT', '/allocations/%s' % consumer, json={
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
    orphan = _orphan(stack, _provider(stack, broken['OS-EXT-SRV-ATTR:host']))
    assert _placement(stack, 'DELETE', '/allocations/%s' % broken['id']).status_code == 204

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
        orphan = _orphan(stack, _provider(stack, broken['OS-EXT-SRV-ATTR:host']))
        assert _placement(stack, 'DELETE',
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
    orphan = _orphan(stack, _provider(stack, broken['OS-EXT-SRV-ATTR:host']))
    assert _placement(stack, 'DELETE', '/allocations/%s' % broken['id']).status_code == 204
    damaged.set()
    _wait('a run after the damage', lambda: bool(after_damage))
    assert after_damage[0] == (True, True)
