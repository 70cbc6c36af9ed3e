"""Aggregate and AggregateList against a migrated SQLite API database."""
from __future__ import annotations

import pytest

from novalite import exception, objects


def _aggregate(dbs, name, hosts=(), **metadata):
    aggregate = objects.Aggregate(dbs.context, name=name, metadata=metadata)
    aggregate.create()
    for host in hosts:
        aggregate.add_host(host)
    return aggregate


def test_create_and_get_round_trip(dbs):
    created = _aggregate(dbs, 'fast', hosts=['h1', 'h2'], ssd='true', availability_zone='az1')

    for loaded in (objects.Aggregate.get_by_id(dbs.context, created.id),
                   objects.Aggregate.get_by_uuid(dbs.context, created.uuid)):
        assert (loaded.name, loaded.hosts) == ('fast', ['h1', 'h2'])
        assert loaded.metadata == {'ssd': 'true', 'availability_zone': 'az1'}
        assert loaded.availability_zone == 'az1'
    with pytest.raises(exception.AggregateNotFound):
        objects.Aggregate.get_by_id(dbs.context, 999)


def test_names_are_unique(dbs):
    _aggregate(dbs, 'fast')
    with pytest.raises(exception.AggregateNameExists):
        _aggregate(dbs, 'fast')


def test_add_and_delete_host(dbs):
    aggregate = _aggregate(dbs, 'a', hosts=['h1'])
    with pytest.raises(exception.AggregateHostExists):
        aggregate.add_host('h1')

    aggregate.delete_host('h1')

    assert aggregate.hosts == []
    assert objects.Aggregate.get_by_id(dbs.context, aggregate.id).hosts == []
    with pytest.raises(exception.AggregateHostNotFound):
        aggregate.delete_host('h1')


def test_update_metadata_sets_changes_and_removes(dbs):
    aggregate = _aggregate(dbs, 'a', ssd='true', gpu='no')

    aggregate.update_metadata({'gpu': 'yes', 'ssd': None, 'availability_zone': 'az2'})

    expected = {'gpu': 'yes', 'availability_zone': 'az2'}
    assert aggregate.metadata == expected
    assert objects.Aggregate.get_by_id(dbs.context, aggregate.id).metadata == expected


def test_get_by_host_and_by_hosts(dbs):
    zoned = _aggregate(dbs, 'zoned', hosts=['h1', 'h2'], availability_zone='az1')
    plain = _aggregate(dbs, 'plain', hosts=['h1'])
    _aggregate(dbs, 'elsewhere', hosts=['h9'])

    assert [a.name for a in objects.AggregateList.get_by_host(dbs.context, 'h1')] == [
        'zoned', 'plain']
    assert [a.name for a in objects.AggregateList.get_by_host(
        dbs.context, 'h1', key='availability_zone')] == ['zoned']
    by_host = objects.AggregateList.get_by_hosts(dbs.context, ['h1', 'h2', 'h3'])
    assert {h: [a.id for a in aggs] for h, aggs in by_host.items()} == {
        'h1': [zoned.id, plain.id], 'h2': [zoned.id], 'h3': []}


def test_destroy(dbs):
    aggregate = _aggregate(dbs, 'a', hosts=['h1'], ssd='true')

    aggregate.destroy()

    assert list(objects.AggregateList.get_all(dbs.context)) == []
    assert list(objects.AggregateList.get_by_host(dbs.context, 'h1')) == []
    with pytest.raises(exception.AggregateNotFound):
        aggregate.destroy()
    # The name is free again.
    _aggregate(dbs, 'a')
