"""ComputeNode.save: the changed fields, one UPDATE, and a clear error for a lost row."""
from __future__ import annotations

import uuid

import pytest

from novalite import context as nl_context
from novalite import exception, objects


def _node(cctxt, host):
    service = objects.Service(cctxt, host=host, binary='novalite-compute', topic='compute')
    service.create()
    node = objects.ComputeNode(
        cctxt, uuid=str(uuid.uuid4()), service_id=service.id, host=host, vcpus=4,
        memory_mb=2048, local_gb=20, vcpus_used=0, memory_mb_used=0, local_gb_used=0,
        hypervisor_type='fake', hypervisor_version=1, hypervisor_hostname=host,
        cpu_info='{}', stats={'num_instances': '0'})
    node.create()
    return node


def test_save_writes_the_changes_of_its_own_row_only(dbs):
    with nl_context.target_cell(dbs.context, dbs.cell) as cctxt:
        node, other = _node(cctxt, 'h1'), _node(cctxt, 'h2')
        node.memory_mb_used = 512
        node.vcpus_used = 1
        node.stats = {'num_instances': '1'}
        node.save()
        assert node.obj_what_changed() == set()
        stored = objects.ComputeNode.get_by_host_and_nodename(cctxt, 'h1', 'h1')
        assert (stored.memory_mb_used, stored.vcpus_used) == (512, 1)
        assert stored.stats == {'num_instances': '1'}
        assert stored.updated_at is not None
        untouched = objects.ComputeNode.get_by_host_and_nodename(cctxt, 'h2', 'h2')
        assert (untouched.memory_mb_used, untouched.updated_at) == (0, None)
        assert untouched.id == other.id


def test_save_without_changes_writes_nothing(dbs):
    with nl_context.target_cell(dbs.context, dbs.cell) as cctxt:
        node = _node(cctxt, 'h1')
        node.save()
        assert objects.ComputeNode.get_by_host_and_nodename(
            cctxt, 'h1', 'h1').updated_at is None


def test_save_of_a_node_that_is_gone(dbs):
    with nl_context.target_cell(dbs.context, dbs.cell) as cctxt:
        lost = objects.ComputeNode(cctxt, id=_node(cctxt, 'h1').id + 1000)
        lost.obj_reset_changes()
        lost.memory_mb_used = 512
        with pytest.raises(exception.ComputeNodeNotFound):
            lost.save()
