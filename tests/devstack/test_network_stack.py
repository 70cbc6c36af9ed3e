"""A stack with the real Neutron (``Stack(network=True)``): Neutron on ML2/OVN with an OVN
chassis per compute host, the daemons and clouds.yaml pointed at it."""
from __future__ import annotations

from tests.devstack.clients import osc
from tests.devstack.harness import Stack

STACK = {'network': True}



def test_network_create_through_the_stacks_clouds_yaml(stack: Stack) -> None:
    assert stack.neutron is not None
    print('\nneutron environment up in %.1f s of the stack\'s start' %
          stack.neutron.timings['up'])
    assert stack.neutron.alive_chassis() == set(stack.computes)
    created = osc(stack, 'network', 'create', 'smoke-net')
    assert created['name'] == 'smoke-net'
    assert created['status'] == 'ACTIVE'
    assert 'smoke-net' in {n['Name'] for n in osc(stack, 'network', 'list')}
    # Every daemon reaches Neutron without auth (its noauth accepts that).
    with open(stack.conf_file('compute-hostA')) as conf:
        assert 'endpoint_override = %s' % stack.neutron.url in conf.read()
