"""Issue 24's acceptance on fake computes with the real Neutron: live migration as an
operator drives it with openstackclient.

``openstack server migrate --live-migration [--host H] --wait`` moves a server with a
port from hostA to hostB: Placement holds its allocation on hostB's provider only (none
for the migration's uuid), its port is bound to hostB with one binding left, and
``openstack server migration list`` shows the migration completed. A migration a
pre-check refuses (hostB full, hostB down, the server's own host) leaves the server
ACTIVE on hostA with the migration in ``error``, a fault and the action's failed event;
from 2.30 a named host is the scheduler's to check unless forced.
A slow migration (the fake driver copies a guest's memory at
``[fake_driver] live_migration_mb_per_second``) shows its progress in
``openstack server migration show``, and is aborted (the server stays on hostA, nothing
left on hostB) or force-completed (the server on hostB before the copy could have
ended). A compute killed during a live migration and started again by its unit leaves
the server ACTIVE on one host with its allocation and binding there only, and the
migration in ``error``.

openstacksdk sends ``os-migrateLive`` at API 2.30 whatever ``--os-compute-api-version``
says, so openstackclient's live migrations are the synchronous kind (before 2.34): a
refusal is the command's 400 as well. The asynchronous kind (2.34 and later: 202, the
refusal only in the migration, fault and event) is checked with the REST API.
"""
from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.devstack import clients, network
from tests.devstack.clients import CommandFailed, osc
from tests.devstack.harness import Stack

STACK = {'network': True}
# openstackclient's microversion: 2.59 gives the migrations' uuids, 2.80 is the newest
# that `server migration list/show` know.
MV = ('--os-compute-api-version', '2.80')
MIB = 1024 * 1024
# The fake driver's default [fake_driver] live_migration_mb_per_second (the stack sets
# none): a guest of M MiB takes M / 256 s to copy.
FAKE_MIB_PER_SECOND = 256
# A guest slow enough to watch, abort and force (48 s at 256 MiB/s) that each fake host
# (16384 MiB, 512 reserved) still takes.
SLOW_MIB = 12288
SLOW_FLAVOR = 'lm.slow'
FILLER_FLAVOR = 'lm.filler'
# How long a move or a recovery may take to settle (the slow copy included).
SETTLE = 150.0
# The compute's periodic update_available_resource ([DEFAULT] update_resources_interval
# 0: oslo.service's default spacing).
AUDIT = 60


# -- fixtures -----------------------------------------------------------------------------


@pytest.fixture(scope='module')
def net(stack: Stack) -> dict[str, Any]:
    return network.make_network(stack, 'live-net', '10.41.0.0/24')


@pytest.fixture(scope='module')
def slow_flavor(stack: Stack) -> Iterator[str]:
    for host in ('hostA', 'hostB'):
        free = _free_memory(stack, host)
        assert free >= SLOW_MIB, '%s has %d MiB free, the slow guest needs %d' % (
            host, free, SLOW_MIB)
    osc(stack, 'flavor', 'create', '--ram', str(SLOW_MIB), '--vcpus', '1', '--disk', '1',
        SLOW_FLAVOR)
    yield SLOW_FLAVOR
    osc(stack, 'flavor', 'delete', SLOW_FLAVOR, fmt_json=False)


@pytest.fixture
def servers(stack: Stack) -> Iterator[list[str]]:
    """The test's servers, deleted after it; none may keep an allocation (its own or
    its migrations') or a port."""
    _wait_computes_up(stack)
    made: list[str] = []
    yield made
    migrations = [m['UUID'] for sid in made for m in _migrations(stack, sid)]
    for sid in made:
        _stop_migrating(stack, sid)
    clients.delete_all(stack, made, 180)
    held = {consumer: clients.allocations(stack, consumer)
            for consumer in made + migrations}
    assert not {c: a for c, a in held.items() if a}, 'allocations left: %s' % held
    assert not [p for sid in made for p in network.ports_of(stack, sid)]


