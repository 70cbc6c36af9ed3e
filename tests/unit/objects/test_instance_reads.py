"""The read paths of a status poll: Instance.get_by_uuid on Core rows, the mapping read
with its build request in one query, and documents deserialized once per text."""
from __future__ import annotations

import datetime
import uuid

import pytest

from novalite import context as nl_context
from novalite import exception, objects
from novalite.compute import lookups
from novalite.db import engine
from novalite.objects import base
from novalite.objects import build_request as build_request_module
from novalite.objects import instance as instance_module


def _flavor(**extra_specs):
    return objects.Flavor(id=1, flavorid='f1', name='f1', memory_mb=512, vcpus=1,
                          root_gb=1, ephemeral_gb=0, swap=0, extra_specs=extra_specs,
                          projects=['p1'])


def _create(cctxt, **values):
    fields = dict(uuid=str(uuid.uuid4()), project_id='p1', user_id='u1', vm_state='active',
                  host='h1', node='h1', display_name='vm', flavor=_flavor(hw='x'),
                  metadata={'k': 'v'}, system_metadata={'image_min_ram': '0', 'n': None},
                  tags=['b', 'a'], launched_at=datetime.datetime(2026, 1, 2, 3, 4, 5))
    fields.update(values)
    instance = objects.Instance(cctxt, **fields)
    instance.create()
    # Written as a column: Instance.create() cannot store an IPAddress field yet.
    from sqlalchemy import update

    from novalite.db.main import models
    with engine.cell_writer(cctxt) as session:
        session.execute(update(models.Instance).where(models.Instance.uuid == instance.uuid)
                        .values(access_ip_v4='10.0.0.1'))
    return instance


def _coerced(cctxt, uuid_):
    """The instance as the generic ``_set_from_db`` (every value through its field's
    coercion) builds it from an ORM row: what the fast copy must equal."""
    from sqlalchemy import select

    from novalite.db.main import models
    with engine.cell_reader(cctxt) as session:
        row = session.scalars(select(models.Instance).filter_by(uuid=uuid_)).first()
        obj = objects.Instance(cctxt)
        objects.Instance._set_from_db(obj, row, skip=instance_module._EXTRA_FIELDS +
                                      ('deleted',))
    return obj


def _plain_fields(instance):
    return {name: getattr(instance, name) for name in objects.Instance.fields
            if name not in instance_module._EXTRA_FIELDS and name != 'deleted' and
            instance.obj_attr_is_set(name)}


def test_get_by_uuid_gives_what_coercing_every_field_gives(dbs):
    with nl_context.target_cell(dbs.context, dbs.cell) as cctxt:
        created = _create(cctxt)
        got = objects.Instance.get_by_uuid(cctxt, created.uuid, expected_attrs=['fault'])
        expected = _plain_fields(_coerced(cctxt, created.uuid))
    assert _plain_fields(got) == expected
    for name, value in _plain_fields(got).items():
        assert type(value) is type(expected[name]), name
    assert got.launched_at.tzinfo is not None
    assert got.locked is False and got.hidden is False  # NULL columns: the defaults
    assert str(got.access_ip_v4) == '10.0.0.1'
    assert got.deleted is False
    # (The flavor keeps the change list of its stored document, as it always has.)
    assert not got.obj_what_changed() - {'flavor'}
    assert (got.metadata, got.system_metadata, got.tags) == (
        {'k': 'v'}, {'image_min_ram': '0', 'n': None}, ['a', 'b'])
    assert got.flavor.extra_specs == {'hw': 'x'} and got.flavor.projects == ['p1']
    assert got.old_flavor is None and got.new_flavor is None
    assert got.fault is None


def test_get_by_uuid_reads_the_fault_of_a_server_in_error(dbs):
    with nl_context.target_cell(dbs.context, dbs.cell) as cctxt:
        instance = _create(cctxt, vm_state='error')
        objects.InstanceFault(cctxt, instance_uuid=instance.uuid, code=500,
                              message='boom', details='trace', host='h1').create()
        got = objects.Instance.get_by_uuid(cctxt, instance.uuid, expected_attrs=['fault'])
    assert (got.fault.code, got.fault.message) == (500, 'boom')


