"""The microversions after 2.96 through the real stack, each at its version and the one
below: shares (2.97), volume attach (2.101), flavors and strict query strings (2.102),
/os-volumes_boot (2.103) and setting a server's pinned availability zone (2.104)."""
from __future__ import annotations

import time

import pytest

ADMIN = 'admin:admin'
OWNER = 'dora:proj-d'
OTHER = 'erin:proj-e'
LATEST = '2.104'


def _req(stack, method, path, version=LATEST, token=ADMIN, **kw):
    return stack.request(method, path, token=token, version=version, **kw)


@pytest.fixture(scope='module')
def flavor_id(stack):
    resp = _req(stack, 'POST', '/flavors', version='2.55', json={'flavor': {
        'name': 'mv.small', 'ram': 128, 'vcpus': 1, 'disk': 1, 'rxtx_factor': 2.0}})
    assert resp.status_code == 200, resp.text
    return resp.json()['flavor']['id']


def _boot(stack, flavor_id, name, token=OWNER, path='/servers', version=LATEST, **extra):
    body = {'server': dict({'name': name, 'imageRef': stack.image['id'],
                            'flavorRef': flavor_id, 'networks': 'none'}, **extra)}
    resp = _req(stack, 'POST', path, version=version, token=token, json=body)
    assert resp.status_code == 202, resp.text
    return stack.wait_for_status(resp.json()['server']['id'], ('ACTIVE',), token=token,
                                 version=LATEST)


@pytest.fixture(scope='module')
def server(stack, flavor_id):
    """An ACTIVE server of proj-d, booted without a zone (so not pinned)."""
    return _boot(stack, flavor_id, 'mv-vm')


def _fault(resp, code):
    assert resp.status_code == code, resp.text
    return next(iter(resp.json().values()))['message']


# -- the range ------------------------------------------------------------------------

def test_the_newest_version_is_2_104(stack):
    assert stack.request('GET', '/').json()['version']['version'] == '2.104'
    assert _req(stack, 'GET', '/flavors').headers['OpenStack-API-Version'] == 'compute 2.104'
    assert _req(stack, 'GET', '/flavors', version='2.105').status_code == 406


# -- 2.97: shares ---------------------------------------------------------------------

def test_shares_exist_from_2_97_and_are_empty(stack, server):
    path = '/servers/%s/shares' % server['id']
    assert _req(stack, 'GET', path, version='2.96', token=OWNER).status_code == 404
    resp = _req(stack, 'GET', path, version='2.97', token=OWNER)
    assert resp.status_code == 200, resp.text
    assert resp.json() == {'shares': []}
    # A new API: unknown query parameters were never accepted.
    assert _req(stack, 'GET', path + '?bogus=1', version='2.97',
                token=OWNER).status_code == 400
    share = '6d5d2c36-3d22-4c58-a2c3-62b7e7c2b0f1'
    assert _fault(_req(stack, 'GET', '%s/%s' % (path, share), token=OWNER), 404) == \
        'Share %s could not be found.' % share
    assert _req(stack, 'GET', path, token=OTHER).status_code == 404


def test_share_attach_needs_a_stopped_server_then_virtiofs(stack, flavor_id):
    server = _boot(stack, flavor_id, 'mv-share')
    path = '/servers/%s/shares' % server['id']
    share = '6d5d2c36-3d22-4c58-a2c3-62b7e7c2b0f1'
    body = {'share': {'share_id': share}}
    assert _req(stack, 'POST', path, token=OWNER, json=body, version='2.96'
                ).status_code == 404
    assert _req(stack, 'POST', path, token=OWNER, json={'share': {'share_id': 'x'}}
                ).status_code == 400
    assert _fault(_req(stack, 'POST', path, token=OWNER, json=body), 409) == \
        "Cannot 'create share' instance %s while it is in vm_state active" % server['id']
    assert _fault(_req(stack, 'DELETE', '%s/%s' % (path, share), token=OWNER), 409) == \
        "Cannot 'delete share' instance %s while it is in vm_state active" % server['id']
    stopped = _req(stack, 'POST', '/servers/%s/action' % server['id'], token=OWNER,
                   json={'os-stop': None})
    assert stopped.status_code == 202, stopped.text
    stack.wait_for_status(server['id'], ('SHUTOFF',), token=OWNER)
    assert 'not configured correctly' in _fault(
        _req(stack, 'POST', path, token=OWNER, json=body), 409)
    assert _req(stack, 'DELETE', '%s/%s' % (path, share), token=OWNER).status_code == 404
    assert _req(stack, 'GET', path, token=OWNER).json() == {'shares': []}


