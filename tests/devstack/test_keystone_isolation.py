"""The key cells of the isolation matrix behind a real Keystone (the whole matrix runs
on noauth2 in tests/functional/test_isolation_matrix.py).

``alice`` is a member of ``alpha``, ``rita`` its reader, ``bob`` a member of ``beta``
(``tests.devstack.harness.keystone.USERS``). What another project may not see is 404, as for
an unknown id; what the policy refuses is 403; the reader changes nothing.
"""
from __future__ import annotations

import time
import uuid
from typing import Any

import pytest
import requests

from tests.devstack import clients, test_image_isolation

STACK = {'auth': 'keystone'}
NOWHERE = str(uuid.uuid4())


def rest(stack, user: str, method: str, path: str, version: str = '2.90',
         **kwargs: Any) -> requests.Response:
    headers = {'X-Auth-Token': stack.keystone.token(user),
               'OpenStack-API-Version': 'compute %s' % version}
    return requests.request(method, stack.api_url + '/v2.1' + path, headers=headers,
                            timeout=60, **kwargs)


def _ok(resp: requests.Response, *codes: int) -> dict:
    assert resp.status_code in (codes or (200,)), resp.text
    return resp.json() if resp.content else {}


def _boot(stack, user: str, flavor: str, **extra: Any) -> requests.Response:
    return rest(stack, user, 'POST', '/servers', json={'server': {
        'name': 'iso', 'imageRef': stack.image_id, 'flavorRef': flavor, 'networks': 'none',
        'metadata': {'k': 'v'}}, **extra})


def _active(stack, server_id: str) -> None:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        status = _ok(rest(stack, 'alice', 'GET', '/servers/%s' % server_id))['server']
        if status['status'] in ('ACTIVE', 'ERROR'):
            assert status['status'] == 'ACTIVE', status.get('fault')
            return
        time.sleep(1)
    raise AssertionError('server %s not ACTIVE after 180 s' % server_id)


@pytest.fixture(scope='module')
def owned(stack):
    """alpha's server, server group, key pair (alice's) and private flavor."""
    alpha = stack.keystone.project_id('alpha')
    flavor = _ok(rest(stack, 'admin', 'POST', '/flavors', json={'flavor': {
        'name': 'ks.private', 'ram': 64, 'vcpus': 1, 'disk': 1,
        'os-flavor-access:is_public': False}}))['flavor']['id']
    _ok(rest(stack, 'admin', 'POST', '/flavors/%s/action' % flavor,
             json={'addTenantAccess': {'tenant': alpha}}))
    _ok(rest(stack, 'admin', 'POST', '/flavors/%s/os-extra_specs' % flavor,
             json={'extra_specs': {'k': 'v'}}))
    public = clients.flavor_id(stack, 'm1.nano')
    server = _ok(_boot(stack, 'alice', public), 202)['server']['id']
    group = _ok(rest(stack, 'alice', 'POST', '/os-server-groups', json={
        'server_group': {'name': 'ks-iso', 'policy': 'anti-affinity'}}))['server_group']['id']
    keypair = _ok(rest(stack, 'alice', 'POST', '/os-keypairs', json={
        'keypair': {'name': 'ks-iso'}}), 201)['keypair']
    ids = {'server': server, 'group': group, 'keypair': keypair['name'], 'flavor': flavor,
           'public_flavor': public, 'alpha': alpha, 'alice': keypair['user_id'],
           'nowhere': NOWHERE}
    try:
        _active(stack, server)
        yield ids
    finally:
        rest(stack, 'admin', 'DELETE', '/servers/%s' % server)
        rest(stack, 'alice', 'DELETE', '/os-server-groups/%s' % group)
        rest(stack, 'alice', 'DELETE', '/os-keypairs/ks-iso')
        rest(stack, 'admin', 'DELETE', '/flavors/%s' % flavor)


