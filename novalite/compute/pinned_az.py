"""Unpinning and re-pinning a server's availability zone (``PUT /servers/{id}``, 2.104).

The pin is the request spec's ``availability_zone``: the zone every later move is
scheduled into. It may be cleared, or set to the zone the server is in now, but never
moved straight from one zone to another: unpin first.
"""
from __future__ import annotations

from novalite import availability_zones, exception, objects
from novalite.context import RequestContext
from novalite.objects.instance import Instance


class PinnedZoneChange(exception.Conflict):
    msg_fmt = ('Cannot change pinned availability zone directly. Unpin first by setting '
               'pinned_availability_zone to null.')


class PinnedZoneNotCurrent(exception.Conflict):
    msg_fmt = ("Server can only be pinned to its current availability zone "
               "'%(current_az)s', but '%(requested_az)s' was requested.")


def current_zone(context: RequestContext, instance: Instance) -> str | None:
    """The zone of the server's host; before it has one, the zone it asked for."""
    if not instance.host:
        return instance.availability_zone
    return availability_zones.host_zone(context.elevated(), instance.host)


def set_pinned_zone(context: RequestContext, instance: Instance,
                    requested_az: str | None) -> None:
    """Pin ``instance`` to ``requested_az``, or unpin it when that is None.

    Asking for the zone it is pinned to already changes nothing.

    :raises PinnedZoneChange: pinned to another zone (409)
    :raises PinnedZoneNotCurrent: not pinned, and the zone is not the server's (409)
    """
    spec = objects.RequestSpec.get_by_instance_uuid(context, instance.uuid)
    pinned = spec.availability_zone if spec.obj_attr_is_set('availability_zone') else None
    if requested_az == pinned:
        return
    if requested_az is not None:
        if pinned is not None:
            raise PinnedZoneChange()
        zone = current_zone(context, instance)
        if requested_az != zone:
            raise PinnedZoneNotCurrent(current_az=zone, requested_az=requested_az)
    spec.availability_zone = requested_az
    spec.save()
