"""Server extras through the real stack: OS-DCF:diskConfig, scheduler hints in the view,
server lists while servers are being built, os-server-password, topology and volume
attachments."""
from __future__ import annotations

import collections
import threading
from concurrent import futures

import pytest

from novalite import context as nl_context
from novalite import objects
from novalite.compute import api as compute_api

LATEST = '2.100'
OWNER = 'alice:proj-x'
OTHER = 'bob:proj-y'
NO_CINDER = 'Volumes need the Block Storage service (Cinder), which this cloud does not have'


@pytest.fixture(scope='module')
def flavor_id(stack):
    quota = stack.request('PUT', '/os-quota-sets/proj-x', json={'quota_set': {
        'instances': 50, 'cores': 50, 'ram': 51200}})
    assert quota.status_code == 200, quota.text
    resp = stack.request('POST', '/flavors', json={'flavor': {
        'name': 'm1.extras', 'ram': 128, 'vcpus': 1, 'disk': 1}})
    assert resp.status_code == 200, resp.text
    return resp.json()['flavor']['id']


@pytest.fixture(scope='module')
def bigger_flavor_id(stack):
    resp = stack.request('POST', '/flavors', json={'flavor': {
        'name': 'm1.extras-big', 'ram': 256, 'vcpus': 1, 'disk': 1}})
    assert resp.status_code == 200, resp.text
    return resp.json()['flavor']['id']


@pytest.fixture(scope='module')
def disabled_image(stack):
    """An image that refuses AUTO disk config."""
    return stack.glance.add_image('no-auto-disk', auto_disk_config='disabled')


@pytest.fixture(scope='module')
def auto_image(stack):
    """An image whose servers get AUTO unless they ask otherwise."""
    return stack.glance.add_image('auto-disk', auto_disk_config='True')


def _req(stack, method, path, token=OWNER, version=LATEST, **kw):
    return stack.request(method, path, token=token, version=version, **kw)


def _create(stack, flavor_id, name, image=None, hints=None, **extra):
    body = {'server': dict({'name': name, 'imageRef': (image or stack.image)['id'],
                            'flavorRef': flavor_id, 'networks': 'none'}, **extra)}
    if hints is not None:
        body['os:scheduler_hints'] = hints
    return _req(stack, 'POST', '/servers', json=body)


def _boot(stack, flavor_id, name, **kw):
    resp = _create(stack, flavor_id, name, **kw)
    assert resp.status_code == 202, resp.text
    return resp.json()['server']


def _active(stack, server_id):
    server = stack.wait_for_status(server_id, ('ACTIVE', 'ERROR'), token=OWNER,
                                   version=LATEST)
    assert server['status'] == 'ACTIVE', server.get('fault')
    return server


@pytest.fixture(scope='module')
def server(stack, flavor_id):
    return _active(stack, _boot(stack, flavor_id, 'extras-vm')['id'])


def _action(stack, server_id, body, **kw):
    return _req(stack, 'POST', '/servers/%s/action' % server_id, json=body, **kw)


def _message(resp):
    return next(iter(resp.json().values()))['message']


# -- OS-DCF:diskConfig ------------------------------------------------------------------

def test_disk_config_chosen_on_create_is_shown_in_every_view(stack, flavor_id):
    created = _boot(stack, flavor_id, 'dcf-auto', **{'OS-DCF:diskConfig': 'AUTO'})
    assert created['OS-DCF:diskConfig'] == 'AUTO'
    server_id = created['id']
    _active(stack, server_id)
    for version in ('2.1', '2.75', LATEST):
        shown = _req(stack, 'GET', '/servers/%s' % server_id, version=version)
        assert shown.json()['server']['OS-DCF:diskConfig'] == 'AUTO', version
        listed = _req(stack, 'GET', '/servers/detail', version=version).json()['servers']
        assert {s['id']: s for s in listed}[server_id]['OS-DCF:diskConfig'] == 'AUTO'
    updated = _req(stack, 'PUT', '/servers/%s' % server_id, version='2.1',
                   json={'server': {'OS-DCF:diskConfig': 'MANUAL'}})
    assert updated.status_code == 200, updated.text
    assert updated.json()['server']['OS-DCF:diskConfig'] == 'MANUAL'
    shown = _req(stack, 'GET', '/servers/%s' % server_id).json()['server']
    assert shown['OS-DCF:diskConfig'] == 'MANUAL'


