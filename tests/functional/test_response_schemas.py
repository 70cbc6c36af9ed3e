"""Every implemented resource, at every microversion tempest publishes a schema for,
validated against tempest's Compute API response schemas.

tempest ships Nova's response schemas as ``tempest.lib.api_schema.response.compute.v2_X``
modules; each ``v2_X`` holds the schemas that changed at 2.X. For a request at version V
the schema used is the one of the newest module at or below V that defines it -- the
rule tempest's service clients apply through their ``schema_versions_info`` tables.
Validation is tempest's own ``RestClient.validate_response`` (Draft 4 jsonschema with
tempest's format checkers: status code, body and headers), plus its check that the
response names the microversion that was asked for.
"""
from __future__ import annotations

import copy
import importlib
import os
import uuid
from typing import Any

import pytest
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519
from tempest.lib.common import api_version_utils, rest_client

from novalite.api.openstack import api_version_request

SCHEMAS = 'tempest.lib.api_schema.response.compute'
LATEST = api_version_request.MAX_VERSION.get_string()
HEADER = 'X-OpenStack-Nova-API-Version'


def _version_key(version: str) -> tuple[int, int]:
    major, minor = version.split('.')
    return int(major), int(minor)


def _module_versions(module: str) -> list[str]:
    """The microversions at which tempest has a ``module`` schema file, oldest first."""
    root = os.path.dirname(importlib.import_module(SCHEMAS).__file__)
    found = [d[1:].replace('_', '.') for d in os.listdir(root)
             if d.startswith('v2_') and os.path.exists(os.path.join(root, d, module + '.py'))]
    return sorted(found, key=_version_key)


def schema(module: str, name: str, version: str) -> dict[str, Any]:
    """Tempest's schema ``name`` of ``module`` that applies at ``version``."""
    for candidate in reversed(_module_versions(module)):
        if _version_key(candidate) > _version_key(version):
            continue
        mod = importlib.import_module('%s.v%s.%s' % (SCHEMAS, candidate.replace('.', '_'),
                                                     module))
        if hasattr(mod, name):
            return _as_nova_34(getattr(mod, name))
    raise LookupError('tempest has no %s.%s at %s' % (module, name, version))


def points(module: str, floor: str = '2.1', ceiling: str = LATEST) -> list[str]:
    """The versions to test ``module`` at: each where tempest's schema changes, plus the
    floor and the newest we serve (a strict schema catches fields added after it)."""
    found = {floor, ceiling} | set(_module_versions(module))
    return sorted((v for v in found
                   if _version_key(floor) <= _version_key(v) <= _version_key(ceiling)),
                  key=_version_key)


class _Headers(dict):
    """Response headers the way tempest's RestClient hands them to its validator."""

    status: int


def check(stack, method: str, path: str, module: str, name: str, version: str,
          body: Any = None, token: str = 'admin:admin') -> Any:
    """One request at ``version``; its response validated; returns the parsed body."""
    resp = stack.request(method, path, token=token, headers={HEADER: version}, json=body)
    expected = schema(module, name, version)
    codes = expected['status_code']
    assert resp.status_code in codes, '%s %s at %s: %s %s' % (
        method, path, version, resp.status_code, resp.text)
    headers = _Headers({k.lower(): v for k, v in resp.headers.items()})
    headers['status'] = str(resp.status_code)
    headers.status = resp.status_code
    parsed = resp.json() if resp.content else ''
    rest_client.RestClient.validate_response(expected, headers, parsed)
    api_version_utils.assert_version_header_matches_request(HEADER, version, headers)
    return parsed


def _public_key() -> str:
    key = ed25519.Ed25519PrivateKey.generate()
    return key.public_key().public_bytes(serialization.Encoding.OpenSSH,
                                         serialization.PublicFormat.OpenSSH).decode()


def _unique(prefix: str) -> str:
    return '%s-%s' % (prefix, uuid.uuid4().hex[:8])


@pytest.fixture(scope='module')
def flavor_id(stack):
    resp = stack.request('POST', '/flavors', json={'flavor': {
        'name': 'schema.nano', 'ram': 128, 'vcpus': 1, 'disk': 1}})
    assert resp.status_code == 200, resp.text
    return resp.json()['flavor']['id']


