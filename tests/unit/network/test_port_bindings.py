"""A live migration's port bindings (Neutron's ``binding-extended``): an inactive binding
on the destination beside the source's, activated once the guest runs there, the other
end's deleted; against the Neutron client double, and through the real client against
the REST double."""
from __future__ import annotations

import types
import uuid
from typing import Any

import pytest

from novalite import exception
from novalite.network import client as neutron_client
from novalite.network import model, neutron
from novalite.network.neutron import API as NeutronAPI
from tests.unit.network.neutron_client_double import NeutronClientDouble
from tests.unit.network.neutron_double import NeutronDouble


def _instance() -> types.SimpleNamespace:
    return types.SimpleNamespace(uuid=str(uuid.uuid4()), project_id='p1',
                                 availability_zone=None, host='hostA')


@pytest.fixture
def double() -> NeutronClientDouble:
    return NeutronClientDouble()


@pytest.fixture
def api(double: NeutronClientDouble) -> neutron.API:
    return neutron.API(double)  # type: ignore[arg-type]


def _server(double: NeutronClientDouble, api: neutron.API, ports: int = 2
            ) -> tuple[types.SimpleNamespace, model.NetworkInfo]:
    """A server on hostA: a port novalite made (tagged) and, with two, the user's."""
    net = double.add_network()
    instance = _instance()
    requests: list[Any] = [{'network_id': net['id'], 'tag': 'nic1'}]
    if ports > 1:
        requests.append({'port_id': double.add_port(net)['id']})
    info = api.allocate_for_instance(None, instance, requests, 'hostA')
    double.calls.clear()
    return instance, info


def _names(double: NeutronClientDouble) -> list[str]:
    return [name for name, _ in double.calls]


def _down() -> exception.NeutronConnectionFailed:
    return exception.NeutronConnectionFailed(server='neutron', reason='refused')


def _failing_for(monkeypatch: pytest.MonkeyPatch, double: NeutronClientDouble,
                 port_id: str, error: Exception) -> None:
    """The double's create_port_binding raises ``error`` for ``port_id`` only."""
    create = double.create_port_binding

    def create_port_binding(pid: str, binding: dict[str, Any]) -> dict[str, Any]:
        if pid == port_id:
            double.calls.append(('create_port_binding', (pid, binding)))
            raise error
        return create(pid, binding)
    monkeypatch.setattr(double, 'create_port_binding', create_port_binding)


# -- the extension ------------------------------------------------------------------------

def test_the_extension_is_seen_and_the_list_kept_for_a_while(double, api):
    assert api.supports_port_binding_extension(None)
    assert api.supports_port_binding_extension(None)
    assert _names(double) == ['list_extensions']
    # Past the TTL, Neutron is asked again (and may have lost the extension).
    double.extensions.remove(neutron.BINDING_EXTENDED)
    api._extensions.expire(api._extensions.timer() + neutron.EXTENSION_TTL)
    assert not api.supports_port_binding_extension(None)
    assert _names(double) == ['list_extensions', 'list_extensions']


def test_an_unreachable_neutron_is_not_taken_for_no_extension(double, api):
    double.fail['list_extensions'] = [_down()]
    with pytest.raises(exception.NeutronConnectionFailed):
        api.supports_port_binding_extension(None)
    assert api.supports_port_binding_extension(None)


# -- creating the destination's bindings --------------------------------------------------

def test_bindings_on_the_destination_are_inactive_and_the_info_is_as_bound_there(
        double, api):
    instance, info = _server(double, api)
    double.ports[info[1]['id']]['binding:profile'] = {'trusted': True}
    info[1]['profile'] = {'trusted': True}
    dest = api.create_port_bindings(None, instance, 'hostB', info)

    assert [v['id'] for v in dest] == [v['id'] for v in info]
    for vif in dest:
        port = double.ports[vif['id']]
        # The port stays bound (active) on the source; hostB's binding waits.
        assert port['binding:host_id'] == 'hostA'
        assert double.bindings[vif['id']]['hostB']['status'] == 'INACTIVE'
        assert vif['type'] == 'ovs' and vif['ovs_interfaceid'] == vif['id']
        assert vif['details'] == double.bindings[vif['id']]['hostB']['vif_details']
        assert vif['network'] == next(v for v in info if v['id'] == vif['id'])['network']
    assert [(v['preserve_on_delete'], v['tag']) for v in dest] == [(False, 'nic1'),
                                                                  (True, None)]
    sent = [arg for name, arg in double.calls if name == 'create_port_binding']
    assert sent == [(info[0]['id'], {'host': 'hostB', 'vnic_type': 'normal', 'profile': {}}),
                    (info[1]['id'], {'host': 'hostB', 'vnic_type': 'normal',
                                     'profile': {'trusted': True}})]
    # One read of the ports, then the network info's usual reads.
    assert _names(double)[2:] == ['list_ports', 'list_networks', 'list_subnets',
                                  'list_floatingips']