@pytest.mark.parametrize('value', ['auto', 'NONE', ''])
def test_a_disk_config_outside_the_enum_is_a_bad_request(stack, flavor_id, server, value):
    resp = _create(stack, flavor_id, 'dcf-bad', **{'OS-DCF:diskConfig': value})
    assert resp.status_code == 400, resp.text
    assert 'OS-DCF:diskConfig' in _message(resp)
    resp = _req(stack, 'PUT', '/servers/%s' % server['id'],
                json={'server': {'OS-DCF:diskConfig': value}})
    assert resp.status_code == 400, resp.text
    resp = _action(stack, server['id'], {'resize': {'flavorRef': flavor_id,
                                                    'OS-DCF:diskConfig': value}})
    assert resp.status_code == 400, resp.text


def test_an_image_that_disables_auto_disk_config_refuses_auto(stack, flavor_id,
                                                              disabled_image):
    before = {s['id'] for s in _req(stack, 'GET', '/servers').json()['servers']}
    resp = _create(stack, flavor_id, 'dcf-refused', image=disabled_image,
                   **{'OS-DCF:diskConfig': 'AUTO'})
    assert resp.status_code == 400, resp.text
    assert _message(resp) == ('Requested image %s has automatic disk resize disabled.'
                              % disabled_image['id'])
    assert {s['id'] for s in _req(stack, 'GET', '/servers').json()['servers']} == before
    manual = _boot(stack, flavor_id, 'dcf-manual', image=disabled_image,
                   **{'OS-DCF:diskConfig': 'MANUAL'})
    assert manual['OS-DCF:diskConfig'] == 'MANUAL'
    unchosen = _boot(stack, flavor_id, 'dcf-unchosen', image=disabled_image)
    assert unchosen['OS-DCF:diskConfig'] == 'MANUAL'
    for created in (manual, unchosen):
        assert _active(stack, created['id'])['OS-DCF:diskConfig'] == 'MANUAL'


def test_the_image_decides_when_the_request_does_not(stack, flavor_id, auto_image):
    created = _boot(stack, flavor_id, 'dcf-from-image', image=auto_image)
    assert created['OS-DCF:diskConfig'] == 'AUTO'
    chosen = _boot(stack, flavor_id, 'dcf-chosen', image=auto_image,
                   **{'OS-DCF:diskConfig': 'MANUAL'})
    assert chosen['OS-DCF:diskConfig'] == 'MANUAL'
    assert _active(stack, created['id'])['OS-DCF:diskConfig'] == 'AUTO'
    assert _active(stack, chosen['id'])['OS-DCF:diskConfig'] == 'MANUAL'


def test_rebuild_takes_the_disk_config_and_checks_the_new_image(stack, flavor_id,
                                                                disabled_image, auto_image):
    server_id = _boot(stack, flavor_id, 'dcf-rebuild')['id']
    _active(stack, server_id)
    refused = _action(stack, server_id, {'rebuild': {
        'imageRef': disabled_image['id'], 'OS-DCF:diskConfig': 'AUTO'}})
    assert refused.status_code == 400, refused.text
    assert 'automatic disk resize disabled' in _message(refused)
    rebuilt = _action(stack, server_id, {'rebuild': {
        'imageRef': stack.image['id'], 'OS-DCF:diskConfig': 'AUTO'}})
    assert rebuilt.status_code == 202, rebuilt.text
    assert rebuilt.json()['server']['OS-DCF:diskConfig'] == 'AUTO'
    _active(stack, server_id)
    # Without a choice the new image decides, as in Nova.
    rebuilt = _action(stack, server_id, {'rebuild': {'imageRef': auto_image['id']}})
    assert rebuilt.json()['server']['OS-DCF:diskConfig'] == 'AUTO'
    _active(stack, server_id)
    rebuilt = _action(stack, server_id, {'rebuild': {'imageRef': stack.image['id']}})
    assert rebuilt.json()['server']['OS-DCF:diskConfig'] == 'MANUAL'
    _active(stack, server_id)


def test_resize_takes_the_disk_config_and_checks_the_servers_image(
        stack, flavor_id, bigger_flavor_id, disabled_image):
    refused_id = _boot(stack, flavor_id, 'dcf-resize-refused', image=disabled_image)['id']
    _active(stack, refused_id)
    refused = _action(stack, refused_id, {'resize': {'flavorRef': bigger_flavor_id,
                                                     'OS-DCF:diskConfig': 'AUTO'}})
    assert refused.status_code == 400, refused.text
    assert 'automatic disk resize disabled' in _message(refused)
    assert _active(stack, refused_id)['OS-EXT-STS:task_state'] is None

    server_id = _boot(stack, flavor_id, 'dcf-resize')['id']
    _active(stack, server_id)
    resp = _action(stack, server_id, {'resize': {'flavorRef': bigger_flavor_id,
                                                 'OS-DCF:diskConfig': 'AUTO'}})
    assert resp.status_code == 202, resp.text
    resized = stack.wait_for_status(server_id, ('VERIFY_RESIZE', 'ERROR'), token=OWNER,
                                    version=LATEST)
    assert resized['status'] == 'VERIFY_RESIZE', resized.get('fault')
    assert resized['OS-DCF:diskConfig'] == 'AUTO'
    assert _action(stack, server_id, {'confirmResize': None}).status_code == 204
    _active(stack, server_id)
    # A resize without a choice ends MANUAL, as Nova's.
    resp = _action(stack, server_id, {'resize': {'flavorRef': flavor_id}})
    assert resp.status_code == 202, resp.text
    resized = stack.wait_for_status(server_id, ('VERIFY_RESIZE', 'ERROR'), token=OWNER,
                                    version=LATEST)
    assert resized['OS-DCF:diskConfig'] == 'MANUAL'
    assert _action(stack, server_id, {'confirmResize': None}).status_code == 204
    _active(stack, server_id)


