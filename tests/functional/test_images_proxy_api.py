"""The images proxy (/images to 2.35, its metadata to 2.38), the fake driver's shelve
against a Glance double that inspects uploads as Glance does, and the image
pre-caching of an aggregate (2.81), through the in-process stack."""
from __future__ import annotations

import os
import tempfile
import threading
import time
import urllib.parse
import uuid
from typing import Any

import pytest
from oslo_utils.imageutils import format_inspector

from novalite.allinone import stack as allinone_stack
from tests.fixtures.glance import GlanceDouble
from tests.functional.stack import TEST_SETTINGS, Stack
from tests.unit.virt.image_server import _json, _read_chunked, _reply

ADMIN = 'admin:admin'
OWNER = 'alice:proj-img'
PROXY = '2.35'
META = '2.38'


class InspectingGlance(GlanceDouble):
    """The Glance double where the proxy and the uploads need more of Glance: pages
    with markers and ``next`` links, ``gte:`` on ``updated_at``, 400 for an unknown
    marker, 403 for deleting a protected image, and the format inspection of the
    uploaded data (415 when it is not the image's ``disk_format``)."""

    def __init__(self) -> None:
        super().__init__()
        self.refuse_uploads = threading.Event()

    def _app(self, environ, start_response):
        if environ['REQUEST_METHOD'] == 'GET' and environ.get('PATH_INFO', '').rstrip(
                '/') == '/v2/images':
            return self._page(environ.get('QUERY_STRING', ''), start_response)
        return super()._app(environ, start_response)

    def _write(self, environ, start_response, method, parts):
        image = self.images.get(parts[2]) if len(parts) > 2 else None
        if image is not None and parts[3:] == ['file'] and method == 'PUT':
            length = environ.get('CONTENT_LENGTH')
            data = environ['wsgi.input'].read(int(length)) if length else \
                _read_chunked(environ)
            problem = self._inspect(image, data)
            if problem:
                return _json(start_response, '415 Unsupported Media Type',
                             {'message': problem})
            self._store(image, data)
            return _reply(start_response, '204 No Content', b'')
        if image is not None and len(parts) == 3 and method == 'DELETE' and \
                image.get('protected'):
            return _json(start_response, '403 Forbidden',
                         {'message': 'Image %s is protected' % image['id']})
        return super()._write(environ, start_response, method, parts)

    def _inspect(self, image: dict, data: bytes) -> str | None:
        if self.refuse_uploads.is_set():
            return 'uploads refused by the test'
        if image.get('container_format') != 'bare':
            return None
        found = _detect(data)
        if found != image.get('disk_format') and image.get('disk_format') != 'raw':
            return 'Image disk_format %s does not match stream data %s' % (
                image.get('disk_format'), found)
        return None

    def _page(self, query: str, start_response):
        params = dict(urllib.parse.parse_qsl(query))
        limit = int(params.pop('limit', 25))
        marker = params.pop('marker', None)
        params.pop('sort', None)
        found = sorted(self.images.values(), reverse=True,
                       key=lambda i: (i.get('created_at') or '', i['id']))
        for key, value in params.items():
            if value.startswith('gte:'):
                found = [i for i in found if str(i.get(key) or '') >= value[4:]]
            else:
                found = [i for i in found if str(i.get(key)) == value]
        if marker is not None:
            ids = [i['id'] for i in found]
            if marker not in ids:
                return _json(start_response, '400 Bad Request',
                             {'message': 'marker not found'})
            found = found[ids.index(marker) + 1:]
        body: dict[str, Any] = {'images': found[:limit]}
        if len(found) > limit:
            body['next'] = '/v2/images?' + urllib.parse.urlencode(
                dict(params, limit=limit, marker=found[limit - 1]['id']))
        return _json(start_response, '200 OK', body)


def _detect(data: bytes) -> str:
    """The format Glance's inspection finds in ``data``."""
    fd, path = tempfile.mkstemp()
    try:
        with os.fdopen(fd, 'wb') as out:
            out.write(data)
        return str(format_inspector.detect_file_format(path))
    finally:
        os.unlink(path)