# -- 2.101: volume attach -------------------------------------------------------------

@pytest.mark.parametrize('version', ['2.100', '2.101'])
def test_volume_attach_is_refused_at_both_sides_of_2_101(stack, server, version):
    resp = _req(stack, 'POST', '/servers/%s/os-volume_attachments' % server['id'],
                version=version, token=OWNER, json={'volumeAttachment': {
                    'volumeId': '1f3b8c1e-9a53-4b3a-9d4e-0b9f6f1d2a11'}})
    assert 'Cinder' in _fault(resp, 400)


# -- 2.102: flavors -------------------------------------------------------------------

def test_flavor_fields_removed_at_2_102(stack, flavor_id):
    old = _req(stack, 'GET', '/flavors/%s' % flavor_id, version='2.101').json()['flavor']
    assert old['rxtx_factor'] == 2.0 and old['OS-FLV-DISABLED:disabled'] is False
    for path in ('/flavors/%s' % flavor_id, '/flavors/detail'):
        body = _req(stack, 'GET', path).json()
        for flavor in body.get('flavors', [body.get('flavor')]):
            assert 'rxtx_factor' not in flavor
            assert 'OS-FLV-DISABLED:disabled' not in flavor
    updated = _req(stack, 'PUT', '/flavors/%s' % flavor_id,
                   json={'flavor': {'description': 'small'}}).json()['flavor']
    assert 'rxtx_factor' not in updated and 'OS-FLV-DISABLED:disabled' not in updated


def test_flavor_create_takes_no_rxtx_factor_from_2_102(stack):
    body = {'flavor': {'name': 'mv.rxtx', 'ram': 64, 'vcpus': 1, 'disk': 0,
                       'rxtx_factor': 1.5}}
    assert 'rxtx_factor' in _fault(_req(stack, 'POST', '/flavors', json=body), 400)
    resp = _req(stack, 'POST', '/flavors', version='2.101', json=body)
    assert resp.status_code == 200, resp.text
    assert resp.json()['flavor']['rxtx_factor'] == 1.5
    created = _req(stack, 'POST', '/flavors', json={'flavor': {
        'name': 'mv.plain', 'ram': 64, 'vcpus': 1, 'disk': 0}}).json()['flavor']
    assert 'rxtx_factor' not in created and 'OS-FLV-DISABLED:disabled' not in created


def test_flavor_name_filter_from_2_102(stack, flavor_id):
    for name in ('mv.filter-a', 'mv.filter-b', 'other.filter'):
        assert _req(stack, 'POST', '/flavors', json={'flavor': {
            'name': name, 'ram': 64, 'vcpus': 1, 'disk': 0}}).status_code == 200
    for path in ('/flavors', '/flavors/detail'):
        names = [f['name'] for f in
                 _req(stack, 'GET', path + '?name=^mv%5C.filter').json()['flavors']]
        assert sorted(names) == ['mv.filter-a', 'mv.filter-b']
        assert [f['name'] for f in _req(stack, 'GET', path + '?name=filter-b$'
                                        ).json()['flavors']] == ['mv.filter-b']
        # Before 2.102 the name is an unknown parameter: a 400 from 2.75, ignored before.
        assert _req(stack, 'GET', path + '?name=^mv', version='2.101').status_code == 400
        listed = _req(stack, 'GET', path + '?name=^mv', version='2.74').json()['flavors']
        assert 'other.filter' in [f['name'] for f in listed]