@pytest.fixture(scope='module')
def server(stack, flavor_id):
    """An ACTIVE server in an anti-affinity group, with metadata and a tag."""
    group = stack.request('POST', '/os-server-groups', version='2.64', json={
        'server_group': {'name': 'schema-group', 'policy': 'anti-affinity'}})
    assert group.status_code == 200, group.text
    created = check(stack, 'POST', '/servers', 'servers', 'create_server_with_admin_pass',
                    LATEST, {'server': {'name': 'schema-vm', 'imageRef': stack.image['id'],
                                        'flavorRef': flavor_id, 'networks': 'none',
                                        'metadata': {'role': 'test'}, 'tags': ['one']},
                             'os:scheduler_hints': {
                                 'group': group.json()['server_group']['id']}})
    active = stack.wait_for_status(created['server']['id'], ('ACTIVE', 'ERROR'))
    assert active['status'] == 'ACTIVE', active.get('fault')
    return active['id']


# -- servers -------------------------------------------------------------------------------

@pytest.mark.parametrize('version', points('servers'))
def test_server_list_detail_show_update(stack, server, version):
    listed = check(stack, 'GET', '/servers', 'servers', 'list_servers', version)
    assert server in [s['id'] for s in listed['servers']]
    check(stack, 'GET', '/servers/detail', 'servers', 'list_servers_detail', version)
    check(stack, 'GET', '/servers/%s' % server, 'servers', 'get_server', version)
    updated = check(stack, 'PUT', '/servers/%s' % server, 'servers', 'update_server',
                    version, {'server': {'name': 'schema-vm-%s' % version}})
    assert updated['server']['name'] == 'schema-vm-%s' % version


@pytest.mark.parametrize('version', ['2.1', '2.19', LATEST])
def test_server_create_and_delete(stack, flavor_id, version):
    request = {'server': {'name': 'schema-short', 'imageRef': stack.image['id'],
                          'flavorRef': flavor_id, 'networks': 'none'}}
    if _version_key(version) < _version_key('2.37'):
        del request['server']['networks']
    created = check(stack, 'POST', '/servers', 'servers', 'create_server_with_admin_pass',
                    version, request)
    server_id = created['server']['id']
    stack.wait_for_status(server_id, ('ACTIVE', 'ERROR'))
    check(stack, 'DELETE', '/servers/%s' % server_id, 'servers', 'delete_server', version)
    stack.wait_for_deleted(server_id)


@pytest.mark.parametrize('version', ['2.1', LATEST])
def test_server_metadata(stack, server, version):
    base = '/servers/%s/metadata' % server
    check(stack, 'GET', base, 'servers', 'list_server_metadata', version)
    check(stack, 'PUT', base, 'servers', 'set_server_metadata', version,
          {'metadata': {'role': 'test', 'a': '1'}})
    check(stack, 'POST', base, 'servers', 'update_server_metadata', version,
          {'metadata': {'b': '2'}})
    check(stack, 'GET', base + '/a', 'servers', 'set_show_server_metadata_item', version)
    check(stack, 'PUT', base + '/a', 'servers', 'set_show_server_metadata_item', version,
          {'meta': {'a': '3'}})
    check(stack, 'DELETE', base + '/b', 'servers', 'delete_server_metadata_item', version)


@pytest.mark.parametrize('version', ['2.26', LATEST])
def test_server_tags(stack, server, version):
    base = '/servers/%s/tags' % server
    check(stack, 'PUT', base, 'servers', 'update_all_tags', version, {'tags': ['one', 'two']})
    listed = check(stack, 'GET', base, 'servers', 'list_tags', version)
    assert sorted(listed['tags']) == ['one', 'two']
    check(stack, 'GET', base + '/two', 'servers', 'check_tag_existence', version)
    check(stack, 'PUT', base + '/three', 'servers', 'update_tag', version)
    check(stack, 'DELETE', base + '/three', 'servers', 'delete_tag', version)
    check(stack, 'DELETE', base, 'servers', 'delete_all_tags', version)
    check(stack, 'PUT', base + '/one', 'servers', 'update_tag', version)