class ImagesStack(Stack):
    """The functional stack on one compute host with :class:`InspectingGlance`."""

    def __init__(self, tmp_dir: str) -> None:
        self.glance = InspectingGlance()
        allinone_stack.Stack.__init__(self, tmp_dir, self.glance.server.url,
                                      compute_hosts=('imghost',), overrides=TEST_SETTINGS)
        self.image = {}


@pytest.fixture(scope='module')
def stack(tmp_path_factory):
    made = ImagesStack(str(tmp_path_factory.mktemp('images-stack')))
    made.start()
    try:
        yield made
    finally:
        made.stop()


def _req(stack, method, path, version=PROXY, token=ADMIN, **kwargs):
    return stack.request(method, path, token=token, version=version, **kwargs)


def _add(stack, name, **props) -> dict:
    now = time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())
    return stack.glance.add_image(name, created_at=now, updated_at=now, **props)


@pytest.fixture(scope='module')
def flavor(stack):
    resp = _req(stack, 'POST', '/flavors', json={'flavor': {
        'name': 'img.nano', 'ram': 128, 'vcpus': 1, 'disk': 1}})
    assert resp.status_code == 200, resp.text
    return resp.json()['flavor']


def _boot(stack, flavor, token=OWNER) -> str:
    resp = _req(stack, 'POST', '/servers', version='2.37', token=token, json={'server': {
        'name': 'img-vm', 'imageRef': stack.image['id'], 'flavorRef': flavor['id'],
        'networks': 'none'}})
    assert resp.status_code == 202, resp.text
    server_id = resp.json()['server']['id']
    assert stack.wait_for_status(server_id, ('ACTIVE', 'ERROR'))['status'] == 'ACTIVE'
    return server_id


