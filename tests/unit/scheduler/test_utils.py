"""What a RequestSpec asks of Placement, and how a lack of candidates is explained."""
from __future__ import annotations

import pytest

from novalite import objects
from novalite.scheduler import request_filter, utils

objects.register_all()


def _spec(extra_specs=None, **sizes):
    values = dict(memory_mb=2048, vcpus=2, root_gb=20, ephemeral_gb=0, swap=0)
    values.update(sizes)
    flavor = objects.Flavor(flavorid='f', extra_specs=extra_specs or {}, **values)
    return objects.RequestSpec(flavor=flavor)


def test_resources_from_flavor_sizes():
    request = utils.resources_from_request_spec(_spec())

    assert request.resources == {'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 20}
    assert request.required_traits == set() and request.forbidden_traits == set()


@pytest.mark.parametrize('swap_mb, disk_gb', [(0, 25), (1, 26), (1024, 26), (1025, 27)])
def test_ephemeral_and_swap_count_as_disk(swap_mb, disk_gb):
    request = utils.resources_from_request_spec(_spec(ephemeral_gb=5, swap=swap_mb))

    assert request.resources['DISK_GB'] == disk_gb


def test_resources_extra_specs_override_add_and_remove():
    request = utils.resources_from_request_spec(_spec(extra_specs={
        'resources:VCPU': '4', 'resources:DISK_GB': '0', 'resources:CUSTOM_GPU': '1',
        'hw:cpu_policy': 'dedicated'}))

    assert request.resources == {'VCPU': 4, 'MEMORY_MB': 2048, 'CUSTOM_GPU': 1}


def test_zero_disk_flavor_asks_no_disk():
    request = utils.resources_from_request_spec(_spec(root_gb=0))

    assert 'DISK_GB' not in request.resources


def test_trait_extra_specs():
    request = utils.resources_from_request_spec(_spec(extra_specs={
        'trait:HW_CPU_X86_AVX2': 'required', 'trait:CUSTOM_SLOW': 'forbidden'}))

    assert request.required_traits == {'HW_CPU_X86_AVX2'}
    assert request.forbidden_traits == {'CUSTOM_SLOW'}


def test_request_filters_forbid_disabled_computes():
    request = utils.resources_from_request_spec(_spec())

    request_filter.process_reqspec(None, _spec(), request)

    assert request.forbidden_traits == {'COMPUTE_STATUS_DISABLED'}


def _provider(total, used=0, reserved=0, ratio=1.0, max_unit=None, traits=None):
    record = {'total': total, 'reserved': reserved, 'allocation_ratio': ratio,
              'max_unit': max_unit or total}
    provider = {'name': 'p', 'inventories': {'MEMORY_MB': record},
                'usages': {'MEMORY_MB': used}}
    if traits is not None:
        provider['traits'] = traits
    return provider


def _explain(providers, amount=1000, forbidden=()):
    request = utils.ResourceRequest(resources={'MEMORY_MB': amount},
                                    forbidden_traits=set(forbidden))
    return utils.explain_no_candidates(request, providers)


def test_explain_not_enough_counts_reserved_ratio_and_usage():
    providers = {'a': _provider(4096, used=1024, reserved=512), 'b': _provider(1000, ratio=1.5)}

    assert _explain(providers, amount=8000) == (
        'Placement found no resource provider with enough MEMORY_MB: requested 8000, the '
        'most free on any provider is 2560 (2 providers checked).')


def test_explain_missing_class_and_no_providers():
    assert 'no resource provider with VGPU inventory' in utils.explain_no_candidates(
        utils.ResourceRequest(resources={'VGPU': 1}), {'a': _provider(10)})
    assert 'Placement has no resource providers' in _explain({})


def test_explain_max_unit():
    assert 'largest max_unit is 512' in _explain({'a': _provider(4096, max_unit=512)})


def test_explain_traits():
    providers = {'a': _provider(4096, traits=['COMPUTE_STATUS_DISABLED'])}

    assert _explain(providers, forbidden=['COMPUTE_STATUS_DISABLED']) == (
        'Placement found 1 resource providers with enough resources, but each was excluded '
        'by traits (has COMPUTE_STATUS_DISABLED: compute service disabled).')


def test_explain_no_single_provider_has_everything():
    providers = {'a': {'name': 'a', 'inventories': {'VCPU': {'total': 8},
                                                     'MEMORY_MB': {'total': 100}},
                       'usages': {}},
                 'b': {'name': 'b', 'inventories': {'VCPU': {'total': 1},
                                                     'MEMORY_MB': {'total': 8000}},
                       'usages': {}}}
    request = utils.ResourceRequest(resources={'VCPU': 4, 'MEMORY_MB': 4000})

    assert 'no single resource provider' in utils.explain_no_candidates(request, providers)
