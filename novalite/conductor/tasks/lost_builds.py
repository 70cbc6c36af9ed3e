"""Finding builds the message bus lost, and ending them in ERROR with a fault.

Casts are fire-and-forget: a broker restart can drop the message that should have
taken a server to the next hop. Two places can then hold a server forever in BUILD,
and this task ends both:

- a BuildRequest no conductor took within ``[conductor] build_request_timeout``
  (the cast to the conductor was lost): it is buried in cell0;
- an instance a conductor created in a cell but no compute host ever claimed (the cast
  to the compute was lost, or a reschedule's was): ERROR, and its allocation freed.

Both are recognised by age alone; a genuinely slow scheduling round trip is bounded by
``rpc_response_timeout_scheduler``, which the timeout must exceed.
"""
from __future__ import annotations

import datetime
from typing import Any

from oslo_log import log as logging
from oslo_utils import timeutils

from novalite import context as nl_context
from novalite import exception, objects
from novalite.compute import vm_states
from novalite.conductor.tasks import build
from novalite.conf import CONF

LOG = logging.getLogger(__name__)


def _too_old(when: datetime.datetime | None, now: datetime.datetime) -> bool:
    if when is None:
        return False
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.UTC)
    return (now - when).total_seconds() > CONF.conductor.build_request_timeout


def bury_lost_build_requests(context: Any) -> int:
    """Bury in cell0 the build requests no conductor took in time; return how many."""
    now = timeutils.utcnow(with_timezone=True)
    count = 0
    for build_request in objects.BuildRequestList.get_all(context):
        if not _too_old(build_request.created_at, now):
            continue
        LOG.warning('Build request %s was never scheduled; the message that should have '
                    'started it was lost', build_request.instance_uuid)
        error = exception.NoValidHost(reason=(
            'No conductor took the build request within %d seconds: the message that '
            'should have started it was lost (was the message bus or the conductor '
            'down?).' % CONF.conductor.build_request_timeout))
        try:
            spec = objects.RequestSpec.get_by_instance_uuid(context,
                                                            build_request.instance_uuid)
        except exception.RequestSpecNotFound:
            spec = None
        try:
            build.bury_in_cell0(context, build_request, spec, error)
            count += 1
        except Exception:
            # Most likely a conductor is finishing it right now; the next run looks again.
            LOG.exception('Could not bury lost build request %s', build_request.instance_uuid)
    return count


def fail_unclaimed_instances(context: Any, deps: build.Dependencies) -> int:
    """ERROR for instances in a cell that no compute host claimed in time."""
    now = timeutils.utcnow(with_timezone=True)
    cells = [c for c in objects.CellMappingList.get_all(context) if not c.is_cell0]
    count = 0
    for cell in cells:
        with nl_context.target_cell(context, cell) as cctxt:
            stuck = objects.InstanceList.get_by_filters(
                cctxt, {'vm_state': vm_states.BUILDING, 'host': None})
            for instance in stuck:
                if not _too_old(instance.updated_at or instance.created_at, now):
                    continue
                LOG.warning('Instance %s was never claimed by a compute host; the message '
                            'that should have built it was lost', instance.uuid)
                error = exception.BuildAbortException(
                    instance_uuid=instance.uuid,
                    reason='no compute host took the build within %d seconds: the message '
                           'that should have started it was lost (was the message bus or '
                           'the compute service down?)' % CONF.conductor.build_request_timeout)
                try:
                    build.set_error(cctxt, instance, error, build.SCHEDULE_EVENT)
                    build.free_allocations(deps, cctxt, [instance.uuid])
                    count += 1
                except exception.InstanceNotFound:
                    pass
    return count
