"""The boot path end to end: REST API → conductor → scheduler + Placement → compute."""
from __future__ import annotations

import uuid

from sqlalchemy import func, select

from novalite.db import engine
from novalite.db.api import models as api_models

VERSION = '2.47'


def _flavor(stack, name, ram=512, vcpus=1, disk=1):
    resp = stack.request('POST', '/flavors', json={'flavor': {
        'name': name, 'ram': ram, 'vcpus': vcpus, 'disk': disk}})
    assert resp.status_code == 200, resp.text
    return resp.json()['flavor']


def _boot(stack, flavor_id, name='vm', token='admin:admin', **extra):
    body = {'server': dict({'name': name, 'imageRef': stack.image['id'],
                            'flavorRef': flavor_id, 'networks': 'none'}, **extra)}
    return stack.request('POST', '/servers', json=body, token=token, version=VERSION)


def _provider_uuid(stack, host):
    providers = stack.placement_get('/resource_providers?name=%s' % host)['resource_providers']
    assert len(providers) == 1
    return providers[0]['uuid']


def _api_rows():
    with engine.api_reader() as session:
        return tuple(session.scalar(select(func.count()).select_from(model))
                     for model in (api_models.BuildRequest, api_models.InstanceMapping,
                                   api_models.RequestSpec))


def test_boot_allocates_in_placement_and_delete_frees(stack):
    flavor = _flavor(stack, 'm1.boot', ram=256, vcpus=2, disk=3)
    resp = _boot(stack, flavor['id'])
    assert resp.status_code == 202, resp.text
    server_id = resp.json()['server']['id']
    assert resp.headers['Location'].endswith('/servers/%s' % server_id)

    server = stack.wait_for_status(server_id, ('ACTIVE', 'ERROR'), version=VERSION)
    assert server['status'] == 'ACTIVE', server.get('fault')
    host = server['OS-EXT-SRV-ATTR:host']
    assert host in ('host1', 'host2')
    assert server['OS-EXT-STS:power_state'] == 1
    assert server['OS-SRV-USG:launched_at']

    allocations = stack.placement_get('/allocations/%s' % server_id)['allocations']
    assert allocations == {_provider_uuid(stack, host): {
        'generation': allocations[_provider_uuid(stack, host)]['generation'],
        'resources': {'VCPU': 2, 'MEMORY_MB': 256, 'DISK_GB': 3}}}

    assert stack.request('DELETE', '/servers/%s' % server_id).status_code == 204
    stack.wait_for_deleted(server_id)
    assert stack.placement_get('/allocations/%s' % server_id)['allocations'] == {}
    assert stack.request('GET', '/servers/%s' % server_id).status_code == 404


def test_show_answers_while_scheduling_from_build_request(stack):
    flavor = _flavor(stack, 'm1.early')
    resp = _boot(stack, flavor['id'], name='early')
    server_id = resp.json()['server']['id']
    early = stack.request('GET', '/servers/%s' % server_id, version=VERSION)
    assert early.status_code == 200
    assert early.json()['server']['status'] in ('BUILD', 'ACTIVE')
    stack.wait_for_status(server_id, ('ACTIVE',), version=VERSION)
    stack.request('DELETE', '/servers/%s' % server_id)
    stack.wait_for_deleted(server_id)


def test_no_valid_host_goes_to_cell0_with_a_fault_naming_the_resource(stack):
    flavor = _flavor(stack, 'm1.huge', ram=40000)
    server_id = _boot(stack, flavor['id'], name='huge').json()['server']['id']
    server = stack.wait_for_status(server_id, ('ERROR',), version=VERSION)
    assert 'No valid host' in server['fault']['message']
    assert 'MEMORY_MB' in server['fault']['message']
    listed = stack.request('GET', '/servers/detail', version=VERSION).json()['servers']
    assert server_id in [s['id'] for s in listed]

    from novalite import context, objects
    mapping = objects.InstanceMapping.get_by_instance_uuid(context.get_admin_context(),
                                                           server_id)
    assert mapping.cell_mapping.is_cell0
    assert stack.placement_get('/allocations/%s' % server_id)['allocations'] == {}
    assert stack.request('DELETE', '/servers/%s' % server_id).status_code == 204
    assert stack.request('GET', '/servers/%s' % server_id).status_code == 404