@pytest.mark.parametrize('version', ['2.1', LATEST])
def test_server_power_actions_and_console(stack, server, version):
    action = '/servers/%s/action' % server
    check(stack, 'POST', action, 'servers', 'server_actions_common_schema', version,
          {'os-stop': None})
    stack.wait_for_status(server, ('SHUTOFF',))
    check(stack, 'POST', action, 'servers', 'server_actions_common_schema', version,
          {'os-start': None})
    stack.wait_for_status(server, ('ACTIVE',))
    check(stack, 'POST', action, 'servers', 'server_actions_common_schema', version,
          {'reboot': {'type': 'SOFT'}})
    stack.wait_for_status(server, ('ACTIVE',))
    output = check(stack, 'POST', action, 'servers', 'get_console_output', version,
                   {'os-getConsoleOutput': {'length': 10}})
    assert isinstance(output['output'], str)


@pytest.mark.parametrize('version', points('servers'))
def test_instance_actions(stack, server, version):
    base = '/servers/%s/os-instance-actions' % server
    listed = check(stack, 'GET', base, 'servers', 'list_instance_actions', version)
    request_id = listed['instanceActions'][-1]['request_id']
    check(stack, 'GET', '%s/%s' % (base, request_id), 'servers', 'show_instance_action',
          version)
    # As the owner without admin: events without their traceback (2.51+).
    shown = check(stack, 'GET', '%s/%s' % (base, request_id), 'servers',
                  'show_instance_action', version, token='admin:admin')
    assert shown['instanceAction']['action'] == 'create'


# -- flavors ---------------------------------------------------------------------------------

@pytest.mark.parametrize('version', points('flavors'))
def test_flavor_lifecycle(stack, version):
    body: dict[str, Any] = {'name': _unique('schema'), 'ram': 64, 'vcpus': 1, 'disk': 0,
                            'os-flavor-access:is_public': False}
    if _version_key(version) >= _version_key('2.55'):
        body['description'] = 'for the schema tests'
    created = check(stack, 'POST', '/flavors', 'flavors', 'create_update_get_flavor_details',
                    version, {'flavor': body})
    flavor = created['flavor']['id']
    check(stack, 'GET', '/flavors', 'flavors', 'list_flavors', version)
    check(stack, 'GET', '/flavors/detail', 'flavors', 'list_flavors_details', version)
    check(stack, 'GET', '/flavors/%s' % flavor, 'flavors', 'create_update_get_flavor_details',
          version)
    if _version_key(version) >= _version_key('2.55'):
        check(stack, 'PUT', '/flavors/%s' % flavor, 'flavors',
              'create_update_get_flavor_details', version,
              {'flavor': {'description': 'changed'}})
    check(stack, 'DELETE', '/flavors/%s' % flavor, 'flavors', 'delete_flavor', version)


@pytest.mark.parametrize('version', ['2.1', LATEST])
def test_flavor_access_and_extra_specs(stack, version):
    created = stack.request('POST', '/flavors', json={'flavor': {
        'name': _unique('schema-private'), 'ram': 64, 'vcpus': 1, 'disk': 0,
        'os-flavor-access:is_public': False}})
    flavor = created.json()['flavor']['id']
    action = '/flavors/%s/action' % flavor
    check(stack, 'POST', action, 'flavors_access', 'add_remove_list_flavor_access', version,
          {'addTenantAccess': {'tenant': 'other'}})
    check(stack, 'GET', '/flavors/%s/os-flavor-access' % flavor, 'flavors_access',
          'add_remove_list_flavor_access', version)
    check(stack, 'POST', action, 'flavors_access', 'add_remove_list_flavor_access', version,
          {'removeTenantAccess': {'tenant': 'other'}})
    specs = '/flavors/%s/os-extra_specs' % flavor
    check(stack, 'POST', specs, 'flavors_extra_specs', 'set_get_flavor_extra_specs', version,
          {'extra_specs': {'hw:cpu_policy': 'shared', 'hw:numa_nodes': '1'}})
    check(stack, 'GET', specs, 'flavors_extra_specs', 'set_get_flavor_extra_specs', version)
    check(stack, 'GET', specs + '/hw:numa_nodes', 'flavors_extra_specs',
          'set_get_flavor_extra_specs_key', version)
    check(stack, 'PUT', specs + '/hw:numa_nodes', 'flavors_extra_specs',
          'set_get_flavor_extra_specs_key', version, {'hw:numa_nodes': '2'})
    check(stack, 'DELETE', specs + '/hw:numa_nodes', 'flavors_extra_specs',
          'unset_flavor_extra_specs', version)
    stack.request('DELETE', '/flavors/%s' % flavor)


