"""The resource tracker against a real Placement: what each step costs in requests."""
from __future__ import annotations

import collections
import time
import uuid

import pytest

from novalite import context as nl_context
from novalite import exception, objects
from novalite.compute import resource_tracker
from novalite.virt import fake

HOST = 'rt-host'


class CountingReportClient:
    """The real report client, with a count of the HTTP requests it sends (a test
    wrapper: every call goes on to Placement)."""

    def __init__(self, client):
        self._client = client
        self.requests = collections.Counter()
        real = client._request

        def counted(method, url, *args, **kwargs):
            self.requests[method] += 1
            return real(method, url, *args, **kwargs)
        client._request = counted

    def __getattr__(self, name):
        return getattr(self._client, name)

    def total(self):
        return sum(self.requests.values())


@pytest.fixture
def tracker(cloud):
    driver = fake.FakeDriver()
    driver.init_host(HOST)
    client = CountingReportClient(cloud.reportclient)
    rt = resource_tracker.ResourceTracker(HOST, driver, client)
    with nl_context.target_cell(cloud.context, cloud.cell) as cctxt:
        rt.update_available_resource(cctxt, HOST)
        yield rt, client, cctxt


def _instance(cctxt, vcpus=1, memory_mb=512):
    flavor = objects.Flavor(id=1, flavorid='f1', name='f1', memory_mb=memory_mb,
                            vcpus=vcpus, root_gb=1, ephemeral_gb=0, swap=0, extra_specs={})
    instance = objects.Instance(cctxt, uuid=str(uuid.uuid4()), project_id='p1',
                                user_id='u1', vm_state='building', flavor=flavor)
    instance.create()
    return instance


def _allocate(rt, cctxt, instance):
    """What the scheduler does before the claim: allocate in Placement."""
    node = rt.compute_nodes[HOST]
    flavor = instance.flavor
    assert rt.reportclient.claim_resources(cctxt, instance.uuid, {'allocations': {
        node.uuid: {'resources': {'VCPU': flavor.vcpus, 'MEMORY_MB': flavor.memory_mb,
                                  'DISK_GB': flavor.root_gb}}}}, 'p1', 'u1')


def test_claims_send_no_placement_request_however_full_the_host(tracker):
    rt, client, cctxt = tracker
    instances = [_instance(cctxt) for _ in range(30)]
    saves = []
    tracked_node = rt.compute_nodes[HOST]
    real_save = tracked_node.save
    tracked_node.save = lambda: (saves.append(1), real_save())
    client.requests.clear()
    for instance in instances:
        rt.instance_claim(cctxt, instance, HOST)
    assert client.total() == 0
    # The node record follows within NODE_SAVE_DELAY, in one write for all the claims.
    deadline = time.monotonic() + 10
    while True:
        node = objects.ComputeNode.get_by_host_and_nodename(cctxt, HOST, HOST)
        if (node.vcpus_used, node.running_vms) == (30, 30) or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert (node.vcpus_used, node.running_vms) == (30, 30)
    assert len(saves) <= 2


def test_a_claim_that_does_not_fit_is_refused_and_records_nothing(tracker):
    rt, _client, cctxt = tracker
    big = _instance(cctxt, memory_mb=10 ** 7)
    with pytest.raises(exception.ComputeResourcesUnavailable):
        rt.instance_claim(cctxt, big, HOST)
    assert big.uuid not in rt.tracked
    assert objects.Instance.get_by_uuid(cctxt, big.uuid).host is None


def test_periodic_run_costs_the_same_requests_with_1_or_30_instances(tracker):
    rt, client, cctxt = tracker
    costs = []
    for count in (1, 30):
        for _ in range(count - len(rt.tracked)):
            instance = _instance(cctxt, memory_mb=64)
            _allocate(rt, cctxt, instance)
            rt.instance_claim(cctxt, instance, HOST)
        client.requests.clear()
        rt.update_available_resource(cctxt, HOST)
        costs.append(dict(client.requests))
    assert costs[0] == costs[1]
    # Inventory unchanged: nothing is written, only the provider's allocations read.
    assert costs[1] == {'GET': 1}