def test_bad_input_is_refused_and_writes_nothing(stack):
    flavor = _flavor(stack, 'm1.bad')
    before = _api_rows()
    cases = [
        stack.request('POST', '/servers', data='{"server": ', version=VERSION,
                      headers={'Content-Type': 'application/json'}),
        _boot(stack, 'no-such-flavor'),
        _boot(stack, flavor['id'], name='x' * 256),
        _boot(stack, flavor['id'], min_count=-1),
    ]
    for resp in cases:
        assert resp.status_code in (400, 404), resp.text
        body = resp.json()
        (key, fault), = body.items()
        assert key in ('badRequest', 'itemNotFound')
        assert fault['code'] == resp.status_code and fault['message']
    assert _api_rows() == before


def test_over_quota_is_403_and_writes_nothing(stack):
    flavor = _flavor(stack, 'm1.greedy', vcpus=21)
    before = _api_rows()
    token = 'quser:%s' % uuid.uuid4().hex
    resp = _boot(stack, flavor['id'], token=token)
    assert resp.status_code == 403, resp.text
    assert resp.json()['forbidden']['message'] == (
        'Quota exceeded for cores: Requested 21, but already used 0 of 20 cores')
    assert _api_rows() == before


def test_failed_spawn_reschedules_to_the_alternate(stack):
    from novalite.conf import CONF
    flavor = _flavor(stack, 'm1.resched')
    CONF.set_override('fail_spawn_on_hosts', ['host1'], group='fake_driver')
    try:
        ids = [_boot(stack, flavor['id'], name='r%d' % i).json()['server']['id']
               for i in range(4)]
        servers = [stack.wait_for_status(i, ('ACTIVE', 'ERROR'), version=VERSION)
                   for i in ids]
    finally:
        CONF.clear_override('fail_spawn_on_hosts', group='fake_driver')
    assert {s['status'] for s in servers} == {'ACTIVE'}
    assert {s['OS-EXT-SRV-ATTR:host'] for s in servers} == {'host2'}
    for server_id in ids:
        allocations = stack.placement_get('/allocations/%s' % server_id)['allocations']
        assert list(allocations) == [_provider_uuid(stack, 'host2')]
        stack.request('DELETE', '/servers/%s' % server_id)
    for server_id in ids:
        stack.wait_for_deleted(server_id)


def test_boot_as_openstackclient_sends_it_with_an_image_bdm(stack):
    flavor = _flavor(stack, 'm1.osc')
    image = stack.image['id']
    bdm = [{'uuid': image, 'boot_index': 0, 'source_type': 'image',
            'destination_type': 'local', 'delete_on_termination': True}]
    resp = _boot(stack, flavor['id'], name='osc', block_device_mapping_v2=bdm)
    assert resp.status_code == 202, resp.text
    server_id = resp.json()['server']['id']
    server = stack.wait_for_status(server_id, ('ACTIVE', 'ERROR'), version=VERSION)
    assert server['status'] == 'ACTIVE'
    assert server['image']['id'] == image
    stack.request('DELETE', '/servers/%s' % server_id)
    stack.wait_for_deleted(server_id)


def test_volume_bdm_is_refused_clearly(stack):
    flavor = _flavor(stack, 'm1.vol')
    before = _api_rows()
    bdm = [{'uuid': stack.image['id'], 'boot_index': 0, 'source_type': 'image',
            'destination_type': 'volume', 'volume_size': 1}]
    resp = _boot(stack, flavor['id'], name='vol', block_device_mapping_v2=bdm)
    assert resp.status_code == 400
    assert 'Block Storage' in resp.json()['badRequest']['message']
    assert _api_rows() == before