# -- microversions 2.97 to 2.104 (the newest) ----------------------------------------------

@pytest.mark.parametrize('version', ['2.101', '2.102', LATEST])
def test_flavors_lose_deprecated_fields_at_2_102(stack, version):
    """tempest has no flavor schema after 2.75 and its 2.75 schema leaves ``rxtx_factor``
    and ``OS-FLV-DISABLED:disabled`` optional: whether they are there is checked here."""
    created = check(stack, 'POST', '/flavors', 'flavors', 'create_update_get_flavor_details',
                    version, {'flavor': {'name': _unique('schema-2102'), 'ram': 64,
                                         'vcpus': 1, 'disk': 0}})['flavor']
    flavor = created['id']
    shown = check(stack, 'GET', '/flavors/%s' % flavor, 'flavors',
                  'create_update_get_flavor_details', version)['flavor']
    updated = check(stack, 'PUT', '/flavors/%s' % flavor, 'flavors',
                    'create_update_get_flavor_details', version,
                    {'flavor': {'description': 'changed'}})['flavor']
    detail = check(stack, 'GET', '/flavors/detail?name=^%s$' % created['name']
                   if version != '2.101' else '/flavors/detail', 'flavors',
                   'list_flavors_details', version)['flavors']
    listed = [f for f in detail if f['id'] == flavor]
    deprecated = {'rxtx_factor', 'OS-FLV-DISABLED:disabled'}
    for body in [created, shown, updated] + listed:
        if version == '2.101':
            assert deprecated <= set(body)
        else:
            assert not deprecated & set(body)
    assert len(listed) == 1
    check(stack, 'DELETE', '/flavors/%s' % flavor, 'flavors', 'delete_flavor', version)


@pytest.mark.parametrize('version', ['2.97', LATEST])
def test_server_shares(stack, server, version):
    listed = check(stack, 'GET', '/servers/%s/shares' % server, 'servers',
                   'list_share_attachments', version)
    assert listed == {'shares': []}


@pytest.mark.parametrize('version', ['2.102', LATEST])
def test_server_list_through_volumes_boot_until_2_102(stack, server, version):
    if version == LATEST:
        assert stack.request('GET', '/os-volumes_boot/%s' % server,
                             headers={HEADER: version}).status_code == 404
        return
    check(stack, 'GET', '/os-volumes_boot/detail', 'servers', 'list_servers_detail', version)
    check(stack, 'GET', '/os-volumes_boot/%s' % server, 'servers', 'get_server', version)


@pytest.fixture(scope='module')
def rebuilt(stack, flavor_id):
    """A server of its own to rebuild, booted into a zone (so pinned)."""
    created = stack.request('POST', '/servers', version=LATEST, json={'server': {
        'name': 'schema-rebuild', 'imageRef': stack.image['id'], 'flavorRef': flavor_id,
        'networks': 'none', 'availability_zone': 'nova'}})
    assert created.status_code == 202, created.text
    server_id = created.json()['server']['id']
    stack.wait_for_status(server_id, ('ACTIVE',))
    yield server_id
    stack.request('DELETE', '/servers/%s' % server_id)


@pytest.mark.parametrize('version', ['2.96', '2.98', '2.100', LATEST])
def test_rebuild_shows_the_later_fields(stack, rebuilt, version):
    body = check(stack, 'POST', '/servers/%s/action' % rebuilt, 'servers',
                 'rebuild_server_with_admin_pass', version,
                 {'rebuild': {'imageRef': stack.image['id']}})['server']
    assert body['pinned_availability_zone'] == 'nova'
    assert ('properties' in body['image']) == (version != '2.96')
    assert ('scheduler_hints' in body) == (version in ('2.100', LATEST))
    stack.wait_for_status(rebuilt, ('ACTIVE',))


# -- keypairs, limits, quotas --------------------------------------------------------------