def _settled(stack, server_id, timeout=20.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        server = _req(stack, 'GET', '/servers/%s' % server_id).json()['server']
        if server['OS-EXT-STS:task_state'] is None:
            return server
        assert time.monotonic() < deadline, server
        time.sleep(0.05)


# -- the images proxy ------------------------------------------------------------------------

def test_images_are_served_to_2_35_and_gone_from_2_36(stack):
    image = _add(stack, 'proxy-versions')
    for path in ('/images', '/images/detail', '/images/%s' % image['id']):
        assert _req(stack, 'GET', path).status_code == 200
        resp = _req(stack, 'GET', path, version='2.36')
        assert resp.status_code == 404, resp.text
    assert _req(stack, 'DELETE', '/images/%s' % image['id'],
                version='2.36').status_code == 404
    assert _req(stack, 'GET', '/images/%s/metadata' % image['id'],
                version=META).status_code == 200
    for method in ('GET', 'PUT', 'POST'):
        body = {'metadata': {}} if method != 'GET' else None
        resp = _req(stack, method, '/images/%s/metadata' % image['id'], version='2.39',
                    json=body)
        assert resp.status_code == 404, resp.text


def test_show_is_nova_s_view_of_the_glance_image(stack):
    image = _add(stack, 'proxy-show', min_ram=64, min_disk=2, size=4096,
                 auto_disk_config='False', os_distro='cirros',
                 block_device_mapping='[{"boot_index": 0}]')
    shown = _req(stack, 'GET', '/images/%s' % image['id']).json()['image']
    assert shown['id'] == image['id'] and shown['name'] == 'proxy-show'
    assert (shown['minRam'], shown['minDisk'], shown['OS-EXT-IMG-SIZE:size']) == (64, 2, 4096)
    assert (shown['status'], shown['progress']) == ('ACTIVE', 100)
    assert shown['metadata'] == {'auto_disk_config': 'False', 'os_distro': 'cirros',
                                 'block_device_mapping': [{'boot_index': 0}]}
    assert shown['OS-DCF:diskConfig'] == 'MANUAL'
    assert 'server' not in shown
    assert shown['created'] == image['created_at']
    rels = [(link['rel'], link['href']) for link in shown['links']]
    assert rels[0] == ('self', stack.api + '/images/%s' % image['id'])
    assert rels[1][0] == 'bookmark' and rels[1][1].endswith('/images/%s' % image['id'])
    assert '/v2.1/' not in rels[1][1]
    assert rels[2] == ('alternate', stack.glance.server.url + '/images/%s' % image['id'])
    assert shown['links'][2]['type'] == 'application/vnd.openstack.image'

    queued = _add(stack, 'proxy-queued', status='queued', size=None)
    shown = _req(stack, 'GET', '/images/%s' % queued['id']).json()['image']
    assert (shown['status'], shown['progress'], shown['OS-EXT-IMG-SIZE:size']) == (
        'SAVING', 25, 0)
    killed = _add(stack, 'proxy-killed', status='killed')
    assert _req(stack, 'GET', '/images/%s' % killed['id']).json()['image'][
        'status'] == 'ERROR'

    resp = _req(stack, 'GET', '/images/%s' % uuid.uuid4())
    assert resp.status_code == 404
    assert resp.json() == {'itemNotFound': {'code': 404, 'message': 'Image not found.'}}


def test_filters_become_glance_s(stack):
    tag = uuid.uuid4().hex[:8]
    first = _add(stack, 'filter-%s' % tag, image_type='snapshot', colour=tag, min_ram=512)
    _add(stack, 'filter-%s-other' % tag, colour=tag)

    def names(query, detail=False):
        path = '/images/detail?' if detail else '/images?'
        resp = _req(stack, 'GET', path + query)
        assert resp.status_code == 200, resp.text
        return sorted(i['name'] for i in resp.json()['images'])
    assert names('name=filter-%s' % tag) == ['filter-%s' % tag]
    assert names('property-colour=%s' % tag) == ['filter-%s' % tag, 'filter-%s-other' % tag]
    assert names('property-colour=%s&type=snapshot' % tag) == ['filter-%s' % tag]
    assert names('property-colour=%s&minRam=512' % tag, detail=True) == ['filter-%s' % tag]
    assert names('property-colour=%s&status=ACTIVE' % tag) == [
        'filter-%s' % tag, 'filter-%s-other' % tag]
    assert names('property-colour=%s&status=SAVING' % tag) == []
    assert names('property-colour=%s&changes-since=2999-01-01T00:00:00Z' % tag) == []
    assert names('property-colour=%s&changes-since=2000-01-01T00:00:00Z' % tag) == [
        'filter-%s' % tag, 'filter-%s-other' % tag]
    # server: the id, or the server's URL.
    stack.glance.images[first['id']]['instance_uuid'] = tag
    assert names('server=%s' % tag) == ['filter-%s' % tag]
    assert names('server=http://example.com/servers/%s' % tag) == ['filter-%s' % tag]
    # Unknown parameters are ignored, as Nova does on this API.
    assert 'filter-%s' % tag in names('name=filter-%s&bogus=1' % tag)


def test_limit_marker_and_next_link(stack):
    tag = uuid.uuid4().hex[:8]
    for n in range(5):
        _add(stack, 'page-%s-%d' % (tag, n), pager=tag)
    everything = _req(stack, 'GET', '/images?property-pager=%s' % tag).json()
    assert len(everything['images']) == 5 and 'images_links' not in everything
    first = _req(stack, 'GET', '/images?property-pager=%s&limit=2' % tag).json()
    assert len(first['images']) == 2
    (link,) = first['images_links']
    assert link['rel'] == 'next'
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(link['href']).query))
    assert query['marker'] == first['images'][-1]['id']
    rest = _req(stack, 'GET', '/images/detail?property-pager=%s&marker=%s' % (
        tag, query['marker'])).json()['images']
    listed = [i['id'] for i in first['images']] + [i['id'] for i in rest]
    assert sorted(listed) == sorted(i['id'] for i in everything['images'])
    # A page size smaller than the limit: Glance's pages are followed.
    paged = _req(stack, 'GET', '/images?property-pager=%s&limit=4&page_size=1' % tag)
    assert len(paged.json()['images']) == 4

    for bad in ('limit=-1', 'limit=0', 'limit=abc', 'page_size=0', 'offset=x'):
        resp = _req(stack, 'GET', '/images?' + bad)
        assert resp.status_code == 400, (bad, resp.text)
    resp = _req(stack, 'GET', '/images?marker=%s' % uuid.uuid4())
    assert resp.status_code == 400
    assert 'marker not found' in resp.json()['badRequest']['message']


