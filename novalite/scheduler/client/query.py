"""The client the conductor uses to ask the scheduler for hosts."""
from __future__ import annotations

from typing import Any

from novalite.scheduler import rpcapi as scheduler_rpcapi


class SchedulerQueryClient:
    """Asks the scheduler service over RPC (made on first use, after ``rpc.init``)."""

    def __init__(self, scheduler_rpcapi_: Any = None) -> None:
        self._rpcapi = scheduler_rpcapi_

    @property
    def scheduler_rpcapi(self) -> Any:
        if self._rpcapi is None:
            self._rpcapi = scheduler_rpcapi.SchedulerAPI()
        return self._rpcapi

    def select_destinations(self, context: Any, spec_obj: Any, instance_uuids: list[str],
                            return_objects: bool = False,
                            return_alternates: bool = False) -> list:
        """See :meth:`novalite.scheduler.rpcapi.SchedulerAPI.select_destinations`."""
        return self.scheduler_rpcapi.select_destinations(
            context, spec_obj, instance_uuids, return_objects, return_alternates)