@pytest.mark.parametrize('version', points('keypairs', ceiling=LATEST) + ['2.10', '2.35'])
def test_keypairs(stack, version):
    name = _unique('schema-key')
    body: dict[str, Any] = {'name': name}
    if _version_key(version) >= _version_key('2.92'):
        body['public_key'] = _public_key()
    check(stack, 'POST', '/os-keypairs', 'keypairs', 'create_keypair', version,
          {'keypair': body})
    listed = check(stack, 'GET', '/os-keypairs', 'keypairs', 'list_keypairs', version)
    assert name in [k['keypair']['name'] for k in listed['keypairs']]
    check(stack, 'GET', '/os-keypairs/%s' % name, 'keypairs', 'get_keypair', version)
    check(stack, 'DELETE', '/os-keypairs/%s' % name, 'keypairs', 'delete_keypair', version)


@pytest.mark.parametrize('version', points('limits'))
def test_limits(stack, version):
    check(stack, 'GET', '/limits', 'limits', 'get_limit', version)


@pytest.mark.parametrize('version', points('quotas'))
def test_quota_sets(stack, version):
    project = 'schema-project'
    base = '/os-quota-sets/%s' % project
    check(stack, 'GET', base, 'quotas', 'get_quota_set', version)
    check(stack, 'GET', base + '/defaults', 'quotas', 'get_quota_set', version)
    check(stack, 'GET', base + '/detail', 'quotas', 'get_quota_set_details', version)
    check(stack, 'PUT', base, 'quotas', 'update_quota_set', version,
          {'quota_set': {'instances': 20, 'cores': 40}})
    check(stack, 'DELETE', base, 'quotas', 'delete_quota', version)


@pytest.mark.parametrize('version', points('quota_classes'))
def test_quota_classes(stack, version):
    check(stack, 'GET', '/os-quota-class-sets/default', 'quota_classes',
          'get_quota_class_set', version)
    check(stack, 'PUT', '/os-quota-class-sets/default', 'quota_classes',
          'update_quota_class_set', version, {'quota_class_set': {'instances': 10}})


# -- zones, aggregates, groups, hosts ------------------------------------------------------

@pytest.mark.parametrize('version', ['2.1', LATEST])
def test_availability_zones(stack, version):
    check(stack, 'GET', '/os-availability-zone', 'availability_zone',
          'list_availability_zone_list', version)
    check(stack, 'GET', '/os-availability-zone/detail', 'availability_zone',
          'list_availability_zone_list_detail', version)


@pytest.mark.parametrize('version', points('aggregates'))
def test_aggregates(stack, version):
    created = check(stack, 'POST', '/os-aggregates', 'aggregates', 'create_aggregate',
                    version, {'aggregate': {'name': _unique('schema-agg'),
                                            'availability_zone': _unique('az')}})
    base = '/os-aggregates/%s' % created['aggregate']['id']
    check(stack, 'GET', '/os-aggregates', 'aggregates', 'list_aggregates', version)
    check(stack, 'GET', base, 'aggregates', 'get_aggregate', version)
    check(stack, 'PUT', base, 'aggregates', 'update_aggregate', version,
          {'aggregate': {'name': _unique('schema-agg')}})
    check(stack, 'POST', base + '/action', 'aggregates', 'aggregate_set_metadata', version,
          {'set_metadata': {'metadata': {'ssd': 'true'}}})
    check(stack, 'POST', base + '/action', 'aggregates', 'aggregate_add_remove_host',
          version, {'add_host': {'host': 'host1'}})
    check(stack, 'POST', base + '/action', 'aggregates', 'aggregate_add_remove_host',
          version, {'remove_host': {'host': 'host1'}})
    check(stack, 'DELETE', base, 'aggregates', 'delete_aggregate', version)


@pytest.mark.parametrize('version', points('server_groups'))
def test_server_groups(stack, version):
    body: dict[str, Any] = {'name': _unique('schema-sg')}
    if _version_key(version) >= _version_key('2.64'):
        body.update(policy='affinity', rules={})
    else:
        body['policies'] = ['affinity']
    created = check(stack, 'POST', '/os-server-groups', 'server_groups',
                    'create_show_server_group', version, {'server_group': body})
    base = '/os-server-groups/%s' % created['server_group']['id']
    check(stack, 'GET', '/os-server-groups', 'server_groups', 'list_server_groups', version)
    check(stack, 'GET', base, 'server_groups', 'create_show_server_group', version)
    check(stack, 'DELETE', base, 'server_groups', 'delete_server_group', version)


