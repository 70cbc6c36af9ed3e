"""Zones, aggregates, server groups, hypervisors and quotas through the whole stack."""
from __future__ import annotations

VERSION = '2.47'


def _flavor(stack, name):
    resp = stack.request('POST', '/flavors', json={'flavor': {
        'name': name, 'ram': 128, 'vcpus': 1, 'disk': 1}})
    assert resp.status_code == 200, resp.text
    return resp.json()['flavor']['id']


def _boot(stack, flavor_id, token='admin:admin', hints=None, **extra):
    body = {'server': dict({'name': 'vm', 'imageRef': stack.image['id'],
                            'flavorRef': flavor_id, 'networks': 'none'}, **extra)}
    if hints:
        body['os:scheduler_hints'] = hints
    return stack.request('POST', '/servers', json=body, token=token, version=VERSION)


def _active(stack, resp, token='admin:admin'):
    assert resp.status_code == 202, resp.text
    server = stack.wait_for_status(resp.json()['server']['id'], ('ACTIVE', 'ERROR'),
                                   version=VERSION, token=token)
    assert server['status'] == 'ACTIVE', server.get('fault')
    return server


def _host_of(stack, server_id):
    """The host of a server, read from the hypervisors' server lists."""
    found = stack.request('GET', '/os-hypervisors?with_servers=true', version='2.53')
    for hypervisor in found.json()['hypervisors']:
        if server_id in {s['uuid'] for s in hypervisor.get('servers', [])}:
            return hypervisor['hypervisor_hostname']
    raise AssertionError('server %s is on no hypervisor' % server_id)


def test_anti_affinity_group_spreads_and_forgets_deleted_members(stack):
    flavor = _flavor(stack, 'm1.group')
    group = stack.request('POST', '/os-server-groups', version='2.64', token='ann:team',
                          json={'server_group': {'name': 'spread',
                                                 'policy': 'anti-affinity'}})
    assert group.status_code == 200, group.text
    group_id = group.json()['server_group']['id']
    servers = [_active(stack, _boot(stack, flavor, token='ann:team',
                                    hints={'group': group_id}), token='ann:team')
               for _ in range(2)]
    ids = [s['id'] for s in servers]
    assert {_host_of(stack, i) for i in ids} == {'host1', 'host2'}
    shown = stack.request('GET', '/os-server-groups/%s' % group_id, token='ann:team')
    assert sorted(shown.json()['server_group']['members']) == sorted(ids)

    assert stack.request('DELETE', '/servers/%s' % ids[0], token='ann:team').status_code == 204
    stack.wait_for_deleted(ids[0], token='ann:team')
    shown = stack.request('GET', '/os-server-groups/%s' % group_id, token='ann:team')
    assert shown.json()['server_group']['members'] == [ids[1]]
    # Another project cannot see the group: it does not exist for it.
    assert stack.request('GET', '/os-server-groups/%s' % group_id,
                         token='bob:other').status_code == 404


def test_aggregate_zone_is_listed_and_scheduled_to(stack):
    agg = stack.request('POST', '/os-aggregates', json={'aggregate': {
        'name': 'edge', 'availability_zone': 'az-edge'}}).json()['aggregate']
    resp = stack.request('POST', '/os-aggregates/%s/action' % agg['id'],
                         json={'add_host': {'host': 'host2'}})
    assert resp.status_code == 200, resp.text
    zones = stack.request('GET', '/os-availability-zone', token='demo:demo').json()
    assert {z['zoneName'] for z in zones['availabilityZoneInfo']} == {'az-edge', 'nova'}
    detail = stack.request('GET', '/os-availability-zone/detail').json()
    by_name = {z['zoneName']: z for z in detail['availabilityZoneInfo']}
    assert set(by_name['az-edge']['hosts']) == {'host2'}
    assert 'internal' in by_name

    flavor = _flavor(stack, 'm1.zone')
    server = _active(stack, _boot(stack, flavor, availability_zone='az-edge'))
    assert _host_of(stack, server['id']) == 'host2'
    # host2 now runs a server: its zone may no longer change.
    resp = stack.request('PUT', '/os-aggregates/%s' % agg['id'],
                         json={'aggregate': {'availability_zone': 'az-other'}})
    assert resp.status_code == 400
    assert stack.request('DELETE', '/servers/%s' % server['id']).status_code == 204
    stack.wait_for_deleted(server['id'])


def test_hypervisors_see_both_computes(stack):
    listed = stack.request('GET', '/os-hypervisors/detail', version='2.88').json()
    assert {h['hypervisor_hostname'] for h in listed['hypervisors']} == {'host1', 'host2'}
    assert all(h['state'] == 'up' and h['status'] == 'enabled'
               for h in listed['hypervisors'])
    old = stack.request('GET', '/os-hypervisors/statistics').json()
    assert old['hypervisor_statistics']['count'] == 2
    assert stack.request('GET', '/os-hypervisors', token='demo:demo').status_code == 403


def test_quota_limits_boot_and_limits_show_usage(stack):
    flavor = _flavor(stack, 'm1.quota')
    token = 'carl:quota'
    first = _active(stack, _boot(stack, flavor, token=token), token=token)
    absolute = stack.request('GET', '/limits', token=token).json()['limits']['absolute']
    assert (absolute['totalInstancesUsed'], absolute['totalRAMUsed']) == (1, 128)
    resp = stack.request('PUT', '/os-quota-sets/quota',
                         json={'quota_set': {'instances': 1}})
    assert resp.status_code == 200, resp.text
    assert _boot(stack, flavor, token=token).status_code == 403
    detail = stack.request('GET', '/os-quota-sets/quota/detail', token=token).json()
    assert detail['quota_set']['instances'] == {'limit': 1, 'in_use': 1, 'reserved': 0}
    assert stack.request('DELETE', '/servers/%s' % first['id'], token=token).status_code == 204
    stack.wait_for_deleted(first['id'], token=token)
