"""``novalite-manage placement heal_allocations / audit / sync_aggregates`` on MariaDB
with the real Placement: allocations removed or added behind novalite's back (straight
through Placement's API) are found and fixed, with nova-manage's exit codes."""
from __future__ import annotations

import uuid

import pytest

from tests.functional.mariadb_stack import (  # noqa: F401
    MariaDBStack,
    boot_active,
    manage_in,
    mariadb_stack,
    placement,
    provider_of,
)

VERSION = '2.53'
FLAVOR = {'VCPU': 1, 'MEMORY_MB': 128, 'DISK_GB': 1}


def _allocations(stack: MariaDBStack, consumer: str) -> dict:
    return stack.placement_get('/allocations/%s' % consumer)


@pytest.fixture(scope='module')
def servers(mariadb_stack: MariaDBStack) -> list[dict]:  # noqa: F811
    return boot_active(mariadb_stack, 'heal.tiny', ('heal-a', 'heal-b'), VERSION)


def test_heal_allocations_recreates_an_allocation_deleted_inplacement(
        mariadb_stack: MariaDBStack, servers: list[dict]) -> None:  # noqa: F811
    stack = mariadb_stack
    server = servers[0]
    host = server['OS-EXT-SRV-ATTR:host']
    before = _allocations(stack, server['id'])
    assert before['allocations'], before

    rc, out = manage_in(stack, "placement", "heal_allocations")
    assert rc == 4, out  # nothing to do
    assert placement(stack, 'DELETE', '/allocations/%s' % server['id']).status_code == 204

    rc, out = manage_in(stack, 'placement', 'heal_allocations', '--dry-run')
    assert rc == 4, out
    assert '[dry-run]' in out and server['id'] in out
    assert _allocations(stack, server['id'])['allocations'] == {}

    rc, out = manage_in(stack, 'placement', 'heal_allocations', '--verbose')
    assert rc == 0, out
    healed = _allocations(stack, server['id'])
    assert {rp: a['resources'] for rp, a in healed['allocations'].items()} == {
        provider_of(stack, host): FLAVOR}
    assert (healed['project_id'], healed['user_id']) == (before['project_id'],
                                                         before['user_id'])
    # The other server was left as it was, and a second run has nothing to do.
    assert _allocations(stack, servers[1]['id'])['allocations']
    assert manage_in(stack, 'placement', 'heal_allocations')[0] == 4


def test_heal_allocations_max_count_instance_and_force(
        mariadb_stack: MariaDBStack, servers: list[dict]) -> None:  # noqa: F811
    stack = mariadb_stack
    for server in servers:
        placement(stack, 'DELETE', '/allocations/%s' % server['id'])
    rc, out = manage_in(stack, 'placement', 'heal_allocations', '--max-count', '1')
    assert rc == 1, out
    assert 'Max count reached' in out
    assert manage_in(stack, 'placement', 'heal_allocations', '--max-count', '1')[0] == 0
    for server in servers:
        assert _allocations(stack, server['id'])['allocations']
    assert manage_in(stack, 'placement', 'heal_allocations', '--max-count', '1')[0] == 4

    server_id = servers[1]['id']
    assert manage_in(stack, 'placement', 'heal_allocations', '--instance', server_id)[0] == 4
    rc, out = manage_in(stack, 'placement', 'heal_allocations', '--instance', server_id,
                        '--force')
    assert rc == 0, out
    assert _allocations(stack, server_id)['allocations']


@pytest.mark.parametrize('argv, message', [
    (('--force',), '--force requires --instance'),
    (('--max-count', '0'), 'positive integer'),
    (('--instance', str(uuid.uuid4())), 'Unable to find cell for instance'),
    (('--instance', str(uuid.uuid4()), '--cell', str(uuid.uuid4())), 'mutually exclusive'),
    (('--cell', str(uuid.uuid4())), 'was not found'),
])
def test_heal_allocations_invalid_input_is_127(mariadb_stack: MariaDBStack,  # noqa: F811
                                               argv: tuple[str, ...], message: str) -> None:
    rc, out = manage_in(mariadb_stack, 'placement', 'heal_allocations', *argv)
    assert rc == 127, out
    assert message in out