def test_delete(stack):
    image = _add(stack, 'proxy-delete')
    assert _req(stack, 'DELETE', '/images/%s' % image['id']).status_code == 204
    assert image['id'] not in stack.glance.images
    resp = _req(stack, 'DELETE', '/images/%s' % image['id'])
    assert resp.status_code == 404
    assert resp.json()['itemNotFound']['message'] == 'Image not found.'
    protected = _add(stack, 'proxy-protected', protected=True)
    resp = _req(stack, 'DELETE', '/images/%s' % protected['id'])
    assert resp.status_code == 403
    assert resp.json() == {'forbidden': {
        'code': 403, 'message': 'You are not allowed to delete the image.'}}
    assert protected['id'] in stack.glance.images


def test_snapshot_shows_its_server(stack, flavor):
    server_id = _boot(stack, flavor)
    resp = _req(stack, 'POST', '/servers/%s/action' % server_id, version='2.45',
                token=OWNER, json={'createImage': {'name': 'proxy-snap',
                                                   'metadata': {'why': 'test'}}})
    assert resp.status_code == 202, resp.text
    image_id = resp.json()['image_id']
    _settled(stack, server_id)
    shown = _req(stack, 'GET', '/images/%s' % image_id, token=OWNER).json()['image']
    assert shown['status'] == 'ACTIVE'
    assert shown['metadata']['instance_uuid'] == server_id
    assert shown['metadata']['image_type'] == 'snapshot'
    assert shown['metadata']['why'] == 'test'
    assert shown['server']['id'] == server_id
    assert [link['rel'] for link in shown['server']['links']] == ['self', 'bookmark']
    assert shown['server']['links'][0]['href'].endswith('/servers/%s' % server_id)
    listed = _req(stack, 'GET', '/images?server=%s&type=snapshot' % server_id,
                  token=OWNER).json()['images']
    assert [i['id'] for i in listed] == [image_id]
    assert _req(stack, 'DELETE', '/servers/%s' % server_id).status_code == 204
    stack.wait_for_deleted(server_id)


# -- the image metadata proxy ------------------------------------------------------------------

def test_metadata_read_and_write(stack):
    image = _add(stack, 'proxy-meta', os_distro='cirros', purpose='test')
    base = '/images/%s/metadata' % image['id']

    def meta(method='GET', path='', **kwargs):
        return _req(stack, method, base + path, version=META, **kwargs)
    assert meta().json() == {'metadata': {'os_distro': 'cirros', 'purpose': 'test'}}
    assert meta(path='/purpose').json() == {'meta': {'purpose': 'test'}}
    assert meta(path='/nope').status_code == 404

    resp = meta('POST', json={'metadata': {'purpose': 'prod', 'tier': '1'}})
    assert resp.status_code == 200, resp.text
    assert resp.json() == {'metadata': {'os_distro': 'cirros', 'purpose': 'prod',
                                        'tier': '1'}}
    assert stack.glance.images[image['id']]['tier'] == '1'

    resp = meta('PUT', path='/tier', json={'meta': {'other': '2'}})
    assert resp.status_code == 400
    assert resp.json()['badRequest']['message'] == 'Request body and URI mismatch'
    resp = meta('PUT', path='/tier', json={'meta': {'tier': '2'}})
    assert resp.json() == {'meta': {'tier': '2'}}
    assert stack.glance.images[image['id']]['tier'] == '2'

    resp = meta('PUT', json={'metadata': {'only': 'this'}})
    assert resp.json() == {'metadata': {'only': 'this'}}
    glance_image = stack.glance.images[image['id']]
    assert glance_image['only'] == 'this'
    assert not {'os_distro', 'purpose', 'tier'} & set(glance_image)
    assert glance_image['name'] == 'proxy-meta'  # Glance's own fields stay

    assert meta('DELETE', path='/only').status_code == 204
    assert 'only' not in stack.glance.images[image['id']]
    resp = meta('DELETE', path='/only')
    assert resp.status_code == 404
    assert resp.json()['itemNotFound']['message'] == 'Invalid metadata key'

    for body in ({'metadata': {'k': 1}}, {'metadata': {'': 'v'}}, {'meta': {'k': 'v'}},
                 {'metadata': {'k': 'v' * 256}}):
        assert meta('POST', json=body).status_code == 400, body
    assert meta('PUT', path='/a', json={'meta': {'a': '1', 'b': '2'}}).status_code == 400

    missing = '/images/%s/metadata' % uuid.uuid4()
    resp = _req(stack, 'GET', missing, version=META)
    assert resp.status_code == 404
    assert resp.json()['itemNotFound']['message'] == 'Image not found.'
    assert _req(stack, 'POST', missing, version=META,
                json={'metadata': {'a': 'b'}}).status_code == 404


