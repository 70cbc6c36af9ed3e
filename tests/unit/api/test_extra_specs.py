"""Validation of flavor extra specs in known namespaces (2.86)."""
from __future__ import annotations

import pytest

from novalite import exception
from novalite.api.validation import extra_specs


@pytest.mark.parametrize('key,value', [
    ('hw:cpu_policy', 'dedicated'), ('hw:cpu_policy', 'mixed'),
    ('hw:cpu_thread_policy', 'isolate'), ('hw:mem_page_size', 'large'),
    ('hw:mem_page_size', '2048'), ('hw:mem_page_size', '1GB'), ('hw:numa_nodes', '2'),
    ('hw:numa_cpus.0', '0-3,^2'), ('hw:numa_mem.1', '1024'), ('hw:cpu_realtime', 'yes'),
    ('resources:VCPU', '0'), ('resources1:CUSTOM_GPU', '2'),
    ('trait:HW_CPU_X86_AVX2', 'required'), ('trait2:CUSTOM_X', 'forbidden'),
    ('group_policy', 'isolate'), ('quota:cpu_shares', '1024'),
    ('aggregate_instance_extra_specs:ssd', 'true'), ('capabilities:cpu_arch', 'x86_64'),
    ('pci_passthrough:alias', 'a1:2,b2:1'), ('os:secure_boot', 'required'),
    # Unknown namespaces and keys without one belong to others: left alone.
    ('vendor:anything', 'goes'), ('plain_key', 'x'),
])
def test_valid_specs_pass(key, value):
    extra_specs.validate(key, value)


@pytest.mark.parametrize('key,value,words', [
    ('hw:cpu_policy', 'bogus', 'must be one of dedicated'),
    ('hw:mem_page_size', 'huge', 'page size'),
    ('hw:numa_nodes', '0', 'greater than or equal to 1'),
    ('hw:numa_nodes', 'two', 'integer'),
    ('hw:cpu_realtime', 'perhaps', 'boolean'),
    ('resources:VCPU', '-1', 'greater than or equal to 0'),
    ('trait:HW_CPU_X86_AVX', 'maybe', 'required, forbidden'),
    ('hw:made_up', '1', 'does not appear to be a valid extra spec'),
    ('resources:lower', '1', 'does not appear to be a valid extra spec'),
    ('group_policy', 'some', 'isolate, none'),
])
def test_invalid_specs_are_rejected(key, value, words):
    with pytest.raises(exception.ValidationError) as raised:
        extra_specs.validate(key, value)
    assert key in str(raised.value) and words in str(raised.value)
