"""HostState: what it takes from the compute node, the cell's instances and aggregates."""
from __future__ import annotations

import types
import uuid

from novalite import objects
from novalite.scheduler.host_manager import HostState
from tests.unit.scheduler import fakes


class _NodeWithStats(types.SimpleNamespace):
    """A compute node carrying the optional stats and supported_instances fields, as
    the ComputeNode object does once it has them."""

    fields = dict(objects.ComputeNode.fields, stats=None, supported_instances=None)

    def obj_attr_is_set(self, name):
        return hasattr(self, name)


def _node(cls=objects.ComputeNode, **extra):
    return cls(uuid=str(uuid.uuid4()), host='h1', hypervisor_hostname='h1', vcpus=8,
               memory_mb=4096, local_gb=100, vcpus_used=2, memory_mb_used=1024,
               local_gb_used=10, free_ram_mb=None, free_disk_gb=None, running_vms=3,
               hypervisor_type='QEMU', hypervisor_version=9000000,
               cpu_allocation_ratio=None, ram_allocation_ratio=1.5,
               disk_allocation_ratio=None, **extra)


def test_from_compute_node_without_optional_fields():
    state = HostState('h1', 'h1', 'cell1')

    state.update_from_compute_node(_node())

    assert (state.free_ram_mb, state.free_disk_mb, state.num_instances) == (5120, 92160, 3)
    assert (state.hypervisor_type, state.hypervisor_version) == ('QEMU', 9000000)
    assert (state.supported_instances, state.stats, state.failed_builds) == ([], {}, 0)


def test_from_compute_node_reads_stats_and_supported_instances():
    state = HostState('h1', 'h1', 'cell1')
    node = _node(_NodeWithStats, stats={'failed_builds': '4', 'gpu': 'yes', 'x': None},
                 supported_instances=[['x86_64', 'qemu', 'hvm']])

    state.update_from_compute_node(node)

    assert state.failed_builds == 4
    assert state.stats == {'failed_builds': '4', 'gpu': 'yes'}
    assert state.supported_instances == [['x86_64', 'qemu', 'hvm']]


def test_from_instances_counts_instances_and_io_ops():
    state = HostState('h1', 'h1', 'cell1')

    state.update_from_instances([('a', 'active', None), ('b', 'building', 'spawning'),
                                 ('c', 'active', 'image_snapshot'),
                                 ('d', 'active', 'rebooting')])

    assert (state.num_instances, state.num_io_ops) == (4, 2)
    assert state.instances == {'a', 'b', 'c', 'd'}


def test_consume_from_request_counts_the_new_instance():
    state = fakes.host(free_ram_mb=4096, num_io_ops=1)
    spec = fakes.spec()

    state.consume_from_request(spec)

    assert (state.free_ram_mb, state.num_instances, state.num_io_ops) == (3584, 1, 2)
    assert spec.instance_uuid in state.instances


def test_aggregates_give_the_zone():
    state = fakes.host(aggregates=[fakes.aggregate(availability_zone='az9')])
    assert state.availability_zone == 'az9'
