"""A create's ``networks`` checked before anything is written: Nova's errors."""
from __future__ import annotations

import pytest

from novalite import context as nl_context
from novalite import exception
from novalite.network import requests
from tests.unit.network.neutron_double import NeutronDouble

CONTEXT = nl_context.RequestContext(user_id='u1', project_id='p1', roles=['member'])
ADMIN = nl_context.RequestContext(user_id='a1', project_id='p1', roles=['admin'])


def _network(neutron: NeutronDouble, name: str = 'private', **extra) -> dict:
    return neutron.add('networks', name=name, subnets=['s-%s' % name], **extra)


def test_none_and_nothing_without_networks(neutron):
    assert requests.resolve(CONTEXT, 'none', 1, 1) == ([], 1)
    assert requests.resolve(CONTEXT, None, 1, 1) == ([], 1)


def test_the_only_network_is_taken_and_two_are_ambiguous(neutron):
    net = _network(neutron)
    assert requests.resolve(CONTEXT, 'auto', 1, 1)[0] == [{'network_id': net['id']}]
    _network(neutron, 'second')
    with pytest.raises(exception.NetworkAmbiguous):
        requests.resolve(CONTEXT, None, 1, 1)


def test_unknown_networks_and_ports_and_ports_in_use(neutron):
    net = _network(neutron)
    with pytest.raises(exception.NetworkNotFound):
        requests.resolve(CONTEXT, [{'uuid': 'missing'}], 1, 1)
    with pytest.raises(exception.PortNotFound):
        requests.resolve(CONTEXT, [{'port': 'missing'}], 1, 1)
    used = neutron.add('ports', network_id=net['id'], device_id='another-server',
                       fixed_ips=[{'ip_address': '10.0.0.4', 'subnet_id': 's'}])
    with pytest.raises(exception.PortInUse):
        requests.resolve(CONTEXT, [{'port': used['id']}], 1, 1)
    free = neutron.add('ports', network_id=net['id'],
                       fixed_ips=[{'ip_address': '10.0.0.5', 'subnet_id': 's'}])
    resolved, count = requests.resolve(CONTEXT, [{'port': free['id'], 'tag': 't'}], 1, 1)
    assert resolved == [{'network_id': net['id'], 'port_id': free['id'], 'fixed_ip': None,
                         'tag': 't'}] and count == 1
    with pytest.raises(exception.InvalidInput, match='multiple instances'):
        requests.resolve(CONTEXT, [{'port': free['id']}], 1, 2)


def test_a_network_without_subnet_and_a_fixed_ip_for_several(neutron):
    bare = neutron.add('networks', name='bare', subnets=[])
    with pytest.raises(exception.NetworkRequiresSubnet):
        requests.resolve(CONTEXT, [{'uuid': bare['id']}], 1, 1)
    net = _network(neutron)
    with pytest.raises(exception.InvalidFixedIpAndMaxCountRequest):
        requests.resolve(CONTEXT, [{'uuid': net['id'], 'fixed_ip': '10.0.0.8'}], 1, 2)


def test_an_external_network_is_refused_to_non_admins(neutron):
    public = _network(neutron, 'public', **{'router:external': True})
    with pytest.raises(exception.ExternalNetworkAttachForbidden):
        requests.resolve(CONTEXT, [{'uuid': public['id']}], 1, 1)
    # network:attach_external_network: administrators by default.
    assert requests.resolve(ADMIN, [{'uuid': public['id']}], 1, 1)[1] == 1


def test_unknown_security_groups_are_refused(neutron):
    net = _network(neutron)
    with pytest.raises(exception.SecurityGroupNotFound):
        requests.resolve(CONTEXT, [{'uuid': net['id']}], 1, 1, ['no-such'])
    assert requests.resolve(CONTEXT, [{'uuid': net['id']}], 1, 1, ['default'])[1] == 1


def test_without_neutron_only_none_and_auto(monkeypatch):
    with pytest.raises(exception.InvalidInput, match='no network service'):
        requests.resolve(CONTEXT, [{'uuid': 'n1'}], 1, 1)
    with pytest.raises(exception.InvalidInput, match='security group'):
        requests.resolve(CONTEXT, 'auto', 1, 1, ['web'])
    assert requests.resolve(CONTEXT, 'auto', 1, 3) == ([], 3)