def test_flavor_sort_by_rxtx_factor_until_2_101(stack, flavor_id):
    assert _req(stack, 'GET', '/flavors?sort_key=rxtx_factor',
                version='2.101').status_code == 200
    assert 'rxtx_factor' in _fault(_req(stack, 'GET', '/flavors?sort_key=rxtx_factor'), 400)


# -- 2.102: unknown query parameters ----------------------------------------------------

_STRICT_FROM_2_102 = (
    '/flavors/{flavor}', '/flavors/{flavor}/os-extra_specs',
    '/flavors/{flavor}/os-extra_specs/hw:cpu_policy', '/os-aggregates',
    '/os-aggregates/{aggregate}', '/os-availability-zone', '/os-availability-zone/detail',
    '/os-quota-class-sets/default', '/os-server-groups/{group}', '/servers/{server}',
    '/servers/{server}/ips', '/servers/{server}/metadata',
    '/servers/{server}/metadata/role', '/servers/{server}/diagnostics',
    '/servers/{server}/migrations', '/servers/{server}/os-instance-actions/{request}',
    '/flavors/{private}/os-flavor-access',
)
# Nova 34 defines strict variants for these but does not use them: still ignored.
_STILL_LAX = ('/os-quota-sets/proj-d/defaults', '/servers/{server}/tags')


@pytest.fixture(scope='module')
def query_targets(stack, server, flavor_id):
    specs = _req(stack, 'POST', '/flavors/%s/os-extra_specs' % flavor_id, json={
        'extra_specs': {'hw:cpu_policy': 'shared'}})
    assert specs.status_code == 200, specs.text
    aggregate = _req(stack, 'POST', '/os-aggregates', json={
        'aggregate': {'name': 'mv-agg'}}).json()['aggregate']['id']
    group = _req(stack, 'POST', '/os-server-groups', version='2.64', json={
        'server_group': {'name': 'mv-group', 'policy': 'affinity'}}
    ).json()['server_group']['id']
    private = _req(stack, 'POST', '/flavors', json={'flavor': {
        'name': 'mv.private', 'ram': 64, 'vcpus': 1, 'disk': 0,
        'os-flavor-access:is_public': False}}).json()['flavor']['id']
    assert _req(stack, 'POST', '/servers/%s/metadata' % server['id'], token=OWNER,
                json={'metadata': {'role': 'db'}}).status_code == 200
    actions = _req(stack, 'GET', '/servers/%s/os-instance-actions' % server['id']).json()
    return {'flavor': flavor_id, 'aggregate': aggregate, 'group': group,
            'private': private, 'server': server['id'],
            'request': actions['instanceActions'][0]['request_id']}


@pytest.mark.parametrize('template', _STRICT_FROM_2_102)
def test_unknown_query_parameters_refused_from_2_102(stack, query_targets, template):
    path = template.format(**query_targets)
    resp = _req(stack, 'GET', path + '?bogus=1', version='2.101')
    assert resp.status_code == 200, resp.text
    message = _fault(_req(stack, 'GET', path + '?bogus=1', version='2.102'), 400)
    assert "'bogus' was unexpected" in message
    assert _req(stack, 'GET', path).status_code == 200


@pytest.mark.parametrize('template', _STILL_LAX)
def test_query_parameters_still_ignored_where_nova_ignores_them(stack, query_targets,
                                                              template):
    path = template.format(**query_targets)
    assert _req(stack, 'GET', path + '?bogus=1').status_code == 200


def test_volume_attachment_show_still_ignores_query_parameters(stack, server):
    path = '/servers/%s/os-volume_attachments/%s?bogus=1' % (
        server['id'], '1f3b8c1e-9a53-4b3a-9d4e-0b9f6f1d2a11')
    assert 'is not attached to volume' in _fault(_req(stack, 'GET', path, token=OWNER), 404)


# -- 2.103: /os-volumes_boot ----------------------------------------------------------