# tempest's newest hypervisor schema is 2.53's, which still requires the usage fields
# that 2.88 removed: it does not describe 2.88 and later.
@pytest.mark.parametrize('version', points('hypervisors', ceiling='2.87'))
def test_hypervisors(stack, server, version):
    listed = check(stack, 'GET', '/os-hypervisors', 'hypervisors', 'list_search_hypervisors',
                   version)
    check(stack, 'GET', '/os-hypervisors/detail', 'hypervisors', 'list_hypervisors_detail',
          version)
    first = listed['hypervisors'][0]
    check(stack, 'GET', '/os-hypervisors/%s' % first['id'], 'hypervisors', 'get_hypervisor',
          version)
    if _version_key(version) < _version_key('2.88'):
        check(stack, 'GET', '/os-hypervisors/statistics', 'hypervisors',
              'get_hypervisor_statistics', version)
        _uptime(stack, first['id'], version)
    if _version_key(version) < _version_key('2.53'):
        name = first['hypervisor_hostname']
        check(stack, 'GET', '/os-hypervisors/%s/search' % name, 'hypervisors',
              'list_search_hypervisors', version)
        check(stack, 'GET', '/os-hypervisors/%s/servers' % name, 'hypervisors',
              'get_hypervisors_servers', version)
    else:
        with_servers = check(stack, 'GET', '/os-hypervisors?with_servers=true',
                             'hypervisors', 'list_search_hypervisors', version)
        assert any(h.get('servers') for h in with_servers['hypervisors'])


def _uptime(stack, hypervisor_id: Any, version: str) -> None:
    """The host's uptime (the fake driver tells the machine's)."""
    path = '/os-hypervisors/%s/uptime' % hypervisor_id
    check(stack, 'GET', path, 'hypervisors', 'get_hypervisor_uptime', version)


@pytest.mark.parametrize('version', points('services'))
def test_services(stack, version):
    listed = check(stack, 'GET', '/os-services', 'services', 'list_services', version)
    if _version_key(version) >= _version_key('2.53'):
        compute = next(s for s in listed['services'] if s['binary'] == 'nova-compute')
        check(stack, 'PUT', '/os-services/%s' % compute['id'], 'services', 'update_service',
              version, {'status': 'disabled', 'disabled_reason': 'schema test'})
        check(stack, 'PUT', '/os-services/%s' % compute['id'], 'services', 'update_service',
              version, {'status': 'enabled'})


# -- the proxies to Neutron (none in this stack: nothing to list) ----------------------------

@pytest.mark.parametrize('version', ['2.1', '2.35'])
def test_network_proxies(stack, server, version):
    check(stack, 'GET', '/os-security-groups', 'security_groups', 'list_security_groups',
          version)
    check(stack, 'GET', '/servers/%s/os-security-groups' % server, 'security_groups',
          'list_security_groups', version)
    check(stack, 'GET', '/os-floating-ips', 'floating_ips', 'list_floating_ips', version)
    for path in ('/os-security-groups', '/os-floating-ips', '/os-floating-ip-pools',
                 '/os-networks'):
        assert stack.request('GET', path, headers={HEADER: '2.36'}).status_code == 404


# -- versions ------------------------------------------------------------------------------

def test_versions(stack):
    root = stack.api[:-len('/v2.1')] if stack.api.endswith('/v2.1') else stack.api
    resp = requests.get(root + '/', timeout=30)
    headers = _Headers({k.lower(): v for k, v in resp.headers.items()})
    headers.status = resp.status_code
    rest_client.RestClient.validate_response(schema('versions', 'list_versions', '2.1'),
                                             headers, resp.json())
    resp = requests.get(root + '/v2.1/', timeout=30, headers={'X-Auth-Token': 'admin:admin'})
    headers = _Headers({k.lower(): v for k, v in resp.headers.items()})
    headers.status = resp.status_code
    rest_client.RestClient.validate_response(schema('versions', 'get_one_version', '2.1'),
                                             headers, resp.json())


# -- operator and service APIs ------------------------------------------------------------

@pytest.mark.parametrize('version', points('migrations'))
def test_migrations(stack, server, version):
    check(stack, 'GET', '/os-migrations', 'migrations', 'list_migrations', version)
    if _version_key(version) >= _version_key('2.23'):
        check(stack, 'GET', '/servers/%s/migrations' % server, 'servers',
              'list_live_migrations', version)


