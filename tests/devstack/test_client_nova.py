"""python-novaclient's Python API, at the newest version both sides know, against the
stack: flavors, keypairs, servers, server groups, aggregates, zones, services,
hypervisors, quotas and limits.

It shares the stack of the other client modules (no ``STACK`` of its own).
"""
from __future__ import annotations

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519
from keystoneauth1 import session as ks_session
from keystoneauth1 import token_endpoint
from novaclient import api_versions
from novaclient import client as nova_client
from novaclient import exceptions as nova_exc

from tests.devstack import clients


@pytest.fixture(scope='module')
def nova(stack):
    """A novaclient at the newest version both sides know, over a noauth2 session."""
    auth = token_endpoint.Token(stack.api_url + '/v2.1', 'admin:admin')
    session = ks_session.Session(auth=auth)
    # "2.latest" is resolved with the API's version document, as the nova CLI does.
    probe = nova_client.Client('2.1', session=session)
    version = api_versions.discover_version(probe, api_versions.APIVersion('2.latest'))
    return nova_client.Client(version, session=session)


def _public_key() -> str:
    key = ed25519.Ed25519PrivateKey.generate()
    return key.public_key().public_bytes(serialization.Encoding.OpenSSH,
                                         serialization.PublicFormat.OpenSSH).decode()


def test_negotiated_a_recent_microversion(nova):
    # The client went past 2.1: the API's version document was read and understood.
    assert nova.api_version >= api_versions.APIVersion('2.90')


def test_flavors_and_extra_specs(nova):
    flavor = nova.flavors.create('nc.small', ram=256, vcpus=1, disk=1, is_public=True)
    assert 'nc.small' in [f.name for f in nova.flavors.list()]
    got = nova.flavors.get(flavor.id)
    assert (got.name, got.ram, got.vcpus, got.disk) == ('nc.small', 256, 1, 1)
    got.set_keys({'hw:cpu_policy': 'shared'})
    assert nova.flavors.get(flavor.id).get_keys() == {'hw:cpu_policy': 'shared'}
    got.unset_keys(['hw:cpu_policy'])
    assert nova.flavors.get(flavor.id).get_keys() == {}
    nova.flavors.delete(flavor.id)
    with pytest.raises(nova_exc.NotFound):
        nova.flavors.get(flavor.id)


def test_keypairs(nova):
    public = _public_key()
    created = nova.keypairs.create('nc-key', public_key=public)
    assert created.fingerprint
    assert 'nc-key' in [k.name for k in nova.keypairs.list()]
    assert nova.keypairs.get('nc-key').public_key == public
    nova.keypairs.delete('nc-key')
    with pytest.raises(nova_exc.NotFound):
        nova.keypairs.get('nc-key')


def test_server_boot_list_show_delete(stack, nova):
    flavor = nova.flavors.find(name='m1.nano')
    server = nova.servers.create('nc-vm1', image=stack.image_id, flavor=flavor.id,
                                 nics='none')
    views = clients.wait_settled(stack, [server.id])
    assert views[server.id]['status'] == 'ACTIVE', views[server.id].get('fault')
    assert server.id in [s.id for s in nova.servers.list()]
    got = nova.servers.get(server.id)
    assert got.status == 'ACTIVE'
    assert getattr(got, 'OS-EXT-SRV-ATTR:host') in stack.computes
    assert got.flavor['original_name'] == 'm1.nano'
    nova.servers.delete(server.id)
    stack.wait_for(lambda: server.id not in [s.id for s in nova.servers.list()], 120,
                   'server %s deleted' % server.id)
    with pytest.raises(nova_exc.NotFound):
        nova.servers.get(server.id)
    assert clients.allocations(stack, server.id) == {}


def test_server_groups(nova):
    group = nova.server_groups.create(name='nc-group', policy='anti-affinity')
    assert group.policy == 'anti-affinity'
    assert group.id in [g.id for g in nova.server_groups.list()]
    assert nova.server_groups.get(group.id).name == 'nc-group'
    nova.server_groups.delete(group.id)
    with pytest.raises(nova_exc.NotFound):
        nova.server_groups.get(group.id)


def test_aggregates_and_availability_zones(stack, nova):
    host = stack.computes[0]
    aggregate = nova.aggregates.create('nc-agg', 'nc-zone')
    nova.aggregates.add_host(aggregate, host)
    nova.aggregates.set_metadata(aggregate, {'ssd': 'true'})
    got = nova.aggregates.get(aggregate.id)
    assert got.hosts == [host]
    assert got.metadata == {'ssd': 'true', 'availability_zone': 'nc-zone'}
    zones = {z.zoneName: z for z in nova.availability_zones.list()}
    assert 'nc-zone' in zones and zones['nc-zone'].zoneState['available']
    nova.aggregates.remove_host(aggregate, host)
    nova.aggregates.delete(aggregate.id)
    assert 'nc-agg' not in [a.name for a in nova.aggregates.list()]
    assert 'nc-zone' not in [z.zoneName for z in nova.availability_zones.list()]


def test_services_and_hypervisors(stack, nova):
    computes = {s.host: s for s in nova.services.list(binary='nova-compute')}
    assert set(stack.computes) <= set(computes)
    assert all(computes[h].state == 'up' for h in stack.computes)
    hypervisors = {h.hypervisor_hostname: h for h in nova.hypervisors.list()}
    assert set(stack.computes) <= set(hypervisors)
    shown = nova.hypervisors.get(hypervisors[stack.computes[0]].id)
    assert shown.hypervisor_type
    found = nova.hypervisors.search(stack.computes[0])
    assert [h.hypervisor_hostname for h in found] == [stack.computes[0]]


def test_quotas_and_limits(nova):
    project = 'nc-project'
    assert nova.quotas.defaults(project).instances >= 1
    nova.quotas.update(project, instances=7, cores=14)
    got = nova.quotas.get(project)
    assert (got.instances, got.cores) == (7, 14)
    nova.quotas.delete(project)
    assert nova.quotas.get(project).instances == nova.quotas.defaults(project).instances
    limits = {limit.name: limit.value for limit in nova.limits.get().absolute}
    assert limits['maxTotalInstances'] >= 1
    assert 'totalInstancesUsed' in limits

