"""The security group proxies, a server's groups and the add/remove actions, over the
Neutron test double (and with no Neutron at all), and the groups in the server views."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from novalite.api.openstack import auth, faults, urlmap
from novalite.api.openstack.compute import routes, security_groups, server_actions, servers
from tests.unit.api.compute_api_double import ComputeAPIDouble
from tests.unit.api.conftest import call, make_flavor
from tests.unit.network import neutron_double
from tests.unit.network.neutron_double import NeutronDouble

OLD = '2.35'
GONE = '2.36'
IMAGE = '155d900f-4e14-4e4c-a73d-069cbf4541e6'
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
    make_flavor('1', 'm1.tiny')
    router = routes.APIRouterV21({
        'servers': servers.ServersController(compute),
        'server_actions': server_actions.ServerActionsController(compute),
        'server_security_groups': security_groups.ServerSecurityGroupController(compute)})
    return urlmap.URLMap({}, {'/v2.1': faults.FaultWrapper(auth.NoAuthMiddleware(router))})


def _server(compute: ComputeAPIDouble, neutron: NeutronDouble | None, *groups: str,
            ports: int = 1, **port: Any) -> str:
    """A server in a cell (it has an id) with ``ports`` ports in ``groups``."""
    instance = compute.add(id=len(compute.instances) + 1)
    for n in range(ports if neutron is not None else 0):
        neutron.add('ports', device_id=instance.uuid, security_groups=list(groups),
                    fixed_ips=[{'ip_address': '10.0.0.%d' % (n + 4)}], **port)
    return instance.uuid


class TestProxy:
    def test_group_lifecycle_at_235(self, app, neutron):
        created = call(app, 'POST', '/v2.1/os-security-groups', {'security_group': {
            'name': 'web', 'description': 'web servers'}}, version=OLD)
        assert created.status_int == 200, created.body
        group = created.json['security_group']
        assert group == {'id': group['id'], 'name': 'web', 'description': 'web servers',
                         'tenant_id': 'demo', 'rules': []}
        neutron.add('security-groups', name='theirs', project_id='other')
        listed = call(app, 'GET', '/v2.1/os-security-groups', version=OLD)
        assert [g['name'] for g in listed.json['security_groups']] == ['web']
        everyone = call(app, 'GET', '/v2.1/os-security-groups?all_tenants=1',
                        token='admin:admin', version=OLD)
        assert {g['name'] for g in everyone.json['security_groups']} == {'web', 'theirs'}
        base = '/v2.1/os-security-groups/%s' % group['id']
        assert call(app, 'GET', base, version=OLD).json['security_group']['id'] == group['id']
        updated = call(app, 'PUT', base, {'security_group': {
            'name': 'www', 'description': 'renamed'}}, version=OLD)
        assert updated.json['security_group']['name'] == 'www'
        assert call(app, 'DELETE', base, version=OLD).status_int == 202
        assert call(app, 'GET', base, version=OLD).status_int == 404

    def test_rules_at_235(self, app, neutron):
        group = neutron.add('security-groups', name='web', project_id='demo')
        source = neutron.add('security-groups', name='lb', project_id='demo')
        created = call(app, 'POST', '/v2.1/os-security-group-rules', {
            'security_group_rule': {'parent_group_id': group['id'], 'ip_protocol': 'tcp',
                                    'from_port': 80, 'to_port': 80, 'cidr': '10.0.0.0/8'}},
            version=OLD)
        assert created.status_int == 200, created.body
        rule = created.json['security_group_rule']
        assert rule == {'id': rule['id'], 'parent_group_id': group['id'],
                        'ip_protocol': 'tcp', 'from_port': 80, 'to_port': 80, 'group': {},
                        'ip_range': {'cidr': '10.0.0.0/8'}}
        from_group = call(app, 'POST', '/v2.1/os-security-group-rules', {
            'security_group_rule': {'parent_group_id': group['id'], 'ip_protocol': 'icmp',
                                    'group_id': source['id']}}, version=OLD)
        assert from_group.json['security_group_rule']['group'] == {'name': 'lb',
                                                                   'tenant_id': 'demo'}
        shown = call(app, 'GET', '/v2.1/os-security-groups/%s' % group['id'], version=OLD)
        assert len(shown.json['security_group']['rules']) == 2
        again = call(app, 'POST', '/v2.1/os-security-group-rules', {
            'security_group_rule': {'parent_group_id': group['id'], 'ip_protocol': 'tcp',
                                    'from_port': 80, 'to_port': 80, 'cidr': '10.0.0.0/8'}},
            version=OLD)
        assert again.status_int == 400 and 'already exists' in again.text
        path = '/v2.1/os-security-group-rules/%s' % rule['id']
        assert call(app, 'DELETE', path, version=OLD).status_int == 202
        assert call(app, 'DELETE', path, version=OLD).status_int == 404

    @pytest.mark.parametrize('rule,code,text', [
        ({'ip_protocol': 'tcp', 'from_port': 1}, 400, 'Not enough parameters'),
        ({'ip_protocol': 'tcp', 'from_port': 9, 'to_port': 1, 'cidr': '0.0.0.0/0'}, 400,
         'Invalid port range'),
        ({'ip_protocol': 'tcp', 'from_port': 1, 'to_port': 2, 'cidr': '10.0.0.0/0'}, 400,
         'Bad prefix'),
        ({'ip_protocol': 'tcp', 'from_port': 1, 'to_port': 2, 'cidr': 'ten'}, 400,
         'not a valid IP network'),
        ({'ip_protocol': 'tcp', 'group_id': MISSING}, 404, MISSING),
    ])
    def test_bad_rules(self, app, neutron, rule, code, text):
        group = neutron.add('security-groups', name='web', project_id='demo')
        resp = call(app, 'POST', '/v2.1/os-security-group-rules', {
            'security_group_rule': dict(rule, parent_group_id=group['id'])}, version=OLD)
        assert resp.status_int == code and text in resp.text, resp.text

    def test_errors(self, app, neutron):
        assert call(app, 'GET', '/v2.1/os-security-groups/nope', version=OLD).status_int \
            == 400
        assert call(app, 'GET', '/v2.1/os-security-groups/%s' % MISSING,
                    version=OLD).status_int == 404
        group = neutron.add('security-groups', name='busy', project_id='demo')
        neutron.add('ports', device_id='s1', security_groups=[group['id']])
        busy = call(app, 'DELETE', '/v2.1/os-security-groups/%s' % group['id'], version=OLD)
        assert busy.status_int == 400, busy.text
        assert call(app, 'POST', '/v2.1/os-security-groups', {'security_group': {
            'name': 'x'}}, version=OLD).status_int == 400

    @pytest.mark.parametrize('method,path', [
        ('GET', '/os-security-groups'), ('POST', '/os-security-groups'),
        ('GET', '/os-security-groups/%s' % MISSING),
        ('PUT', '/os-security-groups/%s' % MISSING),
        ('DELETE', '/os-security-groups/%s' % MISSING),
        ('POST', '/os-security-group-rules'),
        ('DELETE', '/os-security-group-rules/%s' % MISSING)])
    def test_gone_from_236(self, app, neutron, method, path):
        body = {'security_group': {'name': 'a', 'description': 'b'}} \
            if method in ('POST', 'PUT') else None
        resp = call(app, method, '/v2.1' + path, body, version=GONE)
        assert resp.status_int == 404
        assert neutron.requests == []

    def test_without_neutron_nothing_is_found(self, app):
        assert call(app, 'GET', '/v2.1/os-security-groups', version=OLD).json == {
            'security_groups': []}
        assert call(app, 'GET', '/v2.1/os-security-groups/%s' % MISSING,
                    version=OLD).status_int == 404
        assert call(app, 'POST', '/v2.1/os-security-groups', {'security_group': {
            'name': 'a', 'description': 'b'}}, version=OLD).status_int == 404
        assert call(app, 'POST', '/v2.1/os-security-group-rules', {'security_group_rule': {
            'parent_group_id': MISSING}}, version=OLD).status_int == 404


class TestServerGroups:
    def test_the_groups_of_its_ports_with_rules(self, app, compute, neutron):
        web = neutron.add('security-groups', name='web', project_id='demo')
        neutron.add('security-group-rules', security_group_id=web['id'],
                    direction='ingress', protocol='tcp', port_range_min=22,
                    port_range_max=22, remote_ip_prefix='0.0.0.0/0', remote_group_id=None)
        server = _server(compute, neutron, web['id'])
        resp = call(app, 'GET', '/v2.1/servers/%s/os-security-groups' % server,
                    version='latest')
        (group,) = resp.json['security_groups']
        assert group['name'] == 'web' and group['rules'][0]['from_port'] == 22

    def test_without_neutron_none(self, app, compute):
        server = _server(compute, None)
        resp = call(app, 'GET', '/v2.1/servers/%s/os-security-groups' % server)
        assert resp.json == {'security_groups': []}


class TestActions:
    def _act(self, app, server, action, name='web', **extra):
        return call(app, 'POST', '/v2.1/servers/%s/action' % server,
                    {action: dict({'name': name} if name is not None else {}, **extra)})

    def test_add_then_remove(self, app, compute, neutron):
        default = neutron.add('security-groups', name='default', project_id='demo')
        web = neutron.add('security-groups', name='web', project_id='demo')
        server = _server(compute, neutron, default['id'], ports=2)
        resp = self._act(app, server, 'addSecurityGroup')
        assert resp.status_int == 202 and not resp.body
        ports = neutron.store['ports'].values()
        assert all(p['security_groups'] == [default['id'], web['id']] for p in ports)
        shown = call(app, 'GET', '/v2.1/servers/%s' % server).json['server']
        assert shown['security_groups'] == [{'name': 'default'}, {'name': 'web'}] * 2
        assert self._act(app, server, 'removeSecurityGroup').status_int == 202
        assert all(p['security_groups'] == [default['id']] for p in ports)
        again = self._act(app, server, 'removeSecurityGroup')
        assert again.status_int == 404 and 'not associated' in again.text

    def test_codes(self, app, compute, neutron):
        server = _server(compute, neutron)
        assert self._act(app, server, 'addSecurityGroup', 'nope').status_int == 404
        neutron.add('security-groups', name='web', project_id='demo')
        portless = _server(compute, None)
        assert self._act(app, portless, 'addSecurityGroup').status_int == 404
        closed = _server(compute, neutron, port_security_enabled=False)
        assert self._act(app, closed, 'addSecurityGroup').status_int == 400
        assert self._act(app, server, 'addSecurityGroup', '  ').status_int == 400
        assert self._act(app, server, 'addSecurityGroup', None).status_int == 400
        neutron.add('security-groups', name='web', project_id='demo')
        assert self._act(app, server, 'addSecurityGroup').status_int == 409

    def test_without_neutron_404(self, app, compute):
        server = _server(compute, None)
        resp = self._act(app, server, 'addSecurityGroup')
        assert resp.status_int == 404
        assert resp.json['itemNotFound']['message'] == \
            'Security group web is not found for project demo'


class TestServerView:
    def test_a_list_asks_neutron_twice(self, app, compute, neutron):
        default = neutron.add('security-groups', name='default', project_id='demo')
        ids = [_server(compute, neutron, default['id']) for _ in range(20)]
        resp = call(app, 'GET', '/v2.1/servers/detail')
        listed = {s['id']: s for s in resp.json['servers']}
        assert all(listed[i]['security_groups'] == [{'name': 'default'}] for i in ids)
        assert len(neutron.calls('GET')) == 2

    def test_no_ports_no_key_and_build_requests_ask_nothing(self, app, compute, neutron):
        _server(compute, neutron, ports=0)
        building = compute.add()   # a build request: no id, no ports yet
        resp = call(app, 'GET', '/v2.1/servers/detail')
        assert all('security_groups' not in s for s in resp.json['servers'])
        assert len(neutron.calls('GET')) == 1
        call(app, 'GET', '/v2.1/servers/%s' % building.uuid)
        assert len(neutron.calls('GET')) == 1

    def test_without_neutron_no_key(self, app, compute):
        server = _server(compute, None)
        assert 'security_groups' not in call(app, 'GET', '/v2.1/servers/%s'
                                             % server).json['server']

    def test_create_answers_the_groups_requested(self, app):
        body = {'server': {'name': 'vm', 'imageRef': IMAGE, 'flavorRef': '1',
                           'security_groups': [{'name': 'web'}, {'name': 'db'}]}}
        resp = call(app, 'POST', '/v2.1/servers', body)
        assert resp.json['server']['security_groups'] == [{'name': 'web'}, {'name': 'db'}]
        del body['server']['security_groups']
        resp = call(app, 'POST', '/v2.1/servers', body)
        assert resp.json['server']['security_groups'] == [{'name': 'default'}]
