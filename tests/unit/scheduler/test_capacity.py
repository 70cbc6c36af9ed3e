"""The capacity what-if: Placement's arithmetic, and the filters consumed host by host."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from novalite import context as nl_context
from novalite import objects
from novalite.conf import CONF
from novalite.scheduler import capacity, filters, utils
from novalite.scheduler.host_manager import HostManager, HostState
from tests.unit.scheduler import fakes


def _inv(total: int, reserved: int = 0, ratio: float = 1.0, min_unit: int = 1,
         max_unit: int | None = None, step_size: int = 1) -> dict[str, Any]:
    return {'total': total, 'reserved': reserved, 'allocation_ratio': ratio,
            'min_unit': min_unit, 'max_unit': total if max_unit is None else max_unit,
            'step_size': step_size}


@pytest.mark.parametrize('inventory, used, amount, fits', [
    (_inv(8), 0, 2, 4),
    (_inv(8), 3, 2, 2),                          # floor of what is left
    (_inv(8, ratio=4.0), 0, 2, 16),              # the ratio multiplies
    (_inv(4096, reserved=512), 0, 1024, 3),      # reserved comes off before the ratio
    (_inv(8, reserved=2, ratio=1.5), 0, 1, 9),
    (_inv(8), 10, 1, 0),                         # over-used (ratio lowered): none, not < 0
    (_inv(8, max_unit=2), 0, 4, 0),              # more than one allocation may take
    (_inv(8, min_unit=2), 0, 1, 0),
    (_inv(8, step_size=2), 0, 3, 0),
    (_inv(8, step_size=2), 0, 4, 2),
])
def test_fit_of_class(inventory: dict, used: int, amount: int, fits: int) -> None:
    assert capacity.fit_of_class(inventory, used, amount) == fits


def test_fit_by_resources_is_the_scarcest_class() -> None:
    inventories = {'VCPU': _inv(4, ratio=4.0), 'MEMORY_MB': _inv(8704, reserved=512),
                   'DISK_GB': _inv(20)}
    usages = {'VCPU': 2, 'MEMORY_MB': 1024, 'DISK_GB': 0}
    asked = {'VCPU': 1, 'MEMORY_MB': 1024, 'DISK_GB': 10}
    assert capacity.fit_by_resources(inventories, usages, asked) == (2, 'DISK_GB')
    usages['MEMORY_MB'] = 7168
    assert capacity.fit_by_resources(inventories, usages, asked) == (1, 'MEMORY_MB')


def test_fit_by_resources_ties_name_the_first_class_and_missing_ones_fit_none() -> None:
    inventories = {'VCPU': _inv(2), 'MEMORY_MB': _inv(2048)}
    asked = {'VCPU': 1, 'MEMORY_MB': 1024}
    assert capacity.fit_by_resources(inventories, {}, asked) == (2, 'MEMORY_MB')
    assert capacity.fit_by_resources(inventories, {}, dict(asked, CUSTOM_GPU=1)) \
        == (0, 'CUSTOM_GPU')
    assert capacity.fit_by_resources(inventories, {}, {}) \
        == (capacity.MAX_PER_HOST, 'nothing asked')


def test_trait_refusal() -> None:
    request = utils.ResourceRequest(resources={}, required_traits={'HW_CPU_X86_AVX2'},
                                    forbidden_traits={'COMPUTE_STATUS_DISABLED'})
    assert capacity.trait_refusal(['HW_CPU_X86_AVX2'], request) is None
    assert capacity.trait_refusal([], request) == 'lacks trait HW_CPU_X86_AVX2'
    assert capacity.trait_refusal(['HW_CPU_X86_AVX2', 'COMPUTE_STATUS_DISABLED'], request) \
        == 'trait COMPUTE_STATUS_DISABLED (compute service disabled)'


def test_provider_summary_applies_reserved_and_ratio() -> None:
    provider = {'inventories': {'VCPU': _inv(4, ratio=4.0),
                                'MEMORY_MB': _inv(4096, reserved=512)},
                'usages': {'VCPU': 3}, 'traits': ['T']}
    assert capacity.provider_summary(provider) == {
        'resources': {'VCPU': {'capacity': 16, 'used': 3},
                      'MEMORY_MB': {'capacity': 3584, 'used': 0}},
        'traits': ['T']}


def _manager(*names: str) -> HostManager:
    return HostManager(filter_handler=filters.HostFilterHandler(list(names)))


@pytest.fixture
def conf_overrides() -> Iterator[None]:
    CONF.set_override('max_instances_per_host', 3, group='filter_scheduler')
    CONF.set_override('max_io_ops_per_host', 2, group='filter_scheduler')
    try:
        yield
    finally:
        CONF.clear_override('max_instances_per_host', group='filter_scheduler')
        CONF.clear_override('max_io_ops_per_host', group='filter_scheduler')


def test_resources_limit_when_no_filter_refuses() -> None:
    result = capacity.count_on_host(fakes.host('h1'), fakes.spec(),
                                    _manager('ComputeFilter'), (5, 'VCPU'))
    assert (result.host, result.fits, result.limited_by) == ('h1', 5, 'VCPU')


def test_counting_filter_stops_where_booting_one_by_one_would(conf_overrides: None) -> None:
    state = fakes.host('h1', instances=('a',))
    result = capacity.count_on_host(state, fakes.spec(), _manager('NumInstancesFilter'),
                                    (10, 'VCPU'))
    assert (result.fits, result.limited_by) == (2, 'filter NumInstancesFilter')
    # Fewer fit by resources than the filter allows: the resource is the limit.
    result = capacity.count_on_host(fakes.host('h2'), fakes.spec(),
                                    _manager('NumInstancesFilter'), (1, 'DISK_GB'))
    assert (result.fits, result.limited_by) == (1, 'DISK_GB')


def test_io_ops_count_only_the_builds_running_now(conf_overrides: None) -> None:
    idle = capacity.count_on_host(fakes.host('h1'), fakes.spec(), _manager('IoOpsFilter'),
                                  (4, 'MEMORY_MB'))
    assert (idle.fits, idle.limited_by) == (4, 'MEMORY_MB')
    busy = capacity.count_on_host(fakes.host('h2', num_io_ops=2), fakes.spec(),
                                  _manager('IoOpsFilter'), (4, 'MEMORY_MB'))
    assert (busy.fits, busy.limited_by) == (0, 'filter IoOpsFilter')


def test_disabled_host_and_other_zone_fit_none() -> None:
    disabled = fakes.host('h1', service=fakes.service(disabled=True))
    manager = _manager('ComputeFilter', 'AvailabilityZoneFilter')
    result = capacity.count_on_host(disabled, fakes.spec(), manager, (4, 'VCPU'))
    assert (result.fits, result.limited_by) == (0, 'filter ComputeFilter')
    elsewhere = fakes.host('h2', aggregates=(fakes.aggregate(availability_zone='edge'),))
    result = capacity.count_on_host(elsewhere, fakes.spec(availability_zone='nova'),
                                    manager, (4, 'VCPU'))
    assert (result.fits, result.limited_by, result.zone) == (
        0, 'filter AvailabilityZoneFilter', 'edge')


def test_outside_the_question_fits_none_after_the_filters() -> None:
    result = capacity.count_on_host(fakes.host('h1'), fakes.spec(), _manager(),
                                    (4, 'VCPU'), outside='not in aggregate big')
    assert (result.fits, result.limited_by) == (0, 'not in aggregate big')


class _Report:
    """What the calculator asks of the Placement client."""

    def __init__(self, providers: dict[str, dict]) -> None:
        self.providers = providers

    def get_provider_usages_and_inventories(self, context: object,
                                            with_traits: bool = False) -> dict[str, dict]:
        return self.providers


class _Hosts(HostManager):
    """The host manager with its HostStates given instead of read from the cells."""

    def __init__(self, states: list[HostState], *names: str) -> None:
        super().__init__(filter_handler=filters.HostFilterHandler(list(names)))
        self.states = states

    def get_host_states_by_uuids(self, context: object, uuids: list[str],
                                 provider_summaries: dict[str, dict[str, Any]],
                                 spec_obj: objects.RequestSpec | None = None
                                 ) -> list[HostState]:
        return [s for s in self.states if s.uuid in uuids]


def _provider(vcpus: int, memory_mb: int, disk_gb: int, traits: tuple = ()) -> dict:
    return {'name': 'rp', 'traits': list(traits), 'usages': {},
            'inventories': {'VCPU': _inv(vcpus, ratio=4.0),
                            'MEMORY_MB': _inv(memory_mb, reserved=512),
                            'DISK_GB': _inv(disk_gb)}}


def test_calculate_every_host_sorted_with_its_limit() -> None:
    states = []
    for name in ('h3', 'h1', 'h2'):
        state = fakes.host(name)
        state.uuid = 'rp-' + name
        states.append(state)
    edge = fakes.aggregate('edge', availability_zone='edge')
    edge.hosts = ['h2']
    states[2].update_from_aggregates([edge])
    report = _Report({'rp-h1': _provider(1, 8704, 100),
                      'rp-h2': _provider(8, 2560, 100),
                      'rp-h3': _provider(8, 8704, 100, traits=('COMPUTE_STATUS_DISABLED',))})
    calculator = capacity.CapacityCalculator(report,  # type: ignore[arg-type]
                                             _Hosts(states, 'AvailabilityZoneFilter'))
    flavor = objects.Flavor(flavorid='f1', name='m1.small', vcpus=1, memory_mb=1024,
                            root_gb=10, ephemeral_gb=0, swap=0, extra_specs={})
    ctxt = nl_context.get_admin_context()

    answer = calculator.calculate(ctxt, flavor)
    assert [(h.host, h.fits, h.limited_by) for h in answer.hosts] == [
        ('h1', 4, 'VCPU'), ('h2', 2, 'MEMORY_MB'),
        ('h3', 0, 'trait COMPUTE_STATUS_DISABLED (compute service disabled)')]
    assert (answer.flavor, answer.total) == ('m1.small', 6)

    answer = calculator.calculate(ctxt, flavor, aggregate=edge)
    assert [(h.fits, h.limited_by) for h in answer.hosts][:2] == [
        (0, 'not in aggregate edge'), (2, 'MEMORY_MB')]

    answer = calculator.calculate(ctxt, flavor, zone='edge')
    assert [(h.fits, h.limited_by) for h in answer.hosts][:2] == [
        (0, 'filter AvailabilityZoneFilter'), (2, 'MEMORY_MB')]
