"""Host filters: the base class, and the handler that loads and runs the enabled ones."""
from __future__ import annotations

import abc
import dataclasses
from typing import TYPE_CHECKING

from oslo_log import log as logging

from novalite.conf import CONF
from novalite.scheduler import plugins

if TYPE_CHECKING:
    from novalite import objects
    from novalite.scheduler.host_manager import HostState

LOG = logging.getLogger(__name__)

FILTERS_NAMESPACE = 'novalite.scheduler.filters'


class BaseHostFilter(metaclass=abc.ABCMeta):
    """A test that one host must pass to receive the instance.

    Subclasses live in a module named after them and are declared as entry points of
    ``novalite.scheduler.filters`` in setup.cfg; ``[filter_scheduler] enabled_filters``
    names them.
    """

    @abc.abstractmethod
    def host_passes(self, host_state: HostState, spec_obj: objects.RequestSpec) -> bool:
        """:param host_state: a ``HostState``.
        :param spec_obj: the ``RequestSpec`` being scheduled.
        :returns: True when the host may receive the instance.
        """

    def filter_all(self, host_states: list, spec_obj: objects.RequestSpec) -> list:
        return [host for host in host_states if self.host_passes(host, spec_obj)]


@dataclasses.dataclass
class FilterResult:
    """What one filter did during a run: kept for the NoValidHost reason."""

    name: str
    hosts_in: int
    hosts_out: int


class HostFilterHandler:
    """Loads filters by entry point name and applies them in order.

    :param names: filter names; ``[filter_scheduler] enabled_filters`` when None.
    :raises ValueError: when a name matches no entry point.
    """

    def __init__(self, names: list[str] | None = None) -> None:
        names = list(CONF.filter_scheduler.enabled_filters if names is None else names)
        self.filters: list[BaseHostFilter] = plugins.load(FILTERS_NAMESPACE, names, 'filters')

    def get_filtered_hosts(self, host_states: list, spec_obj: objects.RequestSpec
                           ) -> tuple[list, list[FilterResult]]:
        """Run every filter; stop early once no host is left.

        :returns: (hosts that passed, one FilterResult per filter that ran).
        """
        hosts = list(host_states)
        results = []
        for host_filter in self.filters:
            name = type(host_filter).__name__
            passed = host_filter.filter_all(hosts, spec_obj)
            results.append(FilterResult(name, len(hosts), len(passed)))
            LOG.debug('Filter %s returned %d of %d hosts', name, len(passed), len(hosts))
            hosts = passed
            if not hosts:
                break
        return hosts, results


def aggregate_metadata(host_state: HostState, key: str | None = None) -> dict[str, set[str]]:
    """The metadata of the host's aggregates: each key with every value it has there.

    :param key: only this key, when given.
    """
    metadata: dict[str, set[str]] = {}
    for aggregate in host_state.aggregates:
        for name, value in aggregate.metadata.items():
            if key is None or name == key:
                metadata.setdefault(name, set()).add(value)
    return metadata


def scheduler_hint_list(spec_obj: objects.RequestSpec, name: str) -> list[str]:
    """A scheduler hint as a list, whether one value or several were given."""
    value = spec_obj.get_scheduler_hint(name)
    if not value:
        return []
    return [value] if isinstance(value, str) else list(value)


def instance_group(spec_obj: objects.RequestSpec) -> objects.InstanceGroup | None:
    """The request's server group, or None."""
    if not spec_obj.obj_attr_is_set('instance_group'):
        return None
    return spec_obj.instance_group


def explain_filtered_out(results: list[FilterResult]) -> str:
    """Which filters removed how many hosts, for the NoValidHost reason."""
    parts = ['%s removed %d of %d hosts' % (r.name, r.hosts_in - r.hosts_out, r.hosts_in)
             for r in results if r.hosts_out < r.hosts_in]
    return 'There are not enough hosts available. %s.' % ', '.join(parts)
