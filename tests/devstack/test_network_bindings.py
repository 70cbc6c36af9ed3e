"""A live migration's port bindings against the real Neutron (ML2/OVN): novalite's
``network.neutron.API``, configured as the stack's daemons are, binds a server's port
to a second host beside the first (an inactive binding), activates it (the port moves),
and deletes the first host's binding."""
from __future__ import annotations

import contextlib
import types
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from keystoneauth1 import loading as ks_loading

from novalite import exception
from novalite.conf import CONF
from novalite.network import client as neutron_client
from novalite.network import neutron
from tests.devstack import clients, network
from tests.devstack.harness import Stack

STACK = {'network': True}


@pytest.fixture(scope='module')
def net(stack: Stack) -> dict[str, Any]:
    return network.make_network(stack, 'bindings-net', '10.41.0.0/24')


@contextlib.contextmanager
def _daemon_conf(sections: Mapping[str, Mapping[str, Any]]) -> Iterator[None]:
    """This process's options as the daemons have them, for one test."""
    set_here: list[tuple[str, str]] = []
    for group, options in sections.items():
        if 'auth_type' in options:
            CONF.register_opts(ks_loading.get_auth_plugin_conf_options(
                options['auth_type']), group=group)
        for name, value in options.items():
            CONF.set_override(name, value, group=group)
            set_here.append((name, group))
    neutron_client.reset()
    try:
        yield
    finally:
        for name, group in set_here:
            CONF.clear_override(name, group=group)
        neutron_client.reset()


@pytest.fixture
def api(stack: Stack) -> Iterator[neutron.API]:
    assert stack.neutron is not None
    with _daemon_conf(stack.neutron.daemon_conf()):
        yield neutron.API()


def _bindings(stack: Stack, port_id: str) -> dict[str, tuple[str, str]]:
    """The port's bindings as Neutron lists them: host -> (status, vif_type)."""
    assert stack.neutron is not None
    resp = stack.neutron.api('GET', '/ports/%s/bindings' % port_id)
    resp.raise_for_status()
    return {b['host']: (b['status'], b['vif_type']) for b in resp.json()['bindings']}


def test_bind_to_a_second_host_activate_there_and_drop_the_first(
        stack: Stack, net: dict[str, Any], api: neutron.API) -> None:
    sid = clients.boot(stack, 'bound-twice', networks=[{'uuid': net['id']}], host='hostA')
    try:
        view = clients.wait_settled(stack, [sid])[sid]
        assert view['status'] == 'ACTIVE', view
        [port] = network.ports_of(stack, sid)
        assert (port['binding:host_id'], port['binding:vif_type']) == ('hostA', 'ovs')
        instance = types.SimpleNamespace(uuid=sid, project_id=view['tenant_id'],
                                         availability_zone=None, host='hostA')
        assert api.supports_port_binding_extension(None)
        info = api.get_instance_nw_info(None, instance)
        assert [v['id'] for v in info] == [port['id']]

        dest = api.create_port_bindings(None, instance, 'hostB', info)
        assert _bindings(stack, port['id']) == {'hostA': ('ACTIVE', 'ovs'),
                                                'hostB': ('INACTIVE', 'ovs')}
        assert [(v['id'], v['type']) for v in dest] == [(port['id'], 'ovs')]
        assert dest[0]['details'] and dest[0]['network'] == info[0]['network']
        assert network.port(stack, port['id'])['binding:host_id'] == 'hostA'
        # The destination's binding left there (a failed migration's) is made again;
        # the port's active binding is no destination.
        api.create_port_bindings(None, instance, 'hostB', info)
        assert _bindings(stack, port['id'])['hostB'] == ('INACTIVE', 'ovs')
        with pytest.raises(exception.PortBindingFailed):
            api.create_port_bindings(None, instance, 'hostA', info)
        assert _bindings(stack, port['id'])['hostA'] == ('ACTIVE', 'ovs')

        now = api.activate_port_bindings(None, instance, 'hostB', info)
        moved = network.port(stack, port['id'])
        assert moved is not None and moved['binding:host_id'] == 'hostB'
        assert [(v['id'], v['type']) for v in now] == [(port['id'], 'ovs')]
        assert _bindings(stack, port['id']) == {'hostA': ('INACTIVE', 'unbound'),
                                                'hostB': ('ACTIVE', 'ovs')}
        api.activate_port_bindings(None, instance, 'hostB', info)  # active already: 409

        api.delete_port_bindings(None, instance, 'hostA', [port['id']])
        assert _bindings(stack, port['id']) == {'hostB': ('ACTIVE', 'ovs')}
        api.delete_port_bindings(None, instance, 'hostA', [port['id']])  # gone: 404
    finally:
        clients.delete_all(stack, [sid])
    assert network.ports_of(stack, sid) == []
