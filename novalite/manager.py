"""Base class of the service managers (the RPC endpoints of each daemon)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from oslo_service import periodic_task

from novalite.conf import CONF

if TYPE_CHECKING:
    from oslo_config import cfg

    from novalite.context import RequestContext

    class _PeriodicTasks:
        # What novalite uses of oslo.service's PeriodicTasks. oslo.service has no type
        # information: a subclass of its class would let any attribute pass the checker.
        def __init__(self, conf: cfg.ConfigOpts) -> None: ...

        def run_periodic_tasks(self, context: RequestContext,
                               raise_on_error: bool = False) -> float: ...
else:
    _PeriodicTasks = periodic_task.PeriodicTasks


class Manager(_PeriodicTasks):
    """A daemon's endpoint: RPC methods plus ``@periodic_task`` methods.

    ``novalite.service.Service`` serves it: it calls ``init_host`` before the RPC server
    starts, ``periodic_tasks`` every ``[DEFAULT] periodic_interval`` seconds at most, and
    ``cleanup_host`` on stop.
    """

    # oslo.service's: seconds between runs, by task name (filled in by its metaclass).
    _periodic_spacing: dict[str, float]

    def __init__(self, host: str | None = None, service_name: str = 'undefined') -> None:
        super().__init__(CONF)
        self.host = host or CONF.host
        self.service_name = service_name

    def set_spacing(self, task_name: str, seconds: int) -> None:
        """Run periodic task ``task_name`` every ``seconds`` (read from the parsed
        config; the decorator's spacing is fixed when the module is imported)."""
        self._periodic_spacing = dict(self._periodic_spacing, **{task_name: seconds})

    def init_host(self) -> None:
        """Work to do before the service takes RPC messages."""

    def cleanup_host(self) -> None:
        """Work to do when the service stops."""

    def periodic_tasks(self, context: RequestContext, raise_on_error: bool = False) -> float:
        """Run the periodic tasks that are due; return seconds until the next is."""
        return self.run_periodic_tasks(context, raise_on_error=raise_on_error)
