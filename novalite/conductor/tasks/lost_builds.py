"""Finding builds that were lost, and building them again.

Casts are fire-and-forget, and a conductor killed mid-build takes its work with it.
Two places can then hold a server forever in BUILD, and this task finds both:

- a BuildRequest no conductor took within ``[conductor] build_request_timeout`` (the
  cast to the conductor was lost), or whose conductor stopped renewing its hold that
  long ago (it died): it is **re-driven**: made the next attempt (the old one, if its
  conductor was only slow, lets go when it sees that), the allocation the dead
  attempt's scheduling may have claimed is freed, and it is scheduled again here;
- an instance a conductor created in a cell but no compute host ever claimed (the cast
  to the compute was lost, or the conductor died before it) that long after the
  instance was last written, plus ``build_retry_timeout`` (a conductor rescheduling it
  may retry its claim that long): it is scheduled again through the reschedule path,
  which frees what the lost build held.

A server is built at most ``[scheduler] max_attempts`` times in all; a build lost more
often than that ends in ERROR with a fault that says so. A build request whose user
deleted it while its conductor held it is finished here when that conductor died.
"""
from __future__ import annotations

import datetime

from oslo_log import log as logging
from oslo_utils import timeutils

from novalite import context as nl_context
from novalite import exception, metrics, objects
from novalite.compute import vm_states
from novalite.conductor.tasks import build
from novalite.conf import CONF
from novalite.context import RequestContext

LOG = logging.getLogger(__name__)

# How many times an instance in a cell was re-driven, in its system metadata.
REDRIVES_KEY = 'build_redrives'


def _too_old(when: datetime.datetime | None, now: datetime.datetime,
             also_allow: int = 0) -> bool:
    if when is None:
        return False
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.UTC)
    return (now - when).total_seconds() > CONF.conductor.build_request_timeout + also_allow


def _owner_context(context: RequestContext, project_id: str | None,
                   user_id: str | None) -> RequestContext:
    """The admin context of this task, acting for the server's owner (quota and
    Placement consumers count per project and user)."""
    owner = context.elevated()
    owner.project_id = project_id
    owner.user_id = user_id
    return owner


def redrive_lost_build_requests(context: RequestContext,
                                deps: build.Dependencies) -> int:
    """Build again the build requests whose build was lost; return how many."""
    now = timeutils.utcnow(with_timezone=True)
    count = 0
    for build_request in objects.BuildRequestList.get_all(context):
        held_since = build_request.taken_at or build_request.updated_at or \
            build_request.created_at
        if not _too_old(held_since, now):
            continue
        owner = _owner_context(context, build_request.project_id, build_request.user_id)
        until = build.build_deadline()
        try:
            if build_request.delete_requested:
                build.finish_requested_delete(deps, owner, build_request, until)
            elif _redrive(deps, owner, build_request, until):
                count += 1
        except Exception:
            # Most likely a conductor is finishing it right now; the next run looks again.
            LOG.exception('Could not re-drive lost build request %s',
                          build_request.instance_uuid)
    return count


def _redrive(deps: build.Dependencies, context: RequestContext, build_request: objects.BuildRequest,
             until: float) -> bool:
    uuid = build_request.instance_uuid
    lost = build_request.attempt + 1
    try:
        spec = objects.RequestSpec.get_by_instance_uuid(context, uuid)
    except exception.RequestSpecNotFound:
        spec = None
    if spec is None or lost >= CONF.scheduler.max_attempts:
        LOG.warning('Build request %s was lost %d times; giving up', uuid, lost)
        error = exception.NoValidHost(reason=(
            'The build was lost %d times (no conductor finished it within %d seconds: '
            'was the message bus or the conductor down?).' % (
                lost, CONF.conductor.build_request_timeout)))
        build._bury_or_log(deps, context, build_request, spec, error, until)
        return False
    if not build_request.redrive():
        return False
    LOG.warning('Build request %s was lost (attempt %d: no conductor finished it within '
                '%d seconds); building it again', uuid, lost,
                CONF.conductor.build_request_timeout)
    build.free_allocations(deps, context, [uuid], until)
    build.schedule_and_build(deps, context, [build_request], [spec], build._image_of(spec),
                             None, [], build.requested_networks_of(spec))
    return True


def redrive_unclaimed_instances(context: RequestContext, deps: build.Dependencies) -> int:
    """Schedule again the instances in a cell no compute host claimed in time."""
    now = timeutils.utcnow(with_timezone=True)
    cells = [c for c in objects.CellMappingList.get_all(context) if not c.is_cell0]
    count = 0
    for cell in cells:
        with nl_context.target_cell(context, cell) as cctxt:
            stuck = objects.InstanceList.get_by_filters(
                cctxt, {'vm_state': vm_states.BUILDING, 'host': None})
            for instance in stuck:
                # A conductor rescheduling it may retry a claim for build_retry_timeout
                # before it writes the instance again: that is no lost build.
                if not _too_old(instance.updated_at or instance.created_at, now,
                                also_allow=CONF.conductor.build_retry_timeout):
                    continue
                try:
                    if _redrive_instance(deps, cctxt, cell, instance):
                        count += 1
                except exception.InstanceNotFound:
                    pass
                except Exception:
                    LOG.exception('Could not re-drive unclaimed instance %s', instance.uuid)
    return count


def _redrive_instance(deps: build.Dependencies, cctxt: RequestContext,
                      cell: objects.CellMapping, instance: objects.Instance) -> bool:
    mapping = objects.InstanceMapping.get_by_instance_uuid(cctxt, instance.uuid)
    if mapping.cell_mapping is None or mapping.cell_mapping.uuid != cell.uuid:
        return False  # half made by a build request's lost attempt: that one adopts it
    redrives = int(instance.system_metadata.get(REDRIVES_KEY) or 0) + 1
    owner = _owner_context(cctxt, instance.project_id, instance.user_id)
    if redrives >= CONF.scheduler.max_attempts:
        LOG.warning('Instance %s was never claimed by a compute host, %d times; giving up',
                    instance.uuid, redrives)
        error = exception.BuildAbortException(
            instance_uuid=instance.uuid,
            reason='no compute host took the build within %d seconds, %d times: the '
                   'message that should have started it was lost (was the message bus '
                   'or the compute service down?)' % (
                       CONF.conductor.build_request_timeout, redrives))
        build.set_error(owner, instance, error, build.SCHEDULE_EVENT)
        metrics.boot_error(error)
        build.free_allocations(deps, owner, [instance.uuid], build.build_deadline())
        return False
    LOG.warning('Instance %s was never claimed by a compute host (the message that '
                'should have built it was lost); scheduling it again', instance.uuid)
    instance.system_metadata[REDRIVES_KEY] = str(redrives)
    instance.save()
    reason = 'no compute host took the build within %d seconds' % \
        CONF.conductor.build_request_timeout
    retry = {'num_attempts': redrives, 'redrive': True, 'hosts': [['(lost)', None]],
             'exc_reason': reason, 'failures': [['(lost)', reason]]}
    build.reschedule(deps, owner, instance, [], None, {'retry': retry}, None, [], None, None)
    return True
