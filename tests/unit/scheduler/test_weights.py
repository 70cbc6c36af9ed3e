"""Weighers: normalisation, multipliers, and the order they give hosts."""
from __future__ import annotations

import pytest

from novalite.conf import CONF
from novalite.scheduler import weights
from novalite.scheduler.host_manager import HostState


def _host(name, ram=0, disk_mb=0, vcpus_total=8, vcpus_used=0):
    state = HostState(name, name, 'cell1')
    state.free_ram_mb, state.free_disk_mb = ram, disk_mb
    state.vcpus_total, state.vcpus_used = vcpus_total, vcpus_used
    return state


@pytest.fixture
def override():
    names = []

    def set_(name, value):
        CONF.set_override(name, value, group='filter_scheduler')
        names.append(name)

    yield set_
    for name in names:
        CONF.clear_override(name, group='filter_scheduler')


def test_normalize():
    assert weights.normalize([]) == []
    assert weights.normalize([5, 5]) == [0.0, 0.0]
    assert weights.normalize([0, 5, 10]) == [0.0, 0.5, 1.0]
    assert weights.normalize([5], minval=0, maxval=10) == [0.5]


def _order(names, hosts):
    return [w.obj.host for w in weights.HostWeightHandler(names).get_weighed_objects(hosts, None)]


def test_ram_weigher_spreads_by_default_and_stacks_when_negative(override):
    hosts = [_host('a', ram=1024), _host('b', ram=4096), _host('c', ram=2048)]

    assert _order(['RAMWeigher'], hosts) == ['b', 'c', 'a']
    override('ram_weight_multiplier', -1.0)
    assert _order(['RAMWeigher'], hosts) == ['a', 'c', 'b']


def test_cpu_weigher_counts_free_vcpus():
    hosts = [_host('a', vcpus_total=8, vcpus_used=6), _host('b', vcpus_total=4, vcpus_used=0)]

    assert _order(['CPUWeigher'], hosts) == ['b', 'a']


def test_disk_weigher():
    hosts = [_host('a', disk_mb=10240), _host('b', disk_mb=20480)]

    assert _order(['DiskWeigher'], hosts) == ['b', 'a']


def test_multipliers_weigh_normalised_scores(override):
    # RAM prefers a, disk prefers b; the larger multiplier decides, whatever the units.
    hosts = [_host('a', ram=100000, disk_mb=1), _host('b', ram=1, disk_mb=2)]

    override('disk_weight_multiplier', 2.0)
    assert _order(['RAMWeigher', 'DiskWeigher'], hosts) == ['b', 'a']
    override('ram_weight_multiplier', 3.0)
    assert _order(['RAMWeigher', 'DiskWeigher'], hosts) == ['a', 'b']


def test_weight_is_the_sum_of_multiplied_scores(override):
    override('ram_weight_multiplier', 2.0)
    hosts = [_host('a', ram=0, disk_mb=10), _host('b', ram=10, disk_mb=0)]

    weighed = weights.HostWeightHandler(['RAMWeigher', 'DiskWeigher']).get_weighed_objects(
        hosts, None)

    assert [(w.obj.host, w.weight) for w in weighed] == [('b', 2.0), ('a', 1.0)]


def test_default_weighers_come_from_config():
    handler = weights.HostWeightHandler()

    assert [type(w).__name__ for w in handler.weighers] == CONF.filter_scheduler.weight_classes


def test_unknown_weigher_is_refused():
    with pytest.raises(ValueError, match='NoSuchWeigher'):
        weights.HostWeightHandler(['NoSuchWeigher'])
