"""The live migration API on the real stack (fake computes): aborting and force
completing a server's live migration are refused as Nova refuses them, on real rows;
a slow fake live migration is aborted (running or still queued) or forced to end."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from novalite import context as nl_context
from novalite import objects
from tests.functional.libvirt_stack import wait
from tests.functional.stack import Stack

OWNER = 'alice:proj-a'
OTHER = 'bob:proj-b'
HOSTS = ('host1', 'host2')


@pytest.fixture(scope='module')
def stack(tmp_path_factory):
    """Fake computes whose live migrations copy 1 MiB a second (a 128 MiB guest would
    take two minutes: time to abort or force it) and run one at a time per host."""
    stack = Stack(str(tmp_path_factory.mktemp('live-migration')), compute_hosts=HOSTS,
                  overrides={('fake_driver', 'live_migration_mb_per_second'): 1.0,
                             (None, 'max_concurrent_live_migrations'): 1})
    stack.start()
    try:
        yield stack
    finally:
        stack.stop()


@pytest.fixture(scope='module')
def flavor_id(stack):
    resp = stack.request('POST', '/flavors', json={'flavor': {
        'name': 'm1.live', 'ram': 128, 'vcpus': 1, 'disk': 1}})
    assert resp.status_code == 200, resp.text
    return resp.json()['flavor']['id']


def _boot(stack, flavor_id, token=OWNER, host: str | None = None) -> dict:
    body: dict = {'server': {'name': 'live-vm', 'imageRef': stack.image['id'],
                             'flavorRef': flavor_id, 'networks': 'none'}}
    if host:
        # A requested host is the administrator's to give (2.74).
        body['server']['host'] = host
        token = 'admin:admin'
    resp = stack.request('POST', '/servers', token=token, json=body, version='2.74')
    assert resp.status_code == 202, resp.text
    return stack.wait_for_status(resp.json()['server']['id'], ('ACTIVE',), token=token)


@pytest.fixture
def server(stack, flavor_id) -> Iterator[dict]:
    server = _boot(stack, flavor_id)
    yield stack.request('GET', '/servers/%s' % server['id']).json()['server']
    _edit(server['id'], task_state=None)
    assert stack.request('DELETE', '/servers/%s' % server['id']).status_code == 204
    stack.wait_for_deleted(server['id'])


def _cell_context(server_id: str) -> Any:
    ctxt = nl_context.get_admin_context()
    mapping = objects.InstanceMapping.get_by_instance_uuid(ctxt, server_id)
    return nl_context.target_cell(ctxt, mapping.cell_mapping)


def _edit(server_id: str, **values: Any) -> None:
    """Put the server's row in a state no request leads to without a real move."""
    with _cell_context(server_id) as cctxt:
        instance = objects.Instance.get_by_uuid(cctxt, server_id)
        for name, value in values.items():
            setattr(instance, name, value)
        instance.save()


def _migration(server: dict, status: str, migration_type: str = 'live-migration',
               **values: Any) -> objects.Migration:
    """A migration row of ``server`` from its host to the other one."""
    source = server['OS-EXT-SRV-ATTR:host']
    with _cell_context(server['id']) as cctxt:
        migration = objects.Migration(
            cctxt, instance_uuid=server['id'], source_compute=source,
            source_node=server['OS-EXT-SRV-ATTR:hypervisor_hostname'],
            dest_compute='host2' if source == 'host1' else 'host1', dest_node=None,
            dest_host=None, old_instance_type_id=1, new_instance_type_id=1, status=status,
            migration_type=migration_type, hidden=False, cross_cell_move=False,
            user_id='alice', project_id='proj-a', **values)
        migration.create()
    return migration


def _abort(stack, server_id, migration_id, version='2.24', token='admin:admin'):
    return stack.request('DELETE', '/servers/%s/migrations/%s' % (server_id, migration_id),
                         token=token, version=version)


def _force(stack, server_id, migration_id, version='2.22', token='admin:admin'):
    return stack.request('POST', '/servers/%s/migrations/%s/action' % (server_id,
                                                                        migration_id),
                         token=token, version=version, json={'force_complete': None})


def _message(resp) -> str:
    return next(iter(resp.json().values()))['message']


def _actions(stack, server_id) -> list[str]:
    resp = stack.request('GET', '/servers/%s/os-instance-actions' % server_id)
    return [a['action'] for a in resp.json()['instanceActions']]


