"""operation.revert: a failed operation rolls its instance back, but never undoes a
delete that started meanwhile."""
from __future__ import annotations

import types
import uuid

from novalite import context as nl_context
from novalite import exception, objects
from novalite.compute import operation


class _NoGuest:
    def get_info(self, instance):
        raise exception.InstanceNotFound(instance_id=instance.uuid)


def _instance(cctxt, task_state):
    flavor = objects.Flavor(id=1, flavorid='f1', name='f1', memory_mb=512, vcpus=1,
                            root_gb=1, ephemeral_gb=0, swap=0, extra_specs={})
    instance = objects.Instance(cctxt, uuid=str(uuid.uuid4()), host='h1', project_id='p1',
                                user_id='u1', vm_state='active', task_state=task_state,
                                flavor=flavor)
    instance.create()
    return instance


def test_revert_restores_the_state_and_records_the_fault(cloud):
    mgr = types.SimpleNamespace(host='h1', driver=_NoGuest())
    with nl_context.target_cell(cloud.context, cloud.cell) as cctxt:
        instance = _instance(cctxt, 'rebuilding')
        operation.revert(mgr, cctxt, instance, 'stopped', RuntimeError('it broke'))
        saved = objects.Instance.get_by_uuid(cctxt, instance.uuid, expected_attrs=['fault'])
    assert (saved.vm_state, saved.task_state) == ('stopped', None)
    assert saved.fault is None  # shown for ERROR only; the row exists:
    assert objects.InstanceFault.get_latest_for_instance(cctxt, instance.uuid).message


def test_revert_leaves_a_delete_under_way_alone(cloud):
    mgr = types.SimpleNamespace(host='h1', driver=_NoGuest())
    with nl_context.target_cell(cloud.context, cloud.cell) as cctxt:
        instance = _instance(cctxt, 'rebuilding')
        deleting = objects.Instance.get_by_uuid(cctxt, instance.uuid)
        deleting.task_state = 'deleting'
        deleting.save()
        operation.revert(mgr, cctxt, instance, 'active', RuntimeError('it broke'))
        saved = objects.Instance.get_by_uuid(cctxt, instance.uuid)
    assert saved.task_state == 'deleting'
