"""The extra spec operators shared by the capability and aggregate filters."""
from __future__ import annotations

import pytest

from novalite.scheduler.filters.extra_specs_ops import match


@pytest.mark.parametrize('value, requirement, expected', [
    ('1', '1', True), ('1', '2', False), ('abc', 'abc', True),
    ('10', '= 8', True), ('8', '= 8', True), ('7', '= 8', False),
    ('8', '== 8.0', True), ('8', '!= 8', False), ('9', '>= 10', False), ('9', '<= 10', True),
    ('abc', '= 1', False),
    ('QEMU', 's== QEMU', True), ('QEMU', 's!= QEMU', False), ('a', 's< b', True),
    ('b', 's<= a', False), ('b', 's> a', True), ('a', 's>= b', False),
    ('avx2 sse4', '<in> avx2', True), ('sse4', '<in> avx2', False),
    ('avx2 sse4 aes', '<all-in> aes avx2', True), ('avx2', '<all-in> aes avx2', False),
    ('x86_64', '<or> aarch64 <or> x86_64', True), ('ppc64', '<or> aarch64 <or> x86_64', False),
    (None, '= 1', False), ('1', '>=', False),
])
def test_match(value, requirement, expected):
    assert match(value, requirement) is expected
