"""A compute host for the flow tests: the fake driver, a real resource tracker and
Placement, and a manager that carries them as the compute manager does."""
from __future__ import annotations

import collections
import threading
import uuid

from novalite import objects
from novalite.compute import resource_tracker
from novalite.network import api as network_api
from novalite.virt import fake

HOST = 'flow-host'


class FlakyReportClient:
    """The real report client, except that ``delete_allocation_for_instance`` raises
    each exception of ``failures`` in turn before it reaches Placement (a test wrapper:
    every other call goes on to Placement)."""

    def __init__(self, client, failures=()):
        self._client = client
        self.failures = list(failures)
        self.deletes = 0

    def delete_allocation_for_instance(self, context, consumer_uuid):
        self.deletes += 1
        if self.failures:
            raise self.failures.pop(0)
        return self._client.delete_allocation_for_instance(context, consumer_uuid)

    def __getattr__(self, name):
        return getattr(self._client, name)


class RecordingTaskAPI:
    """The conductor's task API as a recorder of what the host hands back to it."""

    def __init__(self, error=None):
        self.builds: list[dict] = []
        self.error = error

    def build_instances(self, context, **kwargs):
        if self.error is not None:
            raise self.error
        self.builds.append(kwargs)


class Manager:
    """What the compute flows use of ComputeManager."""

    def __init__(self, reportclient, context, compute_task_api=None, net_api=None):
        self.host = HOST
        self.driver = fake.FakeDriver()
        self.driver.init_host(HOST)
        self.reportclient = reportclient
        self.network_api = net_api or network_api.API()
        self.compute_task_api = compute_task_api or RecordingTaskAPI()
        self.rt = resource_tracker.ResourceTracker(HOST, self.driver, reportclient)
        self.rt.update_available_resource(context, HOST)
        self._locks: dict[str, threading.Lock] = collections.defaultdict(threading.Lock)

    def instance_lock(self, instance_uuid):
        return self._locks[instance_uuid]


def instance_on_host(mgr, cctxt, vm_state='active', task_state=None):
    """An instance on the host, allocated in Placement and tracked, as after its claim."""
    flavor = objects.Flavor(id=1, flavorid='f1', name='f1', memory_mb=512, vcpus=1,
                            root_gb=1, ephemeral_gb=0, swap=0, extra_specs={})
    instance = objects.Instance(cctxt, uuid=str(uuid.uuid4()), host=HOST, node=HOST,
                                project_id='p1', user_id='u1', vm_state=vm_state,
                                task_state=task_state, flavor=flavor, image_ref='img-1',
                                system_metadata={})
    instance.create()
    node = mgr.rt.compute_nodes[HOST]
    assert mgr.reportclient.claim_resources(cctxt, instance.uuid, {'allocations': {
        node.uuid: {'resources': {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}}}},
        'p1', 'u1')
    mgr.rt.update_available_resource(cctxt, HOST)
    return instance


def allocations(mgr, cctxt, instance_uuid):
    return mgr.reportclient.get_allocations_for_consumer(cctxt, instance_uuid)


def stored(cctxt, instance_uuid):
    """The instance as the cell database has it now (deleted ones too)."""
    return objects.InstanceList.get_by_uuids(cctxt, [instance_uuid])[0]
