"""Live migration in the conductor (Nova's LiveMigrationTask).

The checks Nova makes before any host does work: the source compute is up; a named
destination exists, is up, is not the source and runs the same hypervisor (of a
version no older); the destination has room, claimed in Placement for the instance
while the source's allocation passes to the migration (a forced host, API before 2.68,
gets a copy of the source's allocation; any other choice goes through the scheduler,
whose filters see the server group); then both computes' own checks over RPC. A
destination the scheduler chose that fails its checks is left out and the next one
tried, up to ``[scheduler] max_attempts`` hosts.

A refusal undoes it all: the allocation back on the instance (the destination's
dropped), the migration ``error``, the server ACTIVE (or PAUSED) on its host with a
fault, the action's event failed. Before API 2.34 the caller gets the refusal too.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import oslo_messaging as messaging
from oslo_log import log as logging

from novalite import availability_zones, exception, objects
from novalite import context as nl_context
from novalite.compute import power_state
from novalite.conductor.tasks import build, cell
from novalite.conductor.tasks import migrate as moves
from novalite.conf import CONF
from novalite.servicegroup import api as servicegroup_api

if TYPE_CHECKING:
    from novalite.context import RequestContext

LOG = logging.getLogger(__name__)

LIVE_EVENT = 'conductor_live_migrate_instance'
COMPUTE = 'novalite-compute'


def live_migrate_instance(deps: build.Dependencies, context: RequestContext,
                          instance: objects.Instance, host: str | None,
                          block_migration: bool | None, migration: objects.Migration,
                          raise_errors: bool, force: bool = False) -> None:
    """Check, claim and hand the migration to the source host (a cast).

    :param force: the API's ``force`` (2.30 to 2.67) or a host before 2.30: the host
        is taken without the scheduler
    :param raise_errors: API before 2.34: a refusal is raised to the caller as well
    :raises MigrationPreCheckError: (with ``raise_errors``) the migration was refused
    """
    with nl_context.target_cell(context, cell.of_instance(context, instance.uuid)) as cctxt:
        instance._context = cctxt
        migration._context = cctxt
        objects.InstanceActionEvent.event_start(cctxt, instance.uuid, LIVE_EVENT,
                                                host=CONF.host)
        task = _Task(deps, cctxt, context, instance, migration, block_migration)
        try:
            dest, migrate_data = task.execute(host, force)
            assert migrate_data.block_migration is not None, 'the hosts settle it'
            deps.compute_rpcapi.live_migration(cctxt, instance, dest,
                                               migrate_data.block_migration, migration,
                                               migrate_data)
        except Exception as exc:
            failed = _refusal(exc)
            LOG.warning('Live migration of %s refused: %s', instance.uuid,
                        failed.format_message())
            moves._fail(deps, cctxt, instance, migration, task.moved, failed, LIVE_EVENT,
                        instance.vm_state)
            if raise_errors:
                raise failed from None
            return
        objects.InstanceActionEvent.event_finish(cctxt, instance.uuid, LIVE_EVENT,
                                                 host=CONF.host)


def _refusal(exc: BaseException) -> exception.MigrationError:
    """The error to record (and raise before 2.34) for what stopped the migration."""
    if isinstance(exc, moves._Failed):
        exc = exc.error
    if isinstance(exc, exception.MigrationError):
        return exc
    if isinstance(exc, messaging.MessagingTimeout):
        return exception.MigrationPreCheckError(
            reason='a compute host did not answer the live migration checks in time')
    if isinstance(exc, exception.NovaliteException):
        return exception.MigrationPreCheckError(reason=exc.format_message())
    return exception.MigrationError(reason=str(exc) or type(exc).__name__)


class _Task:
    """One live migration's checks and claims; ``moved`` says whether the source
    allocation is the migration's now (so a refusal gives it back)."""

    def __init__(self, deps: build.Dependencies, context: RequestContext,
                 api_context: RequestContext, instance: objects.Instance,
                 migration: objects.Migration, block_migration: bool | None) -> None:
        self.deps = deps
        self.context = context
        self.api_context = api_context
        self.instance = instance
        self.migration = migration
        self.block_migration = block_migration
        self.moved = False
        self.servicegroup = servicegroup_api.API()

    def execute(self, host: str | None, force: bool
                ) -> tuple[str, objects.LiveMigrateData]:
        """:returns: (destination host, the hosts' migrate data)"""
        instance = self.instance
        if instance.power_state not in (power_state.RUNNING, power_state.PAUSED):
            raise exception.InstanceInvalidState(
                instance_uuid=instance.uuid, attr='power_state',
                state=power_state.STATE_MAP.get(instance.power_state or 0, 'unknown'),
                method='live migrate')
        assert instance.host is not None, 'the API checked the server has a host'
        source = self._service(instance.host)
        if host is not None and force:
            return self._forced(source, host)
        return self._scheduled(source, host)

    # -- checks ----------------------------------------------------------------------

    def _service(self, host: str) -> objects.Service:
        """The host's compute service, up. :raises ComputeServiceUnavailable:"""
        service = objects.Service.get_by_host_and_binary(self.context, host, COMPUTE)
        if service is None:
            raise exception.ComputeHostNotFound(host=host)
        if not self.servicegroup.service_is_up(service):
            raise exception.ComputeServiceUnavailable(host=host)
        return service

    def _node(self, host: str) -> objects.ComputeNode:
        nodes = objects.ComputeNodeList.get_all_by_host(self.context, host)
        if not nodes:
            raise exception.ComputeHostNotFound(host=host)
        return nodes[0]

    def _check_destination(self, source: objects.Service, dest: str) -> objects.ComputeNode:
        """The destination's checks that need no RPC: not the source, up, same
        hypervisor type and a version no older."""
        if dest == source.host:
            raise exception.MigrationPreCheckError(
                reason='the server is already on host %s (a live migration must go to '
                       'another host)' % dest)
        self._service(dest)
        assert self.instance.host is not None
        source_node, dest_node = self._node(self.instance.host), self._node(dest)
        if source_node.hypervisor_type != dest_node.hypervisor_type:
            raise exception.MigrationPreCheckError(
                reason='host %s runs %s, the server\'s host %s runs %s' % (
                    dest, dest_node.hypervisor_type, self.instance.host,
                    source_node.hypervisor_type))
        if (dest_node.hypervisor_version or 0) < (source_node.hypervisor_version or 0):
            raise exception.MigrationPreCheckError(
                reason='the hypervisor of host %s (version %s) is older than the '
                       'server\'s host\'s (version %s)' % (
                           dest, dest_node.hypervisor_version,
                           source_node.hypervisor_version))
        return dest_node

    def _host_checks(self, dest: str) -> objects.LiveMigrateData:
        """The destination's and (through it) the source's own checks; the answer
        carries the destination's zone, the server's once it runs there."""
        data = self.deps.compute_rpcapi.check_can_live_migrate_destination(
            self.context, self.instance, dest, self.block_migration, self.migration)
        data.dest_zone = availability_zones.host_zone(self.api_context, dest)
        return data

    def _record(self, dest: str, node: str) -> None:
        self.migration.dest_compute = dest
        self.migration.dest_node = node
        self.migration.save()

    # -- a forced host ---------------------------------------------------------------

    def _forced(self, source: objects.Service, dest: str
                ) -> tuple[str, objects.LiveMigrateData]:
        """No scheduler: the source's allocation is copied onto the destination."""
        node = self._check_destination(source, dest)
        reportclient = self.deps.reportclient
        instance = self.instance
        self.moved = reportclient.move_allocations(self.context, instance.uuid,
                                                   self.migration.uuid)
        held = reportclient.get_allocations_for_consumer(self.context, self.migration.uuid)
        resources: dict[str, int] = {}
        for allocation in held.values():
            for name, amount in allocation['resources'].items():
                resources[name] = resources.get(name, 0) + amount
        if resources and not reportclient.claim_resources(
                self.context, instance.uuid,
                {'allocations': {node.uuid: {'resources': resources}}},
                instance.project_id or '', instance.user_id or ''):
            raise exception.MigrationPreCheckError(
                reason='host %s has not enough free resources for the server (%s)' % (
                    dest, ', '.join('%s=%d' % kv for kv in sorted(resources.items()))))
        self._record(dest, node.hypervisor_hostname or dest)
        return dest, self._host_checks(dest)

    # -- the scheduler's choice ------------------------------------------------------

    def _scheduled(self, source: objects.Service, host: str | None
                   ) -> tuple[str, objects.LiveMigrateData]:
        """Ask the scheduler (for ``host`` only when one is named), then the hosts'
        own checks; a chosen host that refuses is left out and the next asked."""
        instance = self.instance
        if host is not None:
            self._check_destination(source, host)
        tried: list[str] = []
        last: Exception | None = None
        attempts = 1 if host is not None else max(1, CONF.scheduler.max_attempts)
        for _attempt in range(attempts):
            assert source.host is not None
            spec = moves._request_spec(self.api_context, instance, instance.flavor,
                                       [source.host, *tried], [])
            spec.requested_destination = host
            if not self.moved:
                try:
                    selection, _alternates, self.moved = moves._schedule(
                        self.deps, self.context, instance, self.migration, spec)
                except moves._Failed as failed:
                    self.moved = failed.moved
                    raise failed.error from None
            else:
                try:
                    selection = self._select(spec)
                except exception.NoValidHost as exc:
                    # Say why the hosts tried refused, not only that none is left.
                    assert last is not None
                    raise exception.MigrationPreCheckError(
                        reason='%s; before, %s refused: %s' % (
                            exc.format_message(), ', '.join(tried),
                            _refusal(last).format_message())) from exc
            dest = selection.service_host
            try:
                if host is None:
                    self._check_destination(source, dest)
                self._record(dest, selection.nodename)
                return dest, self._host_checks(dest)
            except (exception.MigrationError, exception.ComputeServiceUnavailable,
                    exception.ComputeHostNotFound, messaging.MessagingTimeout) as exc:
                LOG.info('Host %s cannot take %s live: %s', dest, instance.uuid, exc)
                last = exc
                tried.append(dest)
                # The claim on that host goes; the migration keeps the source's.
                self.deps.reportclient.delete_allocation_for_instance(self.context,
                                                                      instance.uuid)
        assert last is not None
        if host is None:
            raise exception.MigrationPreCheckError(
                reason='no host could take the server live after %d attempts; the last '
                       'refusal: %s' % (len(tried), _refusal(last).format_message()))
        raise last

    def _select(self, spec: objects.RequestSpec) -> objects.Selection:
        try:
            host_lists = self.deps.query_client.select_destinations(
                self.context, spec, [self.instance.uuid], return_objects=True,
                return_alternates=False)
        except Exception as exc:
            raise build._scheduling_error(exc) from exc
        return host_lists[0][0]
