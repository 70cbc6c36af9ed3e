"""The images proxy, shelve and image pre-caching against the real Glance.

openstacksdk's compute images (``/images`` on the compute endpoint) at 2.35 and 404 at
2.36; the proxy's filters, pages and errors as Glance answers them; a server booted
from a qcow2 image shelved with openstackclient to SHELVED_OFFLOADED (Glance inspects
the fake driver's snapshot data); ``openstack aggregate cache image`` at 2.81.

It shares the stack of the other client modules (no ``STACK`` of its own).
"""
from __future__ import annotations

import glob
import os
import urllib.parse
import uuid
from collections.abc import Iterator
from typing import Any

import openstack
import pytest
import requests

from novalite.virt import fake
from tests.devstack import clients


def _sdk(stack, version: str) -> openstack.connection.Connection:
    """An openstacksdk connection that asks the compute API for ``version``."""
    config = openstack.config.OpenStackConfig(config_files=[stack.clouds_yaml])
    return openstack.connection.Connection(
        config=config.get_one(cloud='novalite', compute_api_version=version))


def _glance(stack, method: str, path: str, **kwargs: Any) -> requests.Response:
    """Glance itself, as the administrator (noauth2 token)."""
    headers = {'X-Auth-Token': 'admin:admin', **kwargs.pop('headers', {})}
    return requests.request(method, stack.glance_url + path, timeout=60, headers=headers,
                            **kwargs)


def _new_image(stack, name: str, data: bytes = b'novalite proxy test\n' * 64,
               disk_format: str = 'raw', **props: Any) -> str:
    resp = _glance(stack, 'POST', '/v2/images', json={
        'name': name, 'disk_format': disk_format, 'container_format': 'bare',
        'visibility': 'public', **props})
    resp.raise_for_status()
    image_id = resp.json()['id']
    _glance(stack, 'PUT', '/v2/images/%s/file' % image_id, data=data,
            headers={'Content-Type': 'application/octet-stream'}).raise_for_status()
    return image_id


@pytest.fixture
def scratch(stack) -> Iterator[list[str]]:
    """Image ids to delete from Glance afterwards (unprotected first)."""
    made: list[str] = []
    yield made
    for image_id in made:
        _glance(stack, 'PATCH', '/v2/images/%s' % image_id,
                json=[{'op': 'replace', 'path': '/protected', 'value': False}],
                headers={'Content-Type': 'application/openstack-images-v2.1-json-patch'})
        _glance(stack, 'DELETE', '/v2/images/%s' % image_id)


def test_sdk_compute_images_at_2_35_and_404_at_2_36(stack, scratch):
    tag = uuid.uuid4().hex[:8]
    image_id = _new_image(stack, 'proxy-%s' % tag, os_distro='cirros', min_ram=64)
    scratch.append(image_id)
    conn = _sdk(stack, '2.35')
    listed = {i.id: i for i in conn.compute.images()}
    assert image_id in listed and stack.image_id in listed
    assert listed[image_id].name == 'proxy-%s' % tag
    shown = conn.compute.get_image(image_id)
    assert (shown.status, shown.progress, shown.min_ram) == ('ACTIVE', 100, 64)
    assert shown.size == 20 * 64
    assert shown.metadata == {'os_distro': 'cirros'}

    conn.compute.set_image_metadata(image_id, purpose='proxy-test')
    assert _glance(stack, 'GET', '/v2/images/%s' % image_id).json()['purpose'] == \
        'proxy-test'
    assert conn.compute.get_image_metadata(image_id).metadata == {
        'os_distro': 'cirros', 'purpose': 'proxy-test'}
    conn.compute.delete_image_metadata(image_id, ['purpose'])
    assert 'purpose' not in _glance(stack, 'GET', '/v2/images/%s' % image_id).json()

    doomed = _new_image(stack, 'proxy-doomed-%s' % tag)
    scratch.append(doomed)
    conn.compute.delete_image(doomed, ignore_missing=False)
    assert _glance(stack, 'GET', '/v2/images/%s' % doomed).status_code == 404

    later = _sdk(stack, '2.36')
    with pytest.raises(openstack.exceptions.NotFoundException):
        later.compute.get_image(image_id)
    for path in ('/images', '/images/detail', '/images/%s' % image_id):
        assert stack.api('GET', path, microversion='2.36').status_code == 404
    assert stack.api('GET', '/images/%s/metadata' % image_id,
                     microversion='2.38').status_code == 200
    assert stack.api('GET', '/images/%s/metadata' % image_id,
                     microversion='2.39').status_code == 404