def _stop_migrating(stack: Stack, sid: str) -> None:
    """Abort what a failed test left migrating, so that the next test finds room (a
    delete during a live migration is not what these tests are about)."""
    shown = stack.api('GET', '/servers/%s/migrations' % sid).json().get('migrations', [])
    for migration in shown:
        stack.api('DELETE', '/servers/%s/migrations/%d' % (sid, migration['id']))
    if shown:
        try:
            _settled(stack, sid, 120)
        except TimeoutError as exc:
            print('\n%s: %s' % (sid, exc))


# -- helpers ------------------------------------------------------------------------------


def _wait_computes_up(stack: Stack) -> None:
    def up() -> bool:
        services = stack.api('GET', '/os-services?binary=novalite-compute').json()
        return {s['host'] for s in services['services']
                if s['state'] == 'up' and not s.get('forced_down')} >= {'hostA', 'hostB'}
    stack.wait_for(up, 60, 'hostA and hostB up')


def _provider(stack: Stack, host: str) -> str:
    """The uuid of ``host``'s compute node, which is its resource provider's."""
    hypervisors = stack.api('GET', '/os-hypervisors/detail').json()['hypervisors']
    return next(h['id'] for h in hypervisors if h['service']['host'] == host)


def _free_memory(stack: Stack, host: str) -> int:
    """MiB of memory Placement would still give out on ``host``."""
    assert stack.placement is not None
    rp = _provider(stack, host)
    inventory = stack.placement.get('/resource_providers/%s/inventories' % rp).json()[
        'inventories']['MEMORY_MB']
    used = stack.placement.get('/resource_providers/%s/usages' % rp).json()[
        'usages'].get('MEMORY_MB', 0)
    capacity = int((inventory['total'] - inventory['reserved'])
                   * inventory['allocation_ratio'])
    return min(capacity - used, inventory['max_unit'])


def _compute_free_ram(stack: Stack, host: str) -> int:
    """MiB of memory ``host``'s resource tracker would still claim for a guest (its
    node's ``free_ram_mb``, shown up to API 2.87)."""
    hypervisors = stack.api('GET', '/os-hypervisors/detail', microversion='2.87').json()[
        'hypervisors']
    return next(h['free_ram_mb'] for h in hypervisors if h['service']['host'] == host)


def _boot(stack: Stack, servers: list[str], net: dict[str, Any], name: str,
          host: str = 'hostA', flavor: str = 'm1.nano') -> str:
    if flavor == SLOW_FLAVOR:
        # What a test before this one left to the resource tracker's periodic audit
        # (update_available_resource: every 60 s) is not this test's.
        stack.wait_for(lambda: _compute_free_ram(stack, host) >= SLOW_MIB, AUDIT + 30,
                       'room for %d MiB on %s' % (SLOW_MIB, host), 1)
    sid = clients.boot(stack, name, flavor, networks=[{'uuid': net['id']}], host=host)
    servers.append(sid)
    view = clients.wait_settled(stack, [sid])[sid]
    assert view['status'] == 'ACTIVE', 'boot of %s on %s: %s %s' % (
        name, host, view['status'], (view.get('fault') or {}).get('message'))
    assert view['OS-EXT-SRV-ATTR:host'] == host
    return sid


def _live_migrate(stack: Stack, sid: str, *args: str) -> str:
    """``openstack server migrate --live-migration ARGS SERVER``; returns its output."""
    return osc(stack, *MV, 'server', 'migrate', '--live-migration', *args, sid,
               fmt_json=False, timeout=SETTLE + 60)


def _migrations(stack: Stack, sid: str) -> list[dict[str, Any]]:
    """``openstack server migration list`` of the server's live migrations, newest
    first."""
    listed = osc(stack, *MV, 'server', 'migration', 'list', '--server', sid, '--type',
                 'live-migration')
    return sorted(listed, key=lambda m: m['Id'], reverse=True)


def _in_progress(stack: Stack, sid: str) -> dict[str, Any]:
    """The server's live migration once its copy runs (GET /servers/{id}/migrations)."""
    def running() -> dict[str, Any] | None:
        shown = stack.api('GET', '/servers/%s/migrations' % sid).json()['migrations']
        return next((m for m in shown if m['status'] == 'running'), None)
    return stack.wait_for(running, 60, 'a running live migration of %s' % sid)


