"""The servers API in depth through the real stack: update, list filters, metadata, tags,
instance actions, later microversion fields and project isolation."""
from __future__ import annotations

import pytest

from novalite.conf import CONF

LATEST = '2.104'
OWNER = 'alice:proj-a'
OTHER = 'bob:proj-b'


@pytest.fixture(scope='module')
def flavor_id(stack):
    resp = stack.request('POST', '/flavors', json={'flavor': {
        'name': 'm1.api', 'ram': 128, 'vcpus': 1, 'disk': 1}})
    assert resp.status_code == 200, resp.text
    return resp.json()['flavor']['id']


def _boot(stack, flavor_id, name, token=OWNER, version=LATEST, **extra):
    body = {'server': dict({'name': name, 'imageRef': stack.image['id'],
                            'flavorRef': flavor_id, 'networks': 'none'}, **extra)}
    resp = stack.request('POST', '/servers', json=body, token=token, version=version)
    assert resp.status_code == 202, resp.text
    return resp.json()['server']['id']


@pytest.fixture(scope='module')
def server(stack, flavor_id):
    """An ACTIVE server of project proj-a, tagged and with metadata."""
    server_id = _boot(stack, flavor_id, 'api-vm', metadata={'role': 'web'},
                      tags=['blue'], description='first')
    return stack.wait_for_status(server_id, ('ACTIVE',), token=OWNER, version=LATEST)


def _req(stack, method, path, token=OWNER, version=LATEST, **kw):
    return stack.request(method, path, token=token, version=version, **kw)


# -- update ---------------------------------------------------------------------------

def test_update_returns_the_full_view_from_275(stack, server):
    resp = _req(stack, 'PUT', '/servers/%s' % server['id'], json={'server': {
        'name': 'renamed', 'description': 'second', 'hostname': 'new-host'}})
    assert resp.status_code == 200, resp.text
    body = resp.json()['server']
    assert (body['name'], body['description']) == ('renamed', 'second')
    assert body['OS-EXT-STS:vm_state'] == 'active'
    assert body['server_groups'] == []
    shown = _req(stack, 'GET', '/servers/%s' % server['id']).json()['server']
    assert shown['name'] == 'renamed'
    assert shown['description'] == 'second'


def test_update_before_275_leaves_extension_fields_out(stack, server):
    resp = _req(stack, 'PUT', '/servers/%s' % server['id'], version='2.19',
                json={'server': {'name': 'api-vm'}})
    assert resp.status_code == 200, resp.text
    body = resp.json()['server']
    assert body['name'] == 'api-vm'
    assert not [k for k in body if k.startswith('OS-EXT-')]
    assert 'key_name' not in body


def test_update_rejects_hostname_before_290_and_bad_names(stack, server):
    path = '/servers/%s' % server['id']
    assert _req(stack, 'PUT', path, version='2.89',
                json={'server': {'hostname': 'x1'}}).status_code == 400
    assert _req(stack, 'PUT', path, json={'server': {'name': ' lead'}}).status_code == 400
    assert _req(stack, 'PUT', path, version='2.1',
                json={'server': {'description': 'd'}}).status_code == 400


def test_later_microversion_fields(stack, server):
    body = _req(stack, 'GET', '/servers/%s' % server['id']).json()['server']
    assert body['locked_reason'] is None
    assert body['trusted_image_certificates'] is None
    assert body['pinned_availability_zone'] is None
    assert body['scheduler_hints'] == {}
    assert body['image']['properties'] == {}
    assert 'host_status' not in body
    admin = _req(stack, 'GET', '/servers/%s' % server['id'], token='admin:admin',
                 version='2.16').json()['server']
    assert admin['host_status'] == 'UP'
    older = _req(stack, 'GET', '/servers/%s' % server['id'], version='2.70').json()
    assert 'server_groups' not in older['server']
    assert 'locked_reason' not in older['server']


def test_create_rejects_trusted_certificates_and_unknown_hosts(stack, flavor_id):
    body = {'server': {'name': 'x', 'imageRef': stack.image['id'], 'flavorRef': flavor_id,
                       'networks': 'none', 'trusted_image_certificates': ['abc']}}
    resp = _req(stack, 'POST', '/servers', json=body)
    assert resp.status_code == 400
    assert 'trusted_image_certificates' in resp.json()['badRequest']['message']
    body['server'].pop('trusted_image_certificates')
    body['server']['host'] = 'host1'
    assert _req(stack, 'POST', '/servers', json=body).status_code == 403
    body['server']['host'] = 'nowhere'
    resp = _req(stack, 'POST', '/servers', json=body, token='admin:admin')
    assert resp.status_code == 400
    assert 'nowhere' in resp.json()['badRequest']['message']


