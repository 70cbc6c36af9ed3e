"""Host weighers: the base class with min-max normalisation, and the handler."""
from __future__ import annotations

import abc
import dataclasses
from typing import TYPE_CHECKING

from novalite.conf import CONF
from novalite.scheduler import plugins

if TYPE_CHECKING:
    from novalite import objects
    from novalite.scheduler.host_manager import HostState

WEIGHERS_NAMESPACE = 'novalite.scheduler.weights'


@dataclasses.dataclass
class WeighedHost:
    """A host and the sum of its normalised, multiplied weights."""

    obj: HostState
    weight: float = 0.0


def normalize(values: list[float], minval: float | None = None,
              maxval: float | None = None) -> list[float]:
    """Scale ``values`` to 0.0-1.0 between their minimum and maximum.

    Equal values all become 0.0, so a weigher that cannot tell hosts apart does not
    shift their order.
    """
    if not values:
        return []
    low = min(values) if minval is None else minval
    high = max(values) if maxval is None else maxval
    if high <= low:
        return [0.0] * len(values)
    return [(v - low) / (high - low) for v in values]


def aggregate_multiplier(host_state: HostState, name: str) -> float:
    """``[filter_scheduler] name``, unless the host's aggregates set metadata ``name``:
    then the smallest of their values (unreadable ones are ignored), as in Nova."""
    values = []
    for aggregate in getattr(host_state, 'aggregates', ()):
        try:
            values.append(float(aggregate.metadata[name]))
        except (KeyError, ValueError):
            continue
    return min(values) if values else getattr(CONF.filter_scheduler, name)


class BaseWeigher(metaclass=abc.ABCMeta):
    """Scores hosts; higher wins.

    Raw scores are normalised across the hosts of one request before the multiplier
    applies, so multipliers compare weighers on the same 0-1 scale. Fixed bounds
    (``minval``/``maxval``) replace the observed minimum and maximum when set.
    """

    minval: float | None = None
    maxval: float | None = None

    def weight_multiplier(self, host_state: HostState) -> float:
        """How much this weigher counts; negative reverses its preference."""
        return 1.0

    @abc.abstractmethod
    def _weigh_object(self, host_state: HostState, spec_obj: objects.RequestSpec) -> float:
        """The raw score of one host."""

    def weigh_objects(self, weighed_hosts: list[WeighedHost],
                      spec_obj: objects.RequestSpec) -> list[float]:
        """Raw scores of every host, in order."""
        return [self._weigh_object(w.obj, spec_obj) for w in weighed_hosts]


class HostWeightHandler:
    """Loads weighers by entry point name and orders hosts by their weighed sum.

    :param names: weigher names; ``[filter_scheduler] weight_classes`` when None.
    :raises ValueError: when a name matches no entry point.
    """

    def __init__(self, names: list[str] | None = None) -> None:
        names = list(CONF.filter_scheduler.weight_classes if names is None else names)
        self.weighers: list[BaseWeigher] = plugins.load(WEIGHERS_NAMESPACE, names, 'weighers')

    def get_weighed_objects(self, host_states: list,
                            spec_obj: objects.RequestSpec) -> list[WeighedHost]:
        """:returns: every host wrapped in a WeighedHost, best first."""
        weighed = [WeighedHost(host) for host in host_states]
        for weigher in self.weighers:
            scores = normalize(weigher.weigh_objects(weighed, spec_obj),
                               weigher.minval, weigher.maxval)
            # A multiplier differs between hosts only through their aggregates: hosts
            # in none share one, read once (thousands of hosts per request).
            shared: float | None = None
            for host, score in zip(weighed, scores, strict=True):
                if not score:
                    continue
                if getattr(host.obj, 'aggregates', None):
                    host.weight += weigher.weight_multiplier(host.obj) * score
                    continue
                if shared is None:
                    shared = weigher.weight_multiplier(host.obj)
                host.weight += shared * score
        return sorted(weighed, key=lambda w: w.weight, reverse=True)