def test_metadata_quota(stack):
    image = _add(stack, 'proxy-quota', one='1')
    project = 'proj-img-quota'
    resp = _req(stack, 'PUT', '/os-quota-sets/%s' % project, version='2.1',
                json={'quota_set': {'metadata_items': 2}})
    assert resp.status_code == 200, resp.text
    token = 'bob:%s' % project
    base = '/images/%s/metadata' % image['id']
    resp = _req(stack, 'POST', base, version=META, token=token,
                json={'metadata': {'two': '2', 'three': '3'}})
    assert resp.status_code == 403, resp.text
    assert resp.json() == {'forbidden': {'code': 403,
                                         'message': 'Image metadata limit exceeded'}}
    assert 'two' not in stack.glance.images[image['id']]
    assert _req(stack, 'POST', base, version=META, token=token,
                json={'metadata': {'two': '2'}}).status_code == 200
    assert _req(stack, 'PUT', base, version=META, token=token, json={'metadata': {
        'a': '1', 'b': '2', 'c': '3'}}).status_code == 403
    # Removing an item never counts against the quota.
    assert _req(stack, 'DELETE', base + '/two', version=META,
                token=token).status_code == 204


# -- shelve with the fake driver: the upload passes Glance's format inspection -----------------

def _events(stack, server_id, action_name):
    actions = _req(stack, 'GET', '/servers/%s/os-instance-actions' % server_id,
                   version='2.51').json()['instanceActions']
    action = next(a for a in actions if a['action'] == action_name)
    detail = _req(stack, 'GET', '/servers/%s/os-instance-actions/%s' % (
        server_id, action['request_id']), version='2.51').json()['instanceAction']
    return detail


def test_shelve_of_a_qcow2_server_reaches_shelved_offloaded(stack, flavor):
    assert stack.image['disk_format'] == 'qcow2'
    server_id = _boot(stack, flavor)
    assert _req(stack, 'POST', '/servers/%s/action' % server_id, token=OWNER,
                json={'shelve': None}).status_code == 202
    shelved = stack.wait_for_status(server_id, ('SHELVED_OFFLOADED', 'ERROR'))
    assert shelved['status'] == 'SHELVED_OFFLOADED', shelved
    image = next(i for i in stack.glance.images.values()
                 if i.get('instance_uuid') == server_id)
    assert (image['status'], image['disk_format']) == ('active', 'qcow2')
    assert _req(stack, 'POST', '/servers/%s/action' % server_id, token=OWNER,
                json={'unshelve': None}).status_code == 202
    assert stack.wait_for_status(server_id, ('ACTIVE', 'ERROR'))['status'] == 'ACTIVE'
    assert image['id'] not in stack.glance.images
    assert _req(stack, 'DELETE', '/servers/%s' % server_id).status_code == 204
    stack.wait_for_deleted(server_id)


def test_a_refused_upload_fails_the_shelve_with_an_error_event(stack, flavor):
    server_id = _boot(stack, flavor)
    stack.glance.refuse_uploads.set()
    try:
        assert _req(stack, 'POST', '/servers/%s/action' % server_id, token=OWNER,
                    json={'shelve': None}).status_code == 202
        after = _settled(stack, server_id)
    finally:
        stack.glance.refuse_uploads.clear()
    assert after['status'] in ('ACTIVE', 'SHUTOFF'), after
    action = _events(stack, server_id, 'shelve')
    assert action['message'] == 'Error'
    (event,) = [e for e in action['events'] if e['event'] == 'compute_shelve_instance']
    assert event['result'] == 'Error'
    assert '415' in event['traceback'] and 'uploads refused by the test' in \
        event['traceback']
    # No image is left behind, and no shelved_* keys name it.
    assert not [i for i in stack.glance.images.values()
                if i.get('instance_uuid') == server_id]
    assert _req(stack, 'DELETE', '/servers/%s' % server_id).status_code == 204
    stack.wait_for_deleted(server_id)


