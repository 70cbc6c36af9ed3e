"""ComputeCapabilitiesFilter on hand-built host states."""
from __future__ import annotations

from novalite.scheduler.filters.compute_capabilities_filter import ComputeCapabilitiesFilter
from tests.unit.scheduler import fakes

FILTER = ComputeCapabilitiesFilter()


def _host(**attrs):
    return fakes.host(hypervisor_type='QEMU', hypervisor_version=9000000,
                      stats={'gpu': 'yes'}, cpu_info='{"arch": "x86_64", "vendor": "Intel"}',
                      **attrs)


def test_no_extra_specs_pass():
    assert FILTER.host_passes(_host(), fakes.spec())


def test_capabilities_scope_compares_attributes_with_operators():
    assert FILTER.host_passes(_host(), fakes.spec({'capabilities:hypervisor_type': 's== QEMU'}))
    assert not FILTER.host_passes(_host(),
                                  fakes.spec({'capabilities:hypervisor_type': 'xen'}))
    assert FILTER.host_passes(_host(),
                              fakes.spec({'capabilities:hypervisor_version': '>= 8000000'}))


def test_unknown_attribute_falls_back_to_stats_then_fails():
    assert FILTER.host_passes(_host(), fakes.spec({'capabilities:gpu': 'yes'}))
    assert not FILTER.host_passes(_host(), fakes.spec({'capabilities:fpga': 'yes'}))


def test_nested_json_field_is_walked():
    assert FILTER.host_passes(_host(), fakes.spec({'capabilities:cpu_info:arch': 'x86_64'}))
    assert not FILTER.host_passes(_host(),
                                  fakes.spec({'capabilities:cpu_info:vendor': 'AMD'}))


def test_other_scopes_are_ignored_and_unscoped_keys_only_when_the_host_has_them():
    other = {'hw:cpu_policy': 'dedicated', 'resources:VCPU': '2',
             'trait:HW_CPU_X86_AVX': 'required', 'unknown_key': 'x'}
    assert FILTER.host_passes(_host(), fakes.spec(other))
    assert not FILTER.host_passes(_host(), fakes.spec({'gpu': 'no'}))
    assert FILTER.host_passes(_host(), fakes.spec({'hypervisor_type': 'QEMU'}))