def _shown(stack: Stack, sid: str, mid: int) -> dict[str, Any]:
    resp = stack.api('GET', '/servers/%s/migrations/%d' % (sid, mid))
    assert resp.status_code == 200, resp.text
    return resp.json()['migration']


def _settled(stack: Stack, sid: str, timeout: float = SETTLE) -> dict[str, Any]:
    """The server's view once no task runs on it and its live migration has ended."""
    def settled() -> dict[str, Any] | None:
        view = clients.server(stack, sid)
        if view.get('OS-EXT-STS:task_state') or view['status'] == 'MIGRATING':
            return None
        shown = stack.api('GET', '/servers/%s/migrations' % sid).json()['migrations']
        return None if shown else view
    return stack.wait_for(settled, timeout, 'server %s settled' % sid, 0.5)


def _bindings(stack: Stack, port_id: str) -> list[dict[str, Any]] | None:
    """The port's bindings (GET /ports/{id}/bindings); None without binding-extended."""
    assert stack.neutron is not None
    if stack.neutron.api('GET', '/extensions/binding-extended').status_code != 200:
        return None
    resp = stack.neutron.api('GET', '/ports/%s/bindings' % port_id)
    resp.raise_for_status()
    return resp.json()['bindings']


def _assert_only_on(stack: Stack, sid: str, host: str,
                    migration: dict[str, Any] | None = None) -> None:
    """The server is ACTIVE on ``host`` and holds nothing anywhere else: its allocation
    on ``host``'s provider only, none for its migration, its port bound to ``host``
    with that one binding."""
    view = clients.server(stack, sid)
    assert (view['status'], view['OS-EXT-STS:task_state'], view['OS-EXT-SRV-ATTR:host']
            ) == ('ACTIVE', None, host), view
    held = clients.allocations(stack, sid)
    assert list(held) == [_provider(stack, host)], (
        'allocations of %s: %s (%s is %s)' % (sid, held, host, _provider(stack, host)))
    if migration is not None:
        assert clients.allocations(stack, migration['UUID']) == {}, migration
    ports = network.ports_of(stack, sid)
    assert len(ports) == 1, ports
    assert ports[0]['binding:host_id'] == host, ports[0]
    assert ports[0]['binding:vif_type'] == 'ovs', ports[0]
    bindings = _bindings(stack, ports[0]['id'])
    if bindings is not None:
        assert [(b['host'], b['status']) for b in bindings] == [(host, 'ACTIVE')], bindings


def _nothing_of_on(stack: Stack, consumers: list[str], host: str) -> None:
    """None of ``consumers`` holds an allocation on ``host``'s provider."""
    assert stack.placement is not None
    rp = _provider(stack, host)
    held = stack.placement.get('/resource_providers/%s/allocations' % rp).json()[
        'allocations']
    assert not set(held) & set(consumers), 'left on %s: %s' % (host, held)


def _assert_refused(stack: Stack, sid: str, words: tuple[str, ...]) -> dict[str, Any]:
    """The server's last live migration was refused: ``error``, the server ACTIVE on
    hostA holding nothing elsewhere, a fault and the action's failed event, each
    naming one of ``words``. Returns the migration."""
    _settled(stack, sid)
    migrations = _migrations(stack, sid)
    assert migrations, 'no live migration of %s recorded' % sid
    migration = migrations[0]
    assert migration['Status'] == 'error', migration
    assert migration['Source Compute'] == 'hostA', migration
    _assert_only_on(stack, sid, 'hostA', migration)
    faults = stack.query('cell1', 'SELECT message FROM instance_faults WHERE '
                         'instance_uuid = :uuid ORDER BY id DESC', uuid=sid)
    assert faults, 'no fault recorded for %s' % sid
    fault = faults[0].message or ''
    assert any(w.lower() in fault.lower() for w in words), (fault, words)
    failed = _failed_events(stack, sid)
    assert failed, 'no failed event in the live-migration action of %s' % sid
    assert any(any(w.lower() in (e.get('details') or '').lower() for w in words)
               for e in failed), (failed, words)
    print('\nrefused: fault %r; events %s' % (fault, failed))
    return migration


