"""ImagePropertiesFilter: architecture, hypervisor type, vm mode and version."""
from __future__ import annotations

import pytest

from novalite.conf import CONF
from novalite.scheduler.filters.image_properties_filter import (
    ImagePropertiesFilter,
    version_satisfies,
)
from tests.unit.scheduler import fakes

FILTER = ImagePropertiesFilter()


def _host(supported=(('x86_64', 'qemu', 'hvm'),), version=9000000):
    return fakes.host(supported_instances=[list(s) for s in supported],
                      hypervisor_type='QEMU', hypervisor_version=version)


def test_image_without_those_properties_passes_anywhere():
    assert FILTER.host_passes(_host(supported=()), fakes.spec(image_properties={}))
    assert FILTER.host_passes(_host(), fakes.spec())


def test_matching_properties_pass_and_aliases_are_canonicalised():
    props = {'hw_architecture': 'amd64', 'img_hv_type': 'QEMU', 'hw_vm_mode': 'hvm'}
    assert FILTER.host_passes(_host(), fakes.spec(image_properties=props))


@pytest.mark.parametrize('props', [
    {'hw_architecture': 'aarch64'}, {'img_hv_type': 'xen'}, {'hw_vm_mode': 'exe'}])
def test_mismatch_fails(props):
    assert not FILTER.host_passes(_host(), fakes.spec(image_properties=props))


def test_a_host_reporting_nothing_fails_an_image_asking_for_something():
    assert not FILTER.host_passes(_host(supported=()),
                                  fakes.spec(image_properties={'hw_architecture': 'x86_64'}))


def test_any_supported_triple_may_match():
    host = _host(supported=(('x86_64', 'qemu', 'hvm'), ('aarch64', 'qemu', 'hvm')))
    assert FILTER.host_passes(host, fakes.spec(image_properties={'hw_architecture': 'aarch64'}))


def test_requested_hypervisor_version():
    props = {'img_hv_type': 'qemu', 'img_hv_requested_version': '>=8.2'}
    assert FILTER.host_passes(_host(version=9000000), fakes.spec(image_properties=props))
    assert not FILTER.host_passes(_host(version=8001000), fakes.spec(image_properties=props))


def test_default_architecture_applies_to_images_without_one():
    CONF.set_override('image_properties_default_architecture', 'aarch64',
                      group='filter_scheduler')
    try:
        assert not FILTER.host_passes(_host(), fakes.spec(image_properties={}))
    finally:
        CONF.clear_override('image_properties_default_architecture', group='filter_scheduler')


@pytest.mark.parametrize('version, requirement, expected', [
    (6002000, '>=6.0', True), (6002000, '>=6.0, <6.2', False), (6002000, '==6.2', True),
    (6002000, '6.2.0', True), (6002000, '>6.2', False), (6002001, '>6.2', True),
    (6002000, '!=6.2', False), (6002000, 'banana', False)])
def test_version_satisfies(version, requirement, expected):
    assert version_satisfies(version, requirement) is expected