def test_proxy_filters_pages_and_errors_against_glance(stack, scratch):
    tag = uuid.uuid4().hex[:8]
    for n in range(3):
        scratch.append(_new_image(stack, 'page-%s-%d' % (tag, n), pager=tag))

    def listed(query: str) -> dict:
        resp = stack.api('GET', '/images?' + query, microversion='2.35')
        assert resp.status_code == 200, resp.text
        return resp.json()
    assert len(listed('property-pager=%s' % tag)['images']) == 3
    assert [i['name'] for i in listed('name=page-%s-1' % tag)['images']] == [
        'page-%s-1' % tag]
    assert listed('property-pager=%s&status=saving' % tag)['images'] == []
    assert listed('property-pager=%s&changes-since=2999-01-01T00:00:00Z' % tag)[
        'images'] == []
    first = listed('property-pager=%s&limit=2' % tag)
    assert len(first['images']) == 2
    marker = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(
        first['images_links'][0]['href']).query))['marker']
    rest = listed('property-pager=%s&marker=%s' % (tag, marker))['images']
    assert len(rest) == 1
    assert {i['id'] for i in first['images'] + rest} == set(scratch)

    resp = stack.api('GET', '/images?marker=%s' % uuid.uuid4(), microversion='2.35')
    assert resp.status_code == 400, resp.text
    assert resp.json()['badRequest']['message']
    resp = stack.api('GET', '/images/%s' % uuid.uuid4(), microversion='2.35')
    assert resp.status_code == 404
    assert resp.json()['itemNotFound']['message'] == 'Image not found.'

    protected = _new_image(stack, 'protected-%s' % tag, protected=True)
    scratch.append(protected)
    resp = stack.api('DELETE', '/images/%s' % protected, microversion='2.35')
    assert resp.status_code == 403, resp.text
    assert resp.json()['forbidden']['message'] == 'You are not allowed to delete the image.'




def test_shelve_of_a_qcow2_server_reaches_shelved_offloaded(stack, scratch):
    image_id = _new_image(stack, 'qcow2-%s' % uuid.uuid4().hex[:6],
                          data=fake.empty_qcow2(fake.GiB), disk_format='qcow2')
    scratch.append(image_id)
    created = clients.osc(stack, 'server', 'create', '--image', image_id, '--flavor',
                          'm1.nano', '--nic', 'none', '--wait', 'osc-qcow2-vm')
    assert created['status'] == 'ACTIVE', created
    server_id = created['id']
    try:
        clients.osc(stack, 'server', 'shelve', server_id, fmt_json=False)
        shelved = clients.wait_status(stack, server_id, 'SHELVED_OFFLOADED')
        assert not shelved['OS-EXT-SRV-ATTR:host']
        snapshots = _glance(stack, 'GET', '/v2/images', params={
            'instance_uuid': server_id}).json()['images']
        assert [(i['status'], i['disk_format']) for i in snapshots] == [('active', 'qcow2')]
        clients.osc(stack, 'server', 'unshelve', '--wait', server_id, fmt_json=False)
        clients.wait_status(stack, server_id, 'ACTIVE')
        assert _glance(stack, 'GET', '/v2/images/%s' % snapshots[0]['id']).status_code \
            == 404
    finally:
        clients.delete_all(stack, [server_id])


def _logged(stack, text: str) -> bool:
    for path in glob.glob(os.path.join(stack.log_dir, '*')):
        with open(path, errors='replace') as log:
            if text in log.read():
                return True
    return False


def test_aggregate_cache_image_with_openstackclient(stack):
    name = 'cache-agg-%s' % uuid.uuid4().hex[:6]
    aggregate = clients.osc(stack, 'aggregate', 'create', name)
    try:
        clients.osc(stack, 'aggregate', 'add', 'host', name, stack.computes[0])
        clients.osc(stack, '--os-compute-api-version', '2.81', 'aggregate', 'cache',
                    'image', name, 'cirros-tiny', fmt_json=False)
        # The conductor asked the compute, which answered for the image.
        summary = 'Image pre-cache operation for image(s) %s completed' % stack.image_id
        stack.wait_for(lambda: _logged(stack, summary), 60, 'the pre-cache summary')
        path = '/os-aggregates/%s/images' % aggregate['id']
        missing = str(uuid.uuid4())
        resp = stack.api('POST', path, microversion='2.81',
                         json={'cache': [{'id': missing}]})
        assert resp.status_code == 400
        assert resp.json()['badRequest']['message'] == \
            'Image %s could not be found.' % missing
        assert stack.api('POST', path, microversion='2.80',
                         json={'cache': [{'id': stack.image_id}]}).status_code == 404
    finally:
        clients.osc(stack, 'aggregate', 'remove', 'host', name, stack.computes[0],
                    fmt_json=False)
        clients.osc(stack, 'aggregate', 'delete', name, fmt_json=False)