def test_a_server_that_is_not_migrating_is_a_conflict(stack, server):
    migration = _migration(server, 'running')
    resp = _abort(stack, server['id'], migration.id)
    assert resp.status_code == 409
    assert "Cannot 'abort live migration' instance %s while it is in task_state None" \
        % server['id'] == _message(resp)
    resp = _force(stack, server['id'], migration.id)
    assert resp.status_code == 409
    assert "while it is in task_state None" in _message(resp)
    assert _actions(stack, server['id']) == ['create']


def test_statuses_that_cannot_be_aborted_or_forced(stack, server):
    _edit(server['id'], task_state='migrating')
    queued = _migration(server, 'queued')
    resp = _abort(stack, server['id'], queued.id, version='2.64')
    assert resp.status_code == 400
    assert _message(resp) == (
        'Migration %s state of instance %s is queued. Cannot abort live migration while '
        'the migration is in this state.' % (queued.id, server['id']))
    resp = _force(stack, server['id'], queued.id)
    assert resp.status_code == 400
    assert 'Cannot force complete while' in _message(resp)
    # A finished resize of the same server: not running, so refused (400), as Nova.
    resize = _migration(server, 'confirmed', migration_type='resize')
    assert _abort(stack, server['id'], resize.id, version='latest').status_code == 400
    assert _actions(stack, server['id']) == ['create']


def test_another_servers_migration_is_not_found(stack, server, flavor_id):
    other = _boot(stack, flavor_id)
    try:
        other = stack.request('GET', '/servers/%s' % other['id']).json()['server']
        theirs = _migration(other, 'running')
        _edit(server['id'], task_state='migrating')
        resp = _abort(stack, server['id'], theirs.id)
        assert resp.status_code == 404
        assert _message(resp) == 'Migration %s not found for instance %s' % (
            theirs.id, server['id'])
        assert _force(stack, server['id'], theirs.id).status_code == 400
        assert _abort(stack, server['id'], 999999).status_code == 404
    finally:
        assert stack.request('DELETE', '/servers/%s' % other['id']).status_code == 204
        stack.wait_for_deleted(other['id'])


def test_who_may_abort(stack, server):
    _edit(server['id'], task_state='migrating')
    migration = _migration(server, 'completed')
    # The owner is a member, not the project's manager; another project sees nothing.
    assert _abort(stack, server['id'], migration.id, token=OWNER).status_code == 403
    assert _force(stack, server['id'], migration.id, token=OWNER).status_code == 403
    assert _abort(stack, server['id'], migration.id, token=OTHER).status_code == 404
    assert _abort(stack, server['id'], migration.id, version='2.23').status_code == 404
    assert _force(stack, server['id'], migration.id, version='2.21').status_code == 404


def test_a_running_live_migration_shows_its_progress(stack, server):
    _edit(server['id'], task_state='migrating')
    migration = _migration(server, 'running', memory_total=512 << 20,
                           memory_processed=128 << 20, memory_remaining=384 << 20)
    path = '/servers/%s/migrations' % server['id']
    listed = stack.request('GET', path, version='2.23').json()['migrations']
    assert [m['id'] for m in listed] == [migration.id]
    assert listed[0]['memory_total_bytes'] == 512 << 20
    assert listed[0]['memory_processed_bytes'] == 128 << 20
    assert listed[0]['memory_remaining_bytes'] == 384 << 20
    assert listed[0]['disk_total_bytes'] is None


# -- live migrations on the fake computes -----------------------------------------------


def _live_migrate(stack, server_id, host=None):
    resp = stack.request('POST', '/servers/%s/action' % server_id, version='2.68',
                         json={'os-migrateLive': {'host': host, 'block_migration': 'auto'}})
    assert resp.status_code == 202, resp.text


def _live_migration(stack, server_id) -> dict:
    """The server's newest live migration, as os-migrations shows it."""
    found = stack.request('GET', '/os-migrations?instance_uuid=%s&migration_type='
                          'live-migration' % server_id, version='2.80').json()['migrations']
    return max(found, key=lambda m: m['id'])


def _reaches(stack, server_id, status) -> dict:
    wait(lambda: _live_migration(stack, server_id)['status'] == status, timeout=20)
    return _live_migration(stack, server_id)