def test_create_on_a_requested_host_for_admins(stack, flavor_id):
    server_id = _boot(stack, flavor_id, 'pinned', token='admin:admin', host='host2',
                      version='2.74')
    server = stack.wait_for_status(server_id, ('ACTIVE', 'ERROR'))
    assert server['OS-EXT-SRV-ATTR:host'] == 'host2', server.get('fault')
    assert _req(stack, 'DELETE', '/servers/%s' % server_id,
                token='admin:admin').status_code == 204


def test_return_reservation_id(stack, flavor_id):
    body = {'server': {'name': 'rsv', 'imageRef': stack.image['id'], 'flavorRef': flavor_id,
                       'networks': 'none', 'return_reservation_id': True,
                       'min_count': 2}}
    resp = _req(stack, 'POST', '/servers', json=body)
    assert resp.status_code == 202, resp.text
    reservation = resp.json()['reservation_id']
    listed = _req(stack, 'GET', '/servers?reservation_id=%s' % reservation).json()
    assert len(listed['servers']) == 2
    for entry in listed['servers']:
        stack.wait_for_status(entry['id'], ('ACTIVE', 'ERROR'), token=OWNER)
        assert _req(stack, 'DELETE', '/servers/%s' % entry['id']).status_code == 204


# -- list -----------------------------------------------------------------------------

def test_list_time_filters_are_validated(stack, server):
    assert _req(stack, 'GET', '/servers?changes-since=yesterday').status_code == 400
    resp = _req(stack, 'GET', '/servers?changes-since=2030-01-01T00:00:00Z'
                '&changes-before=2020-01-01T00:00:00Z')
    assert resp.status_code == 400
    assert 'changes-since' in resp.json()['badRequest']['message']
    ids = [s['id'] for s in _req(stack, 'GET', '/servers?changes-since=2000-01-01T00:00:00Z'
                                 ).json()['servers']]
    assert server['id'] in ids


def test_list_pagination_with_links(stack, flavor_id, server):
    other = _boot(stack, flavor_id, 'api-vm-2')
    stack.wait_for_status(other, ('ACTIVE',), token=OWNER)
    first = _req(stack, 'GET', '/servers?limit=1').json()
    assert len(first['servers']) == 1
    link = first['servers_links'][0]
    assert link['rel'] == 'next' and 'marker=%s' % first['servers'][0]['id'] in link['href']
    second = _req(stack, 'GET', '/servers?limit=1&marker=%s' % first['servers'][0]['id'])
    assert second.json()['servers'][0]['id'] != first['servers'][0]['id']
    assert _req(stack, 'GET', '/servers?marker=nope').status_code == 400
    assert _req(stack, 'DELETE', '/servers/%s' % other).status_code == 204
    stack.wait_for_deleted(other, token=OWNER)


def test_list_locked_ip_and_sort_keys(stack, server):
    ids = [s['id'] for s in _req(stack, 'GET', '/servers?locked=false').json()['servers']]
    assert server['id'] in ids
    assert _req(stack, 'GET', '/servers?locked=maybe').status_code == 400
    # No server has an address without a network service.
    assert _req(stack, 'GET', '/servers?ip=10.0').json()['servers'] == []
    assert _req(stack, 'GET', '/servers?sort_key=vcpus', version='2.1').status_code == 200
    assert _req(stack, 'GET', '/servers?sort_key=vcpus').status_code == 400
    assert _req(stack, 'GET', '/servers?bogus=1').status_code == 400
    assert _req(stack, 'GET', '/servers?bogus=1', version='2.74').status_code == 200


def test_all_tenants_is_for_admins(stack, server):
    assert _req(stack, 'GET', '/servers?all_tenants=1', token=OTHER).status_code == 403
    assert _req(stack, 'GET', '/servers', token=OTHER).json()['servers'] == []
    every = _req(stack, 'GET', '/servers?all_tenants=1', token='admin:admin').json()
    assert server['id'] in [s['id'] for s in every['servers']]
    scoped = _req(stack, 'GET', '/servers?all_tenants=1&project_id=proj-b',
                  token='admin:admin').json()
    assert scoped['servers'] == []


# -- metadata -------------------------------------------------------------------------

