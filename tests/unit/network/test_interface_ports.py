"""The port work of one interface: attach requests checked at the API, one port
released (deleted or kept), fixed IPs added to and removed from a server's port."""
from __future__ import annotations

import types
import uuid

import pytest

from novalite import context as nl_context
from novalite import exception
from novalite.network import client as neutron_client
from novalite.network import neutron, requests
from tests.unit.network.neutron_client_double import NeutronClientDouble


@pytest.fixture
def neutron_double(monkeypatch) -> NeutronClientDouble:
    """The double, as every ``Client`` the code makes (user or admin)."""
    double = NeutronClientDouble()
    monkeypatch.setattr(neutron_client, 'configured', lambda: True)
    monkeypatch.setattr(neutron_client, 'Client', lambda context, admin=False: double)
    return double


@pytest.fixture
def ctxt() -> nl_context.RequestContext:
    return nl_context.RequestContext(user_id='u1', project_id='p1', roles=['member'])


def _instance() -> types.SimpleNamespace:
    return types.SimpleNamespace(uuid=str(uuid.uuid4()), project_id='p1',
                                 availability_zone=None, host='h1')


# -- resolve_attach: the API's checks ---------------------------------------------------

def test_attach_by_network_is_checked_and_resolved(neutron_double, ctxt):
    net = neutron_double.add_network()
    request = requests.resolve_attach(ctxt, net['id'], None, '10.0.0.9', 'nic1')
    assert request == {'network_id': net['id'], 'port_id': None, 'fixed_ip': '10.0.0.9',
                       'tag': 'nic1'}


def test_attach_without_network_or_port_takes_the_only_network(neutron_double, ctxt):
    net = neutron_double.add_network()
    assert requests.resolve_attach(ctxt, None, None)['network_id'] == net['id']
    neutron_double.add_network('second', '10.1.0.0/24')
    with pytest.raises(exception.NetworkAmbiguous):
        requests.resolve_attach(ctxt, None, None)


def test_attach_without_any_network_says_none_is_available(neutron_double, ctxt):
    with pytest.raises(exception.InterfaceAttachFailedNoNetwork) as err:
        requests.resolve_attach(ctxt, None, None)
    assert "project 'p1'" in err.value.format_message()


def test_attach_of_a_port_takes_its_network(neutron_double, ctxt):
    net = neutron_double.add_network()
    port = neutron_double.add_port(net)
    request = requests.resolve_attach(ctxt, None, port['id'])
    assert (request['port_id'], request['network_id']) == (port['id'], net['id'])


@pytest.mark.parametrize('case,error', [
    ('port in use', exception.PortInUse),
    ('no port', exception.PortNotFound),
    ('no network', exception.NetworkNotFound),
    ('no subnet', exception.NetworkRequiresSubnet),
    ('address taken', exception.FixedIpAlreadyInUse),
    ('port quota', exception.PortLimitExceeded),
])
def test_attach_refusals(neutron_double, ctxt, case, error):
    net = neutron_double.add_network()
    network_id, port_id, fixed_ip = net['id'], None, None
    if case == 'port in use':
        network_id, port_id = None, neutron_double.add_port(net, device_id='other')['id']
    elif case == 'no port':
        network_id, port_id = None, str(uuid.uuid4())
    elif case == 'no network':
        network_id = str(uuid.uuid4())
    elif case == 'no subnet':
        network_id = neutron_double.add_network('bare', cidr=None)['id']
    elif case == 'address taken':
        fixed_ip = neutron_double.add_port(net)['fixed_ips'][0]['ip_address']
    elif case == 'port quota':
        neutron_double.add_port(net, project_id='p1')
        neutron_double.port_quota = 1
    with pytest.raises(error):
        requests.resolve_attach(ctxt, network_id, port_id, fixed_ip)


def test_attach_without_neutron_is_refused(monkeypatch, ctxt):
    monkeypatch.setattr(neutron_client, 'configured', lambda: False)
    with pytest.raises(exception.InvalidInput) as err:
        requests.resolve_attach(ctxt, str(uuid.uuid4()), None)
    assert 'no network service' in err.value.format_message()


# -- the compute host's port work ---------------------------------------------------------

def test_a_port_made_for_the_server_is_deleted_a_users_port_unbound(neutron_double, ctxt):
    api = neutron.API(neutron_double)
    instance = _instance()
    net = neutron_double.add_network()
    users = neutron_double.add_port(net)
    info = api.allocate_for_instance(ctxt, instance, [{'network_id': net['id']},
                                                      {'port_id': users['id']}], 'h1')
    made, kept = info
    assert made['type'] == kept['type'] == 'ovs' and kept['preserve_on_delete']
    api.deallocate_port_for_instance(ctxt, instance, made)
    api.deallocate_port_for_instance(ctxt, instance, kept)
    assert list(neutron_double.ports) == [users['id']]
    left = neutron_double.ports[users['id']]
    assert (left['device_id'], left['binding:host_id'], left['binding:vif_type']) == \
        ('', None, 'unbound')


def test_releasing_a_port_already_gone_is_done(neutron_double, ctxt):
    api = neutron.API(neutron_double)
    api.deallocate_port_for_instance(ctxt, _instance(), {'id': str(uuid.uuid4())})


def test_a_fixed_ip_is_added_to_the_servers_port_on_the_network(neutron_double, ctxt):
    api = neutron.API(neutron_double)
    instance = _instance()
    net = neutron_double.add_network()
    current = api.allocate_for_instance(ctxt, instance, [{'network_id': net['id']}], 'h1')
    current[0]['tag'] = 'kept'
    info = api.add_fixed_ip_to_instance(ctxt, instance, net['id'], current)
    ips = [ip['address'] for subnet in info[0]['network']['subnets'] for ip in subnet['ips']]
    assert len(info) == 1 and len(ips) == 2 and info[0]['tag'] == 'kept'
    info = api.remove_fixed_ip_from_instance(ctxt, instance, ips[1], info)
    assert [ip['address'] for subnet in info[0]['network']['subnets']
            for ip in subnet['ips']] == ips[:1]


def test_no_fixed_ip_without_a_port_on_the_network(neutron_double, ctxt):
    api = neutron.API(neutron_double)
    other = neutron_double.add_network()
    with pytest.raises(exception.NetworkNotFoundForInstance):
        api.add_fixed_ip_to_instance(ctxt, _instance(), other['id'], [])


def test_no_fixed_ip_when_the_subnet_is_full(neutron_double, ctxt):
    api = neutron.API(neutron_double)
    instance = _instance()
    net = neutron_double.add_network(cidr='10.9.0.0/30')   # one address to give
    current = api.allocate_for_instance(ctxt, instance, [{'network_id': net['id']}], 'h1')
    with pytest.raises(exception.NetworkNotFoundForInstance):
        api.add_fixed_ip_to_instance(ctxt, instance, net['id'], current)


def test_removing_an_address_the_server_lacks(neutron_double, ctxt):
    api = neutron.API(neutron_double)
    with pytest.raises(exception.FixedIpNotFoundForInstance) as err:
        api.remove_fixed_ip_from_instance(ctxt, _instance(), '10.0.0.77', [])
    assert "'10.0.0.77'" in err.value.format_message()
