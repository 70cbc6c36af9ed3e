"""The compute host's interface flows (compute/interfaces.py) on the fake driver, a
Neutron client double and a real cell database: ports bound, released on every
failure, the info cache kept, instance-action events recorded."""
from __future__ import annotations

import types
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from novalite import context as nl_context
from novalite import exception, objects
from novalite.compute import external_events, interfaces
from novalite.network import model, neutron
from novalite.virt import fake
from tests.unit.network.neutron_client_double import NeutronClientDouble

HOST = 'h1'


class Host:
    """One compute host: the fake driver, the network API on the Neutron double, and a
    server on it (in the cell database, with a guest)."""

    def __init__(self, cctxt: nl_context.RequestContext) -> None:
        self.context = cctxt
        self.neutron = NeutronClientDouble()
        self.net = self.neutron.add_network()
        self.driver = fake.FakeDriver()
        self.driver.init_host(HOST)
        self.mgr = types.SimpleNamespace(host=HOST, driver=self.driver,
                                         network_api=neutron.API(self.neutron))
        flavor = objects.Flavor(id=1, flavorid='f1', name='f1', memory_mb=512, vcpus=1,
                                root_gb=1, ephemeral_gb=0, swap=0, extra_specs={})
        self.instance = objects.Instance(
            cctxt, uuid=str(uuid.uuid4()), host=HOST, project_id='p1', user_id='u1',
            vm_state='active', task_state=None, flavor=flavor, availability_zone=None)
        self.instance.create()
        self.driver.spawn(cctxt, self.instance, None, [], None, {})

    def start(self, action: str) -> None:
        """The action the API records before it asks the host."""
        objects.InstanceAction.action_start(self.context, self.instance.uuid, action)

    def cached(self) -> model.NetworkInfo:
        return objects.InstanceInfoCache.get_by_instance_uuid(
            self.context, self.instance.uuid).network_info

    def event(self, name: str) -> Any:
        action = objects.InstanceAction.get_by_request_id(
            self.context, self.instance.uuid, self.context.request_id)
        (found,) = [e for e in objects.InstanceActionEventList.get_by_action(
            self.context, action.id) if e.event == name]
        return found

    def fault(self) -> Any:
        return objects.InstanceFault.get_latest_for_instance(self.context,
                                                             self.instance.uuid)

    def attach(self, network_id: str | None = None, port_id: str | None = None,
               ip: str | None = None, tag: str | None = None) -> model.VIF:
        self.start('attach_interface')
        return interfaces.attach_interface(self.mgr, self.context, self.instance,
                                           network_id, port_id, ip, tag)


@pytest.fixture
def host(cloud) -> Iterator[Host]:
    with nl_context.target_cell(cloud.context, cloud.cell) as cctxt:
        yield Host(cctxt)


# -- attach ---------------------------------------------------------------------------

def test_attach_binds_a_new_port_to_the_host_and_caches_it(host):
    vif = host.attach(host.net['id'], tag='nic1')
    port = host.neutron.ports[vif['id']]
    assert (port['device_id'], port['binding:host_id'], port['device_owner']) == \
        (host.instance.uuid, HOST, 'compute:nova')
    assert (vif['type'], vif['tag'], vif['preserve_on_delete']) == ('ovs', 'nic1', False)
    assert host.driver.interfaces(host.instance) == [vif['id']]
    assert [v['id'] for v in host.cached()] == [vif['id']]
    assert host.event(interfaces.ATTACH_EVENT).result == 'Success'


def test_attach_of_the_users_port_keeps_it_on_delete(host):
    users = host.neutron.add_port(host.net)
    vif = host.attach(port_id=users['id'])
    assert vif['id'] == users['id'] and vif['preserve_on_delete']
    assert host.neutron.ports[users['id']]['binding:host_id'] == HOST


