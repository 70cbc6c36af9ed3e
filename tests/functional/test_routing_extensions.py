"""Routing as Nova's mapper, /extensions, and the /v2 (v2.0 compatible) endpoint, through
the real stack."""
from __future__ import annotations

import jsonschema
import pytest
import requests
from tempest.lib.api_schema.response.compute.v2_1 import versions as tempest_versions

from novalite.api.openstack.compute import extension_info

ADMIN = 'admin:admin'
PROJECT = 'a1b2c3d4-0000'
OWNER = 'alice:%s' % PROJECT
MICROVERSION_HEADERS = ('openstack-api-version', 'x-openstack-nova-api-version')


def _root(stack) -> str:
    return stack.api[:-len('/v2.1')]


def _v2(stack, method: str, path: str, token: str | None = ADMIN, **kwargs):
    headers = {'X-Auth-Token': token} if token else {}
    headers.update(kwargs.pop('headers', {}))
    return requests.request(method, _root(stack) + '/v2' + path, headers=headers,
                            timeout=30, **kwargs)


# -- routing ------------------------------------------------------------------------------

@pytest.mark.parametrize('path', ['/os-simple-tenant-usage/', '/servers/', '/flavors/',
                                  '/servers/detail/', '/os-hypervisors/', '/extensions/'])
def test_a_trailing_slash_is_not_the_collection(stack, path):
    resp = stack.request('GET', path)
    assert resp.status_code == 404, resp.text
    assert resp.json()['itemNotFound']['code'] == 404


@pytest.mark.parametrize('method, path', [('PUT', '/servers'), ('POST', '/servers/detail'),
                                          ('DELETE', '/os-fping'),
                                          ('PATCH', '/flavors/1')])
def test_a_method_the_path_does_not_serve_is_not_found(stack, method, path):
    assert stack.request(method, path, json={}).status_code == 404


def test_a_hex_project_id_in_the_url_routes_and_a_name_does_not(stack):
    assert stack.request('GET', '/%s/flavors' % PROJECT, token=OWNER).status_code == 200
    assert stack.request('GET', '/alpha/flavors', token='alice:alpha').status_code == 404
    resp = stack.request('GET', '/abcdef/flavors', token=OWNER)
    assert resp.status_code == 400
    assert "project_id 'abcdef'" in resp.json()['badRequest']['message']


def test_the_version_document_inside_the_api(stack):
    resp = stack.request('GET', '/%s/' % PROJECT, token=OWNER)
    assert resp.status_code == 200
    assert resp.json()['version']['id'] == 'v2.1'
    assert stack.request('GET', '/%s/' % PROJECT, token=None).status_code == 401
    shown = stack.request('GET', '/versions/v2.0').json()['version']
    assert shown['id'] == 'v2.0' and shown['status'] == 'DEPRECATED'
    assert stack.request('GET', '/versions/v3.0').status_code == 404


# -- /extensions --------------------------------------------------------------------------

def test_extensions_list_novas_aliases(stack):
    resp = stack.request('GET', '/extensions', token=OWNER)
    assert resp.status_code == 200
    listed = resp.json()['extensions']
    assert listed == extension_info.EXTENSION_LIST
    aliases = [ext['alias'] for ext in listed]
    assert len(aliases) == 99 and aliases == sorted(aliases)
    assert {'OS-DCF', 'os-hosts', 'os-volumes', 'os-server-password'} <= set(aliases)
    assert 'OS-EXT-VIF-NET' not in aliases


def test_extension_show_by_alias(stack):
    resp = stack.request('GET', '/extensions/os-keypairs', token=OWNER)
    assert resp.status_code == 200
    assert resp.json() == {'extension': {
        'alias': 'os-keypairs', 'description': 'Keypair Support.', 'links': [],
        'name': 'Keypairs', 'namespace': 'http://docs.openstack.org/compute/ext/fake_xml',
        'updated': '2014-12-03T00:00:00Z'}}
    assert stack.request('GET', '/extensions/os-nothing').status_code == 404


def test_extension_queries_are_strict_from_2_102(stack):
    assert stack.request('GET', '/extensions?foo=1', version='2.101').status_code == 200
    assert stack.request('GET', '/extensions?foo=1', version='2.102').status_code == 400


def test_extensions_are_refused_when_the_policy_says_so(stack):
    from novalite import policy
    policy.reset()
    policy.init(rules={'os_compute_api:extensions': '!'})
    try:
        assert stack.request('GET', '/extensions', token=OWNER).status_code == 403
    finally:
        policy.reset()


# -- /v2 ----------------------------------------------------------------------------------

@pytest.mark.parametrize('path', ['', '/'])
def test_v2_answers_the_v20_document_without_auth(stack, path):
    resp = _v2(stack, 'GET', path, token=None)
    assert resp.status_code == 200
    version = resp.json()['version']
    assert version['id'] == 'v2.0' and version['status'] == 'DEPRECATED'
    assert version['version'] == '' and version['min_version'] == ''
    assert version['links'][0] == {'rel': 'self', 'href': _root(stack) + '/v2/'}
    assert version['media-types'][0]['type'] == \
        'application/vnd.openstack.compute+json;version=2'