def _failed_events(stack: Stack, sid: str) -> list[dict[str, Any]]:
    """The events of the server's newest ``live-migration`` action that failed (2.84:
    with their details)."""
    actions = stack.api('GET', '/servers/%s/os-instance-actions' % sid,
                        microversion='2.84').json()['instanceActions']
    live = [a for a in actions if a['action'] == 'live-migration']
    assert live, actions
    action = stack.api('GET', '/servers/%s/os-instance-actions/%s' % (
        sid, live[0]['request_id']), microversion='2.84').json()['instanceAction']
    return [e for e in action['events'] if e['result'] == 'Error']


def _set_down(stack: Stack, host: str, down: bool) -> None:
    """``openstack compute service set --down|--up HOST novalite-compute``."""
    osc(stack, *MV, 'compute', 'service', 'set', '--down' if down else '--up', host,
        'novalite-compute', fmt_json=False)


# -- 1. a server moves ---------------------------------------------------------------------


def test_live_migrate_to_a_named_host_and_back_where_the_scheduler_chooses(
        stack: Stack, net: dict[str, Any], servers: list[str]) -> None:
    sid = _boot(stack, servers, net, 'live-mover')
    _assert_only_on(stack, sid, 'hostA')

    out = _live_migrate(stack, sid, '--host', 'hostB', '--wait')
    assert 'Complete' in out, out
    first = _migrations(stack, sid)[0]
    assert (first['Status'], first['Source Compute'], first['Dest Compute']) == (
        'completed', 'hostA', 'hostB'), first
    _assert_only_on(stack, sid, 'hostB', first)
    assert list(clients.server(stack, sid)['addresses']) == ['live-net']

    # Without --host: the scheduler's choice (the only other host).
    _live_migrate(stack, sid, '--wait')
    migrations = _migrations(stack, sid)
    assert len(migrations) == 2, migrations
    second = migrations[0]
    assert (second['Status'], second['Source Compute'], second['Dest Compute']) == (
        'completed', 'hostB', 'hostA'), second
    _assert_only_on(stack, sid, 'hostA', second)
    _assert_only_on(stack, sid, 'hostA', first)


def test_the_source_gives_back_the_guests_memory_at_once(
        stack: Stack, net: dict[str, Any], servers: list[str]) -> None:
    sid = _boot(stack, servers, net, 'live-accounted', flavor='m1.tiny')
    before = _compute_free_ram(stack, 'hostA')
    _live_migrate(stack, sid, '--host', 'hostB', '--wait')
    assert clients.server(stack, sid)['OS-EXT-SRV-ATTR:host'] == 'hostB'
    # (An audit meanwhile can only give back more.)
    assert _compute_free_ram(stack, 'hostA') >= before + 512, (
        before, _compute_free_ram(stack, 'hostA'))


# -- 2. refusals ---------------------------------------------------------------------------


def _refused_by_osc(stack: Stack, sid: str, host: str) -> CommandFailed:
    with pytest.raises(CommandFailed) as failed:
        _live_migrate(stack, sid, '--host', host, '--wait')
    # Before 2.34 the API answers the conductor's refusal.
    assert re.search(r'\b400\b', failed.value.result.stderr), failed.value
    return failed.value


def test_refused_when_the_destination_is_full(stack: Stack, net: dict[str, Any],
                                              servers: list[str]) -> None:
    free = _free_memory(stack, 'hostB')
    osc(stack, 'flavor', 'create', '--ram', str(free), '--vcpus', '1', '--disk', '1',
        FILLER_FLAVOR)
    try:
        _boot(stack, servers, net, 'live-filler', 'hostB', FILLER_FLAVOR)
        assert _free_memory(stack, 'hostB') < 128
        sid = _boot(stack, servers, net, 'live-no-room')
        _refused_by_osc(stack, sid, 'hostB')
        _assert_refused(stack, sid, ('valid host', 'MEMORY_MB', 'memory'))
        _nothing_of_on(stack, [sid], 'hostB')
    finally:
        osc(stack, 'flavor', 'delete', FILLER_FLAVOR, fmt_json=False)