def test_get_by_uuid_of_a_deleted_server(dbs):
    with nl_context.target_cell(dbs.context, dbs.cell) as cctxt:
        instance = _create(cctxt)
        instance.destroy()
        with pytest.raises(exception.InstanceNotFound):
            objects.Instance.get_by_uuid(cctxt, instance.uuid)
        cctxt.read_deleted = 'yes'
        got = objects.Instance.get_by_uuid(cctxt, instance.uuid)
    assert got.deleted is True and got.vm_state == 'deleted'


def test_instances_of_one_flavor_document_share_nothing(dbs):
    with nl_context.target_cell(dbs.context, dbs.cell) as cctxt:
        instance = _create(cctxt)
        first = objects.Instance.get_by_uuid(cctxt, instance.uuid)
        first.flavor.extra_specs['changed'] = 'yes'
        first.flavor.projects.append('p2')
        second = objects.Instance.get_by_uuid(cctxt, instance.uuid)
    assert second.flavor is not first.flavor
    assert second.flavor.extra_specs == {'hw': 'x'} and second.flavor.projects == ['p1']


def _comparable(primitive):
    """An object's primitive with its list of changed fields in a fixed order (the list
    comes from a set, whose order a copy need not keep)."""
    if isinstance(primitive, dict):
        return {key: sorted(value) if key.endswith('.changes') else _comparable(value)
                for key, value in primitive.items()}
    if isinstance(primitive, list):
        return [_comparable(item) for item in primitive]
    return primitive


def test_parsed_once_copies_equal_the_parsed_object_and_share_nothing():
    objects.register_all()
    instance = objects.Instance(uuid=str(uuid.uuid4()), metadata={'a': '1'}, tags=['t'],
                                flavor=_flavor(hw='x'),
                                launched_at=datetime.datetime(2026, 1, 1,
                                                              tzinfo=datetime.UTC))
    text = base.obj_to_json(instance)
    parsed = instance_module.ParsedOnce(base.obj_from_json, size=2)
    reference = base.obj_from_json(text)
    first, second = parsed(text), parsed(text)
    for copy in (first, second):
        assert _comparable(copy.obj_to_primitive()) == _comparable(reference.obj_to_primitive())
        assert copy.obj_what_changed() == reference.obj_what_changed()
    first.metadata['b'] = '2'
    first.tags.append('u')
    first.flavor.extra_specs['y'] = 'z'
    third = parsed(text)
    assert third.metadata == {'a': '1'} and third.tags == ['t']
    assert third.flavor.extra_specs == {'hw': 'x'}


def test_parsed_once_keeps_the_latest_texts_only():
    calls = []

    def parse(text):
        calls.append(text)
        return {'text': text}
    parsed = instance_module.ParsedOnce(parse, size=2)
    for text in ('a', 'b', 'a', 'c', 'a', 'b'):
        assert parsed(text) == {'text': text}
    # 'b' was the least recently used when 'c' came, so it was parsed again.
    assert calls == ['a', 'b', 'c', 'b']


def _build_request(ctxt, cell=None):
    instance_uuid = str(uuid.uuid4())
    instance = objects.Instance(ctxt, uuid=instance_uuid, project_id='p1', user_id='u1',
                                vm_state='building', display_name='new', flavor=_flavor())
    objects.InstanceMapping(ctxt, instance_uuid=instance_uuid, project_id='p1',
                            user_id='u1', cell_mapping=cell).create()
    build_request = objects.BuildRequest(ctxt, instance_uuid=instance_uuid, project_id='p1',
                                         user_id='u1', instance=instance, tags=['x'])
    build_request.create()
    return build_request


def test_mapping_and_build_request_in_one_read(dbs):
    created = _build_request(dbs.context)
    mapping, build_request = objects.InstanceMapping.get_with_build_request(
        dbs.context, created.instance_uuid)
    assert mapping.cell_mapping is None and mapping.project_id == 'p1'
    assert build_request.id == created.id and build_request.tags == ['x']
    assert build_request.instance.display_name == 'new'
    assert build_request.instance._context is dbs.context
    assert not build_request.obj_what_changed() - {'instance'}


