"""The server list's merge of build requests and cell instances: each server once."""
from __future__ import annotations

import datetime
import types

import pytest

from novalite import exception, objects
from novalite.compute import instance_list

KEYS, DIRS = ['created_at', 'uuid'], ['desc', 'desc']
T0 = datetime.datetime(2026, 1, 1)


def _server(uuid: str, minute: int, where: str) -> types.SimpleNamespace:
    return types.SimpleNamespace(uuid=uuid, created_at=T0 + datetime.timedelta(minutes=minute),
                                 where=where)


def test_a_server_both_building_and_in_a_cell_is_listed_once_from_its_cell():
    # Read between the conductor's instance create and its build request delete.
    building = [_server('b', 2, 'build request'), _server('a', 1, 'build request')]
    in_cells = [_server('b', 2, 'cell'), _server('c', 0, 'cell')]
    merged = instance_list.merge(building, in_cells, KEYS, DIRS, None)
    assert [(s.uuid, s.where) for s in merged] == [
        ('b', 'cell'), ('a', 'build request'), ('c', 'cell')]


def test_the_overlap_takes_no_place_of_the_limit():
    building = [_server('b', 2, 'build request'), _server('a', 1, 'build request')]
    in_cells = [_server('b', 2, 'cell'), _server('c', 0, 'cell')]
    merged = instance_list.merge(building, in_cells, KEYS, DIRS, 3)
    assert [s.uuid for s in merged] == ['b', 'a', 'c']


def test_the_listing_reads_build_requests_before_the_cells(monkeypatch):
    """A server the conductor moves while the list runs: seen building, then in its cell."""
    order = []
    moving = _server('m', 5, 'build request')

    def building(*args, **kwargs):
        order.append('build requests')
        return [moving]

    def cells(*args, **kwargs):
        order.append('cells')
        return [_server('m', 5, 'cell')]

    monkeypatch.setattr(instance_list, '_build_request_instances', building)
    monkeypatch.setattr(instance_list, '_cell_instances', cells)
    found = instance_list.get_instances_sorted(None, {}, None, None, ['created_at'],
                                               ['desc'], [])
    assert order == ['build requests', 'cells']
    assert [(s.uuid, s.where) for s in found] == [('m', 'cell')]


def test_a_marker_that_left_its_build_request_is_found_in_its_cell(monkeypatch):
    cell = types.SimpleNamespace(uuid='cell1')
    mappings = iter([types.SimpleNamespace(cell_mapping=None),
                     types.SimpleNamespace(cell_mapping=cell)])
    monkeypatch.setattr(objects.InstanceMapping, 'get_by_instance_uuid',
                        classmethod(lambda cls, ctx, uuid: next(mappings)))

    def gone(cls, ctx, uuid):
        raise exception.BuildRequestNotFound(uuid=uuid)

    monkeypatch.setattr(objects.BuildRequest, 'get_by_instance_uuid', classmethod(gone))
    assert instance_list._marker_mapping(None, 'm') == (cell, None)


def test_a_marker_neither_building_nor_in_a_cell_is_not_found(monkeypatch):
    monkeypatch.setattr(objects.InstanceMapping, 'get_by_instance_uuid',
                        classmethod(lambda cls, ctx, uuid:
                                    types.SimpleNamespace(cell_mapping=None)))

    def gone(cls, ctx, uuid):
        raise exception.BuildRequestNotFound(uuid=uuid)

    monkeypatch.setattr(objects.BuildRequest, 'get_by_instance_uuid', classmethod(gone))
    with pytest.raises(exception.MarkerNotFound):
        instance_list._marker_mapping(None, 'm')
