"""The newest microversions (2.97 to 2.104) through openstackclient and openstacksdk.

openstacksdk's server resource stops at 2.100, so what it cannot send (the 2.104 pin,
the /os-volumes_boot alias, a flavor name filter) goes through its session with the
microversion set. It shares the stack of the client modules (no ``STACK`` of its own).
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.devstack import clients


def _osc(stack, version: str, *args: str, **kwargs: Any) -> Any:
    return clients.osc(stack, '--os-compute-api-version', version, *args, **kwargs)


@pytest.fixture(scope='module')
def vm(stack) -> Iterator[str]:
    server_id = clients.boot(stack, 'mv-vm')
    views = clients.wait_settled(stack, [server_id])
    assert views[server_id]['status'] == 'ACTIVE', views[server_id]
    yield server_id
    clients.delete_all(stack, [server_id])


def test_the_client_negotiates_2_104(stack):
    conn = clients.sdk(stack)
    version = conn.compute.get('/', microversion=None).json()['version']
    assert (version['min_version'], version['version']) == ('2.1', '2.104')
    resp = conn.compute.get('/flavors', microversion='2.104')
    assert resp.headers['OpenStack-API-Version'] == 'compute 2.104'


def test_flavor_list_and_show_without_rxtx_factor_at_2_102(stack):
    old = _osc(stack, '2.101', 'flavor', 'show', 'm1.nano')
    assert old['rxtx_factor'] == 1.0 and old['OS-FLV-DISABLED:disabled'] is False
    new = _osc(stack, '2.102', 'flavor', 'show', 'm1.nano')
    assert new['rxtx_factor'] is None and new['OS-FLV-DISABLED:disabled'] is None
    listed = _osc(stack, '2.102', 'flavor', 'list', '--long', '--all')
    nano = next(f for f in listed if f['Name'] == 'm1.nano')
    assert nano['RXTX Factor'] is None
    body = clients.sdk(stack).compute.get('/flavors/detail', microversion='2.104').json()
    assert all('rxtx_factor' not in f and 'OS-FLV-DISABLED:disabled' not in f
               for f in body['flavors'])


def test_flavor_create_rxtx_factor_only_until_2_101(stack):
    with pytest.raises(clients.CommandFailed) as failed:
        _osc(stack, '2.102', 'flavor', 'create', '--ram', '64', '--disk', '0',
             '--vcpus', '1', '--rxtx-factor', '2.0', 'mv.rxtx')
    assert 'only supported until API microversion 2.101' in failed.value.result.stderr
    created = _osc(stack, '2.101', 'flavor', 'create', '--ram', '64', '--disk', '0',
                   '--vcpus', '1', '--rxtx-factor', '2.0', 'mv.rxtx')
    try:
        assert created['rxtx_factor'] == 2.0
        # The API itself refuses the field from 2.102 (not only the client).
        resp = clients.sdk(stack).compute.post('/flavors', microversion='2.102', json={
            'flavor': {'name': 'mv.raw', 'ram': 64, 'vcpus': 1, 'disk': 0,
                       'rxtx_factor': 2.0}})
        assert resp.status_code == 400, resp.text
    finally:
        _osc(stack, '2.104', 'flavor', 'delete', created['id'], fmt_json=False)


def test_flavor_name_filter_from_2_102(stack):
    compute = clients.sdk(stack).compute
    names = [f['name'] for f in compute.get('/flavors?name=%5Em1%5C.nano%24',
                                            microversion='2.102').json()['flavors']]
    assert names == ['m1.nano']
    assert compute.get('/flavors?name=m1.nano', microversion='2.101').status_code == 400


def test_unknown_query_parameters_from_2_102(stack, vm):
    compute = clients.sdk(stack).compute
    path = '/servers/%s?bogus=1' % vm
    assert compute.get(path, microversion='2.101').status_code == 200
    resp = compute.get(path, microversion='2.102')
    assert resp.status_code == 400
    assert "'bogus' was unexpected" in resp.json()['badRequest']['message']


def test_server_shares_at_2_97(stack, vm):
    assert _osc(stack, '2.97', 'server', 'share', 'list', vm) == []
    with pytest.raises(clients.CommandFailed) as failed:
        _osc(stack, '2.96', 'server', 'share', 'list', vm)
    assert '2.97' in failed.value.result.stderr


def test_volumes_boot_until_2_102(stack, vm):
    compute = clients.sdk(stack).compute
    listed = compute.get('/os-volumes_boot', microversion='2.102')
    assert vm in [s['id'] for s in listed.json()['servers']]
    assert compute.get('/os-volumes_boot', microversion='2.103').status_code == 404
    assert compute.get('/os-volumes_boot/%s' % vm, microversion='2.104').status_code == 404


def test_pin_and_unpin_the_availability_zone_at_2_104(stack, vm):
    compute = clients.sdk(stack).compute
    shown = _osc(stack, '2.104', 'server', 'show', vm)
    assert shown['pinned_availability_zone'] is None
    zone = shown['OS-EXT-AZ:availability_zone']

    def pin(value: str | None, version: str = '2.104') -> Any:
        return compute.put('/servers/%s' % vm, microversion=version,
                           json={'server': {'pinned_availability_zone': value}})

    assert pin(zone, '2.103').status_code == 400
    wrong = pin('mv-nowhere')
    assert wrong.status_code == 409, wrong.text
    assert "current availability zone '%s'" % zone in wrong.json()['conflictingRequest'][
        'message']
    pinned = pin(zone)
    assert pinned.status_code == 200, pinned.text
    assert pinned.json()['server']['pinned_availability_zone'] == zone
    assert _osc(stack, '2.104', 'server', 'show', vm)['pinned_availability_zone'] == zone
    assert clients.sdk(stack).compute.get_server(vm).pinned_availability_zone == zone
    assert pin('mv-nowhere').status_code == 409
    unpinned = pin(None)
    assert unpinned.status_code == 200, unpinned.text
    assert _osc(stack, '2.104', 'server', 'show', vm)['pinned_availability_zone'] is None


def test_server_set_and_unset_pinned_zone_with_openstackclient(stack, vm):
    zone = _osc(stack, '2.104', 'server', 'show', vm)['OS-EXT-AZ:availability_zone']
    _osc(stack, '2.104', 'server', 'set', '--pinned-availability-zone', zone, vm,
         fmt_json=False)
    assert _osc(stack, '2.104', 'server', 'show', vm)['pinned_availability_zone'] == zone
    with pytest.raises(clients.CommandFailed) as failed:
        _osc(stack, '2.104', 'server', 'set', '--pinned-availability-zone', 'mv-nowhere',
             vm, fmt_json=False)
    assert 'Cannot change pinned availability zone directly' in failed.value.result.stderr
    _osc(stack, '2.104', 'server', 'unset', '--pinned-availability-zone', vm,
         fmt_json=False)
    assert _osc(stack, '2.104', 'server', 'show', vm)['pinned_availability_zone'] is None
    with pytest.raises(clients.CommandFailed):
        _osc(stack, '2.103', 'server', 'set', '--pinned-availability-zone', zone, vm,
             fmt_json=False)