def test_refused_when_the_destination_is_down(stack: Stack, net: dict[str, Any],
                                              servers: list[str]) -> None:
    sid = _boot(stack, servers, net, 'live-host-down')
    _set_down(stack, 'hostB', True)
    try:
        _refused_by_osc(stack, sid, 'hostB')
        _assert_refused(stack, sid, ('hostB', 'valid host'))
    finally:
        _set_down(stack, 'hostB', False)
    _nothing_of_on(stack, [sid], 'hostB')


def test_refused_to_the_same_host(stack: Stack, net: dict[str, Any],
                                  servers: list[str]) -> None:
    """As Nova: the API only checks that the host exists; the conductor refuses the
    server's own host, which ends in the migration, the fault and the event (and, at
    2.30, in the command's 400 as well)."""
    sid = _boot(stack, servers, net, 'live-same-host')
    _refused_by_osc(stack, sid, 'hostA')
    _assert_refused(stack, sid, ('hostA', 'valid host'))


def test_refused_to_the_same_host_asynchronously(stack: Stack, net: dict[str, Any],
                                                 servers: list[str]) -> None:
    """From 2.34 the API answers 202 before the conductor's checks (Nova); the refusal
    is in the migration, the fault and the event."""
    sid = _boot(stack, servers, net, 'live-same-host-async')
    resp = stack.api('POST', '/servers/%s/action' % sid, microversion='2.68', json={
        'os-migrateLive': {'host': 'hostA', 'block_migration': 'auto'}})
    assert resp.status_code == 202, resp.text
    _assert_refused(stack, sid, ('hostA', 'valid host'))


def test_a_named_host_goes_through_the_scheduler_unless_forced(
        stack: Stack, net: dict[str, Any], servers: list[str]) -> None:
    """From 2.30 a named host is the scheduler's to check (openstackclient's --host),
    and its filters leave out a disabled host; ``force`` (2.30 to 2.67) takes it as it
    is, as Nova."""
    sid = _boot(stack, servers, net, 'live-disabled-dest')
    osc(stack, *MV, 'compute', 'service', 'set', '--disable', '--disable-reason', 'live test',
        'hostB', 'novalite-compute', fmt_json=False)
    try:
        _refused_by_osc(stack, sid, 'hostB')
        _assert_refused(stack, sid, ('valid host', 'hostB'))
        resp = stack.api('POST', '/servers/%s/action' % sid, microversion='2.67', json={
            'os-migrateLive': {'host': 'hostB', 'block_migration': 'auto', 'force': True}})
        assert resp.status_code == 202, resp.text
        _settled(stack, sid)
    finally:
        osc(stack, *MV, 'compute', 'service', 'set', '--enable', 'hostB', 'novalite-compute',
            fmt_json=False)
    migration = _migrations(stack, sid)[0]
    assert migration['Status'] == 'completed', migration
    _assert_only_on(stack, sid, 'hostB', migration)


# -- 3. abort and force complete ------------------------------------------------------------