def test_mapping_with_a_cell_and_no_build_request(dbs):
    created = _build_request(dbs.context)
    mapping = objects.InstanceMapping.get_by_instance_uuid(dbs.context,
                                                           created.instance_uuid)
    mapping.cell_mapping = dbs.cell
    mapping.save()
    created.destroy()
    mapping, build_request = objects.InstanceMapping.get_with_build_request(
        dbs.context, created.instance_uuid)
    assert build_request is None
    assert mapping.cell_mapping.uuid == dbs.cell.uuid
    assert mapping.cell_mapping.database_connection == dbs.cell.database_connection
    assert mapping.cell_mapping.obj_what_changed() == set()


def test_mapping_whose_build_request_went_before_it_got_a_cell(dbs):
    created = _build_request(dbs.context)
    created.destroy()
    mapping, build_request = objects.InstanceMapping.get_with_build_request(
        dbs.context, created.instance_uuid)
    assert mapping.cell_mapping is None and build_request is None


def test_mapping_reads_of_unknown_servers(dbs):
    unknown = str(uuid.uuid4())
    with pytest.raises(exception.InstanceMappingNotFound):
        objects.InstanceMapping.get_with_build_request(dbs.context, unknown)
    with pytest.raises(exception.InstanceMappingNotFound):
        objects.InstanceMapping.get_by_instance_uuid(dbs.context, unknown)
    with pytest.raises(exception.BuildRequestNotFound):
        objects.BuildRequest.get_by_instance_uuid(dbs.context, unknown)
    assert len(objects.InstanceMappingList.get_by_instance_uuids(dbs.context, [])) == 0


def test_mapping_lists(dbs):
    first, second = _build_request(dbs.context), _build_request(dbs.context, dbs.cell)
    uuids = {first.instance_uuid, second.instance_uuid}
    found = objects.InstanceMappingList.get_by_instance_uuids(dbs.context, sorted(uuids))
    assert {m.instance_uuid for m in found} == uuids
    by_project = objects.InstanceMappingList.get_by_project_id(dbs.context, 'p1')
    cells = {m.instance_uuid: m.cell_mapping for m in by_project}
    assert cells[first.instance_uuid] is None
    assert cells[second.instance_uuid].uuid == dbs.cell.uuid
    assert {b.instance_uuid for b in objects.BuildRequestList.get_all(dbs.context)} == uuids
    assert len(objects.BuildRequestList.get_all(dbs.context, project_id='p2')) == 0


def test_locate_remembers_the_cell_only(dbs):
    lookups.forget()
    created = _build_request(dbs.context)
    cell, build_request = lookups.locate(dbs.context, created.instance_uuid)
    assert cell is None and build_request.instance_uuid == created.instance_uuid
    mapping = objects.InstanceMapping.get_by_instance_uuid(dbs.context,
                                                           created.instance_uuid)
    mapping.cell_mapping = dbs.cell
    mapping.save()
    cell, build_request = lookups.locate(dbs.context, created.instance_uuid)
    assert cell.uuid == dbs.cell.uuid and build_request is None
    mapping.destroy()
    # Once in a cell, the answer is remembered: no query.
    assert lookups.locate(dbs.context, created.instance_uuid)[0].uuid == dbs.cell.uuid
    lookups.forget()


def test_build_request_instances_are_copies(dbs):
    created = _build_request(dbs.context)
    first = objects.BuildRequest.get_by_instance_uuid(dbs.context, created.instance_uuid)
    first.instance.display_name = 'changed'
    second = objects.BuildRequest.get_by_instance_uuid(dbs.context, created.instance_uuid)
    assert second.instance.display_name == 'new'
    assert build_request_module._instances is not None


def test_build_request_destroy_deletes_only_its_own_row(dbs):
    gone, kept = _build_request(dbs.context), _build_request(dbs.context)
    gone.destroy()
    with pytest.raises(exception.BuildRequestNotFound):
        objects.BuildRequest.get_by_instance_uuid(dbs.context, gone.instance_uuid)
    assert objects.BuildRequest.get_by_instance_uuid(
        dbs.context, kept.instance_uuid).id == kept.id
    # A second delete (the user's, racing the conductor's) finds nothing to delete.
    with pytest.raises(exception.BuildRequestNotFound):
        gone.destroy()
