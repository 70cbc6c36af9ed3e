"""Security groups in Nova's shape: rules checked as Nova checks them, Neutron's groups
and rules converted, and a server's groups read and changed through its ports."""
from __future__ import annotations

import pytest

from novalite import exception
from novalite.network import client
from novalite.network import security_group_api as sg_api
from novalite.network import server_security_groups as server_sgs
from tests.unit.network.neutron_double import NeutronDouble


class TestNewIngressRule:
    def test_a_cidr_rule_needs_protocol_and_ports(self):
        assert sg_api.new_ingress_rule(None, None, None, cidr='10.0.0.0/8') is None
        assert sg_api.new_ingress_rule('tcp', 22, None, cidr='10.0.0.0/8') is None
        assert sg_api.new_ingress_rule('tcp', '22', '23', cidr='10.0.0.0/8') == {
            'cidr': '10.0.0.0/8', 'protocol': 'tcp', 'from_port': 22, 'to_port': 23}

    def test_a_group_rule_opens_the_whole_protocol(self):
        assert sg_api.new_ingress_rule('TCP', None, None, group_id='g') == {
            'group_id': 'g', 'protocol': 'TCP', 'from_port': 1, 'to_port': 65535}
        assert sg_api.new_ingress_rule('icmp', None, None, group_id='g') == {
            'group_id': 'g', 'protocol': 'icmp', 'from_port': -1, 'to_port': -1}
        assert sg_api.new_ingress_rule(None, None, None, group_id='g') == {'group_id': 'g'}

    @pytest.mark.parametrize('protocol,low,high,error', [
        ('gre', 1, 2, exception.InvalidIpProtocol),
        ('tcp', 'a', 2, exception.InvalidInput),
        ('tcp', 30, 20, exception.InvalidPortRange),
        ('udp', 0, 20, exception.InvalidPortRange),
        ('icmp', 256, 0, exception.InvalidPortRange),
    ])
    def test_bad_rules_are_400(self, protocol, low, high, error):
        with pytest.raises(error) as caught:
            sg_api.new_ingress_rule(protocol, low, high, cidr='0.0.0.0/0')
        assert caught.value.code == 400

    @pytest.mark.parametrize('cidr', ['10.0.0.0', 'not-a-cidr', '10.0.0.300/8'])
    def test_bad_cidrs(self, cidr):
        with pytest.raises(exception.InvalidCidr):
            sg_api.parse_cidr(cidr)

    def test_cidr_default_and_quoting(self):
        assert sg_api.parse_cidr(None) == '0.0.0.0/0'
        assert sg_api.parse_cidr('10.0.0.0%2F8') == '10.0.0.0/8'


def test_neutron_group_to_nova_keeps_ingress_rules_only():
    group = {'id': 'g1', 'name': 'web', 'description': 'd', 'project_id': 'p1',
             'security_group_rules': [
                 {'id': 'r1', 'security_group_id': 'g1', 'direction': 'ingress',
                  'protocol': 'tcp', 'port_range_min': None, 'port_range_max': None,
                  'remote_group_id': None, 'remote_ip_prefix': '10.0.0.0/8'},
                 {'id': 'r2', 'security_group_id': 'g1', 'direction': 'ingress',
                  'protocol': 'icmp', 'port_range_min': 8, 'port_range_max': 0,
                  'remote_group_id': 'g1', 'remote_ip_prefix': None},
                 {'id': 'r3', 'security_group_id': 'g1', 'direction': 'egress',
                  'protocol': None, 'remote_group_id': None, 'remote_ip_prefix': None}]}
    nova = sg_api.to_nova_group(group)
    assert [r['id'] for r in nova['rules']] == ['r1', 'r2']
    assert nova['rules'][0] == {'id': 'r1', 'parent_group_id': 'g1', 'protocol': 'tcp',
                                'from_port': 1, 'to_port': 65535, 'group_id': None,
                                'cidr': '10.0.0.0/8'}
    assert (nova['rules'][1]['from_port'], nova['rules'][1]['to_port']) == (8, 0)


def test_a_rule_is_created_once_and_its_source_named(neutron: NeutronDouble):
    api = client.Client(None)
    group = sg_api.create(api, 'p1', 'web', 'the web servers')
    assert group['project_id'] == 'p1' and group['rules'] == []   # egress only
    rule = sg_api.new_ingress_rule('tcp', 80, 80, cidr='0.0.0.0/0')
    assert rule is not None
    rule['parent_group_id'] = group['id']
    created = sg_api.create_rule(api, 'p1', group, rule)
    assert (created['protocol'], created['from_port'], created['cidr']) == \
        ('tcp', 80, '0.0.0.0/0')
    again = sg_api.get(api, group['id'])
    with pytest.raises(exception.Invalid, match='already exists'):
        sg_api.create_rule(api, 'p1', again, rule)
    other = neutron.add('security-groups', name='other', project_id='p2')
    neutron.add('security-group-rules', security_group_id=group['id'],
                direction='ingress', protocol=None, remote_group_id=other['id'],
                remote_ip_prefix=None)
    names = sg_api.names_of(api, [sg_api.get(api, group['id'])])
    assert names[other['id']] == {'name': 'other', 'tenant_id': 'p2'}