@pytest.mark.parametrize('version', ['2.1', '2.40', LATEST])
def test_simple_tenant_usage(stack, server, version):
    listed = check(stack, 'GET', '/os-simple-tenant-usage?detailed=1', 'tenant_usages',
                   'list_tenant_usage', version)
    assert listed['tenant_usages']
    project = listed['tenant_usages'][0]['tenant_id']
    check(stack, 'GET', '/os-simple-tenant-usage/%s' % project, 'tenant_usages',
          'get_tenant_usage', version)


@pytest.mark.parametrize('version', ['2.1', '2.48', LATEST])
def test_server_diagnostics(stack, server, version):
    # tempest's own schema: the fake driver reports 'libvirt', as Nova's does.
    shown = check(stack, 'GET', '/servers/%s/diagnostics' % server, 'servers',
                  'show_server_diagnostics', version)
    assert shown


@pytest.mark.parametrize('version', ['2.1', LATEST])
def test_server_external_events(stack, server, version):
    created = check(stack, 'POST', '/os-server-external-events', 'server_external_events',
                    'create', version, {'events': [
                        {'server_uuid': server, 'name': 'network-changed'}]})
    assert created['events'][0]['code'] == 200


# -- extensions and the version documents inside the API (issue 19: routing) -------------

@pytest.mark.parametrize('version', points('extensions'))
def test_extensions_list(stack, version):
    listed = check(stack, 'GET', '/extensions', 'extensions', 'list_extensions', version)
    assert len(listed['extensions']) == 99


@pytest.mark.parametrize('version', points('versions'))
def test_version_documents_inside_the_api(stack, version):
    for path in ('/versions/v2.1', '/versions/v2.0'):
        check(stack, 'GET', path, 'versions', 'get_one_version', version)


# -- server extras: scheduler hints, password, topology, volume attachments ---------------

def _as_nova_34(found: dict[str, Any]) -> dict[str, Any]:
    """tempest's 2.100 schema takes the ``group`` hint as a string; Nova 34 keeps every
    hint as a list and shows it so (its own response schema takes a list for group):
    that one property is widened to Nova's, nothing else."""
    if 'scheduler_hints' not in repr(found):
        return found
    widened = copy.deepcopy(found)

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            hints = node.get('scheduler_hints')
            if isinstance(hints, dict) and 'group' in hints.get('properties', {}):
                group = hints['properties']['group']
                hints['properties']['group'] = {'oneOf': [
                    group, {'type': 'array', 'items': group}]}
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(widened)
    return widened


@pytest.mark.parametrize('version', ['2.1', LATEST])
def test_server_password(stack, server, version):
    shown = check(stack, 'GET', '/servers/%s/os-server-password' % server, 'servers',
                  'show_password', version)
    assert shown == {'password': ''}
    check(stack, 'DELETE', '/servers/%s/os-server-password' % server, 'servers',
          'server_actions_delete_password', version)


@pytest.mark.parametrize('version', points('servers', floor='2.1'))
def test_volume_attachments(stack, server, version):
    listed = check(stack, 'GET', '/servers/%s/os-volume_attachments' % server, 'servers',
                   'list_volume_attachments', version)
    assert listed == {'volumeAttachments': []}


def test_scheduler_hints_schema_takes_a_list_for_group_only():
    strict = schema('servers', 'get_server', '2.100')
    hints = strict['response_body']['properties']['server']['properties'][
        'scheduler_hints']['properties']
    assert hints['group']['oneOf'][1]['type'] == 'array'
    assert 'oneOf' in hints['different_host'] and hints['same_host']['type'] == [
        'string', 'array']


# -- os-hosts (until 2.42), the os-services actions before 2.53, the usage audit log ------

