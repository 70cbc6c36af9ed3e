"""The conductor's object indirection rides out a database that refuses connections
for a while, instead of failing the compute host's build or delete at once."""
from __future__ import annotations

import oslo_messaging as messaging
import pytest
from oslo_db import exception as db_exc

from novalite import exception
from novalite.conductor import manager as conductor_manager


class _FlakyObject:
    """A test double of an object class whose database is back after ``down`` tries."""

    calls = 0
    down = 2

    @classmethod
    def get_by_uuid(cls, context, uuid):
        cls.calls += 1
        if cls.calls <= cls.down:
            raise db_exc.DBConnectionError('Connection refused')
        return 'instance %s' % uuid

    @classmethod
    def get_missing(cls, context, uuid):
        cls.calls += 1
        raise exception.InstanceNotFound(instance_id=uuid)


@pytest.fixture
def conductor(monkeypatch):
    _FlakyObject.calls = 0
    manager = conductor_manager.ConductorManager(host='c1')
    monkeypatch.setattr(manager, '_object_class', lambda name, versions: _FlakyObject)
    return manager


def test_object_call_retried_while_the_database_refuses_connections(conductor):
    result = conductor.object_class_action_versions(None, 'Instance', 'get_by_uuid', {},
                                                    ('u1',), {})
    assert result == 'instance u1'
    assert _FlakyObject.calls == 3


def test_answers_are_not_retried(conductor):
    # The answer goes back to the compute as an expected exception, after one try.
    with pytest.raises(messaging.ExpectedException) as caught:
        conductor.object_class_action_versions(None, 'Instance', 'get_missing', {},
                                               ('u1',), {})
    assert isinstance(caught.value.exc_info[1], exception.InstanceNotFound)
    assert _FlakyObject.calls == 1
