"""Servers on real networks with Keystone in charge: the real Neutron (ML2/OVN) behind
keystonemiddleware's auth_token, found in Keystone's catalog, driven by openstackclient
with the password clouds of ``tests.devstack.harness.keystone.USERS``.

``alice`` (a member of project ``alpha``) makes a network and boots on it; the compute
makes and binds the port as the ``nova`` service user for project ``alpha``; ``bob``
(a member of ``beta``) neither sees nor uses it; Neutron's events reach novalite with the
``nova`` service user's token. The computes run the fake driver: a test plugs the port
into its host's switch itself, as os-vif would, for Neutron to see it go ACTIVE.
"""
from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from tests.devstack import clients
from tests.devstack.harness import Stack
from tests.devstack.test_keystone import osc, rest
from tests.devstack.test_neutron_harness import Plugged

STACK = {'network': True, 'auth': 'keystone'}
NET = 'alpha-net'
CIDR = '10.40.0.0/24'



@pytest.fixture(scope='module')
def net(stack: Stack) -> dict[str, Any]:
    """alpha's private network with a subnet, made by alice."""
    network = osc(stack, 'alice', 'network', 'create', NET)
    subnet = osc(stack, 'alice', 'subnet', 'create', '--network', NET, '--subnet-range',
                 CIDR, 'alpha-subnet')
    network['subnet'] = subnet
    return network


