"""Quota headroom: usage is counted only for resources that have a limit."""
from __future__ import annotations

import pytest

from novalite import exception, quota
from novalite.conf import CONF


@pytest.fixture
def counted(cloud, monkeypatch):
    calls = []

    def counting(context, project_id):
        calls.append(project_id)
        return {'instances': 2, 'cores': 2, 'ram': 1024}
    monkeypatch.setattr(quota, 'count_usage', counting)
    return calls


def test_unlimited_quotas_count_nothing(cloud, counted):
    for name in ('instances', 'cores', 'ram'):
        CONF.set_override(name, -1, group='quota')
    try:
        left = quota.headroom(cloud.context, {'instances': 5, 'cores': 5, 'ram': 512}, 'p1',
                              'u1', raise_over=True)
    finally:
        for name in ('instances', 'cores', 'ram'):
            CONF.clear_override(name, group='quota')
    assert left == {'instances': -1, 'cores': -1, 'ram': -1}
    assert counted == []


def test_a_limited_resource_is_counted_and_enforced(cloud, counted):
    CONF.set_override('instances', 2, group='quota')
    try:
        with pytest.raises(exception.TooManyInstances):
            quota.headroom(cloud.context, {'instances': 1, 'cores': 1, 'ram': 512}, 'p1',
                           'u1', raise_over=True)
    finally:
        CONF.clear_override('instances', group='quota')
    assert counted == ['p1']


def test_limits_layer_class_project_and_user_rows(cloud):
    # get_limits reads the three kinds of rows in one prebuilt query: the class's over
    # the options, the project's over the class's, a user's capping the project's.
    quota.set_class_limits(quota.DEFAULT_CLASS, {'instances': 7, 'key_pairs': 9})
    quota.set_limits('p1', {'instances': 5, 'cores': -1})
    quota.set_limits('p1', {'instances': 8, 'cores': 3}, user_id='u1')
    quota.set_limits('p2', {'instances': 4})
    project = quota.get_limits(cloud.context, 'p1')
    user = quota.get_limits(cloud.context, 'p1', 'u1')
    other_user = quota.get_limits(cloud.context, 'p1', 'u2')
    other_project = quota.get_limits(cloud.context, 'p2', 'u1')
    assert (project['instances'], project['cores'], project['key_pairs']) == (5, -1, 9)
    assert (user['instances'], user['cores']) == (5, 3)  # capped by the project; set
    assert (other_user['instances'], other_user['cores']) == (5, -1)
    assert (other_project['instances'], other_project['key_pairs']) == (4, 9)
    assert project['ram'] == CONF.quota.ram