def test_root_lists_the_v2_endpoint_and_it_serves(stack):
    listed = requests.get(_root(stack) + '/', timeout=10).json()['versions']
    v20 = next(v for v in listed if v['id'] == 'v2.0')
    href = v20['links'][0]['href']
    assert href == _root(stack) + '/v2/'
    resp = requests.get(href + 'servers', headers={'X-Auth-Token': ADMIN}, timeout=10)
    assert resp.status_code == 200 and 'servers' in resp.json()


@pytest.fixture(scope='module')
def flavor(stack):
    resp = stack.request('POST', '/flavors', json={'flavor': {
        'name': 'm1.legacy', 'ram': 128, 'vcpus': 1, 'disk': 1}})
    assert resp.status_code == 200, resp.text
    return resp.json()['flavor']['id']


def test_v2_ignores_microversion_headers_both_ways(stack, flavor):
    for header in ({'OpenStack-API-Version': 'compute 2.75'},
                   {'X-OpenStack-Nova-API-Version': '2.75'},
                   {'OpenStack-API-Version': 'compute 9.9'}):
        resp = _v2(stack, 'GET', '/flavors/%s' % flavor, headers=header)
        assert resp.status_code == 200, resp.text
        # The 2.1 view: no description (2.55) nor extra_specs (2.61).
        assert 'description' not in resp.json()['flavor']
        assert not set(k.lower() for k in resp.headers) & set(MICROVERSION_HEADERS)
        vary = resp.headers.get('Vary', '').lower()
        assert not any(h in vary for h in MICROVERSION_HEADERS)
    # The same headers through /v2.1 ask for the microversion.
    resp = stack.request('GET', '/flavors/%s' % flavor, version='2.75')
    assert 'description' in resp.json()['flavor']


def test_v2_is_the_api_at_2_1(stack):
    # 2.1 serves no server tags (2.26): /v2 is frozen there.
    assert _v2(stack, 'GET', '/servers/detail').status_code == 200
    assert _v2(stack, 'GET', '/os-keypairs', token=OWNER).status_code == 200
    assert _v2(stack, 'GET', '/os-server-groups', token=OWNER).status_code == 200
    assert _v2(stack, 'GET', '/servers/%s/tags' % PROJECT).status_code == 404
    assert _v2(stack, 'GET', '/%s/flavors' % PROJECT, token=OWNER).status_code == 200


def test_v2_drops_unknown_body_keys_v21_refuses_them(stack):
    body = {'keypair': {'name': 'legacy-kp', 'unknown': 1}, 'extra': True}
    refused = stack.request('POST', '/os-keypairs', token=OWNER, json=body)
    assert refused.status_code == 400
    created = _v2(stack, 'POST', '/os-keypairs', token=OWNER, json=body)
    assert created.status_code == 200, created.text
    assert created.json()['keypair']['name'] == 'legacy-kp'
    assert _v2(stack, 'DELETE', '/os-keypairs/legacy-kp', token=OWNER).status_code == 202
    # Still a schema: a wrong type is refused.
    bad = _v2(stack, 'POST', '/os-keypairs', token=OWNER, json={'keypair': {'name': 5}})
    assert bad.status_code == 400


def test_v2_extensions_add_the_v2_only_alias(stack):
    listed = _v2(stack, 'GET', '/extensions').json()['extensions']
    assert listed == extension_info.EXTENSION_LIST_LEGACY_V2
    assert len(listed) == 100
    resp = _v2(stack, 'GET', '/extensions/OS-EXT-VIF-NET')
    assert resp.json()['extension']['name'] == 'ExtendedVIFNet'
    assert stack.request('GET', '/extensions/OS-EXT-VIF-NET').status_code == 404


def test_v2_requires_auth(stack):
    assert _v2(stack, 'GET', '/servers', token=None).status_code == 401


def test_version_documents_match_tempests_schemas(stack):
    listed = requests.get(_root(stack) + '/', timeout=10).json()
    jsonschema.validate(listed, tempest_versions.list_versions['response_body'])
    for url in (_root(stack) + '/v2/', _root(stack) + '/v2.1/'):
        shown = requests.get(url, timeout=10).json()
        jsonschema.validate(shown, tempest_versions.get_one_version['response_body'])


def test_v2_drops_unknown_keys_of_action_bodies(stack, flavor):
    body = {'server': {'name': 'legacy-vm', 'imageRef': stack.image['id'],
                       'flavorRef': flavor, 'networks': 'none'}}
    server = stack.request('POST', '/servers', version='2.37', json=body).json()['server']
    try:
        stack.wait_for_status(server['id'], ('ACTIVE',))
        action = {'reboot': {'type': 'SOFT', 'unknown': 1}}
        path = '/servers/%s/action' % server['id']
        assert stack.request('POST', path, json=action).status_code == 400
        assert _v2(stack, 'POST', path, json=action).status_code == 202
    finally:
        stack.request('DELETE', '/servers/%s' % server['id'])
        stack.wait_for_deleted(server['id'])
