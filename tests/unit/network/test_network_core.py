"""The compute host's port work, the network model and the waiting for Neutron's events,
against the in-memory Neutron client double."""
from __future__ import annotations

import threading
import time
import types
import uuid

import pytest

from novalite import exception
from novalite.compute import instance_events
from novalite.conf import CONF
from novalite.network import async_info, model, neutron
from novalite.network import client as neutron_client
from tests.unit.network.neutron_client_double import NeutronClientDouble


def _instance() -> types.SimpleNamespace:
    return types.SimpleNamespace(uuid=str(uuid.uuid4()), project_id='p1',
                                 availability_zone=None, host='hostA')


@pytest.fixture
def double() -> NeutronClientDouble:
    return NeutronClientDouble()


@pytest.fixture
def api(double: NeutronClientDouble) -> neutron.API:
    return neutron.API(double)  # type: ignore[arg-type]


def test_allocate_binds_new_and_user_ports_to_the_host(double, api):
    net = double.add_network('private')
    user_port = double.add_port(net)
    instance = _instance()
    info = api.allocate_for_instance(None, instance, [
        {'network_id': net['id'], 'tag': 'nic1'}, {'port_id': user_port['id']}], 'hostA')
    assert [v['preserve_on_delete'] for v in info] == [False, True]
    assert info[0]['tag'] == 'nic1'
    for vif in info:
        port = double.ports[vif['id']]
        assert port['binding:host_id'] == 'hostA'
        assert port['device_id'] == instance.uuid
        assert port['device_owner'] == 'compute:nova'
        assert vif['type'] == 'ovs' and vif['devname'] == model.devname(vif['id'])
        assert vif['network']['label'] == 'private'
        assert vif['network']['meta']['mtu'] == 1442
    # One call makes and binds each new port; networks and subnets are read once;
    # floating IPs only of the user's port (a port made just now has none).
    names = [name for name, _ in double.calls]
    assert names.count('create_port') == 1 and names.count('update_port') == 1
    assert names.count('list_networks') == 1 and names.count('list_subnets') == 1
    assert [f for n, f in double.calls if n == 'list_floatingips'] == [
        {'port_id': [user_port['id']]}]


def test_a_boot_on_one_network_asks_neutron_three_times(double, api):
    net = double.add_network()
    api.allocate_for_instance(None, _instance(), [{'network_id': net['id']}], 'hostA')
    assert [name for name, _ in double.calls] == ['create_port', 'list_networks',
                                                  'list_subnets']


def test_a_failed_binding_releases_what_was_done(double, api):
    net = double.add_network()
    user_port = double.add_port(net)
    original = double._bind

    def fail_second(port):
        original(port)
        if port['id'] != user_port['id'] and port.get('binding:host_id'):
            port['binding:vif_type'] = 'binding_failed'
    double._bind = fail_second  # type: ignore[method-assign]
    instance = _instance()
    with pytest.raises(exception.PortBindingFailed):
        api.allocate_for_instance(None, instance, [
            {'port_id': user_port['id']}, {'network_id': net['id']}], 'hostA')
    # The port made here is gone, the user's is kept and unbound.
    assert list(double.ports) == [user_port['id']]
    kept = double.ports[user_port['id']]
    assert kept['device_id'] == '' and not kept['binding:host_id']


def test_deallocate_deletes_ours_and_unbinds_the_users(double, api):
    net = double.add_network()
    user_port = double.add_port(net)
    instance = _instance()
    info = api.allocate_for_instance(None, instance, [
        {'network_id': net['id']}, {'port_id': user_port['id']}], 'hostA')
    api.deallocate_for_instance(None, instance, info)
    assert list(double.ports) == [user_port['id']]
    assert double.ports[user_port['id']]['device_id'] == ''


def test_neutron_down_during_deallocate_raises_after_trying_every_port(double, api):
    net = double.add_network()
    instance = _instance()
    api.allocate_for_instance(None, instance, [{'network_id': net['id']}] * 2, 'hostA')
    down = exception.NeutronConnectionFailed(server='neutron', reason='refused')
    double.fail['delete_port'] = [down]
    with pytest.raises(exception.NeutronConnectionFailed):
        api.deallocate_for_instance(None, instance, [])
    assert len(double.ports) == 1  # the second was still deleted


def test_bind_ports_to_host_moves_the_binding(double, api):
    net = double.add_network()
    instance = _instance()
    info = api.allocate_for_instance(None, instance, [{'network_id': net['id']}], 'hostA')
    moved = api.bind_ports_to_host(None, instance, 'hostB', info)
    assert double.ports[info[0]['id']]['binding:host_id'] == 'hostB'
    assert moved[0]['id'] == info[0]['id']