def test_abort_a_slow_migration_leaves_the_server_on_its_host(
        stack: Stack, net: dict[str, Any], servers: list[str], slow_flavor: str) -> None:
    sid = _boot(stack, servers, net, 'live-abort', flavor=slow_flavor)
    _live_migrate(stack, sid, '--host', 'hostB')
    running = _in_progress(stack, sid)
    mid = str(running['id'])

    # openstack server migration show: the copy's progress, moving. (By uuid:
    # openstackclient 10.5 gives openstacksdk 4.22 a numeric id and the server in
    # each other's places, GET /servers/<id>/migrations/<server>.)
    first = osc(stack, *MV, 'server', 'migration', 'show', sid, running['uuid'])
    assert first['Status'] == 'running', first
    assert first['Memory Total Bytes'] == SLOW_MIB * MIB, first
    before = first['Memory Processed Bytes'] or 0
    stack.wait_for(lambda: (_shown(stack, sid, running['id'])['memory_processed_bytes']
                            or 0) > before, 30, 'the copy to move on', 0.5)
    second = osc(stack, *MV, 'server', 'migration', 'show', sid, running['uuid'])
    assert second['Memory Processed Bytes'] > before, (first, second)
    assert second['Memory Remaining Bytes'] < first['Memory Remaining Bytes'], (first,
                                                                               second)
    assert second['Memory Remaining Bytes'] > 0, 'the copy ended before the abort'

    osc(stack, *MV, 'server', 'migration', 'abort', sid, mid, fmt_json=False)
    _settled(stack, sid)
    migration = _migrations(stack, sid)[0]
    assert str(migration['Id']) == mid and migration['Status'] == 'cancelled', migration
    _assert_only_on(stack, sid, 'hostA', migration)
    _nothing_of_on(stack, [sid, migration['UUID']], 'hostB')
    # Nor in hostB's own accounting.
    assert _compute_free_ram(stack, 'hostB') >= SLOW_MIB


def test_force_complete_ends_a_slow_migration_at_once(
        stack: Stack, net: dict[str, Any], servers: list[str], slow_flavor: str) -> None:
    sid = _boot(stack, servers, net, 'live-force', flavor=slow_flavor)
    _live_migrate(stack, sid, '--host', 'hostB')
    mid = _in_progress(stack, sid)['id']
    asked = time.monotonic()
    remaining = _shown(stack, sid, mid)['memory_remaining_bytes']
    assert remaining, 'no progress reported'
    # When the copy would end by itself (from what it reported, a little early): a
    # force complete that did nothing is not done by then.
    natural_end = asked + remaining / (FAKE_MIB_PER_SECOND * MIB) - 3

    osc(stack, *MV, 'server', 'migration', 'force', 'complete', sid, str(mid),
        fmt_json=False)
    left = natural_end - time.monotonic()
    assert left > 5, 'the copy was nearly over before the force complete (%.1f s)' % left
    _settled(stack, sid, left)
    migration = _migrations(stack, sid)[0]
    assert migration['Id'] == mid and migration['Status'] == 'completed', migration
    _assert_only_on(stack, sid, 'hostB', migration)
    _nothing_of_on(stack, [sid, migration['UUID']], 'hostA')


# -- 4. a compute killed during a live migration --------------------------------------------


# Killing the source kills the copy with it: the restarted source rolls back (error).
# Killing the destination's compute does not stop the copy (the hypervisor runs it, as
# libvirt's QEMU outlives nova-compute): the source finishes it once the destination
# answers again, so the migration is completed there, as in Nova.
@pytest.mark.parametrize(('killed', 'ends_on', 'status'), [
    ('hostA', 'hostA', 'error'),
    ('hostB', 'hostB', 'completed'),
], ids=['source', 'destination'])
def test_compute_killed_during_a_live_migration(
        stack: Stack, net: dict[str, Any], servers: list[str], slow_flavor: str,
        killed: str, ends_on: str, status: str) -> None:
    sid = _boot(stack, servers, net, 'live-killed-%s' % killed, flavor=slow_flavor)
    _live_migrate(stack, sid, '--host', 'hostB')
    _in_progress(stack, sid)
    # kill -9, then started again as its unit does.
    stack.crash('compute-' + killed)

    view = _settled(stack, sid)
    host = view['OS-EXT-SRV-ATTR:host']
    assert host == ends_on, view
    migration = _migrations(stack, sid)[0]
    print('\n%s killed: server %s on %s, migration %s' % (
        killed, view['status'], host, migration['Status']))
    _assert_only_on(stack, sid, host, migration)
    other = 'hostB' if host == 'hostA' else 'hostA'
    _nothing_of_on(stack, [sid, migration['UUID']], other)
    assert migration['Status'] == status, migration
