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