def test_a_binding_left_on_the_destination_is_made_again(double, api):
    instance, info = _server(double, api, ports=1)
    port_id = info[0]['id']
    double.bindings[port_id] = {'hostB': {
        'host': 'hostB', 'vif_type': 'unbound', 'vif_details': {}, 'vnic_type': 'normal',
        'profile': {'stale': 1}, 'status': 'INACTIVE'}}
    dest = api.create_port_bindings(None, instance, 'hostB', info)
    assert _names(double)[:4] == ['create_port_binding', 'show_port_binding',
                                  'delete_port_binding', 'create_port_binding']
    assert double.bindings[port_id]['hostB']['profile'] == {}
    assert dest[0]['type'] == 'ovs'


def test_the_active_binding_is_not_taken_for_a_leftover(double, api):
    instance, info = _server(double, api, ports=1)
    with pytest.raises(exception.PortBindingFailed, match=info[0]['id']):
        api.create_port_bindings(None, instance, 'hostA', info)
    assert 'delete_port_binding' not in _names(double)
    assert double.ports[info[0]['id']]['binding:host_id'] == 'hostA'
    assert double.ports[info[0]['id']]['binding:vif_type'] == 'ovs'


def test_a_refused_binding_deletes_those_made_before(double, api, monkeypatch):
    instance, info = _server(double, api)
    _failing_for(monkeypatch, double, info[1]['id'], neutron_client.NeutronError(
        500, 'POST', '/ports/x/bindings', 'could not be created', 'PortBindingError'))
    with pytest.raises(exception.PortBindingFailed) as caught:
        api.create_port_bindings(None, instance, 'hostB', info)
    assert info[1]['id'] in caught.value.format_message()
    assert 'hostB' in caught.value.format_message()
    assert [a for n, a in double.calls if n == 'delete_port_binding'] == [
        (info[0]['id'], 'hostB')]
    assert not any(double.bindings.get(v['id']) for v in info)


def test_a_host_neutron_cannot_bind_fails_every_port(double, api):
    instance, info = _server(double, api)
    double.unbindable.add('hostB')
    with pytest.raises(exception.PortBindingFailed, match=info[0]['id']):
        api.create_port_bindings(None, instance, 'hostB', info)
    assert 'delete_port_binding' not in _names(double)


def test_a_binding_that_failed_is_deleted_with_the_others(double, api, monkeypatch):
    instance, info = _server(double, api)
    create = double.create_port_binding

    def failed_second(pid: str, binding: dict[str, Any]) -> dict[str, Any]:
        made = create(pid, binding)
        if pid == info[1]['id']:
            made['vif_type'] = double.bindings[pid][binding['host']]['vif_type'] = \
                model.VIF_TYPE_BINDING_FAILED
        return made
    monkeypatch.setattr(double, 'create_port_binding', failed_second)
    with pytest.raises(exception.PortBindingFailed, match=info[1]['id']):
        api.create_port_bindings(None, instance, 'hostB', info)
    assert [a for n, a in double.calls if n == 'delete_port_binding'] == [
        (info[0]['id'], 'hostB'), (info[1]['id'], 'hostB')]
    assert not any(double.bindings.get(v['id']) for v in info)


def test_neutron_gone_midway_is_a_connection_failure_after_the_cleanup_attempt(
        double, api, monkeypatch):
    instance, info = _server(double, api)
    _failing_for(monkeypatch, double, info[1]['id'], _down())
    double.fail['delete_port_binding'] = [_down()]
    with pytest.raises(exception.NeutronConnectionFailed):
        api.create_port_bindings(None, instance, 'hostB', info)
    assert [a for n, a in double.calls if n == 'delete_port_binding'] == [
        (info[0]['id'], 'hostB')]


def test_a_failure_reading_the_ports_fails_and_cleans_up(double, api):
    instance, info = _server(double, api)
    double.fail['list_ports'] = [neutron_client.NeutronError(
        500, 'GET', '/ports', 'Request Failed: internal server error')]
    with pytest.raises(exception.PortBindingFailed):
        api.create_port_bindings(None, instance, 'hostB', info)
    assert not any(double.bindings.get(v['id']) for v in info)


def test_no_ports_nothing_to_bind(double, api):
    assert api.create_port_bindings(None, _instance(), 'hostB', []) == []
    assert api.activate_port_bindings(None, _instance(), 'hostB', []) == []
    assert double.calls == []


# -- activating and deleting --------------------------------------------------------------

def test_activation_moves_the_port_to_the_destination_and_rereads_it(double, api):
    instance, info = _server(double, api)
    api.create_port_bindings(None, instance, 'hostB', info)
    now = api.activate_port_bindings(None, instance, 'hostB', info)
    for vif in info:
        port = double.ports[vif['id']]
        assert port['binding:host_id'] == 'hostB'
        assert double.bindings[vif['id']]['hostA']['status'] == 'INACTIVE'
    assert [(v['id'], v['preserve_on_delete'], v['tag']) for v in now] == [
        (info[0]['id'], False, 'nic1'), (info[1]['id'], True, None)]
    assert all(v['active'] is False for v in now)  # DOWN until the destination plugs
    # Again: Neutron answers 409 (active already), which is fine.
    api.activate_port_bindings(None, instance, 'hostB', info)
    assert double.ports[info[0]['id']]['binding:host_id'] == 'hostB'


