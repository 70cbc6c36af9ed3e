"""The API-side checks of interfaces and fixed IPs (compute/api_interfaces.py): lock,
state, the request against Neutron, the action recorded, then the host is asked."""
from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from novalite import context as nl_context
from novalite import exception, objects
from novalite.compute import api_interfaces
from novalite.network import client as neutron_client
from novalite.network import model
from tests.unit.network.neutron_client_double import NeutronClientDouble


class RPCRecorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple]] = []

    def __getattr__(self, name: str) -> Any:
        def record(context: Any, instance: Any, *args: Any) -> dict:
            self.calls.append((name, args))
            return {'id': 'attached'}
        return record


class ComputeAPIDouble:
    """The two things InterfacesAPI takes from the compute API."""

    def __init__(self, cctxt: nl_context.RequestContext) -> None:
        self.cctxt = cctxt
        self.compute_rpcapi = RPCRecorder()

    @contextlib.contextmanager
    def host_context(self, context: Any, instance: Any) -> Iterator[Any]:
        yield self.cctxt


@pytest.fixture
def neutron_double(monkeypatch) -> NeutronClientDouble:
    double = NeutronClientDouble()
    monkeypatch.setattr(neutron_client, 'configured', lambda: True)
    monkeypatch.setattr(neutron_client, 'Client', lambda context, admin=False: double)
    return double


@pytest.fixture
def setup(cloud, neutron_double) -> Iterator[tuple[Any, Any, Any]]:
    with nl_context.target_cell(cloud.context, cloud.cell) as cctxt:
        flavor = objects.Flavor(id=1, flavorid='f1', name='f1', memory_mb=512, vcpus=1,
                                root_gb=1, ephemeral_gb=0, swap=0, extra_specs={})
        instance = objects.Instance(cctxt, uuid=str(uuid.uuid4()), host='h1',
                                    project_id='p1', user_id='u1', vm_state='active',
                                    task_state=None, flavor=flavor, locked=False)
        instance.create()
        compute = ComputeAPIDouble(cctxt)
        yield api_interfaces.InterfacesAPI(compute), compute, instance


def _actions(cctxt: Any, instance: Any) -> list[str]:
    return [a.action for a in objects.InstanceActionList.get_by_instance_uuid(
        cctxt, instance.uuid)]


def _member() -> nl_context.RequestContext:
    return nl_context.RequestContext(user_id='u1', project_id='p1', roles=['member'])


def test_attach_checks_the_request_records_the_action_and_calls_the_host(
        setup, neutron_double):
    api, compute, instance = setup
    net = neutron_double.add_network()
    assert api.attach_interface(_member(), instance, None, None, None) == {'id': 'attached'}
    assert compute.compute_rpcapi.calls == [('attach_interface',
                                             (net['id'], None, None, None))]
    assert _actions(compute.cctxt, instance) == ['attach_interface']


@pytest.mark.parametrize('vm_state,task_state,locked,error', [
    ('building', None, False, exception.InstanceInvalidState),
    ('suspended', None, False, exception.InstanceInvalidState),
    ('active', 'rebooting', False, exception.InstanceInvalidState),
    ('active', None, True, exception.InstanceIsLocked),
])
def test_only_a_settled_unlocked_server_changes(setup, neutron_double, vm_state, task_state,
                                                locked, error):
    api, compute, instance = setup
    net = neutron_double.add_network()
    instance.vm_state, instance.task_state, instance.locked = vm_state, task_state, locked
    for change in (lambda: api.attach_interface(_member(), instance, net['id'], None, None),
                   lambda: api.detach_interface(_member(), instance, 'p'),
                   lambda: api.add_fixed_ip(_member(), instance, net['id']),
                   lambda: api.remove_fixed_ip(_member(), instance, '10.0.0.5')):
        with pytest.raises(error):
            change()
    assert compute.compute_rpcapi.calls == []


def test_a_paused_or_stopped_server_takes_interfaces(setup, neutron_double):
    api, compute, instance = setup
    net = neutron_double.add_network()
    for vm_state in ('paused', 'stopped'):
        instance.vm_state = vm_state
        api.attach_interface(_member(), instance, net['id'], None, None)
    assert len(compute.compute_rpcapi.calls) == 2


def test_a_refused_request_records_nothing(setup, neutron_double):
    api, compute, instance = setup
    with pytest.raises(exception.NetworkNotFound):
        api.attach_interface(_member(), instance, str(uuid.uuid4()), None, None)
    assert compute.compute_rpcapi.calls == [] and _actions(compute.cctxt, instance) == []


def _cache(instance: Any, network_id: str, *addresses: str) -> None:
    instance.info_cache.network_info = [model.VIF(
        id='port-1', address='fa:16:3e:00:00:01', network=model.Network(
            id=network_id, subnets=[model.Subnet(cidr='10.0.0.0/24', ips=[
                model.IP(address=a, type='fixed', version=4) for a in addresses])]))]


def test_detach_and_remove_know_the_servers_ports_and_addresses(setup):
    api, compute, instance = setup
    _cache(instance, 'net-1', '10.0.0.5')
    with pytest.raises(exception.PortNotFound):
        api.detach_interface(_member(), instance, 'port-2')
    with pytest.raises(exception.FixedIpNotFoundForInstance):
        api.remove_fixed_ip(_member(), instance, '10.0.0.6')
    api.detach_interface(_member(), instance, 'port-1')
    api.remove_fixed_ip(_member(), instance, '10.0.0.5')
    assert compute.compute_rpcapi.calls == [('detach_interface', ('port-1',)),
                                            ('remove_fixed_ip_from_instance', ('10.0.0.5',))]
    assert _actions(compute.cctxt, instance) == ['remove_fixed_ip', 'detach_interface']


def test_a_fixed_ip_on_a_new_network_is_checked_as_an_attach(setup, neutron_double):
    api, compute, instance = setup
    _cache(instance, 'net-1', '10.0.0.5')
    api.add_fixed_ip(_member(), instance, 'net-1')   # its port's network: no lookup
    with pytest.raises(exception.NetworkNotFound):
        api.add_fixed_ip(_member(), instance, str(uuid.uuid4()))
    assert compute.compute_rpcapi.calls == [('add_fixed_ip_to_instance', ('net-1',))]


def test_show_port_only_of_the_server(setup, neutron_double):
    api, compute, instance = setup
    net = neutron_double.add_network()
    mine = neutron_double.add_port(net, device_id=instance.uuid)
    other = neutron_double.add_port(net, device_id='another-server')
    assert api.show_port(_member(), instance, mine['id'])['id'] == mine['id']
    assert [p['id'] for p in api.list_ports(_member(), instance)] == [mine['id']]
    for port_id in (other['id'], str(uuid.uuid4())):
        with pytest.raises(exception.PortNotFound):
            api.show_port(_member(), instance, port_id)
