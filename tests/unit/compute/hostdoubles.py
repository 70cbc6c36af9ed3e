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

    def __init__(self, reportclient, context, compute_task_api=None, net_api=None,
                 host=HOST):
        self.host = host
        self.driver = fake.FakeDriver()
        self.driver.init_host(host)
        self.reportclient = reportclient
        self.network_api = net_api or network_api.API()
        self.compute_task_api = compute_task_api or RecordingTaskAPI()
        self.rt = resource_tracker.ResourceTracker(host, self.driver, reportclient)
        self.rt.update_available_resource(context, host)
        self._locks: dict[str, threading.Lock] = collections.defaultdict(threading.Lock)

    def instance_lock(self, instance_uuid):
        return self._locks[instance_uuid]


def instance_on_host(mgr, cctxt, vm_state='active', task_state=None):
    """An instance on the host, allocated in Placement and tracked, as after its claim."""
    flavor = objects.Flavor(id=1, flavorid='f1', name='f1', memory_mb=512, vcpus=1,
                            root_gb=1, ephemeral_gb=0, swap=0, extra_specs={})
    instance = objects.Instance(cctxt, uuid=str(uuid.uuid4()), host=mgr.host, node=mgr.host,
                                project_id='p1', user_id='u1', vm_state=vm_state,
                                task_state=task_state, flavor=flavor, image_ref='img-1',
                                system_metadata={})
    instance.create()
    node = mgr.rt.compute_nodes[mgr.host]
    assert mgr.reportclient.claim_resources(cctxt, instance.uuid, {'allocations': {
        node.uuid: {'resources': {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}}}},
        'p1', 'u1')
    mgr.rt.update_available_resource(cctxt, mgr.host)
    return instance


def allocations(mgr, cctxt, instance_uuid):
    return mgr.reportclient.get_allocations_for_consumer(cctxt, instance_uuid)


def stored(cctxt, instance_uuid):
    """The instance as the cell database has it now (deleted ones too)."""
    return objects.InstanceList.get_by_uuids(cctxt, [instance_uuid])[0]


class ScriptedReportClient:
    """The real report client behind a recorder: each call is logged in ``calls`` as
    (method, args), and ``fail[method]`` lists exceptions raised in turn by that
    method's next calls before they reach Placement (``None``: that call goes through)
    (a test double)."""

    def __init__(self, client, **fail):
        self._client = client
        self.fail: dict[str, list[BaseException]] = {k: list(v) for k, v in fail.items()}
        self.calls: list[tuple[str, tuple]] = []

    def __getattr__(self, name):
        real = getattr(self._client, name)
        if not callable(real):
            return real

        def call(*args, **kwargs):
            self.calls.append((name, args[1:]))
            error = self.fail[name].pop(0) if self.fail.get(name) else None
            if error is not None:
                raise error
            return real(*args, **kwargs)
        return call

    def called(self, name):
        return [args for method, args in self.calls if method == name]


class RecordingNetworkAPI:
    """Neutron as a recorder: allocation gives ``ports`` (or raises ``allocate_error``),
    releases and unbindings are recorded (a test double)."""

    def __init__(self, ports=(), allocate_error=None, unbind_error=None):
        self.ports = list(ports)
        self.allocate_error = allocate_error
        self.unbind_error = unbind_error
        self.released: list[tuple[list, list]] = []
        self.unbound: list[str] = []
        self.bound: list[str] = []

    def allocate_for_instance(self, context, instance, requests, host, security_groups=None):
        if self.allocate_error is not None:
            raise self.allocate_error
        return list(self.ports)

    def deallocate_for_instance(self, context, instance, network_info=None, preserve=()):
        self.released.append(([v['id'] for v in network_info or []], list(preserve)))

    def bind_ports_to_host(self, context, instance, host, network_info):
        self.bound.append(host)
        return list(network_info or [])

    def unbind_ports(self, context, instance, network_info):
        if self.unbind_error is not None:
            raise self.unbind_error
        self.unbound.append(instance.uuid)


class RecordingImageAPI:
    """Glance as a recorder of the images deleted (a test double)."""

    def __init__(self):
        self.deleted: list[str] = []

    def delete(self, context, image_id):
        self.deleted.append(image_id)


class RecordingComputeRPC:
    """The compute RPC client as a recorder of its casts; ``error`` is raised by every
    cast instead (the bus or the destination unreachable) (a test double)."""

    def __init__(self, error=None):
        self.error = error
        self.casts: list[tuple[str, tuple, dict]] = []

    def __getattr__(self, name):
        if name.startswith('_'):
            raise AttributeError(name)

        def cast(context, *args, **kwargs):
            if self.error is not None:
                raise self.error
            self.casts.append((name, args, kwargs))
        return cast


def start_action(cctxt, instance_uuid, action='test'):
    """The instance-action record a request starts before a host's event (the API's)."""
    objects.InstanceAction.action_start(cctxt, instance_uuid, action, want_result=False)


def fault(cctxt, instance_uuid):
    """The latest fault's message, or None."""
    latest = objects.InstanceFault.get_latest_for_instance(cctxt, instance_uuid)
    return latest.message if latest is not None else None


def new_migration(cctxt, instance, dest, status='pre-migrating', migration_type='resize',
                  new_flavor_id=None):
    """A migration of ``instance`` from its host to ``dest``, as the conductor makes it."""
    migration = objects.Migration(
        cctxt, instance_uuid=instance.uuid, source_compute=instance.host,
        source_node=instance.node, dest_compute=dest, dest_node=dest, dest_host=None,
        old_instance_type_id=instance.flavor.id,
        new_instance_type_id=new_flavor_id or instance.flavor.id, status=status,
        migration_type=migration_type, hidden=False, cross_cell_move=False,
        user_id=instance.user_id, project_id=instance.project_id)
    migration.create()
    return migration
