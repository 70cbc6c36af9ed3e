"""cell_transaction: object writes inside it commit together or not at all."""
from __future__ import annotations

import uuid

import pytest

from novalite import context as nl_context
from novalite import exception, objects
from novalite.db import engine


def _flavor():
    return objects.Flavor(id=1, flavorid='f1', name='f1', memory_mb=512, vcpus=1, root_gb=1,
                          ephemeral_gb=0, swap=0, extra_specs={})


def _new_instance(cctxt):
    return objects.Instance(cctxt, uuid=str(uuid.uuid4()), project_id='p1', user_id='u1',
                            vm_state='building', flavor=_flavor())


def test_writes_in_a_cell_transaction_commit_together(cloud):
    with nl_context.target_cell(cloud.context, cloud.cell) as cctxt:
        instance = _new_instance(cctxt)
        with engine.cell_transaction(cctxt):
            instance.create()
            objects.InstanceAction.action_start(cctxt, instance.uuid, 'create')
            # Reads inside see the transaction's own writes.
            assert objects.Instance.get_by_uuid(cctxt, instance.uuid).uuid == instance.uuid
        action = objects.InstanceAction.get_by_request_id(cctxt, instance.uuid,
                                                          cctxt.request_id)
        assert action.action == 'create'


def test_a_failure_in_a_cell_transaction_leaves_nothing(cloud):
    with nl_context.target_cell(cloud.context, cloud.cell) as cctxt:
        instance = _new_instance(cctxt)
        with pytest.raises(RuntimeError), engine.cell_transaction(cctxt):
            instance.create()
            objects.InstanceAction.action_start(cctxt, instance.uuid, 'create')
            raise RuntimeError('half-way')
        with pytest.raises(exception.InstanceNotFound):
            objects.Instance.get_by_uuid(cctxt, instance.uuid)
        with pytest.raises(exception.InstanceActionNotFound):
            objects.InstanceAction.get_by_request_id(cctxt, instance.uuid, cctxt.request_id)
