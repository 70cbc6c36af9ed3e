"""``novalite-manage placement``: allocations healed and audited, aggregates mirrored
(the finding and fixing is in ``novalite.conductor.tasks.heal_allocations``)."""
from __future__ import annotations

from oslo_log import log as logging

from novalite import context as nl_context
from novalite import exception, objects
from novalite.cmd.manage.common import args
from novalite.conductor.tasks import heal_allocations as heal
from novalite.context import RequestContext
from novalite.scheduler.client import report

LOG = logging.getLogger(__name__)

# Exit codes, as nova-manage's.
HEALED, MAX_COUNT_REACHED, NO_COMPUTE_NODE, HEAL_FAILED, NOTHING_HEALED = 0, 1, 2, 3, 4
NO_ORPHANS, AUDIT_ERROR, ORPHANS_FOUND, ORPHANS_DELETED = 0, 1, 3, 4
SYNCED, MANY_NODES, PLACEMENT_ERROR, AGGREGATE_UPDATE_FAILED = 0, 1, 2, 3
HOSTS_UNMAPPED, NODES_NOT_FOUND, PROVIDER_NOT_FOUND = 4, 5, 6
INVALID_INPUT, UNEXPECTED = 127, 255


class _Stop(Exception):
    """Ends heal_allocations with an exit code (the message is printed already)."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


class PlacementCommands:
    """Placement: allocations healed, audited, aggregates mirrored."""

    def __init__(self) -> None:
        self._client: report.SchedulerReportClient | None = None

    @property
    def client(self) -> report.SchedulerReportClient:
        if self._client is None:
            self._client = report.SchedulerReportClient()
        return self._client

    # -- heal_allocations ------------------------------------------------------------

    @args('--max-count', metavar='N', dest='max_count', type=int,
          help='Heal at most N instances, then exit 1 if more are left (default: all)')
    @args('--verbose', action='store_true', help='Say what is done with each instance')
    @args('--dry-run', action='store_true', dest='dry_run',
          help='Print what would be healed, change nothing (exit 4)')
    @args('--instance', metavar='UUID', dest='instance_uuid',
          help='Only this instance (--max-count has no effect then)')
    @args('--force', action='store_true',
          help='Write the allocations from the flavor even if some exist (needs --instance)')
    @args('--cell', metavar='UUID', dest='cell_uuid', help='Only the instances of this cell')
    def heal_allocations(self, max_count: int | None = None, verbose: bool = False,
                         dry_run: bool = False, instance_uuid: str | None = None,
                         force: bool = False, cell_uuid: str | None = None) -> int:
        """Create the missing allocations of the instances on a host, from their flavor.
        Exit 0: some created, 1: --max-count reached with more to do, 2: an instance's
        compute node not found, 3: Placement refused an allocation, 4: nothing to do,
        127: invalid input, 255: unexpected error."""
        if max_count is not None and max_count < 1:
            print('Must supply a positive integer for --max-count.')
            return INVALID_INPUT
        if instance_uuid and cell_uuid:
            print('The --cell and --instance options are mutually exclusive.')
            return INVALID_INPUT
        if force and not instance_uuid:
            print('--force requires --instance.')
            return INVALID_INPUT
        # One instance asked for: say why it is left as it is, verbose or not.
        verbose = verbose or bool(instance_uuid)
        ctxt = nl_context.get_admin_context()
        try:
            work = (self._one_instance(ctxt, instance_uuid) if instance_uuid
                    else self._cells_instances(ctxt, cell_uuid))
            return self._heal(work, max_count, verbose, dry_run, force)
        except _Stop as stop:
            return stop.code
        except Exception as exc:
            LOG.exception('heal_allocations failed')
            print('Unexpected error: %s' % exc)
            return UNEXPECTED

    def _one_instance(self, ctxt: RequestContext, instance_uuid: str
                      ) -> list[tuple[RequestContext, objects.Instance]]:
        try:
            mapping = objects.InstanceMapping.get_by_instance_uuid(ctxt, instance_uuid)
        except exception.InstanceMappingNotFound:
            mapping = None
        if mapping is None or mapping.cell_mapping is None:
            print("Unable to find cell for instance %s, is it mapped? Try running "
                  "'novalite-manage cell_v2 verify_instance' or 'novalite-manage cell_v2 "
                  "map_instances'." % instance_uuid)
            raise _Stop(INVALID_INPUT)
        with nl_context.target_cell(ctxt, mapping.cell_mapping) as cctxt:
            try:
                return [(cctxt, objects.Instance.get_by_uuid(cctxt, instance_uuid))]
            except exception.InstanceNotFound:
                print('Instance with UUID %s not found.' % instance_uuid)
                raise _Stop(INVALID_INPUT) from None

    def _cells_instances(self, ctxt: RequestContext, cell_uuid: str | None
                         ) -> list[tuple[RequestContext, objects.Instance]]:
        try:
            cells = heal.live_cells(ctxt, cell_uuid)
        except exception.CellMappingNotFound:
            print('Cell with uuid %s was not found.' % cell_uuid)
            raise _Stop(INVALID_INPUT) from None
        work: list[tuple[RequestContext, objects.Instance]] = []
        for cell in cells:
            with nl_context.target_cell(ctxt, cell) as cctxt:
                work.extend((cctxt, i) for i in heal.settled_instances(cctxt))
        return work

    def _heal(self, work: list[tuple[RequestContext, objects.Instance]],
              max_count: int | None, verbose: bool, dry_run: bool, force: bool) -> int:
        healed = 0
        for cctxt, instance in work:
            if max_count is not None and healed >= max_count:
                print('Max count reached. Processed %d instances.' % healed)
                return MAX_COUNT_REACHED
            if self._heal_one(cctxt, instance, verbose, dry_run, force):
                healed += 1
        print('Processed %d instances.' % healed)
        return HEALED if healed and not dry_run else NOTHING_HEALED

    def _heal_one(self, cctxt: RequestContext, instance: objects.Instance, verbose: bool,
                  dry_run: bool, force: bool) -> bool:
        why_not = heal.why_not_healable(cctxt, instance)
        if why_not is not None:
            if verbose:
                print(why_not)
            return False
        try:
            finding = heal.check_instance(cctxt, self.client, instance, force)
        except exception.ComputeHostNotFound:
            print('Unable to find the compute node %s/%s of instance %s.'
                  % (instance.host, instance.node, instance.uuid))
            raise _Stop(NO_COMPUTE_NODE) from None
        if finding is None:
            if verbose:
                print('Instance %s already has allocations.' % instance.uuid)
            return False
        if dry_run:
            print('[dry-run] Create allocations for instance %s: %s'
                  % (instance.uuid, finding.allocations))
            return True
        try:
            written = heal.heal_missing(cctxt, self.client, finding)
        except exception.ResourceProviderError as exc:
            print('Unable to create allocations for instance %s: %s' % (instance.uuid, exc))
            raise _Stop(HEAL_FAILED) from None
        if not written:
            print('Instance %s changed while it was healed; left as it is.' % instance.uuid)
            return False
        if verbose:
            print('Successfully created allocations for instance %s: %s'
                  % (instance.uuid, finding.allocations))
        return True

    # -- audit -----------------------------------------------------------------------

    @args('--verbose', action='store_true', help='Say what is checked')
    @args('--delete', action='store_true', help='Delete the orphan allocations found')
    @args('--resource_provider', metavar='UUID', help='Only this resource provider')
    def audit(self, verbose: bool = False, delete: bool = False,
              resource_provider: str | None = None) -> int:
        """Find the allocations on compute node providers whose consumer is neither an
        instance nor a migration. Exit 0: none, 1: unexpected error, 3: orphans found,
        4: all the orphans found deleted, 127: invalid input."""
        ctxt = nl_context.get_admin_context()
        try:
            consumers = heal.Consumers(ctxt)
            if resource_provider:
                if self.client.get_resource_provider(ctxt, resource_provider) is None:
                    print('Resource provider with UUID %s does not exist.'
                          % resource_provider)
                    return INVALID_INPUT
                providers = [resource_provider]
            else:
                known = {rp['uuid'] for rp in self.client.list_resource_providers(ctxt)}
                providers = [p for p in heal.compute_node_providers(ctxt, consumers.cells)
                             if p in known]
            return self._audit(ctxt, providers, consumers, verbose, delete)
        except Exception as exc:
            LOG.exception('audit failed')
            print('Unexpected error: %s' % exc)
            return AUDIT_ERROR

    def _audit(self, ctxt: RequestContext, providers: list[str], consumers: heal.Consumers,
               verbose: bool, delete: bool) -> int:
        found = deleted = 0
        for finding in heal.find_unowned(ctxt, self.client, providers, consumers):
            if finding.kind != heal.ORPHAN:
                # As nova-manage: a migration's allocations are never orphans here; the
                # conductor's healing task frees those of finished migrations.
                if verbose:
                    print('Consumer %s is a finished migration (%s); not an orphan.'
                          % (finding.consumer, finding.why))
                continue
            found += 1
            print('Allocations were set against consumer UUID %s but no existing instances '
                  'or active migrations are related (%s): %s'
                  % (finding.consumer, finding.why, finding.record['allocations']))
            if delete:
                if heal.remove(ctxt, self.client, finding):
                    deleted += 1
                    print('Deleted allocations for consumer UUID %s' % finding.consumer)
                else:
                    print('Consumer %s changed meanwhile; its allocations were kept.'
                          % finding.consumer)
        if verbose:
            print('Audited %d resource provider(s).' % len(providers))
        if not found:
            return NO_ORPHANS
        return ORPHANS_DELETED if delete and deleted == found else ORPHANS_FOUND

    # -- sync_aggregates ---------------------------------------------------------------

    @args('--verbose', action='store_true', help='Say what is done with each host')
    def sync_aggregates(self, verbose: bool = False) -> int:
        """Put the compute node providers of each host aggregate's hosts in the
        aggregate of the same uuid in Placement (aggregates are only added). Exit 0:
        done, 1: a host has several compute nodes, 2: Placement error, 3: Placement
        refused an update, 4: hosts not mapped to a cell, 5: hosts without a compute
        node, 6: a compute node without a provider, 255: unexpected error."""
        ctxt = nl_context.get_admin_context()
        try:
            return self._sync_aggregates(ctxt, verbose)
        except _Stop as stop:
            return stop.code
        except exception.PlacementAPIConnectFailure as exc:
            print('Failed to reach Placement: %s' % exc)
            return PLACEMENT_ERROR
        except Exception as exc:
            LOG.exception('sync_aggregates failed')
            print('Unexpected error: %s' % exc)
            return UNEXPECTED

    def _sync_aggregates(self, ctxt: RequestContext, verbose: bool) -> int:
        unmapped: set[str] = set()
        no_node: set[str] = set()
        providers: dict[str, str] = {}
        for aggregate in objects.AggregateList.get_all(ctxt):
            if verbose:
                print('Aggregate %s (%s): hosts %s' % (aggregate.name, aggregate.uuid,
                                                       ', '.join(aggregate.hosts) or '-'))
            for host in aggregate.hosts:
                if host not in providers:
                    try:
                        providers[host] = self._host_provider(ctxt, host)
                    except exception.HostMappingNotFound:
                        unmapped.add(host)
                        continue
                    except exception.ComputeHostNotFound:
                        no_node.add(host)
                        continue
                code = self._add_to_aggregate(ctxt, host, providers[host], aggregate.uuid,
                                              verbose)
                if code:
                    return code
        if unmapped:
            print('The following hosts were found in host aggregates but no host mappings '
                  'were found for them: %s' % ', '.join(sorted(unmapped)))
            return HOSTS_UNMAPPED
        if no_node:
            print('The following hosts were found in host aggregates but no compute node '
                  'records were found for them: %s' % ', '.join(sorted(no_node)))
            return NODES_NOT_FOUND
        return SYNCED

    def _host_provider(self, ctxt: RequestContext, host: str) -> str:
        """The compute node uuid (its provider's) of ``host``.

        :raises _Stop: the host has several compute nodes
        """
        mapping = objects.HostMapping.get_by_host(ctxt, host)
        with nl_context.target_cell(ctxt, mapping.cell_mapping) as cctxt:
            nodes = objects.ComputeNodeList.get_all_by_host(cctxt, host)
        if not nodes:
            raise exception.ComputeHostNotFound(host=host)
        if len(nodes) > 1:
            print('Unexpected number of compute node records (%d) found for host %s. '
                  'There should only be a one-to-one mapping.' % (len(nodes), host))
            raise _Stop(MANY_NODES)
        return nodes[0].uuid

    def _add_to_aggregate(self, ctxt: RequestContext, host: str, rp_uuid: str,
                          aggregate_uuid: str, verbose: bool) -> int:
        try:
            if self.client.get_resource_provider(ctxt, rp_uuid) is None:
                print('Unable to find matching resource provider record in placement '
                      'with uuid for the following compute node: %s (host %s)'
                      % (rp_uuid, host))
                return PROVIDER_NOT_FOUND
            added = self.client.add_provider_to_aggregate(ctxt, rp_uuid, aggregate_uuid)
        except exception.PlacementAPIConnectFailure:
            raise
        except exception.ResourceProviderError as exc:
            print('Failed updating provider aggregates for host (%s), provider (%s) and '
                  'aggregate (%s). Error: %s' % (host, rp_uuid, aggregate_uuid, exc))
            return AGGREGATE_UPDATE_FAILED
        if verbose:
            print('Host %s (provider %s) %s aggregate %s' % (
                host, rp_uuid, 'added to' if added else 'already in', aggregate_uuid))
        return 0