def _settled(stack, server_id) -> dict:
    """The server once no task is under way (ACTIVE)."""
    def settled() -> bool:
        server = stack.request('GET', '/servers/%s' % server_id).json()['server']
        return server['OS-EXT-STS:task_state'] is None
    wait(settled, timeout=20)
    server = stack.request('GET', '/servers/%s' % server_id).json()['server']
    assert server['status'] == 'ACTIVE'
    return server


def _allocations(stack, consumer) -> dict:
    """{host: resources} of a Placement consumer."""
    names = {rp['uuid']: rp['name'] for rp in
             stack.placement_get('/resource_providers')['resource_providers']}
    allocations = stack.placement_get('/allocations/%s' % consumer)['allocations']
    return {names[rp]: a['resources'] for rp, a in allocations.items()}


@pytest.fixture
def on_host1(stack, flavor_id) -> Iterator[Callable[[], str]]:
    """Servers booted on host1 (append to boot more); deleted at the end."""
    booted: list[str] = []

    def boot() -> str:
        booted.append(_boot(stack, flavor_id, host='host1')['id'])
        return booted[-1]
    yield boot
    for server_id in booted:
        assert stack.request('DELETE', '/servers/%s' % server_id).status_code == 204
    for server_id in booted:
        stack.wait_for_deleted(server_id)


def test_abort_a_running_live_migration(stack, on_host1):
    server_id = on_host1()
    before = _allocations(stack, server_id)
    _live_migrate(stack, server_id)
    migration = _reaches(stack, server_id, 'running')
    assert migration['dest_compute'] == 'host2'
    path = '/servers/%s/migrations/%s' % (server_id, migration['id'])

    def progress() -> dict:
        return stack.request('GET', path, version='2.23').json()['migration']
    # The driver reports its first counters just after the copy starts.
    wait(lambda: progress()['memory_total_bytes'] is not None)
    assert progress()['memory_total_bytes'] == 128 << 20
    assert progress()['memory_processed_bytes'] < 128 << 20

    resp = _abort(stack, server_id, migration['id'])
    assert resp.status_code == 202, resp.text
    assert _reaches(stack, server_id, 'cancelled')['id'] == migration['id']
    server = _settled(stack, server_id)
    assert server['OS-EXT-SRV-ATTR:host'] == 'host1'
    assert _allocations(stack, server_id) == before
    assert _allocations(stack, migration['uuid']) == {}
    assert 'live_migration_cancel' in _actions(stack, server_id)
    # Over now: neither can be done again.
    assert _abort(stack, server_id, migration['id']).status_code == 409
    assert stack.request('GET', '/servers/%s/migrations' % server_id,
                         version='2.23').json()['migrations'] == []


def test_a_queued_live_migration_is_aborted_from_2_65(stack, on_host1):
    first, second = on_host1(), on_host1()
    _live_migrate(stack, first)
    running = _reaches(stack, first, 'running')
    _live_migrate(stack, second)
    # One live migration at a time per host: the second waits in the source's queue.
    queued = _reaches(stack, second, 'queued')
    refused = _abort(stack, second, queued['id'], version='2.64')
    assert refused.status_code == 400
    assert 'is queued. Cannot abort live migration' in _message(refused)
    assert _force(stack, second, queued['id']).status_code == 400

    assert _abort(stack, second, queued['id'], version='2.65').status_code == 202
    _reaches(stack, second, 'cancelled')
    assert _settled(stack, second)['OS-EXT-SRV-ATTR:host'] == 'host1'
    assert list(_allocations(stack, second)) == ['host1']
    assert _live_migration(stack, first)['status'] == 'running'
    assert _abort(stack, first, running['id']).status_code == 202
    _reaches(stack, first, 'cancelled')
    _settled(stack, first)


def test_force_complete_ends_a_running_live_migration(stack, on_host1):
    server_id = on_host1()
    before = _allocations(stack, server_id)
    _live_migrate(stack, server_id, host='host2')
    migration = _reaches(stack, server_id, 'running')
    resp = _force(stack, server_id, migration['id'])
    assert resp.status_code == 202, resp.text
    _reaches(stack, server_id, 'completed')
    server = _settled(stack, server_id)
    assert server['OS-EXT-SRV-ATTR:host'] == 'host2'
    assert _allocations(stack, server_id) == {'host2': before['host1']}
    assert _allocations(stack, migration['uuid']) == {}
    assert 'live_migration_force_complete' in _actions(stack, server_id)
