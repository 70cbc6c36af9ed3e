"""Guests the hypervisor runs that no instance of this host accounts for.

They appear when a delete ran while this host was down (the API deleted locally), when
an instance was rebuilt elsewhere, or when someone defined a guest by hand. At start-up
they are reported, and destroyed with their disks if ``[workarounds]
destroy_unknown_guests`` says so; the ``sync_power_states`` periodic task reports them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from oslo_log import log as logging

from novalite import exception, objects
from novalite.compute import vm_states
from novalite.conf import CONF

if TYPE_CHECKING:
    from novalite.compute.manager import ComputeManager
    from novalite.context import RequestContext

LOG = logging.getLogger(__name__)


def find_unknown_guests(mgr: ComputeManager, context: RequestContext) -> dict[str, str]:
    """:returns: {guest uuid: why it belongs to no instance of this host}."""
    guests = set(mgr.driver.list_instance_uuids())
    if not guests:
        return {}
    known = {i.uuid: i for i in objects.InstanceList.get_by_uuids(context, sorted(guests))}
    unknown = {}
    for uuid in sorted(guests):
        instance = known.get(uuid)
        if instance is None:
            unknown[uuid] = 'no instance record'
        elif instance.deleted:
            unknown[uuid] = 'its instance is deleted'
        elif instance.host != mgr.host and not _moving(instance):
            unknown[uuid] = 'its instance is on host %s' % instance.host
    return unknown


def _moving(instance: objects.Instance) -> bool:
    """A resize or migration under way (or waiting for its confirmation) keeps a guest
    on the source host while the instance names the destination."""
    return (instance.vm_state == vm_states.RESIZED
            or (instance.task_state or '').startswith(('resize_', 'migrating')))


def audit_guests(mgr: ComputeManager, context: RequestContext) -> dict[str, str]:
    """Report the unknown guests; destroy them when configured to. :returns: them."""
    unknown = find_unknown_guests(mgr, context)
    destroy = CONF.workarounds.destroy_unknown_guests
    for uuid, why in unknown.items():
        if not destroy:
            LOG.warning('Guest %s on this host belongs to no instance of it (%s); left '
                        'alone ([workarounds] destroy_unknown_guests is off)', uuid, why)
            continue
        LOG.warning('Destroying guest %s: it belongs to no instance of this host (%s)',
                    uuid, why)
        try:
            mgr.driver.destroy(context, objects.Instance(uuid=uuid), destroy_disks=True)
        except exception.InstanceNotFound:
            pass
        except Exception:
            LOG.exception('Could not destroy guest %s', uuid)
    return unknown