def test_a_group_in_use_is_not_deleted_400(neutron: NeutronDouble):
    api = client.Client(None)
    group = neutron.add('security-groups', name='busy')
    neutron.add('ports', device_id='s1', security_groups=[group['id']])
    with pytest.raises(exception.Invalid) as caught:
        sg_api.destroy(api, group['id'])
    assert caught.value.code == 400
    with pytest.raises(exception.SecurityGroupNotFound):
        sg_api.destroy(api, '7f1b0f7e-0000-4000-8000-000000000000')


class TestServerGroups:
    def test_bindings_of_many_servers_take_two_queries(self, neutron: NeutronDouble):
        web = neutron.add('security-groups', name='web', project_id='p1')
        default = neutron.add('security-groups', name='default', project_id='p1')
        servers = ['00000000-0000-4000-8000-%012d' % n for n in range(20)]
        for server in servers[:15]:
            neutron.add('ports', device_id=server, security_groups=[default['id']])
        neutron.add('ports', device_id=servers[0], security_groups=[web['id'], default['id']])
        found = server_sgs.bindings(client.Client(None), servers)
        assert found[servers[0]] == [{'name': 'default'}, {'name': 'web'},
                                     {'name': 'default'}]
        assert found[servers[1]] == [{'name': 'default'}]
        assert servers[16] not in found
        assert len(neutron.calls('GET')) == 2

    def test_no_port_no_group_query(self, neutron: NeutronDouble):
        assert server_sgs.bindings(client.Client(None), ['s1', 's2']) == {}
        assert neutron.calls('GET', 'security-groups') == []

    def test_ids_beyond_one_query_are_split(self, neutron: NeutronDouble):
        servers = ['00000000-0000-4000-8000-%012d' % n for n in range(130)]
        server_sgs.bindings(client.Client(None), servers)
        assert len(neutron.calls('GET', 'ports')) == 3

    def test_add_and_remove_change_every_port(self, neutron: NeutronDouble):
        api = client.Client(None)
        default = neutron.add('security-groups', name='default', project_id='p1')
        web = neutron.add('security-groups', name='web', project_id='p1')
        ports = [neutron.add('ports', device_id='s1', security_groups=[default['id']],
                             fixed_ips=[{'ip_address': '10.0.0.%d' % n}]) for n in (4, 5)]
        server_sgs.add_to_server(api, 'p1', 's1', 'web')
        assert all(p['security_groups'] == [default['id'], web['id']] for p in ports)
        with pytest.raises(exception.SecurityGroupCannotBeApplied):  # already there
            server_sgs.add_to_server(api, 'p1', 's1', web['id'])
        server_sgs.remove_from_server(api, 'p1', 's1', 'web')
        assert all(p['security_groups'] == [default['id']] for p in ports)
        with pytest.raises(exception.SecurityGroupNotFound, match='not associated'):
            server_sgs.remove_from_server(api, 'p1', 's1', 'web')

    def test_errors(self, neutron: NeutronDouble):
        api = client.Client(None)
        with pytest.raises(exception.SecurityGroupNotFound,
                           match='Security group nope is not found for project p1'):
            server_sgs.add_to_server(api, 'p1', 's1', 'nope')
        neutron.add('security-groups', name='web', project_id='p1')
        with pytest.raises(exception.SecurityGroupNotFound, match='on any ports'):
            server_sgs.add_to_server(api, 'p1', 's1', 'web')
        neutron.add('ports', device_id='s1', port_security_enabled=False,
                    fixed_ips=[{'ip_address': '10.0.0.4'}])
        with pytest.raises(exception.SecurityGroupCannotBeApplied) as caught:
            server_sgs.add_to_server(api, 'p1', 's1', 'web')
        assert caught.value.code == 400
        neutron.add('security-groups', name='web', project_id='p1')
        with pytest.raises(exception.NoUniqueMatch) as conflict:
            server_sgs.add_to_server(api, 'p1', 's1', 'web')
        assert conflict.value.code == 409

    def test_the_projects_group_first_then_any_visible(self, neutron: NeutronDouble):
        mine = neutron.add('security-groups', name='web', project_id='p1')
        neutron.add('security-groups', name='web', project_id='p2')
        shared = neutron.add('security-groups', name='ops', project_id='')
        api = client.Client(None)
        assert server_sgs.find_id(api, 'p1', 'web') == mine['id']
        assert server_sgs.find_id(api, 'p1', 'ops') == shared['id']
        with pytest.raises(exception.NoUniqueMatch):
            server_sgs.find_id(api, 'p3', 'web')