def test_a_driver_failure_releases_the_new_port(host, monkeypatch):
    def broken(*args: Any) -> None:
        raise exception.NovaliteException('QEMU said no')
    monkeypatch.setattr(host.driver, 'attach_interface', broken)
    with pytest.raises(exception.InterfaceAttachFailed):
        host.attach(host.net['id'])
    assert host.neutron.ports == {} and host.cached() == []
    assert host.event(interfaces.ATTACH_EVENT).result == 'Error'
    assert 'Failed to attach network adapter' in host.fault().message


def test_a_driver_failure_gives_the_user_back_an_unbound_port(host, monkeypatch):
    users = host.neutron.add_port(host.net)
    monkeypatch.setattr(host.driver, 'attach_interface',
                        lambda *a: (_ for _ in ()).throw(exception.NovaliteException()))
    with pytest.raises(exception.InterfaceAttachFailed):
        host.attach(port_id=users['id'])
    port = host.neutron.ports[users['id']]
    assert (port['device_id'], port['binding:host_id']) == ('', None)


def test_a_binding_failure_leaves_no_port(host, monkeypatch):
    real_create = host.neutron.create_port

    def failed_binding(port: dict, record: bool = True) -> dict:
        created = real_create(port, record)
        host.neutron.ports[created['id']]['binding:vif_type'] = 'binding_failed'
        return dict(created, **{'binding:vif_type': 'binding_failed'})
    monkeypatch.setattr(host.neutron, 'create_port', failed_binding)
    with pytest.raises(exception.InterfaceAttachFailed):
        host.attach(host.net['id'])
    assert host.neutron.ports == {} and host.driver.interfaces(host.instance) == []


def test_neutrons_own_errors_become_the_callers(host):
    with pytest.raises(exception.NetworkNotFound):
        host.attach(str(uuid.uuid4()))
    taken = host.neutron.add_port(host.net)['fixed_ips'][0]['ip_address']
    with pytest.raises(exception.FixedIpAlreadyInUse):
        host.attach(host.net['id'], ip=taken)
    host.neutron.fail['create_port'] = [exception.NeutronConnectionFailed(
        server='neutron', reason='connection refused')]
    with pytest.raises(exception.NeutronConnectionFailed):
        host.attach(host.net['id'])
    assert len(host.neutron.ports) == 1 and host.cached() == []


def test_a_cache_that_cannot_be_written_undoes_the_attach(host, monkeypatch):
    def unreachable(self: Any) -> None:
        raise exception.NovaliteException('the conductor is gone')
    monkeypatch.setattr(objects.InstanceInfoCache, 'save', unreachable)
    with pytest.raises(exception.NovaliteException):
        host.attach(host.net['id'])
    assert host.neutron.ports == {} and host.driver.interfaces(host.instance) == []


def test_drivers_without_attach_are_refused(host, monkeypatch):
    monkeypatch.setattr(host.driver, 'capabilities',
                        dict(host.driver.capabilities, supports_attach_interface=False))
    with pytest.raises(exception.AttachInterfaceNotSupported):
        host.attach(host.net['id'])
    monkeypatch.setattr(host.driver, 'capabilities',
                        dict(host.driver.capabilities, supports_attach_interface=True,
                             supports_tagged_attach_interface=False))
    with pytest.raises(exception.NetworkInterfaceTaggedAttachNotSupported):
        host.attach(host.net['id'], tag='x')
    assert host.neutron.ports == {}


# -- detach ---------------------------------------------------------------------------

def test_detach_deletes_novalites_port_and_unbinds_the_users(host):
    made = host.attach(host.net['id'])
    users = host.attach(port_id=host.neutron.add_port(host.net)['id'])
    for vif in (made, users):
        host.start('detach_interface')
        interfaces.detach_interface(host.mgr, host.context, host.instance, vif['id'])
        assert host.event(interfaces.DETACH_EVENT).result == 'Success'
    assert list(host.neutron.ports) == [users['id']]
    port = host.neutron.ports[users['id']]
    assert (port['device_id'], port['binding:host_id'], port['binding:vif_type']) == \
        ('', None, 'unbound')
    assert host.cached() == [] and host.driver.interfaces(host.instance) == []


