"""Operator and service APIs through the real stack on the fake driver: server
diagnostics and external events."""
from __future__ import annotations

import pytest

from novalite.virt import diagnostics

LATEST = '2.104'
OWNER = 'alice:proj-a'
ADMIN = 'admin:admin'


@pytest.fixture(scope='module')
def flavor_id(stack):
    resp = stack.request('POST', '/flavors', json={'flavor': {
        'name': 'm1.admin', 'ram': 128, 'vcpus': 2, 'disk': 1}})
    assert resp.status_code == 200, resp.text
    return resp.json()['flavor']['id']


@pytest.fixture
def server(stack, flavor_id):
    body = {'server': {'name': 'diag-vm', 'imageRef': stack.image['id'],
                       'flavorRef': flavor_id, 'networks': 'none'}}
    resp = stack.request('POST', '/servers', token=OWNER, version=LATEST, json=body)
    assert resp.status_code == 202, resp.text
    server_id = resp.json()['server']['id']
    yield stack.wait_for_status(server_id, ('ACTIVE',), token=OWNER)
    stack.request('DELETE', '/servers/%s' % server_id, token=OWNER)
    stack.wait_for_deleted(server_id, token=OWNER)


def _diagnostics(stack, server_id, version=LATEST, token=ADMIN):
    return stack.request('GET', '/servers/%s/diagnostics' % server_id, token=token,
                         version=version)


def test_standard_diagnostics_from_2_48(stack, server):
    resp = _diagnostics(stack, server['id'])
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert set(body) == {'state', 'driver', 'hypervisor', 'hypervisor_os', 'uptime',
                         'config_drive', 'num_cpus', 'num_nics', 'num_disks', 'cpu_details',
                         'nic_details', 'disk_details', 'memory_details'}
    assert (body['state'], body['driver']) == ('running', 'libvirt')
    assert body['num_cpus'] == 2 and len(body['cpu_details']) == 2
    assert set(body['cpu_details'][0]) == set(diagnostics.CPU_KEYS)
    assert body['num_disks'] == 1 and body['num_nics'] == 0
    assert body['memory_details'] == {'maximum': 128, 'used': 0}


def test_free_form_diagnostics_before_2_48(stack, server):
    resp = _diagnostics(stack, server['id'], version='2.47')
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert body['memory'] == 128 * 1024
    assert {'cpu0_time', 'cpu1_time', 'vda_read', 'vda_errors'} <= set(body)


def test_stopped_server_is_a_conflict(stack, server):
    server_id = server['id']
    resp = stack.request('POST', '/servers/%s/action' % server_id, token=OWNER,
                         json={'os-stop': None})
    assert resp.status_code == 202
    stack.wait_for_status(server_id, ('SHUTOFF',), token=OWNER)
    resp = _diagnostics(stack, server_id)
    assert resp.status_code == 409
    assert resp.json()['conflictingRequest']['message'] == (
        "Cannot 'get_diagnostics' instance %s while it is in power_state shutdown"
        % server_id)


def test_driver_without_diagnostics_is_501(stack, server, monkeypatch):
    host = stack.request('GET', '/servers/%s' % server['id'],
                         version=LATEST).json()['server']['OS-EXT-SRV-ATTR:host']
    driver = stack.computes[host].manager.driver

    def not_implemented(instance):
        raise NotImplementedError()
    monkeypatch.setattr(driver, 'get_instance_diagnostics', not_implemented)
    assert _diagnostics(stack, server['id']).status_code == 501


def test_admin_only_and_unknown_server(stack, server):
    assert _diagnostics(stack, server['id'], token=OWNER).status_code == 403
    assert _diagnostics(stack, 'nope').status_code == 404


def _events(stack, events, version=LATEST, token=ADMIN):
    return stack.request('POST', '/os-server-external-events', token=token,
                         version=version, json={'events': events})


def test_external_events_all_accepted_mixed_and_none(stack, server):
    plugged = {'name': 'network-vif-plugged', 'server_uuid': server['id'], 'tag': 'port-1'}
    resp = _events(stack, [plugged])
    assert resp.status_code == 200, resp.text
    assert resp.json() == {'events': [dict(plugged, status='completed', code=200)]}
    unknown = {'name': 'network-changed', 'server_uuid': '1' * 32}
    resp = _events(stack, [plugged, unknown])
    assert resp.status_code == 207
    codes = [(e['code'], e['status']) for e in resp.json()['events']]
    assert codes == [(200, 'completed'), (404, 'failed')]
    assert _events(stack, [unknown]).status_code == 404
    # volume-extended names its volume in the tag.
    untagged = {'name': 'volume-extended', 'server_uuid': server['id']}
    assert _events(stack, [untagged]).status_code == 404
    resp = _events(stack, [plugged, untagged])
    assert [e['code'] for e in resp.json()['events']] == [200, 400]


def test_external_event_names_per_microversion_and_policy(stack, server):
    power = {'name': 'power-update', 'server_uuid': server['id'], 'tag': 'POWER_OFF'}
    assert _events(stack, [power], version='2.75').status_code == 400
    extended = {'name': 'volume-extended', 'server_uuid': server['id'], 'tag': 'v1'}
    assert _events(stack, [extended], version='2.50').status_code == 400
    assert _events(stack, [extended], version='2.51').status_code == 200
    reimaged = dict(extended, name='volume-reimaged')
    assert _events(stack, [reimaged], version='2.92').status_code == 400
    assert _events(stack, [reimaged], version='2.93').status_code == 200
    assert _events(stack, []).status_code == 400
    assert _events(stack, [dict(extended, status='done')]).status_code == 400
    plugged = {'name': 'network-vif-plugged', 'server_uuid': server['id']}
    assert _events(stack, [plugged], token=OWNER).status_code == 403


def test_power_update_syncs_the_power_state(stack, server):
    server_id = server['id']
    host = stack.request('GET', '/servers/%s' % server_id,
                         version=LATEST).json()['server']['OS-EXT-SRV-ATTR:host']
    driver = stack.computes[host].manager.driver
    # The node lost power behind the API's back; the event tells the host to look.
    instance = type('Guest', (), {'uuid': server_id})()
    driver.power_off(instance)
    power = {'name': 'power-update', 'server_uuid': server_id, 'tag': 'POWER_OFF'}
    resp = _events(stack, [power], version='2.76')
    assert resp.status_code == 200, resp.text
    stopped = stack.wait_for_status(server_id, ('SHUTOFF',), token=OWNER)
    assert stopped['OS-EXT-STS:vm_state'] == 'stopped'
    bad_tag = dict(power, tag='POWER_CYCLE')
    assert _events(stack, [bad_tag], version='2.76').status_code == 404