def test_volumes_boot_is_servers_until_2_102(stack, server, flavor_id):
    listed = _req(stack, 'GET', '/os-volumes_boot', version='2.102', token=OWNER)
    assert listed.status_code == 200, listed.text
    assert server['id'] in [s['id'] for s in listed.json()['servers']]
    shown = _req(stack, 'GET', '/os-volumes_boot/%s' % server['id'], version='2.1',
                 token=OWNER)
    assert shown.json()['server']['id'] == server['id']
    detail = _req(stack, 'GET', '/os-volumes_boot/detail', version='2.102', token=OWNER)
    assert server['id'] in [s['id'] for s in detail.json()['servers']]
    action = '/os-volumes_boot/%s/action' % server['id']
    assert _req(stack, 'POST', action, version='2.102', token=OWNER,
                json={'reboot': {'type': 'SOFT'}}).status_code == 202
    stack.wait_for_status(server['id'], ('ACTIVE',), token=OWNER)
    # Only the servers controller's own actions are known under this name, as in Nova.
    assert _fault(_req(stack, 'POST', action, version='2.102', token=OWNER,
                       json={'pause': None}), 400) == 'There is no such action: pause'
    booted = _boot(stack, flavor_id, 'mv-volboot', path='/os-volumes_boot', version='2.102')
    assert _req(stack, 'DELETE', '/os-volumes_boot/%s' % booted['id'], version='2.102',
                token=OWNER).status_code == 204
    stack.wait_for_deleted(booted['id'], token=OWNER)


@pytest.mark.parametrize('method,path', [
    ('GET', '/os-volumes_boot'), ('GET', '/os-volumes_boot/detail'),
    ('GET', '/os-volumes_boot/{id}'), ('PUT', '/os-volumes_boot/{id}'),
    ('DELETE', '/os-volumes_boot/{id}'), ('POST', '/os-volumes_boot/{id}/action'),
    ('POST', '/os-volumes_boot')])
def test_volumes_boot_is_gone_from_2_103(stack, server, method, path):
    body = {'reboot': {'type': 'SOFT'}} if path.endswith('action') else \
        {'server': {'name': 'x'}} if method in ('PUT', 'POST') else None
    resp = _req(stack, method, path.format(id=server['id']), version='2.103',
                token=OWNER, json=body)
    assert resp.status_code == 404, resp.text
    assert _req(stack, 'GET', '/servers/%s' % server['id'], token=OWNER).status_code == 200


# -- 2.104: pinned availability zone --------------------------------------------------

def _pin(stack, server_id, zone, version=LATEST, token=OWNER):
    return _req(stack, 'PUT', '/servers/%s' % server_id, version=version, token=token,
                json={'server': {'pinned_availability_zone': zone}})


def test_pin_unpin_and_repin(stack, server):
    server_id = server['id']
    shown = _req(stack, 'GET', '/servers/%s' % server_id, token=OWNER).json()['server']
    assert shown['pinned_availability_zone'] is None
    zone = shown['OS-EXT-AZ:availability_zone']
    assert zone == 'nova'
    message = _fault(_pin(stack, server_id, 'elsewhere'), 409)
    assert message == ("Server can only be pinned to its current availability zone "
                       "'nova', but 'elsewhere' was requested.")
    pinned = _pin(stack, server_id, zone)
    assert pinned.status_code == 200, pinned.text
    assert pinned.json()['server']['pinned_availability_zone'] == zone
    assert _pin(stack, server_id, zone).status_code == 200
    assert _fault(_pin(stack, server_id, 'elsewhere'), 409).startswith(
        'Cannot change pinned availability zone directly.')
    shown = _req(stack, 'GET', '/servers/%s' % server_id, token=OWNER).json()['server']
    assert shown['pinned_availability_zone'] == zone
    unpinned = _pin(stack, server_id, None)
    assert unpinned.status_code == 200, unpinned.text
    assert unpinned.json()['server']['pinned_availability_zone'] is None
    assert _pin(stack, server_id, None).status_code == 200
    detail = _req(stack, 'GET', '/servers/detail', token=OWNER).json()['servers']
    assert [s['pinned_availability_zone'] for s in detail if s['id'] == server_id] == [None]