# -- scheduler hints (2.100) --------------------------------------------------------------

def test_hints_are_shown_as_a_list_per_key(stack, flavor_id, server):
    group = _req(stack, 'POST', '/os-server-groups', version='2.64', json={
        'server_group': {'name': 'extras-group', 'policy': 'affinity'}}).json()
    group_id = group['server_group']['id']
    created = _boot(stack, flavor_id, 'hinted', hints={
        'same_host': server['id'], 'group': group_id, 'custom': 'x'})
    hinted = _active(stack, created['id'])
    expected = {'same_host': [server['id']], 'group': [group_id], 'custom': ['x']}
    assert hinted['scheduler_hints'] == expected
    listed = {s['id']: s for s in _req(stack, 'GET', '/servers/detail').json()['servers']}
    assert listed[created['id']]['scheduler_hints'] == expected
    updated = _req(stack, 'PUT', '/servers/%s' % created['id'],
                   json={'server': {'name': 'hinted-2'}}).json()['server']
    assert updated['scheduler_hints'] == expected
    # What the view shows may be sent back: a list for group too (Nova's schema).
    again = _create(stack, flavor_id, 'hinted-again', hints={'group': [group_id]})
    assert again.status_code == 202, again.text
    _active(stack, again.json()['server']['id'])


# -- lists while servers are being built --------------------------------------------------

def _duplicates(servers: list[dict]) -> list[str]:
    return [sid for sid, n in collections.Counter(s['id'] for s in servers).items() if n > 1]


def _all_pages(stack, path: str) -> list[dict]:
    found, marker = [], None
    while True:
        query = '?limit=1' + ('&marker=%s' % marker if marker else '')
        page = _req(stack, 'GET', path + query).json()['servers']
        if not page:
            return found
        found.extend(page)
        marker = page[-1]['id']


def test_a_server_moving_into_its_cell_is_listed_once(stack, flavor_id, monkeypatch):
    """Each server is listed at the moment the conductor has created it in its cell
    but not yet deleted its build request, and by a client listing all along."""
    original = objects.InstanceMapping.set_cell.__func__
    in_window: list[tuple[str, list[dict], list[dict]]] = []

    def listing_then_set_cell(cls, context, instance_uuid, cell_mapping):
        in_window.append((instance_uuid,
                          _req(stack, 'GET', '/servers/detail').json()['servers'],
                          _all_pages(stack, '/servers')))
        return original(cls, context, instance_uuid, cell_mapping)

    monkeypatch.setattr(objects.InstanceMapping, 'set_cell',
                        classmethod(listing_then_set_cell))
    done = threading.Event()

    def keep_listing() -> list[list[str]]:
        seen = []
        while not done.is_set():
            listed = _req(stack, 'GET', '/servers').json()['servers']
            seen.append(_duplicates(listed))
        return seen

    with futures.ThreadPoolExecutor(max_workers=1) as pool:
        lister = pool.submit(keep_listing)
        resp = _create(stack, flavor_id, 'multi', min_count=3)
        assert resp.status_code == 202, resp.text
        ids = [s['id'] for s in _req(stack, 'GET', '/servers?name=^multi-').json()['servers']]
        assert len(ids) == 3
        for server_id in ids:
            _active(stack, server_id)
        done.set()
        concurrent = lister.result()
    assert sorted(uuid for uuid, _d, _p in in_window) == sorted(ids)
    for uuid, detail, pages in in_window:
        assert _duplicates(detail) == [] and _duplicates(pages) == []
        assert uuid in {s['id'] for s in detail} and uuid in {s['id'] for s in pages}
    assert concurrent and all(dupes == [] for dupes in concurrent)


# -- os-server-password ---------------------------------------------------------------------