def test_addresses_of_the_server_view():
    vif = model.VIF(id='p1', address='fa:16:3e:00:00:01', network=model.Network(
        id='n1', label='private', subnets=[model.Subnet(cidr='10.0.0.0/24', version=4, ips=[
            model.IP(address='10.0.0.5', type='fixed', version=4, floating_ips=[
                model.IP(address='172.24.4.9', type='floating', version=4)])])]))
    assert model.addresses([vif]) == {'private': [
        {'version': 4, 'addr': '10.0.0.5', 'OS-EXT-IPS:type': 'fixed',
         'OS-EXT-IPS-MAC:mac_addr': 'fa:16:3e:00:00:01'},
        {'version': 4, 'addr': '172.24.4.9', 'OS-EXT-IPS:type': 'floating',
         'OS-EXT-IPS-MAC:mac_addr': 'fa:16:3e:00:00:01'}]}
    assert model.devname('0123456789abcdef') == 'tap0123456789a'


def test_async_network_info_waits_on_first_use_and_raises_the_allocation_error():
    gate = threading.Event()

    def allocate() -> list:
        gate.wait(5)
        return [{'id': 'p1'}]
    pending = async_info.AsyncNetworkInfo(allocate)
    assert repr(pending) == '<network info pending>'
    gate.set()
    assert [v['id'] for v in pending] == ['p1'] and len(pending) == 1
    assert pending.wait() == [{'id': 'p1'}]

    def broken() -> list:
        raise exception.NeutronConnectionFailed(server='neutron', reason='refused')
    failed = async_info.AsyncNetworkInfo(broken)
    with pytest.raises(exception.NeutronConnectionFailed):
        list(failed)
    assert failed.wait_quietly() == []


def _virtapi() -> tuple[instance_events.InstanceEvents, instance_events.ComputeVirtAPI]:
    events = instance_events.InstanceEvents()
    return events, instance_events.ComputeVirtAPI(events)


def test_the_wait_ends_when_every_event_came_and_ignores_a_second_copy():
    events, virtapi = _virtapi()
    instance = _instance()
    keys = [('network-vif-plugged', 'p1'), ('network-vif-plugged', 'p2')]
    with virtapi.wait_for_instance_event(instance, keys, deadline=5):
        assert events.pop(instance.uuid, 'network-vif-plugged', 'p1', 'completed')
        threading.Timer(0.1, events.pop, (instance.uuid, 'network-vif-plugged', 'p2',
                                          'completed')).start()
    # Neutron sends network-vif-plugged twice: the second finds nobody waiting.
    assert not events.pop(instance.uuid, 'network-vif-plugged', 'p1', 'completed')


def test_a_timeout_fails_the_wait_only_when_fatal():
    events, virtapi = _virtapi()
    instance = _instance()
    keys = [('network-vif-plugged', 'p1')]
    with pytest.raises(exception.VirtualInterfaceCreateException, match='p1'):
        with virtapi.wait_for_instance_event(instance, keys, deadline=0):
            pass
    CONF.set_override('vif_plugging_is_fatal', False)
    try:
        started = time.monotonic()
        with virtapi.wait_for_instance_event(instance, keys, deadline=0):
            pass
        assert time.monotonic() - started < 1
    finally:
        CONF.clear_override('vif_plugging_is_fatal')


def test_a_failed_event_goes_to_the_error_callback_and_a_delete_ends_the_wait():
    events, virtapi = _virtapi()
    instance = _instance()
    seen = []
    with virtapi.wait_for_instance_event(instance, [('network-vif-plugged', 'p1')], 5,
                                         error_callback=lambda n, i: seen.append(n)):
        events.pop(instance.uuid, 'network-vif-plugged', 'p1', 'failed')
    assert seen == ['network-vif-plugged']
    with pytest.raises(instance_events.WaitCancelled):
        with virtapi.wait_for_instance_event(instance, [('network-vif-plugged', 'p1')], 5):
            events.clear(instance.uuid)


def test_the_client_maps_neutrons_errors(monkeypatch):
    class Adapter:
        def request(self, url, method, **kwargs):
            return types.SimpleNamespace(
                status_code=404, content=b'x', text='x',
                json=lambda: {'NeutronError': {'message': 'Port p9 could not be found.',
                                               'type': 'PortNotFound'}})
    monkeypatch.setattr(neutron_client, '_ADAPTER', Adapter())
    with pytest.raises(neutron_client.NeutronNotFound) as caught:
        neutron_client.Client(None, admin=True).show_port('p9')
    assert caught.value.neutron_type == 'PortNotFound'
    assert 'could not be found' in caught.value.format_message()


def test_the_cache_names_the_ports_groups_or_says_it_cannot():
    vifs = [model.VIF(id='p1', security_groups=[{'id': 'g1', 'name': 'web'},
                                                {'id': 'g2', 'name': ''}]),
            model.VIF(id='p2', security_groups=[{'id': 'g1', 'name': 'web'}])]
    assert model.security_group_names(vifs) == [{'name': 'web'}, {'name': 'g2'},
                                                {'name': 'web'}]
    assert model.security_group_names([]) == []
    assert model.security_group_names([model.VIF(id='p3')]) is None


def test_the_network_info_carries_the_ports_groups(double, api):
    net = double.add_network()
    port = double.add_port(net, security_groups=['sg-default'])
    info = api.network_info_for_ports([double.ports[port['id']]], [])
    assert info[0]['security_groups'] == [{'id': 'sg-default', 'name': 'default'}]