def test_pin_takes_the_zone_of_the_host_aggregate(stack, flavor_id):
    server = _boot(stack, flavor_id, 'mv-zoned', availability_zone='nova')
    shown = _req(stack, 'GET', '/servers/%s' % server['id'], token=OWNER).json()['server']
    assert shown['pinned_availability_zone'] == 'nova'
    assert _pin(stack, server['id'], None).status_code == 200
    aggregate = _req(stack, 'POST', '/os-aggregates', json={'aggregate': {
        'name': 'mv-zone', 'availability_zone': 'mv-az'}}).json()['aggregate']['id']
    host = _req(stack, 'GET', '/servers/%s' % server['id']).json()['server'][
        'OS-EXT-SRV-ATTR:host']
    added = _req(stack, 'POST', '/os-aggregates/%s/action' % aggregate,
                 json={'add_host': {'host': host}})
    assert added.status_code == 200, added.text
    try:
        assert "zone 'mv-az'" in _fault(_pin(stack, server['id'], 'nova'), 409)
        assert _pin(stack, server['id'], 'mv-az').status_code == 200
    finally:
        _req(stack, 'POST', '/os-aggregates/%s/action' % aggregate,
             json={'remove_host': {'host': host}})
        _req(stack, 'DELETE', '/os-aggregates/%s' % aggregate)


def test_pin_needs_2_104_and_a_valid_zone(stack, server):
    assert 'pinned_availability_zone' in _fault(_pin(stack, server['id'], None, '2.103'), 400)
    assert _pin(stack, server['id'], '').status_code == 400
    assert _pin(stack, server['id'], 7).status_code == 400
    assert _pin(stack, server['id'], None, token=OTHER).status_code == 404


# -- query strings as Nova 34 checks them at other versions ----------------------------

def test_instance_actions_query_is_strict_from_2_58(stack, server):
    path = '/servers/%s/os-instance-actions' % server['id']
    assert _req(stack, 'GET', path + '?bogus=1', version='2.57').status_code == 200
    assert "'bogus' was unexpected" in _fault(
        _req(stack, 'GET', path + '?bogus=1', version='2.58'), 400)
    assert _req(stack, 'GET', path + '?limit=1&limit=2', version='2.58').status_code == 400
    assert _req(stack, 'GET', path + '?limit=1', version='2.58').status_code == 200


def test_limits_take_no_reserved_parameter(stack):
    assert _req(stack, 'GET', '/limits?reserved=1', version='2.74').status_code == 200
    assert "'reserved' was unexpected" in _fault(
        _req(stack, 'GET', '/limits?reserved=1', version='2.75'), 400)


def test_hypervisors_query_is_strict_from_2_53(stack):
    assert _req(stack, 'GET', '/os-hypervisors?bogus=1', version='2.52').status_code == 200
    assert _req(stack, 'GET', '/os-hypervisors?bogus=1', version='2.53').status_code == 400
    assert _req(stack, 'GET', '/os-hypervisors/detail?with_servers=1&with_servers=0',
                version='2.53').status_code == 400
    assert _req(stack, 'GET', '/os-hypervisors?limit=0', version='2.33'
                ).json()['hypervisors'] == []


@pytest.mark.parametrize('version', ['2.1', '2.75', LATEST])
def test_server_list_joined_table_and_underscore_parameters(stack, server, version):
    for param in ('metadata=x', '_=1'):
        # Administrators may filter by anything, so Nova tells them these are no filter.
        assert _fault(_req(stack, 'GET', '/servers?' + param, version=version), 400) == \
            'Invalid filter field: %s.' % param.split('=')[0]
        # Others' filters are trimmed to what they may use: these are dropped.
        listed = _req(stack, 'GET', '/servers/detail?' + param, version=version, token=OWNER)
        assert listed.status_code == 200, listed.text
        assert server['id'] in [s['id'] for s in listed.json()['servers']]


