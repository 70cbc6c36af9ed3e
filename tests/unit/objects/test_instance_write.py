"""Instance.create and save, and the API database's creates, as Core statements: what the
ORM used to fill in."""
from __future__ import annotations

import datetime
import uuid

import pytest

from novalite import context as nl_context
from novalite import exception, objects


def _flavor():
    return objects.Flavor(id=1, flavorid='f1', name='f1', memory_mb=512, vcpus=1, root_gb=1,
                          ephemeral_gb=0, swap=0, extra_specs={})


def _new(cctxt, **fields):
    instance = objects.Instance(cctxt, uuid=str(uuid.uuid4()), host='h1', node='h1',
                                project_id='p1', user_id='u1', vm_state='building',
                                flavor=_flavor(), **fields)
    instance.create()
    return instance


def test_create_takes_back_the_id_and_the_column_defaults(dbs):
    with nl_context.target_cell(dbs.context, dbs.cell) as cctxt:
        first, second = _new(cctxt), _new(cctxt)
        assert second.id == first.id + 1
        assert first.created_at.tzinfo is not None
        assert (first.deleted, first.hidden, first.updated_at) == (False, False, None)
        stored = objects.Instance.get_by_uuid(cctxt, first.uuid)
        assert (stored.id, stored.created_at) == (first.id, first.created_at)


def test_create_writes_the_flavor_metadata_and_tags(dbs):
    with nl_context.target_cell(dbs.context, dbs.cell) as cctxt:
        instance = _new(cctxt, metadata={'a': '1'}, system_metadata={'image_x': 'y'},
                        tags=['t1', 't2', 't1'])
        stored = objects.Instance.get_by_uuid(cctxt, instance.uuid)
        assert stored.flavor.flavorid == 'f1'
        assert (stored.metadata, stored.system_metadata) == ({'a': '1'}, {'image_x': 'y'})
        assert sorted(stored.tags) == ['t1', 't2']


@pytest.mark.parametrize('expected', [[None, 'spawning'], None, [None]])
def test_save_accepts_a_stored_none_task_state_when_none_is_expected(dbs, expected):
    with nl_context.target_cell(dbs.context, dbs.cell) as cctxt:
        instance = _new(cctxt)
        instance.task_state = 'spawning'
        instance.save(expected_task_state=expected)
        assert objects.Instance.get_by_uuid(cctxt, instance.uuid).task_state == 'spawning'
        assert instance.updated_at.tzinfo == datetime.UTC


def test_save_refuses_a_task_state_not_expected(dbs):
    with nl_context.target_cell(dbs.context, dbs.cell) as cctxt:
        instance = _new(cctxt, task_state='deleting')
        instance.task_state = 'spawning'
        with pytest.raises(exception.UnexpectedTaskStateError):
            instance.save(expected_task_state=[None, 'scheduling'])
        with pytest.raises(exception.UnexpectedTaskStateError):
            instance.save(expected_vm_state=['active'])
        stored = objects.Instance.get_by_uuid(cctxt, instance.uuid)
        assert (stored.task_state, stored.vm_state) == ('deleting', 'building')
        instance.save(expected_task_state='deleting', expected_vm_state=['building'])
        assert objects.Instance.get_by_uuid(cctxt, instance.uuid).task_state == 'spawning'


def test_save_of_a_deleted_instance_is_not_found(dbs):
    with nl_context.target_cell(dbs.context, dbs.cell) as cctxt:
        instance = _new(cctxt)
        instance.destroy()
        instance.task_state = 'spawning'
        with pytest.raises(exception.InstanceNotFound):
            instance.save()


def test_save_replaces_metadata_and_tags(dbs):
    with nl_context.target_cell(dbs.context, dbs.cell) as cctxt:
        instance = _new(cctxt, metadata={'a': '1', 'b': '2'}, tags=['t1'])
        instance.metadata = {'b': '3'}
        instance.tags = []
        instance.display_name = 'renamed'
        instance.save()
        stored = objects.Instance.get_by_uuid(cctxt, instance.uuid)
        assert (stored.metadata, stored.tags, stored.display_name) == ({'b': '3'}, [],
                                                                       'renamed')


def test_api_db_creates_take_back_their_ids_and_commit_together(dbs):
    # BuildRequest, RequestSpec and InstanceMapping insert as Core statements: the ids
    # and created_at come from the insert, and one transaction holds all three.
    from novalite.db import engine
    ctxt = dbs.context
    uuids = [str(uuid.uuid4()) for _ in range(2)]
    made = []
    with engine.api_writer() as session:
        for instance_uuid in uuids:
            instance = objects.Instance(ctxt, uuid=instance_uuid, project_id='p1',
                                        user_id='u1', flavor=_flavor())
            spec = objects.RequestSpec.from_components(ctxt, instance_uuid, None, _flavor(), 1)
            spec.create(session=session)
            build_request = objects.BuildRequest(ctxt, instance_uuid=instance_uuid,
                                                 project_id='p1', user_id='u1',
                                                 instance=instance, tags=['t'])
            build_request.create(session=session)
            mapping = objects.InstanceMapping(ctxt, instance_uuid=instance_uuid,
                                              cell_mapping=None, project_id='p1',
                                              user_id='u1', queued_for_delete=False)
            mapping.create(session=session)
            made.append((spec.id, build_request.id, mapping.id))
    assert [ids[0] for ids in made] == [made[0][0], made[0][0] + 1]
    assert [ids[2] for ids in made] == [made[0][2], made[0][2] + 1]
    for instance_uuid, (spec_id, br_id, mapping_id) in zip(uuids, made, strict=True):
        assert objects.RequestSpec.get_by_instance_uuid(ctxt, instance_uuid).id == spec_id
        stored = objects.BuildRequest.get_by_instance_uuid(ctxt, instance_uuid)
        assert (stored.id, stored.tags, stored.instance.uuid) == (br_id, ['t'], instance_uuid)
        assert stored.created_at is not None
        stored_mapping = objects.InstanceMapping.get_by_instance_uuid(ctxt, instance_uuid)
        assert (stored_mapping.id, stored_mapping.cell_mapping) == (mapping_id, None)
        assert stored_mapping.queued_for_delete is False


def test_api_db_create_rolls_back_with_its_transaction(dbs):
    from novalite.db import engine
    ctxt = dbs.context
    instance_uuid = str(uuid.uuid4())
    with pytest.raises(RuntimeError), engine.api_writer() as session:
        objects.RequestSpec.from_components(ctxt, instance_uuid, None, _flavor(),
                                            1).create(session=session)
        raise RuntimeError('a later step failed')
    with pytest.raises(exception.RequestSpecNotFound):
        objects.RequestSpec.get_by_instance_uuid(ctxt, instance_uuid)