S = '/servers/{server}'
# (method, path, body, {user: status}): alice may, rita reads, bob does not know.
CELLS = [
    ('GET', S, None, {'alice': 200, 'rita': 200, 'bob': 404}),
    ('PUT', S, {'server': {'name': 'ks-renamed'}}, {'alice': 200, 'rita': 403, 'bob': 404}),
    ('DELETE', S, None, {'rita': 403, 'bob': 404}),
    ('POST', S + '/action', {'os-stop': None}, {'rita': 403, 'bob': 404}),
    ('GET', S + '/metadata', None, {'alice': 200, 'rita': 200, 'bob': 404}),
    ('PUT', S + '/metadata/k', {'meta': {'k': 'w'}}, {'alice': 200, 'rita': 403, 'bob': 404}),
    ('GET', S + '/os-instance-actions', None, {'alice': 200, 'rita': 200, 'bob': 404}),
    ('GET', S + '/diagnostics', None, {'alice': 403, 'rita': 403, 'bob': 404}),
    # I3: another project's server group is unknown, not forbidden.
    ('GET', '/os-server-groups/{group}', None, {'alice': 200, 'rita': 200, 'bob': 404}),
    ('DELETE', '/os-server-groups/{group}', None, {'rita': 403, 'bob': 404}),
    ('GET', '/os-server-groups/{nowhere}', None, {'bob': 404}),
    # I2: a private flavor's extra specs are as hidden as the flavor.
    ('GET', '/flavors/{flavor}', None, {'alice': 200, 'rita': 200, 'bob': 404}),
    ('GET', '/flavors/{flavor}/os-extra_specs', None,
     {'alice': 200, 'rita': 200, 'bob': 404}),
    ('GET', '/flavors/{flavor}/os-extra_specs/k', None,
     {'alice': 200, 'rita': 200, 'bob': 404}),
    ('POST', '/flavors/{flavor}/os-extra_specs', {'extra_specs': {'j': 'v'}},
     {'alice': 403, 'bob': 403}),
    # key pairs are the user's; naming another user is for administrators
    ('GET', '/os-keypairs/{keypair}', None, {'alice': 200, 'rita': 404, 'bob': 404}),
    ('GET', '/os-keypairs/{keypair}?user_id={alice}', None,
     {'alice': 200, 'rita': 403, 'bob': 403}),
    ('GET', '/os-aggregates', None, {'alice': 403, 'bob': 403}),
    ('GET', '/os-quota-sets/{alpha}', None, {'alice': 200, 'rita': 200, 'bob': 403}),
    ('PUT', '/os-quota-sets/{alpha}', {'quota_set': {'instances': 99}},
     {'alice': 403, 'bob': 403}),
    ('GET', '/os-simple-tenant-usage/{alpha}', None, {'alice': 200, 'bob': 403}),
    ('GET', '/limits?tenant_id={alpha}', None, {'alice': 403, 'bob': 403}),
]
PARAMS = [(method, path, body, user, code) for method, path, body, expect in CELLS
          for user, code in expect.items()]


@pytest.mark.parametrize(('method', 'path', 'body', 'user', 'code'), PARAMS,
                         ids=['%s %s %s' % (m, p, u) for m, p, _b, u, _c in PARAMS])
def test_matrix(stack, owned, method, path, body, user, code):
    kwargs = {} if body is None else {'json': body}
    resp = rest(stack, user, method, path.format(**owned), **kwargs)
    assert resp.status_code == code, resp.text
    if code >= 400:
        (fault,) = resp.json().values()
        assert fault['code'] == code


def test_group_hint_of_another_project_is_an_unknown_group(stack, owned):
    """I1: bob's boot into alpha's group is refused as for a group nobody made, and the
    group keeps its members."""
    refused = _boot(stack, 'bob', owned['public_flavor'],
                    **{'os:scheduler_hints': {'group': owned['group']}})
    unknown = _boot(stack, 'bob', owned['public_flavor'],
                    **{'os:scheduler_hints': {'group': NOWHERE}})
    assert refused.status_code == unknown.status_code == 400, refused.text
    group = _ok(rest(stack, 'alice', 'GET', '/os-server-groups/%s' % owned['group']))
    assert group['server_group']['members'] == []


def test_another_project_s_private_snapshot_is_unknown(stack, owned):
    """alice's snapshot: bob (beta) gets 404 through the images proxy and from Glance,
    400 on boot; alice, her reader rita and the admin see it; alice boots from it (Glance now checks
    every caller's own token, also the compute's download with alice's)."""
    test_image_isolation.check_private_snapshot(stack, stack.keystone.token,
                                                owned['server'], owned['public_flavor'],
                                                readers=('rita',))


def test_admin_deletes_another_project_s_private_image(stack):
    test_image_isolation.check_admin_deletes_private_image(stack, stack.keystone.token)