def test_an_activation_refused_for_one_port_still_activates_the_others(double, api):
    instance, info = _server(double, api)
    api.create_port_bindings(None, instance, 'hostB', info)
    double.bindings[info[0]['id']].clear()
    with pytest.raises(neutron_client.NeutronNotFound):
        api.activate_port_bindings(None, instance, 'hostB', info)
    assert double.ports[info[1]['id']]['binding:host_id'] == 'hostB'
    assert double.ports[info[0]['id']]['binding:host_id'] == 'hostA'


def test_an_unreachable_neutron_fails_the_activation(double, api):
    instance, info = _server(double, api, ports=1)
    api.create_port_bindings(None, instance, 'hostB', info)
    double.fail['activate_port_binding'] = [_down()]
    with pytest.raises(exception.NeutronConnectionFailed):
        api.activate_port_bindings(None, instance, 'hostB', info)


def test_deleting_the_sources_bindings_leaves_the_destinations(double, api):
    instance, info = _server(double, api)
    api.create_port_bindings(None, instance, 'hostB', info)
    api.activate_port_bindings(None, instance, 'hostB', info)
    ids = model.port_ids(info)
    api.delete_port_bindings(None, instance, 'hostA', ids)
    for port_id in ids:
        assert double.bindings[port_id] == {}
        assert [b['host'] for b in double.list_port_bindings(port_id)] == ['hostB']
    # Gone already (404): fine.
    api.delete_port_bindings(None, instance, 'hostA', ids)


def test_a_refused_delete_is_logged_and_the_rest_go_on(double, api, caplog):
    instance, info = _server(double, api)
    api.create_port_bindings(None, instance, 'hostB', info)
    double.fail['delete_port_binding'] = [neutron_client.NeutronError(
        500, 'DELETE', '/ports/x/bindings/hostB', 'internal error')]
    api.delete_port_bindings(None, instance, 'hostB', model.port_ids(info))
    assert 'hostB' in double.bindings[info[0]['id']]
    assert 'hostB' not in double.bindings[info[1]['id']]
    assert 'Could not delete the binding of port %s' % info[0]['id'] in caplog.text


def test_an_unreachable_neutron_fails_the_delete_after_every_port_was_tried(double, api):
    instance, info = _server(double, api)
    api.create_port_bindings(None, instance, 'hostB', info)
    double.fail['delete_port_binding'] = [_down()]
    with pytest.raises(exception.NeutronConnectionFailed):
        api.delete_port_bindings(None, instance, 'hostB', model.port_ids(info))
    assert 'hostB' not in double.bindings[info[1]['id']]


# -- through the real client, against the REST double -------------------------------------

def test_the_bindings_api_through_the_client(neutron: NeutronDouble):
    net = neutron.add('networks', name='private')
    port = neutron.add('ports', network_id=net['id'], device_owner='compute:nova',
                       device_id='s1', mac_address='fa:16:3e:00:00:09',
                       **{'binding:host_id': 'hostA', 'binding:vif_type': 'ovs'})
    other = neutron.add('ports', network_id=net['id'], device_owner='network:dhcp')
    api = NeutronAPI()
    admin = neutron_client.Client(None, admin=True)
    instance = _instance()
    info = [model.VIF(id=port['id'], vnic_type='normal', profile={}, tag='t')]

    assert api.supports_port_binding_extension(None)
    assert neutron.calls('GET', 'extensions') == [('GET', '/extensions', {})]
    dest = api.create_port_bindings(None, instance, 'host B', info)
    assert dest[0]['type'] == 'ovs' and dest[0]['tag'] == 't'
    assert ('POST', '/ports/%s/bindings' % port['id'], {}) in neutron.requests
    assert [(b['host'], b['status']) for b in admin.list_port_bindings(port['id'])] == [
        ('hostA', 'ACTIVE'), ('host B', 'INACTIVE')]
    assert admin.show_port_binding(port['id'], 'host B')['status'] == 'INACTIVE'

    api.activate_port_bindings(None, instance, 'host B', info)
    assert ('PUT', '/ports/%s/bindings/host%%20B/activate' % port['id'], {}) \
        in neutron.requests
    assert neutron.store['ports'][port['id']]['binding:host_id'] == 'host B'

    api.delete_port_bindings(None, instance, 'hostA', [port['id']])
    assert ('DELETE', '/ports/%s/bindings/hostA' % port['id'], {}) in neutron.requests
    assert [b['host'] for b in admin.list_port_bindings(port['id'])] == ['host B']
    # Not a server's port: Neutron refuses (400), the binding fails.
    with pytest.raises(exception.PortBindingFailed):
        api.create_port_bindings(None, instance, 'hostB', [model.VIF(id=other['id'])])
