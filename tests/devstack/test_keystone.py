"""The Compute API behind a real Keystone: keystonemiddleware's auth_token in the API's
pipeline, the request context from its headers, openstackclient with password auth.

Users (``tests.devstack.harness.keystone.USERS``): ``admin``; ``alice``, a member of project
``alpha``; ``rita``, a reader of ``alpha``; ``bob``, a member of project ``beta``.
"""
from __future__ import annotations

import json
import os
import subprocess
from typing import Any

import pytest
import requests

from tests.devstack import clients

STACK = {'auth': 'keystone'}


def osc(stack, user: str, *args: str, fmt_json: bool = True) -> Any:
    """``openstack`` as one Keystone user (its cloud in the stack's clouds.yaml)."""
    cloud = 'novalite' if user == 'admin' else 'novalite-' + user
    cmd = [clients.OPENSTACK, '--os-cloud', cloud, *args] + (['-f', 'json'] if fmt_json
                                                             else [])
    env = {k: v for k, v in os.environ.items() if not k.startswith('OS_')}
    env['OS_CLIENT_CONFIG_FILE'] = stack.clouds_yaml
    result = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=180)
    if result.returncode != 0:
        raise clients.CommandFailed(cmd, result)
    return json.loads(result.stdout) if fmt_json and result.stdout.strip() else result.stdout


def rest(stack, user: str, method: str, path: str, **kwargs: Any) -> requests.Response:
    """A Compute API request with a Keystone token of ``user``."""
    headers = {'X-Auth-Token': stack.keystone.token(user),
               'OpenStack-API-Version': 'compute latest'}
    return requests.request(method, stack.api_url + '/v2.1' + path, headers=headers,
                            timeout=60, **kwargs)


@pytest.fixture(scope='module')
def alice_server(stack):
    """A server of project alpha, booted by alice with openstackclient."""
    created = osc(stack, 'alice', 'server', 'create', '--image', 'cirros-tiny',
                  '--flavor', 'm1.nano', '--nic', 'none', '--wait', 'ks-vm1')
    assert created['status'] == 'ACTIVE', created
    yield created['id']
    rest(stack, 'admin', 'DELETE', '/servers/%s' % created['id'])


def test_member_lists_flavors_and_boots_in_own_project(stack, alice_server):
    assert {'m1.nano', 'm1.tiny'} <= {f['Name'] for f in osc(stack, 'alice', 'flavor', 'list')}
    assert alice_server in [s['ID'] for s in osc(stack, 'alice', 'server', 'list')]
    shown = osc(stack, 'alice', 'server', 'show', alice_server)
    assert shown['status'] == 'ACTIVE'
    # The server belongs to the project and user of alice's token.
    assert shown['project_id'] == stack.keystone.project_id('alpha')
    # The reader of the same project sees it too.
    assert rest(stack, 'rita', 'GET', '/servers/%s' % alice_server).status_code == 200


def test_other_project_gets_404(stack, alice_server):
    resp = rest(stack, 'bob', 'GET', '/servers/%s' % alice_server)
    assert resp.status_code == 404, resp.text
    assert resp.json()['itemNotFound']['code'] == 404
    assert alice_server not in [s['ID'] for s in osc(stack, 'bob', 'server', 'list')]
    with pytest.raises(clients.CommandFailed):
        osc(stack, 'bob', 'server', 'show', alice_server)
    assert rest(stack, 'bob', 'DELETE', '/servers/%s' % alice_server).status_code == 404


def test_admin_sees_every_project(stack, alice_server):
    listed = osc(stack, 'admin', 'server', 'list', '--all-projects')
    assert alice_server in [s['ID'] for s in listed]


def test_reader_cannot_create(stack):
    resp = rest(stack, 'rita', 'POST', '/servers', json={'server': {
        'name': 'ks-reader', 'imageRef': stack.image_id, 'networks': 'none',
        'flavorRef': clients.flavor_id(stack, 'm1.nano')}})
    assert resp.status_code == 403, resp.text
    assert resp.json()['forbidden']['code'] == 403
    with pytest.raises(clients.CommandFailed) as failed:
        osc(stack, 'rita', 'server', 'create', '--image', 'cirros-tiny', '--flavor',
            'm1.nano', '--nic', 'none', 'ks-reader')
    assert '403' in failed.value.result.stderr
    assert 'ks-reader' not in [s['Name'] for s in osc(stack, 'admin', 'server', 'list',
                                                      '--all-projects')]


def test_non_admin_gets_403_on_admin_apis(stack):
    with pytest.raises(clients.CommandFailed) as failed:
        osc(stack, 'alice', 'flavor', 'create', '--ram', '64', '--vcpus', '1', 'ks.flavor')
    assert '403' in failed.value.result.stderr
    resp = rest(stack, 'alice', 'GET', '/os-hypervisors')
    assert resp.status_code == 403, resp.text
    assert rest(stack, 'admin', 'GET', '/os-hypervisors').status_code == 200
    with pytest.raises(clients.CommandFailed):
        osc(stack, 'bob', 'hypervisor', 'list')


def test_invalid_or_missing_token_gets_401(stack):
    for headers in ({'X-Auth-Token': 'not-a-token'}, {}):
        resp = requests.get(stack.api_url + '/v2.1/servers', headers=headers, timeout=60)
        assert resp.status_code == 401, resp.text
        # auth_token tells the client where to authenticate.
        assert stack.keystone.auth_url in resp.headers.get('WWW-Authenticate', '')
    # The noauth2 token form means nothing to Keystone.
    resp = requests.get(stack.api_url + '/v2.1/servers', timeout=60,
                        headers={'X-Auth-Token': 'admin:admin'})
    assert resp.status_code == 401
    # Version discovery stays open.
    assert requests.get(stack.api_url + '/', timeout=60).status_code == 200