# -- pre-caching images on an aggregate's hosts (2.81) -----------------------------------------

CACHE = '2.81'


@pytest.fixture(scope='module')
def aggregate(stack):
    resp = _req(stack, 'POST', '/os-aggregates', version=CACHE,
                json={'aggregate': {'name': 'cache-agg'}})
    assert resp.status_code == 200, resp.text
    aggregate_id = resp.json()['aggregate']['id']
    resp = _req(stack, 'POST', '/os-aggregates/%s/action' % aggregate_id, version=CACHE,
                json={'add_host': {'host': 'imghost'}})
    assert resp.status_code == 200, resp.text
    return aggregate_id


def _cache(stack, aggregate_id, body, version=CACHE, token=ADMIN):
    return _req(stack, 'POST', '/os-aggregates/%s/images' % aggregate_id, version=version,
                token=token, json=body)


def test_aggregate_hosts_cache_the_images(stack, aggregate, monkeypatch):
    driver = stack.computes['imghost'].manager.driver
    asked: list[str] = []
    cache_image = driver.cache_image

    def counted(context, image_id):
        asked.append(image_id)
        return cache_image(context, image_id)

    monkeypatch.setattr(driver, 'cache_image', counted)
    image = _add(stack, 'to-cache')
    assert image['id'] not in driver.cached_images
    resp = _cache(stack, aggregate, {'cache': [{'id': image['id']},
                                               {'id': stack.image['id']}]})
    assert resp.status_code == 202, resp.text
    assert not resp.content
    deadline = time.monotonic() + 20
    while not {image['id'], stack.image['id']} <= driver.cached_images:
        assert time.monotonic() < deadline, driver.cached_images
        time.sleep(0.05)
    # Asking again is fine: the host answers that it has them. The test waits for the
    # host to be asked: a stack stopped while the conductor still waits for a host that
    # stopped first would wait out the call's timeout (30 minutes).
    del asked[:]
    assert _cache(stack, aggregate, {'cache': [{'id': image['id']}]}).status_code == 202
    deadline = time.monotonic() + 20
    while not asked:
        assert time.monotonic() < deadline, 'the host was not asked again'
        time.sleep(0.05)


def test_an_aggregate_without_hosts_accepts_the_request(stack):
    resp = _req(stack, 'POST', '/os-aggregates', version=CACHE,
                json={'aggregate': {'name': 'cache-empty'}})
    empty = resp.json()['aggregate']['id']
    assert _cache(stack, empty, {'cache': [{'id': stack.image['id']}]}).status_code == 202


def test_cache_images_refusals(stack, aggregate):
    image_id = stack.image['id']
    assert _cache(stack, aggregate, {'cache': [{'id': image_id}]},
                  version='2.80').status_code == 404
    missing = str(uuid.uuid4())
    resp = _cache(stack, aggregate, {'cache': [{'id': image_id}, {'id': missing}]})
    assert resp.status_code == 400
    assert resp.json()['badRequest']['message'] == 'Image %s could not be found.' % missing
    resp = _cache(stack, aggregate, {'cache': [{'id': image_id}, {'id': image_id}]})
    assert resp.status_code == 400
    assert resp.json()['badRequest']['message'] == 'Duplicate images in request'
    for body in ({'cache': []}, {'cache': [{'id': 'not-a-uuid'}]}, {},
                 {'cache': [{'id': image_id, 'extra': 1}]}, {'cache': {'id': image_id}},
                 {'cache': [{'id': image_id}], 'other': 1}):
        assert _cache(stack, aggregate, body).status_code == 400, body
    resp = _cache(stack, 'abc', {'cache': [{'id': image_id}]})
    assert resp.status_code == 400
    assert resp.json()['badRequest']['message'] == (
        'Invalid input received: id must be an integer')
    resp = _cache(stack, 999999, {'cache': [{'id': image_id}]})
    assert resp.status_code == 404, resp.text
    resp = _cache(stack, aggregate, {'cache': [{'id': image_id}]}, token=OWNER)
    assert resp.status_code == 403, resp.text