def test_detach_of_a_port_not_attached_fails_quietly(host):
    host.start('detach_interface')
    interfaces.detach_interface(host.mgr, host.context, host.instance, str(uuid.uuid4()))
    assert host.event(interfaces.DETACH_EVENT).result == 'Error'
    assert 'is not attached' in host.fault().message


def test_a_detach_neutron_missed_can_be_asked_again(host):
    vif = host.attach(host.net['id'])
    host.neutron.fail['delete_port'] = [exception.NeutronConnectionFailed(
        server='neutron', reason='connection refused')]
    host.start('detach_interface')
    interfaces.detach_interface(host.mgr, host.context, host.instance, vif['id'])
    assert host.event(interfaces.DETACH_EVENT).result == 'Error'
    assert [v['id'] for v in host.cached()] == [vif['id']]
    host.instance.info_cache = objects.InstanceInfoCache.get_by_instance_uuid(
        host.context, host.instance.uuid)
    interfaces.detach_interface(host.mgr, host.context, host.instance, vif['id'])
    assert host.neutron.ports == {} and host.cached() == []


# -- fixed IPs ----------------------------------------------------------------------------

def _addresses(info: model.NetworkInfo) -> list[list[str]]:
    return [[ip['address'] for ip in model.fixed_ips(vif)] for vif in info]


def test_a_fixed_ip_goes_on_the_port_of_its_network(host):
    vif = host.attach(host.net['id'])
    host.start('add_fixed_ip')
    interfaces.add_fixed_ip(host.mgr, host.context, host.instance, host.net['id'])
    ((first, second),) = _addresses(host.cached())
    assert host.event(interfaces.ADD_FIXED_IP_EVENT).result == 'Success'
    host.start('remove_fixed_ip')
    interfaces.remove_fixed_ip(host.mgr, host.context, host.instance, second)
    assert _addresses(host.cached()) == [[first]]
    assert list(host.neutron.ports) == [vif['id']]


def test_a_fixed_ip_on_another_network_is_a_new_interface(host):
    host.attach(host.net['id'])
    other = host.neutron.add_network('other', '10.1.0.0/24')
    host.start('add_fixed_ip')
    interfaces.add_fixed_ip(host.mgr, host.context, host.instance, other['id'])
    cached = host.cached()
    assert [v['network']['id'] for v in cached] == [host.net['id'], other['id']]
    assert len(host.driver.interfaces(host.instance)) == 2
    # Its only address removed, the interface goes.
    host.start('remove_fixed_ip')
    interfaces.remove_fixed_ip(host.mgr, host.context, host.instance,
                               _addresses(cached)[1][0])
    assert [v['network']['id'] for v in host.cached()] == [host.net['id']]
    assert cached[1]['id'] not in host.neutron.ports


def test_a_fixed_ip_that_cannot_be_had_is_recorded(host):
    host.start('add_fixed_ip')
    interfaces.add_fixed_ip(host.mgr, host.context, host.instance, str(uuid.uuid4()))
    assert host.event(interfaces.ADD_FIXED_IP_EVENT).result == 'Error'
    assert host.neutron.ports == {}



def test_a_network_changed_event_that_waited_for_an_attach_keeps_its_vif(host):
    # The event's instance was read before the attach, which held the lock meanwhile.
    stale = objects.Instance.get_by_uuid(host.context, host.instance.uuid)
    users = host.neutron.add_port(host.net)
    host.attach(port_id=users['id'], tag='t')
    external_events.handle_event(host.mgr, host.context, stale,
                                 {'name': 'network-changed', 'tag': users['id']})
    (cached,) = host.cached()
    assert (cached['id'], cached['preserve_on_delete'], cached['tag']) == \
        (users['id'], True, 't')
