"""openstacksdk against the stack: flavors, servers, and Placement's view of them."""
from __future__ import annotations

import pytest
from openstack import exceptions as sdk_exc

from tests.devstack import clients


@pytest.fixture(scope='module')
def conn(stack):
    conn = clients.sdk(stack)
    yield conn
    conn.close()


def test_flavor_create_list_get_delete(conn):
    flavor = conn.compute.create_flavor(name='sdk.small', ram=256, vcpus=2, disk=1)
    assert flavor.id
    assert 'sdk.small' in [f.name for f in conn.compute.flavors()]
    got = conn.compute.get_flavor(flavor.id)
    assert (got.name, got.ram, got.vcpus, got.disk) == ('sdk.small', 256, 2, 1)
    conn.compute.delete_flavor(flavor)
    with pytest.raises(sdk_exc.NotFoundException):
        conn.compute.get_flavor(flavor.id)


def test_server_create_list_get_delete(stack, conn):
    image = conn.image.find_image('cirros-tiny', ignore_missing=False)
    flavor = conn.compute.find_flavor('m1.tiny', ignore_missing=False)
    created = conn.compute.create_server(name='sdk-vm1', image_id=image.id,
                                         flavor_id=flavor.id, networks='none')
    active = conn.compute.wait_for_server(created, status='ACTIVE', wait=120)
    assert active.status == 'ACTIVE'
    assert created.id in [s.id for s in conn.compute.servers()]
    got = conn.compute.get_server(created.id)
    assert got.compute_host in stack.computes
    assert got.image.id == image.id

    # Placement, through the SDK too: both hosts are providers and one holds the claim.
    providers = {rp.name: rp.id for rp in conn.placement.resource_providers()}
    assert set(stack.computes) <= set(providers)
    allocs = clients.allocations(stack, created.id)
    assert list(allocs) == [providers[got.compute_host]]
    assert allocs[providers[got.compute_host]]['resources'] == {
        'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}

    conn.compute.delete_server(created)
    conn.compute.wait_for_delete(created, wait=120)
    with pytest.raises(sdk_exc.NotFoundException):
        conn.compute.get_server(created.id)
    assert clients.allocations(stack, created.id) == {}