@pytest.fixture(scope='module')
def server(stack: Stack, net: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """alice's server on alpha's network (deleted by the last test, else here)."""
    created = osc(stack, 'alice', 'server', 'create', '--image', 'cirros-tiny', '--flavor',
                  'm1.nano', '--network', NET, '--wait', 'alpha-vm')
    yield created
    rest(stack, 'admin', 'DELETE', '/servers/%s' % created['id'])


def _neutron(stack: Stack, path: str) -> Any:
    """GET a Neutron path as the Keystone admin."""
    assert stack.neutron is not None
    resp = stack.neutron.api('GET', path)
    resp.raise_for_status()
    return resp.json()


def _ports_of(stack: Stack, server_id: str) -> list[dict[str, Any]]:
    return _neutron(stack, '/ports?device_id=%s' % server_id)['ports']


def _keystone_user_id(stack: Stack, name: str) -> str:
    assert stack.keystone is not None
    resp = requests.get(stack.keystone.auth_url + '/users', params={'name': name},
                        headers={'X-Auth-Token': stack.keystone.token('admin')}, timeout=30)
    resp.raise_for_status()
    return resp.json()['users'][0]['id']


def _api_log(stack: Stack) -> str:
    with open(os.path.join(stack.log_dir, 'api.log')) as log:
        return log.read()


def test_neutron_is_in_the_catalog_and_checks_tokens(stack: Stack) -> None:
    assert stack.neutron is not None
    # No token, or the noauth2 form: auth_token refuses them.
    for headers in ({}, {'X-Auth-Token': 'admin:admin'}):
        resp = requests.get(stack.neutron.url + '/v2.0/networks', headers=headers,
                            timeout=30)
        assert resp.status_code == 401, resp.text
    endpoints = osc(stack, 'admin', 'endpoint', 'list', '--service', 'network')
    assert {(e['Region'], e['Interface'], e['URL']) for e in endpoints} >= {
        ('RegionOne', 'public', stack.neutron.url),
        ('RegionOne', 'internal', stack.neutron.url)}
    # The daemons find it there too: no endpoint_override.
    with open(stack.conf_file('api')) as conf:
        text = conf.read()
    assert 'endpoint_override = http' not in text.split('[neutron]')[1].split('\n[')[0]


def test_a_member_boots_on_her_network_and_the_port_is_her_projects(
        stack: Stack, net: dict[str, Any], server: dict[str, Any]) -> None:
    assert stack.keystone is not None
    alpha = stack.keystone.project_id('alpha')
    assert net['project_id'] == alpha
    assert server['status'] == 'ACTIVE'
    address = server['addresses'][NET][0]
    assert ipaddress.ip_address(address) in ipaddress.ip_network(CIDR)

    ports = _ports_of(stack, server['id'])
    assert len(ports) == 1
    port = ports[0]
    host = rest(stack, 'admin', 'GET', '/servers/%s' % server['id']).json()['server'][
        'OS-EXT-SRV-ATTR:host']
    assert port['project_id'] == alpha
    assert port['binding:host_id'] == host
    assert port['device_owner'] == 'compute:nova'
    assert port['binding:vif_type'] == 'ovs'
    assert port['fixed_ips'][0]['ip_address'] == address
    # Neutron shows alice her project's port; she sees the server's addresses.
    assert [p['ID'] for p in osc(stack, 'alice', 'port', 'list', '--server',
                                 server['id'])] == [port['id']]
    shown = osc(stack, 'alice', 'server', 'show', server['id'])
    assert shown['addresses'] == {NET: [address]}
    assert shown['project_id'] == alpha


def test_another_project_cannot_boot_on_it_nor_see_it(
        stack: Stack, net: dict[str, Any], server: dict[str, Any]) -> None:
    ports_before = _neutron(stack, '/ports?network_id=%s' % net['id'])['ports']
    resp = rest(stack, 'bob', 'POST', '/servers', json={'server': {
        'name': 'beta-on-alpha', 'imageRef': stack.image_id,
        'flavorRef': clients.flavor_id(stack, 'm1.nano'),
        'networks': [{'uuid': net['id']}]}})
    assert resp.status_code == 400, resp.text
    assert resp.json()['badRequest']['message'] == \
        'Network %s could not be found.' % net['id']
    # Nothing written: no server, no port.
    assert 'beta-on-alpha' not in [s['Name'] for s in osc(
        stack, 'admin', 'server', 'list', '--all-projects')]
    assert _neutron(stack, '/ports?network_id=%s' % net['id'])['ports'] == ports_before
    # Neutron hides alpha's network from bob; novalite hides alpha's server.
    assert NET not in [n['Name'] for n in osc(stack, 'bob', 'network', 'list')]
    assert server['id'] not in [s['ID'] for s in osc(stack, 'bob', 'server', 'list')]
    assert rest(stack, 'bob', 'GET', '/servers/%s' % server['id']).status_code == 404


def test_neutrons_events_reach_novalite_as_the_nova_service_user(
        stack: Stack, server: dict[str, Any]) -> None:
    assert stack.neutron is not None
    port = _ports_of(stack, server['id'])[0]
    # alice renames her port: Neutron sends network-changed.
    osc(stack, 'alice', 'port', 'set', '--description', 'renamed', port['id'],
        fmt_json=False)
    # Plugged into its host's switch as os-vif would: ACTIVE, then network-vif-plugged.
    plugged = Plugged(stack.neutron, port['binding:host_id'], port, 'kn')
    try:
        stack.wait_for(lambda: _neutron(stack, '/ports/%s' % port['id'])['port'][
            'status'] == 'ACTIVE', 30, 'the plugged port ACTIVE')
        nova_user = _keystone_user_id(stack, 'nova')
        wanted = {name: re.compile(r'%s.*Creating event %s:%s for server %s' % (
            nova_user, name, port['id'], server['id'])) for name in (
            'network-changed', 'network-vif-plugged')}
        stack.wait_for(lambda: all(w.search(_api_log(stack)) for w in wanted.values()),
                       30, 'network-changed and network-vif-plugged in novalite-api.log')
    finally:
        plugged.remove()
    posts = re.findall(r'"POST /v2.1/os-server-external-events" status: (\d+)',
                       _api_log(stack))
    assert posts and set(posts) <= {'200', '207', '404'}, posts
    assert '200' in posts
    neutron_log = os.path.join(stack.neutron.log_dir, 'neutron-api.log')
    with open(neutron_log) as log:
        assert 'Failed to notify nova' not in log.read()


def test_only_the_service_role_writes_a_ports_binding_profile(
        stack: Stack, net: dict[str, Any]) -> None:
    """Why the service users hold the ``service`` role besides ``admin``: Neutron's
    default policy keeps some port fields to it (as Nova's deployments give it)."""
    assert stack.neutron is not None and stack.keystone is not None
    made = stack.neutron.api('POST', '/ports', json={'port': {'network_id': net['id']}})
    assert made.status_code == 201, made.text
    port_path = '/ports/%s' % made.json()['port']['id']
    body = {'port': {'binding:profile': {'novalite': 'test'}}}
    try:
        # Keystone's bootstrap admin holds the admin role only.
        refused = stack.neutron.api('PUT', port_path, json=body)
        assert refused.status_code == 403, refused.text
        assert 'update_port:binding:profile' in refused.text
        allowed = stack.neutron.api('PUT', port_path, json=body, headers={
            'X-Auth-Token': stack.keystone.token('nova')})
        assert allowed.status_code == 200, allowed.text
    finally:
        stack.neutron.api('DELETE', port_path)


def test_delete_removes_the_port(stack: Stack, server: dict[str, Any]) -> None:
    port_id = _ports_of(stack, server['id'])[0]['id']
    osc(stack, 'alice', 'server', 'delete', '--wait', server['id'], fmt_json=False)
    assert _ports_of(stack, server['id']) == []
    assert stack.neutron is not None
    assert stack.neutron.api('GET', '/ports/%s' % port_id).status_code == 404
