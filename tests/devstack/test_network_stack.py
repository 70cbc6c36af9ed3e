"""A stack with the real Neutron (``Stack(network=True)``): Neutron on ML2/OVN with an OVN
chassis per compute host, the daemons and clouds.yaml pointed at it."""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from novalite.devstack import Stack
from tests.devstack.clients import osc
from tests.devstack.test_neutron_harness import require_network

STACK = {'network': True}


@pytest.fixture(scope='module', autouse=True)
def _network_available() -> Iterator[None]:
    # Autouse: instantiated before the module's stack, which it may skip.
    require_network()
    yield


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