def test_audit_finds_and_deletes_an_orphan_allocation(
        mariadb_stack: MariaDBStack, servers: list[dict]) -> None:  # noqa: F811
    stack = mariadb_stack
    assert manage_in(stack, 'placement', 'audit', '--verbose')[0] == 0
    host = servers[0]['OS-EXT-SRV-ATTR:host']
    rp_uuid = provider_of(stack, host)
    other = provider_of(stack, 'host2' if host == 'host1' else 'host1')
    orphan = str(uuid.uuid4())
    resp = placement(stack, 'PUT', '/allocations/%s' % orphan, json={
        'allocations': {rp_uuid: {'resources': {'VCPU': 1, 'MEMORY_MB': 64}}},
        'project_id': str(uuid.uuid4()), 'user_id': str(uuid.uuid4()),
        'consumer_generation': None, 'consumer_type': 'INSTANCE'})
    assert resp.status_code == 204, resp.text

    rc, out = manage_in(stack, 'placement', 'audit')
    assert rc == 3, out
    assert orphan in out
    assert _allocations(stack, orphan)['allocations']
    assert manage_in(stack, 'placement', 'audit', '--resource_provider', other)[0] == 0
    rc, out = manage_in(stack, 'placement', 'audit', '--resource_provider',
                        str(uuid.uuid4()))
    assert rc == 127 and 'does not exist' in out, out

    rc, out = manage_in(stack, 'placement', 'audit', '--delete', '--resource_provider',
                        rp_uuid)
    assert rc == 4, out
    assert _allocations(stack, orphan)['allocations'] == {}
    assert manage_in(stack, 'placement', 'audit')[0] == 0
    for server in servers:
        assert _allocations(stack, server['id'])['allocations']


def test_sync_aggregates_mirrors_host_aggregates(mariadb_stack: MariaDBStack) -> None:  # noqa: F811
    stack = mariadb_stack
    resp = stack.request('POST', '/os-aggregates', version=VERSION,
                         json={'aggregate': {'name': 'heal-agg'}})
    assert resp.status_code == 200, resp.text
    aggregate = resp.json()['aggregate']
    resp = stack.request('POST', '/os-aggregates/%s/action' % aggregate['id'],
                         version=VERSION, json={'add_host': {'host': 'host1'}})
    assert resp.status_code == 200, resp.text
    rp_uuid = provider_of(stack, 'host1')
    path = '/resource_providers/%s/aggregates' % rp_uuid
    # The aggregates API mirrors the host into Placement at once, as Nova's.
    mirrored = stack.placement_get(path)
    assert mirrored['aggregates'] == [aggregate['uuid']]
    # Taken out behind novalite's back: sync_aggregates puts it back.
    resp = placement(stack, 'PUT', path, json={
        'resource_provider_generation': mirrored['resource_provider_generation'],
        'aggregates': []})
    assert resp.status_code == 200, resp.text

    rc, out = manage_in(stack, 'placement', 'sync_aggregates', '--verbose')
    assert rc == 0, out
    assert stack.placement_get(path)['aggregates'] == [aggregate['uuid']]
    host2 = stack.placement_get('/resource_providers/%s/aggregates'
                                % provider_of(stack, 'host2'))
    assert host2['aggregates'] == []
    rc, out = manage_in(stack, 'placement', 'sync_aggregates', '--verbose')
    assert rc == 0 and 'already in' in out, out


def test_removing_a_host_from_an_aggregate_removes_it_inplacement(
        mariadb_stack: MariaDBStack) -> None:  # noqa: F811
    stack = mariadb_stack
    resp = stack.request('POST', '/os-aggregates', version=VERSION,
                         json={'aggregate': {'name': 'mirror-agg'}})
    assert resp.status_code == 200, resp.text
    aggregate = resp.json()['aggregate']
    action = '/os-aggregates/%s/action' % aggregate['id']
    path = '/resource_providers/%s/aggregates' % provider_of(stack, 'host2')
    resp = stack.request('POST', action, version=VERSION, json={'add_host': {'host': 'host2'}})
    assert resp.status_code == 200, resp.text
    assert aggregate['uuid'] in stack.placement_get(path)['aggregates']
    resp = stack.request('POST', action, version=VERSION,
                         json={'remove_host': {'host': 'host2'}})
    assert resp.status_code == 200, resp.text
    assert aggregate['uuid'] not in stack.placement_get(path)['aggregates']
    assert stack.request('DELETE', '/os-aggregates/%s' % aggregate['id'],
                         version=VERSION).status_code == 200