def test_periodic_run_removes_allocations_of_deleted_instances_only(tracker, cloud):
    rt, client, cctxt = tracker
    kept, gone = _instance(cctxt), _instance(cctxt)
    for instance in (kept, gone):
        _allocate(rt, cctxt, instance)
        rt.instance_claim(cctxt, instance, HOST)
    scheduled = _instance(cctxt)  # allocated, not yet claimed on the host
    _allocate(rt, cctxt, scheduled)
    unknown = str(uuid.uuid4())  # allocated, not yet created in the cell
    node = rt.compute_nodes[HOST]
    rt.reportclient.claim_resources(cctxt, unknown, {'allocations': {
        node.uuid: {'resources': {'VCPU': 1}}}}, 'p1', 'u1')
    objects.Instance.get_by_uuid(cctxt, gone.uuid).destroy()

    rt.update_available_resource(cctxt, HOST)
    left = client.get_allocations_for_resource_provider(cctxt, node.uuid)
    assert set(left) == {kept.uuid, scheduled.uuid, unknown}


def test_inventory_is_pushed_only_when_it_changes(tracker):
    rt, client, cctxt = tracker
    client.requests.clear()
    rt.update_available_resource(cctxt, HOST)
    assert client.requests['PUT'] == 0
    from novalite.conf import CONF
    CONF.set_override('vcpus', CONF.fake_driver.vcpus + 4, group='fake_driver')
    try:
        rt.update_available_resource(cctxt, HOST)
    finally:
        CONF.clear_override('vcpus', group='fake_driver')
    assert client.requests['PUT'] == 1
    inventory = client.get_provider_usages_and_inventories(cctxt, rt.compute_nodes[HOST].uuid)
    assert inventory is not None


def test_periodic_run_removes_allocations_of_ended_migrations_only(tracker):
    rt, client, cctxt = tracker
    node = rt.compute_nodes[HOST]
    instance = _instance(cctxt)
    consumers = {}
    for status in ('finished', 'confirmed'):
        migration = objects.Migration(cctxt, instance_uuid=instance.uuid, status=status,
                                      source_compute=HOST, dest_compute='elsewhere',
                                      migration_type='resize')
        migration.create()
        assert rt.reportclient.claim_resources(cctxt, migration.uuid, {'allocations': {
            node.uuid: {'resources': {'VCPU': 1}}}}, 'p1', 'u1')
        consumers[status] = migration.uuid

    rt.update_available_resource(cctxt, HOST)
    left = client.get_allocations_for_resource_provider(cctxt, node.uuid)
    # A resize waiting for its confirmation keeps the source; a confirmed one does not.
    assert consumers['finished'] in left
    assert consumers['confirmed'] not in left


def _provider_traits(rt, client, cctxt):
    return set(client.get_provider_traits(cctxt, rt.compute_nodes[HOST].uuid)[1])


def test_a_disabled_service_is_tagged_by_the_periodic_run(tracker):
    rt, client, cctxt = tracker
    assert 'COMPUTE_STATUS_DISABLED' not in _provider_traits(rt, client, cctxt)
    service = objects.Service(cctxt, host=HOST, binary='novalite-compute',
                              topic='compute', report_count=0, disabled=True)
    service.create()
    rt.update_available_resource(cctxt, HOST)
    assert 'COMPUTE_STATUS_DISABLED' in _provider_traits(rt, client, cctxt)
    # Unchanged: no second write.
    client.requests.clear()
    rt.update_available_resource(cctxt, HOST)
    assert client.requests['PUT'] == 0
    service.disabled = False
    service.save()
    rt.update_available_resource(cctxt, HOST)
    assert 'COMPUTE_STATUS_DISABLED' not in _provider_traits(rt, client, cctxt)
    # The API's set_host_enabled (through the compute manager) tags at once.
    rt.set_service_disabled(cctxt, True)
    assert 'COMPUTE_STATUS_DISABLED' in _provider_traits(rt, client, cctxt)