def test_metadata_crud(stack, server):
    path = '/servers/%s/metadata' % server['id']
    resp = _req(stack, 'POST', path, json={'metadata': {'env': 'prod'}})
    assert resp.json() == {'metadata': {'role': 'web', 'env': 'prod'}}
    assert _req(stack, 'GET', path + '/env').json() == {'meta': {'env': 'prod'}}
    assert _req(stack, 'GET', path + '/nope').status_code == 404
    resp = _req(stack, 'PUT', path + '/env', json={'meta': {'other': 'x'}})
    assert resp.status_code == 400
    assert _req(stack, 'PUT', path + '/env', json={'meta': {'env': 'dev'}}).json() == \
        {'meta': {'env': 'dev'}}
    resp = _req(stack, 'PUT', path, json={'metadata': {'only': 'this'}})
    assert resp.json() == {'metadata': {'only': 'this'}}
    assert _req(stack, 'DELETE', path + '/only').status_code == 204
    assert _req(stack, 'DELETE', path + '/only').status_code == 404
    assert _req(stack, 'GET', path).json() == {'metadata': {}}
    assert _req(stack, 'POST', path, json={'metadata': {'bad/key': 'x'}}).status_code == 400


def test_metadata_quota(stack, server):
    CONF.set_override('metadata_items', 2, group='quota')
    try:
        resp = _req(stack, 'PUT', '/servers/%s/metadata' % server['id'],
                    json={'metadata': {'a': '1', 'b': '2', 'c': '3'}})
    finally:
        CONF.clear_override('metadata_items', group='quota')
    assert resp.status_code == 403
    assert 'metadata items' in resp.json()['forbidden']['message']


# -- tags -----------------------------------------------------------------------------

def test_tags_crud_and_filters(stack, server):
    path = '/servers/%s/tags' % server['id']
    assert _req(stack, 'GET', path, version='2.25').status_code == 404
    assert _req(stack, 'GET', path).json() == {'tags': ['blue']}
    assert _req(stack, 'PUT', path, json={'tags': ['red', 'green']}).json() == \
        {'tags': ['green', 'red']}
    resp = _req(stack, 'PUT', path + '/blue')
    assert resp.status_code == 201
    assert resp.headers['Location'].endswith(path + '/blue')
    assert _req(stack, 'PUT', path + '/blue').status_code == 204
    assert _req(stack, 'GET', path + '/blue').status_code == 204
    assert _req(stack, 'GET', path + '/nope').status_code == 404
    assert _req(stack, 'PUT', path + '/a,b').status_code == 400
    assert _req(stack, 'PUT', path, json={'tags': ['x'] * 51}).status_code == 400

    def listed(query):
        return [s['id'] for s in _req(stack, 'GET', '/servers?' + query).json()['servers']]
    assert server['id'] in listed('tags=red,blue')
    assert server['id'] not in listed('tags=red,yellow')
    assert server['id'] in listed('tags-any=yellow,red')
    assert server['id'] not in listed('not-tags=red,blue')
    assert server['id'] in listed('not-tags=red,yellow')
    assert server['id'] not in listed('not-tags-any=yellow,red')

    assert _req(stack, 'DELETE', path + '/blue').status_code == 204
    assert _req(stack, 'DELETE', path + '/blue').status_code == 404
    assert _req(stack, 'DELETE', path).status_code == 204
    assert _req(stack, 'GET', path).json() == {'tags': []}


def test_tags_of_a_server_that_did_not_build_are_a_conflict(stack):
    resp = stack.request('POST', '/flavors', json={'flavor': {
        'name': 'm1.huge-api', 'ram': 128, 'vcpus': 1, 'disk': 10 ** 6}})
    server_id = _boot(stack, resp.json()['flavor']['id'], 'no-room')
    stack.wait_for_status(server_id, ('ERROR',), token=OWNER)
    resp = _req(stack, 'PUT', '/servers/%s/tags/x' % server_id)
    assert resp.status_code == 409
    resp = _req(stack, 'POST', '/servers/%s/metadata' % server_id,
                json={'metadata': {'a': 'b'}})
    assert resp.status_code == 409


# -- instance actions -----------------------------------------------------------------