def test_server_list_regex_filters_must_compile(stack, server):
    message = _fault(_req(stack, 'GET', '/servers?name=%5B', token=OWNER), 400)
    assert message.startswith('Invalid input for query parameters name.')
    assert _req(stack, 'GET', '/servers?name=mv-.*', token=OWNER).status_code == 200


def test_flavor_description_up_to_64k(stack, flavor_id):
    long = 'd' * 65535
    created = _req(stack, 'POST', '/flavors', json={'flavor': {
        'name': 'mv.described', 'ram': 64, 'vcpus': 1, 'disk': 0, 'description': long}})
    assert created.status_code == 200, created.text[:300]
    assert created.json()['flavor']['description'] == long
    assert _req(stack, 'PUT', '/flavors/%s' % flavor_id, json={
        'flavor': {'description': long + 'd'}}).status_code == 400


def _migrations(stack, server_id):
    return _req(stack, 'GET', '/os-migrations?instance_uuid=%s' % server_id,
                version='2.59').json()['migrations']


def _wait(predicate, what):
    deadline = time.monotonic() + 30
    while not predicate():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_an_unpinned_server_moves_to_another_zone(stack, flavor_id):
    server = _boot(stack, flavor_id, 'mv-mover')
    source = _req(stack, 'GET', '/servers/%s' % server['id']).json()['server'][
        'OS-EXT-SRV-ATTR:host']
    target = 'host2' if source == 'host1' else 'host1'
    aggregates = []
    try:
        for host, zone in ((source, 'mv-az-src'), (target, 'mv-az-dst')):
            aggregate = _req(stack, 'POST', '/os-aggregates', json={'aggregate': {
                'name': zone, 'availability_zone': zone}}).json()['aggregate']['id']
            aggregates.append((aggregate, host))
            assert _req(stack, 'POST', '/os-aggregates/%s/action' % aggregate,
                        json={'add_host': {'host': host}}).status_code == 200
        assert _pin(stack, server['id'], 'mv-az-src').status_code == 200
        # Pinned: the scheduler keeps the server in its zone, so the move finds no host,
        # and the caller is told so (Nova's conductor is called, not cast to).
        refused = _req(stack, 'POST', '/servers/%s/action' % server['id'],
                       json={'migrate': None})
        assert _fault(refused, 400).startswith('No valid host was found.')
        assert [m['status'] for m in _migrations(stack, server['id'])] == ['error']
        assert stack.wait_for_status(server['id'], ('ACTIVE',))['OS-EXT-SRV-ATTR:host'] \
            == source
        assert _pin(stack, server['id'], None).status_code == 200
        assert _req(stack, 'POST', '/servers/%s/action' % server['id'],
                    json={'migrate': None}).status_code == 202
        moved = stack.wait_for_status(server['id'], ('VERIFY_RESIZE',))
        assert moved['OS-EXT-SRV-ATTR:host'] == target
        # The server's zone follows its host, and goes back with a revert.
        assert moved['OS-EXT-AZ:availability_zone'] == 'mv-az-dst'
        assert _req(stack, 'POST', '/servers/%s/action' % server['id'],
                    json={'revertResize': None}).status_code == 202
        _wait(lambda: _req(stack, 'GET', '/servers/%s' % server['id']).json()['server'][
            'OS-EXT-SRV-ATTR:host'] == source, 'the revert did not come back')
        back = stack.wait_for_status(server['id'], ('ACTIVE',))
        assert back['OS-EXT-AZ:availability_zone'] == 'mv-az-src'
    finally:
        _req(stack, 'DELETE', '/servers/%s' % server['id'])
        stack.wait_for_deleted(server['id'])
        for aggregate, host in aggregates:
            _req(stack, 'POST', '/os-aggregates/%s/action' % aggregate,
                 json={'remove_host': {'host': host}})
            _req(stack, 'DELETE', '/os-aggregates/%s' % aggregate)
