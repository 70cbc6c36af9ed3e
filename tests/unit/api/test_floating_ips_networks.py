"""The floating IP, floating IP pool and network proxies and the addFloatingIp and
removeFloatingIp actions, over the Neutron test double and with no Neutron at all."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from novalite import objects
from novalite.api.openstack import auth, faults, urlmap
from novalite.api.openstack.compute import floating_ips, routes, server_actions
from tests.unit.api.compute_api_double import ComputeAPIDouble
from tests.unit.api.conftest import call
from tests.unit.network import neutron_double
from tests.unit.network.neutron_double import NeutronDouble

OLD = '2.35'
MISSING = '7f1b0f7e-0000-4000-8000-000000000000'


@pytest.fixture
def neutron() -> Iterator[NeutronDouble]:
    with neutron_double.installed() as double:
        yield double


@pytest.fixture
def compute() -> ComputeAPIDouble:
    return ComputeAPIDouble()


@pytest.fixture
def app(api_db: str, compute: ComputeAPIDouble) -> Any:
    router = routes.APIRouterV21({
        'server_actions': server_actions.ServerActionsController(compute),
        'floating_ips': floating_ips.FloatingIPController(compute)})
    return urlmap.URLMap({}, {'/v2.1': faults.FaultWrapper(auth.NoAuthMiddleware(router))})


@pytest.fixture
def public(neutron: NeutronDouble) -> dict[str, Any]:
    return neutron.add('networks', name='public', **{'router:external': True})


def _server(compute: ComputeAPIDouble, neutron: NeutronDouble, address: str = '10.0.0.4'
            ) -> Any:
    instance = compute.add(id=len(compute.instances) + 1)
    port = neutron.add('ports', device_id=instance.uuid,
                       fixed_ips=[{'ip_address': address}])
    instance.info_cache = objects.InstanceInfoCache.loaded(None, instance.uuid, [{
        'id': port['id'], 'network': {'id': 'n1', 'label': 'private', 'subnets': [{
            'cidr': '10.0.0.0/24', 'version': 4,
            'ips': [{'address': address, 'type': 'fixed', 'version': 4}]}]}}])
    return instance


class TestFloatingIPs:
    def test_lifecycle_at_235(self, app, neutron, public):
        created = call(app, 'POST', '/v2.1/os-floating-ips', {'pool': None}, version=OLD)
        assert created.status_int == 200, created.body
        fip = created.json['floating_ip']
        assert fip == {'id': fip['id'], 'ip': '172.24.4.10', 'pool': 'public',
                       'fixed_ip': None, 'instance_id': None}
        named = call(app, 'POST', '/v2.1/os-floating-ips', {'pool': public['id']},
                     version=OLD)
        assert named.json['floating_ip']['pool'] == 'public'
        assert neutron.store['floatingips'][fip['id']]['project_id'] == 'demo'
        listed = call(app, 'GET', '/v2.1/os-floating-ips', version=OLD).json
        assert len(listed['floating_ips']) == 2
        path = '/v2.1/os-floating-ips/%s' % fip['id']
        assert call(app, 'GET', path, version=OLD).json == {'floating_ip': fip}
        assert call(app, 'DELETE', path, version=OLD).status_int == 202
        missing = call(app, 'GET', path, version=OLD)
        assert missing.status_int == 404
        assert missing.json['itemNotFound']['message'] == \
            'Floating IP not found for ID %s' % fip['id']

    def test_pool_errors(self, app, neutron, public):
        resp = call(app, 'POST', '/v2.1/os-floating-ips', {'pool': 'nowhere'}, version=OLD)
        assert resp.status_int == 404 and 'pool not found' in resp.text
        neutron.exhausted = True
        resp = call(app, 'POST', '/v2.1/os-floating-ips', {'pool': 'public'}, version=OLD)
        assert resp.status_int == 404
        assert resp.json['itemNotFound']['message'] == 'No more floating IPs in pool public.'

    def test_pools(self, app, neutron, public):
        neutron.add('networks', name='private')
        resp = call(app, 'GET', '/v2.1/os-floating-ip-pools', version=OLD)
        assert resp.json == {'floating_ip_pools': [{'name': 'public'}]}

    @pytest.mark.parametrize('method,path', [
        ('GET', '/os-floating-ips'), ('POST', '/os-floating-ips'),
        ('GET', '/os-floating-ips/%s' % MISSING), ('DELETE', '/os-floating-ips/%s' % MISSING),
        ('GET', '/os-floating-ip-pools'), ('GET', '/os-networks'),
        ('GET', '/os-networks/%s' % MISSING)])
    def test_gone_from_236(self, app, neutron, method, path):
        resp = call(app, method, '/v2.1' + path, {} if method == 'POST' else None,
                    version='2.36')
        assert resp.status_int == 404
        assert neutron.requests == []

    def test_without_neutron(self, app):
        for path in ('/os-floating-ips', '/os-floating-ip-pools', '/os-networks'):
            resp = call(app, 'GET', '/v2.1' + path, version=OLD)
            assert resp.status_int == 200 and list(resp.json.values()) == [[]]
        for method, path in (('GET', '/os-floating-ips/%s' % MISSING),
                             ('DELETE', '/os-floating-ips/%s' % MISSING),
                             ('POST', '/os-floating-ips'),
                             ('GET', '/os-networks/%s' % MISSING)):
            resp = call(app, method, '/v2.1' + path, {} if method == 'POST' else None,
                        version=OLD)
            assert resp.status_int == 404, (method, path)


class TestActions:
    def _act(self, app, server, body, version=None):
        return call(app, 'POST', '/v2.1/servers/%s/action' % server, body, version=version)

    def test_add_and_remove(self, app, compute, neutron, public):
        server = _server(compute, neutron)
        fip = neutron.add('floatingips', floating_network_id=public['id'],
                          project_id='demo')
        address = fip['floating_ip_address']
        resp = self._act(app, server.uuid, {'addFloatingIp': {'address': address}})
        assert resp.status_int == 202, resp.body
        assert fip['fixed_ip_address'] == '10.0.0.4' and fip['port_id']
        listed = call(app, 'GET', '/v2.1/os-floating-ips', version=OLD).json
        assert listed['floating_ips'][0]['instance_id'] == server.uuid
        other = _server(compute, neutron, '10.0.0.5')
        resp = self._act(app, other.uuid, {'removeFloatingIp': {'address': address}})
        assert resp.status_int == 409
        resp = self._act(app, server.uuid, {'removeFloatingIp': {'address': address}})
        assert resp.status_int == 202
        assert fip['port_id'] is None

    def test_codes(self, app, compute, neutron, public):
        server = _server(compute, neutron)
        unknown = self._act(app, server.uuid, {'addFloatingIp': {'address': '172.24.4.99'}})
        assert unknown.status_int == 404
        wrong = self._act(app, server.uuid, {'addFloatingIp': {
            'address': '172.24.4.99', 'fixed_address': '10.9.9.9'}})
        assert wrong.status_int == 400 and 'not assigned' in wrong.text
        bare = compute.add(id=99)
        bare.info_cache = objects.InstanceInfoCache.loaded(None, bare.uuid, [])
        resp = self._act(app, bare.uuid, {'addFloatingIp': {'address': '172.24.4.99'}})
        assert resp.status_int == 400 and 'not ready' in resp.text
        resp = self._act(app, server.uuid, {'removeFloatingIp': {'address': '172.24.4.99'}})
        assert resp.status_int == 404
        resp = self._act(app, server.uuid, {'addFloatingIp': {'address': 'nope'}})
        assert resp.status_int == 400

    def test_gone_from_244(self, app, compute, neutron, public):
        server = _server(compute, neutron)
        for action in ('addFloatingIp', 'removeFloatingIp'):
            resp = self._act(app, server.uuid, {action: {'address': '172.24.4.10'}},
                             version='2.44')
            assert resp.status_int == 404


class TestNetworks:
    def test_index_and_show_at_235(self, app, neutron):
        net = neutron.add('networks', name='private')
        listed = call(app, 'GET', '/v2.1/os-networks', version=OLD).json['networks']
        assert listed[0]['id'] == net['id'] and listed[0]['label'] == 'private'
        assert listed[0]['cidr'] is None and 'vlan' not in listed[0]
        shown = call(app, 'GET', '/v2.1/os-networks/%s' % net['id'], token='admin:admin',
                     version=OLD).json['network']
        assert shown['label'] == 'private' and shown['vlan'] is None
        missing = call(app, 'GET', '/v2.1/os-networks/%s' % MISSING, version=OLD)
        assert missing.status_int == 404 and 'Network not found' in missing.text