def test_instance_actions_and_events(stack, server):
    path = '/servers/%s/os-instance-actions' % server['id']
    actions = _req(stack, 'GET', path).json()['instanceActions']
    create = [a for a in actions if a['action'] == 'create']
    assert len(create) == 1 and create[0]['updated_at']
    request_id = create[0]['request_id']

    member = _req(stack, 'GET', '%s/%s' % (path, request_id)).json()['instanceAction']
    by_name = {e['event']: e for e in member['events']}
    compute = by_name['compute__do_build_and_run_instance']
    assert 'traceback' not in compute and 'host' not in compute and 'details' not in compute
    assert len(compute['hostId']) == 56
    # The conductor's event names the conductor's host, as in Nova.
    assert len(by_name['conductor_schedule_and_build_instances']['hostId']) == 56
    old = _req(stack, 'GET', '%s/%s' % (path, request_id), version='2.50').json()
    assert 'events' not in old['instanceAction']
    admin = _req(stack, 'GET', '%s/%s' % (path, request_id), token='admin:admin').json()
    event = {e['event']: e for e in admin['instanceAction']['events']}[
        'compute__do_build_and_run_instance']
    assert event['host'] in ('host1', 'host2')
    assert 'traceback' in event and 'details' in event
    assert _req(stack, 'GET', '%s/req-nope' % path).status_code == 404


def test_instance_actions_pagination_and_time_filters(stack, server):
    path = '/servers/%s/os-instance-actions' % server['id']
    page = _req(stack, 'GET', path + '?limit=1').json()
    assert len(page['instanceActions']) == 1
    assert page['links'][0]['rel'] == 'next'
    marker = page['instanceActions'][0]['request_id']
    rest = _req(stack, 'GET', path + '?marker=%s' % marker).json()['instanceActions']
    assert marker not in [a['request_id'] for a in rest]
    assert _req(stack, 'GET', path + '?marker=nope').status_code == 400
    assert _req(stack, 'GET', path + '?changes-since=2999-01-01T00:00:00Z').json() == \
        {'instanceActions': []}
    assert _req(stack, 'GET', path + '?changes-since=2020-01-02T00:00:00Z'
                '&changes-before=2020-01-01T00:00:00Z').status_code == 400
    assert _req(stack, 'GET', path + '?changes-since=bad').status_code == 400


# -- project isolation ----------------------------------------------------------------

@pytest.mark.parametrize('method,suffix,body', [
    ('GET', '', None),
    ('PUT', '', {'server': {'name': 'stolen'}}),
    ('DELETE', '', None),
    ('GET', '/metadata', None),
    ('POST', '/metadata', {'metadata': {'a': 'b'}}),
    ('GET', '/metadata/role', None),
    ('DELETE', '/metadata/role', None),
    ('GET', '/tags', None),
    ('PUT', '/tags/x', None),
    ('DELETE', '/tags', None),
    ('GET', '/os-instance-actions', None),
])
def test_other_projects_get_404(stack, server, method, suffix, body):
    resp = _req(stack, method, '/servers/%s%s' % (server['id'], suffix), token=OTHER,
                json=body)
    assert resp.status_code == 404, resp.text
    assert 'itemNotFound' in resp.json()



def test_detail_at_2100_shows_each_servers_hints_and_pinned_zone(stack, flavor_id):
    """The 2.96/2.100 fields come from the request specs, read for the whole page."""
    hinted = _boot(stack, flavor_id, 'hinted', availability_zone='nova')
    plain = _boot(stack, flavor_id, 'plain')
    resp = stack.request('POST', '/servers', token=OWNER, version=LATEST, json={
        'server': {'name': 'with-hint', 'imageRef': stack.image['id'],
                   'flavorRef': flavor_id, 'networks': 'none'},
        'os:scheduler_hints': {'same_host': [plain]}})
    assert resp.status_code == 202, resp.text
    with_hint = resp.json()['server']['id']
    for sid in (hinted, plain, with_hint):
        stack.wait_for_status(sid, ('ACTIVE', 'ERROR'), token=OWNER, version=LATEST)
    servers = {s['id']: s for s in _req(stack, 'GET', '/servers/detail').json()['servers']}
    assert servers[hinted]['pinned_availability_zone'] == 'nova'
    assert servers[plain]['pinned_availability_zone'] is None
    # A list per hint, as Nova stores and shows them.
    assert servers[with_hint]['scheduler_hints'] == {'same_host': [plain]}
    assert servers[plain]['scheduler_hints'] == {}
    for sid in (hinted, plain, with_hint):
        _req(stack, 'DELETE', '/servers/%s' % sid)
    for sid in (hinted, plain, with_hint):
        stack.wait_for_deleted(sid, token=OWNER)
