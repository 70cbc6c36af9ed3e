"""Guest diagnostics: the standard format, its legacy flattening, and the libvirt and
fake drivers filling it."""
from __future__ import annotations

import datetime

import pytest

from novalite import objects
from novalite.virt import diagnostics, fake
from tests.unit.virt.conftest import image_meta, make_instance


def test_details_carry_every_key_and_refuse_unknown_ones():
    diags = diagnostics.new('running', 'libvirt', memory_maximum_mb=64)
    diagnostics.add_cpu(diags, id=0, time=5)
    diagnostics.add_nic(diags, mac_address='fa:16:3e:00:00:01', rx_octets=10, tx_drop=1)
    assert diags['cpu_details'] == [{'id': 0, 'time': 5, 'utilisation': None}]
    assert diags['nic_details'][0]['rx_errors'] is None
    with pytest.raises(ValueError):
        diagnostics.add_disk(diags, reads=1)
    flat = diagnostics.legacy(diags)
    assert flat == {'cpu0_time': 5, 'memory': 64 * 1024, 'vnet0_rx': 10,
                    'vnet0_rx_drop': None, 'vnet0_rx_errors': None,
                    'vnet0_rx_packets': None, 'vnet0_tx': None, 'vnet0_tx_drop': 1,
                    'vnet0_tx_errors': None, 'vnet0_tx_packets': None}


def test_fake_driver_reports_one_cpu_per_vcpu():
    objects.register_all()
    drv = fake.FakeDriver()
    drv.init_host('fake-host')
    instance = make_instance(vcpus=3, memory_mb=96)
    instance.config_drive = ''
    drv.spawn(None, instance, None, [], None, {})
    diags = drv.get_instance_diagnostics(instance)
    assert [c['id'] for c in diags['cpu_details']] == [0, 1, 2]
    assert diags['memory_details'] == {'maximum': 96, 'used': 0}
    # The API's enum of drivers has no 'fake': it reports 'libvirt', as Nova's fake.
    assert diags['driver'] == 'libvirt'
    assert drv.get_diagnostics(instance)['cpu2_time'] == 0


def test_libvirt_driver_reads_the_domain_counters(make_driver, ctxt, image_server):
    drv = make_driver('host1')
    image = image_server.add_image(b'\0' * 4096, disk_format='raw')
    instance = make_instance(image_ref=image['id'], vcpus=2, memory_mb=256)
    instance.config_drive = ''
    instance.launched_at = datetime.datetime.now(datetime.UTC) - datetime.timedelta(
        seconds=90)
    drv.spawn(ctxt, instance, image_meta(image), [], None, {})
    diags = drv.get_instance_diagnostics(instance)
    assert (diags['state'], diags['driver'], diags['hypervisor']) == (
        'running', 'libvirt', 'test')
    assert diags['memory_details']['maximum'] == 256
    assert [c['id'] for c in diags['cpu_details']] == [0, 1]
    assert len(diags['disk_details']) == 1
    assert diags['disk_details'][0]['read_requests'] is not None
    assert 90 <= diags['uptime'] < 3600
    assert 'vda_read' in drv.get_diagnostics(instance)


def test_a_driver_outside_the_api_enum_is_refused():
    with pytest.raises(ValueError):
        diagnostics.new('running', 'fake')
