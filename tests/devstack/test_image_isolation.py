"""A project's private snapshot is unknown to every other project, through the Compute
API's images proxy, on boot and in Glance itself, while its owner and the administrator
keep every use of it (issue 20, Isolation: 404 for what a project may not see).

Here on the keystone-less stack (noauth2 tokens ``user:project``, Glance trusting them as
the API does); :func:`check_private_snapshot` runs on the Keystone stack too, from
tests/devstack/test_keystone_isolation.py. It shares the stack of the client modules.
"""
from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

import requests

from tests.devstack import clients

# noauth2: the user ``admin`` is the administrator; alice (alpha) owns, bob (beta) does not.
TOKENS = {'admin': 'admin:admin', 'alice': 'alice:alpha', 'bob': 'bob:beta'}

Token = Callable[[str], str]


def compute(stack, token: str, method: str, path: str, version: str = '2.35',
            **kwargs: Any) -> requests.Response:
    headers = {'X-Auth-Token': token, 'OpenStack-API-Version': 'compute %s' % version}
    return requests.request(method, stack.api_url + '/v2.1' + path, headers=headers,
                            timeout=60, **kwargs)


def glance(stack, token: str, method: str, path: str, **kwargs: Any) -> requests.Response:
    headers = {'X-Auth-Token': token, **kwargs.pop('headers', {})}
    return requests.request(method, stack.glance_url + path, headers=headers, timeout=60,
                            **kwargs)


def _listed(stack, token: str) -> set[str]:
    """Image ids the caller sees in the proxy's lists (both) and in Glance's."""
    ids: set[str] = set()
    for path in ('/images', '/images/detail'):
        resp = compute(stack, token, 'GET', path)
        assert resp.status_code == 200, resp.text
        ids |= {i['id'] for i in resp.json()['images']}
    resp = glance(stack, token, 'GET', '/v2/images')
    assert resp.status_code == 200, resp.text
    return ids | {i['id'] for i in resp.json()['images']}


def _boot(stack, token: str, image: str, flavor: str) -> requests.Response:
    return compute(stack, token, 'POST', '/servers', version='2.90', json={'server': {
        'name': 'img-iso', 'imageRef': image, 'flavorRef': flavor, 'networks': 'none'}})


def _snapshot(stack, token: str, server: str) -> str:
    resp = compute(stack, token, 'POST', '/servers/%s/action' % server, version='2.90',
                   json={'createImage': {'name': 'iso-snap'}})
    assert resp.status_code == 202, resp.text
    image = resp.json()['image_id']
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        status = compute(stack, token, 'GET', '/images/%s' % image).json()['image']['status']
        if status == 'ACTIVE':
            return image
        time.sleep(1)
    raise AssertionError('snapshot %s not ACTIVE after 120 s' % image)


def _unknown_to(stack, token: str, image: str) -> None:
    """Every way ``token`` may ask about ``image`` answers as for an image nobody made."""
    resp = compute(stack, token, 'GET', '/images/%s' % image)
    assert resp.status_code == 404, resp.text
    assert resp.json()['itemNotFound']['message'] == 'Image not found.'
    assert compute(stack, token, 'GET', '/images/%s/metadata' % image).status_code == 404
    assert glance(stack, token, 'GET', '/v2/images/%s' % image).status_code == 404
    assert image not in _listed(stack, token)


def check_private_snapshot(stack, token: Token, server: str, flavor: str,
                           readers: tuple[str, ...] = ()) -> None:
    """``alice``'s snapshot of her ``server``: ``bob`` (another project) can neither see,
    change, delete nor boot it; alice, ``admin`` and ``readers`` see it; the public
    image stays everyone's; alice's boot from her snapshot (the compute downloads it
    with her token) goes ACTIVE."""
    alice, bob, admin = token('alice'), token('bob'), token('admin')
    image = _snapshot(stack, alice, server)
    booted = None
    try:
        for owner in (alice, admin, *map(token, readers)):
            assert compute(stack, owner, 'GET', '/images/%s' % image).status_code == 200
            assert image in _listed(stack, owner)
        _unknown_to(stack, bob, image)
        resp = _boot(stack, bob, image, flavor)
        assert resp.status_code == 400, resp.text
        # Nova's words for an image the caller cannot find, whoever made it.
        assert resp.json()['badRequest']['message'] == 'Can not find requested image'
        assert _boot(stack, bob, str(uuid.uuid4()), flavor).json() == resp.json()
        assert compute(stack, bob, 'DELETE', '/images/%s' % image).status_code == 404
        assert glance(stack, bob, 'DELETE', '/v2/images/%s' % image).status_code == 404
        assert compute(stack, bob, 'PUT', '/images/%s/metadata/k' % image,
                       json={'meta': {'k': 'v'}}).status_code == 404
        assert compute(stack, alice, 'GET', '/images/%s' % image).status_code == 200

        # The public image is everyone's.
        assert compute(stack, bob, 'GET', '/images/%s' % stack.image_id).status_code == 200
        assert stack.image_id in _listed(stack, bob)

        resp = _boot(stack, alice, image, flavor)
        assert resp.status_code == 202, resp.text
        booted = resp.json()['server']['id']
        assert clients.wait_status(stack, booted, 'ACTIVE')['image']['id'] == image
    finally:
        if booted:
            clients.delete_all(stack, [booted])
        deleted = compute(stack, alice, 'DELETE', '/images/%s' % image)
    assert deleted.status_code == 204, deleted.text
    assert compute(stack, alice, 'GET', '/images/%s' % image).status_code == 404


def check_admin_deletes_private_image(stack, token: Token) -> None:
    """An image alice made private in Glance: bob's delete through the proxy is 404,
    the administrator's 204."""
    resp = glance(stack, token('alice'), 'POST', '/v2/images', json={
        'name': 'iso-private', 'disk_format': 'raw', 'container_format': 'bare',
        'visibility': 'private'})
    assert resp.status_code == 201, resp.text
    image = resp.json()['id']
    try:
        _unknown_to(stack, token('bob'), image)
        assert compute(stack, token('bob'), 'DELETE', '/images/%s' % image).status_code \
            == 404
        assert compute(stack, token('admin'), 'DELETE', '/images/%s' % image).status_code \
            == 204
    finally:
        glance(stack, token('alice'), 'DELETE', '/v2/images/%s' % image)
    assert glance(stack, token('alice'), 'GET', '/v2/images/%s' % image).status_code == 404


def test_private_snapshot_is_unknown_to_another_project(stack):
    flavor = clients.flavor_id(stack, 'm1.nano')
    resp = _boot(stack, TOKENS['alice'], stack.image_id, flavor)
    assert resp.status_code == 202, resp.text
    server = resp.json()['server']['id']
    try:
        clients.wait_status(stack, server, 'ACTIVE')
        check_private_snapshot(stack, TOKENS.__getitem__, server, flavor)
    finally:
        clients.delete_all(stack, [server])


def test_admin_deletes_another_project_s_private_image(stack):
    check_admin_deletes_private_image(stack, TOKENS.__getitem__)