@pytest.mark.parametrize('version', points('hosts', ceiling='2.42'))
def test_hosts(stack, server, version):
    listed = check(stack, 'GET', '/os-hosts', 'hosts', 'list_hosts', version)
    host = next(h['host_name'] for h in listed['hosts'] if h['service'] == 'compute')
    shown = check(stack, 'GET', '/os-hosts/%s' % host, 'hosts', 'get_host_detail', version)
    assert [r['resource']['project'] for r in shown['host']][:3] == [
        '(total)', '(used_now)', '(used_max)']
    for action, name in (('startup', 'startup_host'), ('shutdown', 'shutdown_host'),
                         ('reboot', 'reboot_host')):
        check(stack, 'GET', '/os-hosts/%s/%s' % (host, action), 'hosts', name, version)
    check(stack, 'PUT', '/os-hosts/%s' % host, 'hosts', 'update_host', version,
          {'status': 'enable', 'maintenance_mode': 'disable'})
    check(stack, 'PUT', '/os-hosts/%s' % host, 'hosts', 'update_host', version,
          {'maintenance_mode': 'enable'})


@pytest.mark.parametrize('version', points('services', ceiling='2.52'))
def test_service_actions_before_2_53(stack, version):
    host = {'host': 'host2', 'binary': 'nova-compute'}
    check(stack, 'PUT', '/os-services/disable', 'services', 'enable_disable_service',
          version, host)
    check(stack, 'PUT', '/os-services/disable-log-reason', 'services', 'disable_log_reason',
          version, dict(host, disabled_reason='schema test'))
    check(stack, 'PUT', '/os-services/enable', 'services', 'enable_disable_service',
          version, host)
    if _version_key(version) >= _version_key('2.11'):
        check(stack, 'PUT', '/os-services/force-down', 'services', 'update_forced_down',
              version, dict(host, forced_down=True))
        check(stack, 'PUT', '/os-services/force-down', 'services', 'update_forced_down',
              version, dict(host, forced_down=False))


@pytest.mark.parametrize('version', points('instance_usage_audit_logs'))
def test_instance_usage_audit_logs(stack, version):
    listed = check(stack, 'GET', '/os-instance_usage_audit_log', 'instance_usage_audit_logs',
                   'list_instance_usage_audit_log', version)
    assert listed['instance_usage_audit_logs']['num_hosts'] == 2
    check(stack, 'GET', '/os-instance_usage_audit_log/2026-01-02 03:04:05.678',
          'instance_usage_audit_logs', 'get_instance_usage_audit_log', version)


# -- the images proxy (to 2.35) and its metadata (to 2.38) ----------------------------------

@pytest.mark.parametrize('version', points('images', ceiling='2.35'))
def test_images_proxy(stack, server, version):
    snapshot = stack.glance.add_image(_unique('schema-img'), instance_uuid=server,
                                      image_type='snapshot', auto_disk_config='true')
    queued = stack.glance.add_image(_unique('schema-queued'), status='queued', size=None)
    listed = check(stack, 'GET', '/images', 'images', 'list_images', version)
    assert {snapshot['id'], queued['id']} <= {i['id'] for i in listed['images']}
    detailed = check(stack, 'GET', '/images/detail', 'images', 'list_images_details',
                     version)
    assert snapshot['id'] in {i['id'] for i in detailed['images']}
    check(stack, 'GET', '/images?limit=1', 'images', 'list_images', version)
    shown = check(stack, 'GET', '/images/%s' % snapshot['id'], 'images', 'get_image',
                  version)
    assert shown['image']['server']['id'] == server
    check(stack, 'GET', '/images/%s' % queued['id'], 'images', 'get_image', version)
    check(stack, 'DELETE', '/images/%s' % queued['id'], 'images', 'delete', version)
    check(stack, 'DELETE', '/images/%s' % snapshot['id'], 'images', 'delete', version)


@pytest.mark.parametrize('version', points('images', ceiling='2.38'))
def test_image_metadata_proxy(stack, version):
    image = stack.glance.add_image(_unique('schema-meta'), os_distro='cirros')
    base = '/images/%s/metadata' % image['id']
    check(stack, 'GET', base, 'images', 'image_metadata', version)
    check(stack, 'POST', base, 'images', 'image_metadata', version,
          {'metadata': {'tier': '1'}})
    check(stack, 'PUT', base, 'images', 'image_metadata', version,
          {'metadata': {'tier': '2', 'os_distro': 'cirros'}})
    check(stack, 'GET', base + '/tier', 'images', 'image_meta_item', version)
    check(stack, 'PUT', base + '/tier', 'images', 'image_meta_item', version,
          {'meta': {'tier': '3'}})
    check(stack, 'DELETE', base + '/tier', 'images', 'delete', version)