def _store_password(server_id: str, password: str) -> None:
    """What the metadata service does when the guest posts its encrypted password."""
    from novalite.api.openstack.compute import server_password
    context = nl_context.get_admin_context()
    api = compute_api.API()
    instance = api.get(context, server_id)
    api.update_instance(context, instance, {'system_metadata': dict(
        instance.system_metadata, **server_password.convert_password(password))})


def test_server_password_shows_and_clears_the_metadata_password(stack, server):
    path = '/servers/%s/os-server-password' % server['id']
    assert _req(stack, 'GET', path).json() == {'password': ''}
    secret = 'x' * 300 + 'y' * 300
    _store_password(server['id'], secret)
    assert _req(stack, 'GET', path, version='2.1').json() == {'password': secret}
    assert _req(stack, 'GET', path, token=OTHER).status_code == 404
    assert _req(stack, 'DELETE', path, token=OTHER).status_code == 404
    assert _req(stack, 'GET', path).json() == {'password': secret}
    cleared = _req(stack, 'DELETE', path)
    assert cleared.status_code == 204 and cleared.content == b''
    assert _req(stack, 'GET', path).json() == {'password': ''}
    assert _req(stack, 'GET', '/servers/%s/os-server-password' % ('0' * 32)) \
        .status_code == 404


# -- topology (2.78) ------------------------------------------------------------------------

def test_topology_of_a_server_without_numa(stack, server):
    path = '/servers/%s/topology' % server['id']
    assert _req(stack, 'GET', path, version='2.77').status_code == 404
    resp = _req(stack, 'GET', path, version='2.78')
    assert resp.status_code == 200, resp.text
    assert resp.json() == {'nodes': [], 'pagesize_kb': None}
    assert _req(stack, 'GET', path, token='admin:admin').json() == \
        {'nodes': [], 'pagesize_kb': None}
    assert _req(stack, 'GET', path, token=OTHER).status_code == 404


# -- os-volume_attachments ------------------------------------------------------------------

VOLUME = '8a6b9b8e-4c8b-4b62-9d35-6e2f3c8a1f10'


def test_volume_attachments_list_is_empty_and_a_volume_is_not_attached(stack, server):
    path = '/servers/%s/os-volume_attachments' % server['id']
    for version in ('2.1', '2.79', LATEST):
        resp = _req(stack, 'GET', path, version=version)
        assert resp.status_code == 200, resp.text
        assert resp.json() == {'volumeAttachments': []}
    assert _req(stack, 'GET', path + '?limit=5&offset=0').status_code == 200
    assert _req(stack, 'GET', path + '?limit=-1').status_code == 400
    assert _req(stack, 'GET', path + '?bogus=1', version='2.74').status_code == 200
    assert _req(stack, 'GET', path + '?bogus=1', version='2.75').status_code == 400
    shown = _req(stack, 'GET', '%s/%s' % (path, VOLUME))
    assert shown.status_code == 404
    assert _message(shown) == 'Instance %s is not attached to volume %s' % (
        server['id'], VOLUME)
    assert _req(stack, 'GET', path, token=OTHER).status_code == 404


def test_without_cinder_attach_says_so_and_nothing_is_attached(stack, server):
    path = '/servers/%s/os-volume_attachments' % server['id']
    attach = _req(stack, 'POST', path, json={'volumeAttachment': {'volumeId': VOLUME}})
    assert attach.status_code == 400 and NO_CINDER in _message(attach)
    # Nothing is attached: a swap or a detach of that volume finds nothing (404).
    swap = _req(stack, 'PUT', '%s/%s' % (path, VOLUME), token='admin:admin',
                json={'volumeAttachment': {'volumeId': VOLUME}})
    assert swap.status_code == 404, swap.text
    detach = _req(stack, 'DELETE', '%s/%s' % (path, VOLUME))
    assert detach.status_code == 404, detach.text
    # The body is checked first, the server next, as Nova does.
    bad = _req(stack, 'POST', path, json={'volumeAttachment': {'volumeId': 'nope'}})
    assert bad.status_code == 400 and NO_CINDER not in _message(bad)
    tagged = _req(stack, 'POST', path, version='2.48',
                  json={'volumeAttachment': {'volumeId': VOLUME, 'tag': 'a'}})
    assert tagged.status_code == 400 and NO_CINDER not in _message(tagged)
    missing = _req(stack, 'POST', '/servers/%s/os-volume_attachments' % ('0' * 32),
                   json={'volumeAttachment': {'volumeId': VOLUME}})
    assert missing.status_code == 404
    # Swapping (another volume, or any PUT before 2.85) is for services only.
    member_swap = _req(stack, 'PUT', '%s/%s' % (path, VOLUME), version='2.84',
                       json={'volumeAttachment': {'volumeId': VOLUME}})
    assert member_swap.status_code == 403, member_swap.text
