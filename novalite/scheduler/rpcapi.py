"""Client side of the scheduler RPC API."""
from __future__ import annotations

from typing import Any

import oslo_messaging as messaging

from novalite import objects, rpc
from novalite.conf import CONF
from novalite.context import RequestContext

RPC_TOPIC = 'scheduler'


class SchedulerAPI:
    """Client side of the scheduler RPC API.

    API version history:

    * 1.0 - Initial version: ``select_destinations(spec_obj, instance_uuids,
      return_objects, return_alternates)``.
    * 1.1 - ``update_aggregates(aggregates)`` and ``delete_aggregate(aggregate)``: fanout
      casts that tell every scheduler its copy of the aggregates is out of date.
    """

    VERSION_ALIASES: dict[str, str] = {}

    def __init__(self) -> None:
        target = messaging.Target(topic=RPC_TOPIC, version='1.1')
        self.client = rpc.get_client(target)

    def select_destinations(self, context: RequestContext, spec_obj: objects.RequestSpec,
                            instance_uuids: list[str], return_objects: bool = True,
                            return_alternates: bool = False) -> list[Any]:
        """Pick hosts for the instances of ``spec_obj`` and claim their resources.

        A **call**: waits up to ``[DEFAULT] rpc_response_timeout_scheduler`` seconds.

        :param spec_obj: the ``RequestSpec`` (its flavor, zone and hints).
        :param instance_uuids: the consumers the claims are made for, one per instance.
        :param return_alternates: also return up to ``[scheduler] max_attempts - 1``
            unclaimed hosts per instance, from the selected host's cell.
        :returns: one list of ``objects.Selection`` per instance, the selected host
            first, then its alternates.
        :raises NoValidHost: with the reason no host fits.
        :raises PlacementAPIConnectFailure: when Placement cannot be reached.
        """
        cctxt = self.client.prepare(version='1.0',
                                    timeout=CONF.rpc_response_timeout_scheduler)
        return cctxt.call(context, 'select_destinations', spec_obj=spec_obj,
                          instance_uuids=instance_uuids, return_objects=return_objects,
                          return_alternates=return_alternates)

    def update_aggregates(self, context: RequestContext,
                          aggregates: list[objects.Aggregate]) -> None:
        """Tell every scheduler that ``aggregates`` changed (created, renamed, hosts or
        metadata): a fanout **cast**."""
        self.client.prepare(fanout=True, version='1.1').cast(
            context, 'update_aggregates', aggregates=aggregates)

    def delete_aggregate(self, context: RequestContext, aggregate: objects.Aggregate) -> None:
        """Tell every scheduler that ``aggregate`` is gone: a fanout **cast**."""
        self.client.prepare(fanout=True, version='1.1').cast(
            context, 'delete_aggregate', aggregate=aggregate)
