"""What this compute host has and uses, kept in compute_nodes and in Placement.

One lock guards the tracker. A claim costs no Placement request (the scheduler already
allocated); usage is rebuilt from this host's instances on each periodic run; the
inventory is pushed to Placement only when it changed; allocations on this host's
providers whose instance is gone are removed (one GET per provider per run, outside the
lock). The compute node record follows claims within ``NODE_SAVE_DELAY`` seconds, one
write for all the claims of that time, off the build's path (Placement, not the record,
is what the scheduler counts on).
"""
from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from oslo_log import log as logging

from novalite import exception, executor, objects
from novalite.availability_zones import COMPUTE_BINARY
from novalite.compute import claims, move_claims
from novalite.compute.provider_tree import COMPUTE_STATUS_DISABLED, ProviderTree
from novalite.conf import CONF
from novalite.context import RequestContext
from novalite.virt import driver as virt_driver

if TYPE_CHECKING:
    from novalite.scheduler.client.report import SchedulerReportClient

LOG = logging.getLogger(__name__)

# Seconds a claim's change of the compute node record may wait to be written.
NODE_SAVE_DELAY = 0.5


class ResourceTracker:
    def __init__(self, host: str, driver: virt_driver.ComputeDriver,
                 reportclient: SchedulerReportClient) -> None:
        self.host = host
        self.driver = driver
        self.reportclient = reportclient
        self.compute_nodes: dict[str, objects.ComputeNode] = {}
        self.provider_tree = ProviderTree()
        self._pushed_traits: dict[str, set[str]] = {}
        # Whether this host's compute service is disabled: its providers then carry
        # COMPUTE_STATUS_DISABLED, which the scheduler's Placement query forbids.
        self.service_disabled = False
        # instance uuid -> (nodename, Usage)
        self.tracked: dict[str, tuple[str, claims.Usage]] = {}
        self._lock = threading.RLock()
        self._save_pending = False

    # -- periodic ----------------------------------------------------------------------

    def update_available_resource(self, context: RequestContext, nodename: str) -> None:
        """Refresh the node record and the Placement inventory from the hypervisor and
        this host's instances."""
        resources = self.driver.get_available_resource(nodename)
        instances = objects.InstanceList.get_by_host(context, self.host)
        service = objects.Service.get_by_host_and_binary(context, self.host,
                                                         COMPUTE_BINARY)
        if service is not None:
            self.service_disabled = service.disabled
        moves = move_claims.migration_usage(context, self.host, nodename, instances)
        with self._lock:
            node = self._init_compute_node(context, nodename, resources)
            self.tracked = {
                i.uuid: (i.node or nodename, claims.Usage.of_instance(i))
                for i in instances if i.node in (None, nodename) and not i.deleted}
            self.tracked.update(moves)
            self._update(context, node, resources)
            tracked = set(self.tracked)
        self._remove_orphan_allocations(context, node, tracked)

    def _remove_orphan_allocations(self, context: RequestContext, node: objects.ComputeNode,
                                   tracked: set[str]) -> None:
        """Delete the allocations on ``node``'s provider of instances that are deleted
        (a delete that could not reach Placement left them, or a host that was down).

        A consumer this cell does not know is left alone: it may be an instance the
        scheduler has just placed and the conductor not yet created. An instance on
        another host is only reported (an operator's or a migration's business).
        """
        try:
            allocations = self.reportclient.get_allocations_for_resource_provider(
                context, node.uuid)
        except exception.NovaliteException as exc:
            LOG.warning('Could not read the allocations of %s to remove orphans: %s',
                        node.hypervisor_hostname, exc)
            return
        untracked = [consumer for consumer in allocations if consumer not in tracked]
        if not untracked:
            return
        instances = {i.uuid: i for i in objects.InstanceList.get_by_uuids(context, untracked)}
        for instance in instances.values():
            if instance.deleted:
                LOG.warning('Removing the allocation of deleted instance %s from %s',
                            instance.uuid, node.hypervisor_hostname)
                self.reportclient.delete_allocation_for_instance(context, instance.uuid)
            elif instance.host and instance.host != self.host:
                # A move under way (its migration holds the source) or a leftover an
                # operator should look at: only said, never removed here.
                LOG.info('Instance %s, on host %s, has an allocation on %s of this host',
                         instance.uuid, instance.host, node.hypervisor_hostname)
        for consumer in untracked:
            if consumer not in instances:
                self._remove_finished_migration_allocation(context, consumer, node)

    def _remove_finished_migration_allocation(self, context: RequestContext, consumer: str,
                                              node: objects.ComputeNode) -> None:
        """A migration holds the source's allocation while a resize waits for its
        confirmation; once the migration has ended (or its instance is gone) the
        allocation is an orphan. Other unknown consumers are left alone."""
        try:
            migration = objects.Migration.get_by_uuid(context, consumer)
        except exception.MigrationNotFound:
            return
        gone = [i for i in objects.InstanceList.get_by_uuids(context,
                                                             [migration.instance_uuid])
                if i.deleted] if migration.instance_uuid is not None else []
        if migration.in_progress and not gone:
            return
        LOG.warning('Removing the allocation on %s of migration %s (%s) of instance %s',
                    node.hypervisor_hostname, consumer,
                    'instance deleted' if gone else migration.status,
                    migration.instance_uuid)
        self.reportclient.delete_allocation_for_instance(context, consumer)

    def _init_compute_node(self, context: RequestContext, nodename: str,
                           resources: dict) -> objects.ComputeNode:
        node = self.compute_nodes.get(nodename)
        if node is None:
            try:
                node = objects.ComputeNode.get_by_host_and_nodename(context, self.host,
                                                                    nodename)
            except exception.ComputeHostNotFound:
                node = objects.ComputeNode(context, host=self.host, mapped=0,
                                           hypervisor_hostname=nodename,
                                           **self._node_values(resources))
                node.create()
                LOG.info('Compute node record created for %s:%s with uuid %s',
                         self.host, nodename, node.uuid)
            self.compute_nodes[nodename] = node
        if not self.provider_tree.exists(nodename):
            self.reportclient.ensure_resource_provider(context, node.uuid, nodename)
            self.provider_tree.new_root(nodename, node.uuid)
        return node

    @staticmethod
    def _node_values(resources: dict) -> dict:
        keys = ('vcpus', 'memory_mb', 'local_gb', 'hypervisor_type', 'hypervisor_version',
                'cpu_info', 'disk_available_least', 'supported_instances')
        values = {k: resources[k] for k in keys if k in resources}
        values.update(cpu_allocation_ratio=virt_driver.allocation_ratio('cpu'),
                      ram_allocation_ratio=virt_driver.allocation_ratio('ram'),
                      disk_allocation_ratio=virt_driver.allocation_ratio('disk'),
                      host_ip=CONF.my_ip)
        return values

    def _used(self, nodename: str) -> claims.Usage:
        usages = [u for n, u in self.tracked.values() if n == nodename]
        return claims.Usage(sum(u.vcpus for u in usages), sum(u.memory_mb for u in usages),
                            sum(u.disk_gb for u in usages))

    def _update(self, context: RequestContext, node: objects.ComputeNode,
                resources: dict | None = None) -> None:
        """Write the node's usage if it changed; push inventory if it changed."""
        if resources is not None:
            for key, value in self._node_values(resources).items():
                if getattr(node, key) != value:
                    setattr(node, key, value)
        nodename = node.hypervisor_hostname
        # Every node this tracker keeps was read or created by its name.
        assert nodename is not None
        used = self._used(nodename)
        node.vcpus_used = used.vcpus
        node.memory_mb_used = used.memory_mb + CONF.reserved_host_memory_mb
        node.local_gb_used = used.disk_gb
        node.free_ram_mb = node.memory_mb - node.memory_mb_used
        node.free_disk_gb = node.local_gb - node.local_gb_used
        node.running_vms = sum(1 for n, _u in self.tracked.values()
                               if n == nodename)
        node.current_workload = 0
        if resources is not None:
            if node.obj_what_changed():
                node.save()
        else:
            self._save_nodes_soon()
        if resources is not None:
            self.driver.update_provider_tree(self.provider_tree, nodename)
            data = self.provider_tree.data(nodename)
            self.reportclient.set_inventory_for_provider(context, data.uuid, data.inventory)
            self._push_traits(context, nodename)

    def _push_traits(self, context: RequestContext, nodename: str) -> None:
        """Send the node's traits, with the service's status trait, if they changed."""
        data = self.provider_tree.data(nodename)
        traits = set(data.traits) - {COMPUTE_STATUS_DISABLED}
        if self.service_disabled:
            traits.add(COMPUTE_STATUS_DISABLED)
        self.provider_tree.update_traits(nodename, traits)
        if traits != self._pushed_traits.get(data.uuid):
            self.reportclient.set_traits_for_provider(context, data.uuid, sorted(traits))
            self._pushed_traits[data.uuid] = traits

    def set_service_disabled(self, context: RequestContext, disabled: bool) -> None:
        """Tag (or untag) every node's provider at once, not at the next periodic run:
        the host was disabled or enabled through the API (os-services, os-hosts)."""
        with self._lock:
            self.service_disabled = disabled
            for nodename in self.compute_nodes:
                if self.provider_tree.exists(nodename):
                    self._push_traits(context, nodename)

    def _save_nodes_soon(self) -> None:
        """Write the changed node records within NODE_SAVE_DELAY (lock held)."""
        if not self._save_pending and any(n.obj_what_changed()
                                          for n in self.compute_nodes.values()):
            self._save_pending = True
            executor.spawn(self._save_nodes_later)

    def _save_nodes_later(self) -> None:
        time.sleep(NODE_SAVE_DELAY)
        with self._lock:
            self._save_pending = False
            for node in self.compute_nodes.values():
                if node.obj_what_changed():
                    node.save()

    # -- claims ------------------------------------------------------------------------

    def instance_claim(self, context: RequestContext, instance: objects.Instance, nodename: str,
                       expected_task_state: str | Sequence[str | None] | None = None) -> None:
        """Claim the instance's flavor on ``nodename`` and record the host on it, in
        one save with whatever else the caller changed on the instance.

        :raises ComputeResourcesUnavailable: it does not fit (the build reschedules).
        :raises UnexpectedTaskStateError: ``expected_task_state`` was given and the
            instance is in another (it is being deleted): nothing is claimed.
        """
        wanted = claims.Usage.of_instance(instance)
        with self._lock:
            node = self.compute_nodes.get(nodename)
            if node is None:
                raise exception.ComputeResourcesUnavailable(
                    reason='node %s is not known to this host yet' % nodename)
            claims.test_claim(node, self._used(nodename), wanted)
            instance.host = self.host
            instance.node = nodename
            instance.launched_on = self.host
            instance.compute_id = node.id
            if expected_task_state is None:
                instance.save()
            else:
                instance.save(expected_task_state=expected_task_state)
            self.tracked[instance.uuid] = (nodename, wanted)
            self._update(context, node)

    def build_failed(self, context: RequestContext, nodename: str) -> None:
        """Count a failed build: the BuildFailureWeigher steers builds away from a host
        that keeps failing them. A success resets the count, as in Nova."""
        self._set_failed_builds(context, nodename, None)

    def build_succeeded(self, context: RequestContext, nodename: str) -> None:
        self._set_failed_builds(context, nodename, 0)

    def _set_failed_builds(self, context: RequestContext, nodename: str, value: int | None) -> None:
        with self._lock:
            node = self.compute_nodes.get(nodename)
            if node is None:
                return
            stats = dict(node.stats or {})
            current = int(stats.get('failed_builds') or 0)
            new = current + 1 if value is None else value
            if new != current or 'failed_builds' not in stats:
                stats['failed_builds'] = str(new)
                node.stats = stats
                node.save()

    def abort_instance_claim(self, context: RequestContext, instance: objects.Instance,
                             nodename: str) -> None:
        """Undo a claim after a failed build (the instance is rescheduled or in ERROR)."""
        with self._lock:
            tracked = self.tracked.pop(instance.uuid, None)
            if tracked is not None:
                node = self.compute_nodes.get(tracked[0] or nodename)
                if node is not None:
                    self._update(context, node)

    def free_instance(self, context: RequestContext, instance: objects.Instance) -> None:
        """Forget a deleted instance's usage."""
        self.abort_instance_claim(context, instance, instance.node or '')

    # -- move claims (resize, cold migration, evacuation) -----------------------------------

    def move_claim(self, context: RequestContext, instance: objects.Instance,
                   flavor: objects.Flavor, migration: objects.Migration, nodename: str) -> None:
        """Claim ``flavor`` on ``nodename`` for an instance moving here.

        :raises ComputeResourcesUnavailable: it does not fit
        """
        wanted = claims.Usage.of_flavor(flavor)
        with self._lock:
            node = self.compute_nodes.get(nodename)
            if node is None:
                raise exception.ComputeResourcesUnavailable(
                    reason='node %s is not known to this host yet' % nodename)
            claims.test_claim(node, self._used(nodename), wanted)
            self.tracked[migration.uuid] = (nodename, wanted)
            self._update(context, node)

    def drop_move_claim(self, context: RequestContext, key: str) -> None:
        """Forget what a move held here (``key``: the migration or instance uuid)."""
        with self._lock:
            tracked = self.tracked.pop(key, None)
            node = self.compute_nodes.get(tracked[0]) if tracked else None
            if node is not None:
                self._update(context, node)
