"""Flavors in depth through the real stack: access lists, extra specs, description."""
from __future__ import annotations

import pytest

ADMIN = 'admin:admin'
MEMBER = 'carol:proj-c'


def _create(stack, name, **extra):
    resp = stack.request('POST', '/flavors', version='2.55', json={'flavor': dict(
        {'name': name, 'ram': 64, 'vcpus': 1, 'disk': 1}, **extra)})
    assert resp.status_code == 200, resp.text
    return resp.json()['flavor']['id']


@pytest.fixture(scope='module')
def private(stack):
    return _create(stack, 'f.private', **{'os-flavor-access:is_public': False})


def test_private_flavor_access(stack, private):
    path = '/flavors/%s' % private
    assert stack.request('GET', path, token=MEMBER).status_code == 404
    assert stack.request('GET', path + '/os-flavor-access').json() == {'flavor_access': []}
    resp = stack.request('POST', path + '/action',
                         json={'addTenantAccess': {'tenant': 'proj-c'}})
    assert resp.json() == {'flavor_access': [{'flavor_id': private, 'tenant_id': 'proj-c'}]}
    assert stack.request('POST', path + '/action',
                         json={'addTenantAccess': {'tenant': 'proj-c'}}).status_code == 409
    assert stack.request('GET', path, token=MEMBER).status_code == 200
    listed = stack.request('GET', '/flavors', token=MEMBER).json()['flavors']
    assert private in [f['id'] for f in listed]
    assert stack.request('GET', path + '/os-flavor-access', token=MEMBER).status_code == 403
    assert stack.request('POST', path + '/action', token=MEMBER, json={
        'addTenantAccess': {'tenant': 'proj-x'}}).status_code == 403
    resp = stack.request('POST', path + '/action',
                         json={'removeTenantAccess': {'tenant': 'proj-c'}})
    assert resp.json() == {'flavor_access': []}
    assert stack.request('POST', path + '/action', json={
        'removeTenantAccess': {'tenant': 'proj-c'}}).status_code == 404
    assert stack.request('GET', path, token=MEMBER).status_code == 404
    assert stack.request('POST', path + '/action', json={'bogus': {}}).status_code == 400


def test_public_flavors_have_no_access_list(stack):
    public = _create(stack, 'f.public')
    assert stack.request('GET', '/flavors/%s/os-flavor-access' % public).status_code == 404
    assert stack.request('POST', '/flavors/%s/action' % public, json={
        'addTenantAccess': {'tenant': 'proj-c'}}).status_code == 409


def test_extra_specs_crud_and_validation(stack, private):
    path = '/flavors/%s/os-extra_specs' % private
    resp = stack.request('POST', path, json={'extra_specs': {
        'hw:cpu_policy': 'dedicated', 'resources:VGPU': 1, 'custom:key': 'anything'}})
    assert resp.status_code == 200, resp.text
    assert resp.json()['extra_specs']['resources:VGPU'] == '1'
    assert stack.request('GET', path + '/hw:cpu_policy').json() == \
        {'hw:cpu_policy': 'dedicated'}
    assert stack.request('GET', path + '/nope').status_code == 404
    assert stack.request('PUT', path + '/hw:cpu_policy', json={
        'hw:cpu_policy': 'shared'}).json() == {'hw:cpu_policy': 'shared'}
    assert stack.request('PUT', path + '/hw:cpu_policy', json={
        'hw:other': 'x'}).status_code == 400
    for key, value in (('hw:cpu_policy', 'bogus'), ('hw:mem_page_size', 'huge'),
                       ('hw:no_such_thing', '1'), ('trait:HW_CPU_X86_AVX', 'maybe'),
                       ('resources:VCPU', '-1')):
        resp = stack.request('POST', path, version='2.86',
                             json={'extra_specs': {key: value}})
        assert resp.status_code == 400, (key, resp.text)
        assert key in resp.json()['badRequest']['message']
    # Before 2.86 values are not checked, as in Nova.
    assert stack.request('POST', path, version='2.85', json={
        'extra_specs': {'hw:cpu_policy': 'bogus'}}).status_code == 200
    ok = {'hw:mem_page_size': '2MB', 'trait:HW_CPU_X86_AVX': 'required',
          'resources1:CUSTOM_X': '2', 'hw:numa_nodes': '2', 'unknown:thing': 'x'}
    assert stack.request('POST', path, version='2.86',
                         json={'extra_specs': ok}).status_code == 200
    assert stack.request('DELETE', path + '/unknown:thing').status_code == 200
    assert stack.request('DELETE', path + '/unknown:thing').status_code == 404
    specs = stack.request('GET', path, token=ADMIN).json()['extra_specs']
    assert 'unknown:thing' not in specs and specs['hw:mem_page_size'] == '2MB'
    assert stack.request('POST', path, token=MEMBER, json={
        'extra_specs': {'a': 'b'}}).status_code == 403
    shown = stack.request('GET', '/flavors/%s' % private, version='2.61').json()['flavor']
    assert shown['extra_specs'] == specs


def test_description_update(stack):
    flavor = _create(stack, 'f.desc', description='old')
    path = '/flavors/%s' % flavor
    assert stack.request('PUT', path, version='2.54',
                         json={'flavor': {'description': 'x'}}).status_code == 404
    resp = stack.request('PUT', path, version='2.55', json={'flavor': {'description': 'new'}})
    assert resp.status_code == 200
    assert resp.json()['flavor']['description'] == 'new'
    assert stack.request('PUT', path, version='2.55', token=MEMBER,
                         json={'flavor': {'description': 'x'}}).status_code == 403
    assert stack.request('PUT', path, version='2.55',
                         json={'flavor': {'name': 'x'}}).status_code == 400


def test_list_filters_and_sorting(stack):
    small = _create(stack, 'f.small')
    big = _create(stack, 'f.big', ram=4096, disk=40)
    ids = [f['id'] for f in stack.request('GET', '/flavors?minRam=4096').json()['flavors']]
    assert big in ids and small not in ids
    ids = [f['id'] for f in stack.request('GET', '/flavors?minDisk=40').json()['flavors']]
    assert ids == [big]
    assert stack.request('GET', '/flavors?minRam=lots').status_code == 400
    names = [f['name'] for f in stack.request(
        'GET', '/flavors?sort_key=name&sort_dir=desc').json()['flavors']]
    assert names == sorted(names, reverse=True)
    assert stack.request('GET', '/flavors?sort_key=bogus').status_code == 400
    page = stack.request('GET', '/flavors?limit=1').json()
    assert len(page['flavors']) == 1 and page['flavors_links'][0]['rel'] == 'next'
