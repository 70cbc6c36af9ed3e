"""The live migration API on the real stack (fake computes): aborting and force
completing a server's live migration are refused as Nova refuses them, on real rows."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from novalite import context as nl_context
from novalite import objects

OWNER = 'alice:proj-a'
OTHER = 'bob:proj-b'


@pytest.fixture(scope='module')
def flavor_id(stack):
    resp = stack.request('POST', '/flavors', json={'flavor': {
        'name': 'm1.live', 'ram': 128, 'vcpus': 1, 'disk': 1}})
    assert resp.status_code == 200, resp.text
    return resp.json()['flavor']['id']


def _boot(stack, flavor_id, token=OWNER) -> dict:
    body = {'server': {'name': 'live-vm', 'imageRef': stack.image['id'],
                       'flavorRef': flavor_id, 'networks': 'none'}}
    resp = stack.request('POST', '/servers', token=token, json=body, version='2.37')
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
