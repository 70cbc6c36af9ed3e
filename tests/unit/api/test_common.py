"""Tests of the shared API helpers: status mapping, references, microversion policy rules."""
from __future__ import annotations

import pytest

from novalite import context, exception, policy
from novalite.api.openstack import common


@pytest.mark.parametrize('vm_state, task_state, status', [
    ('building', 'scheduling', 'BUILD'),
    ('building', None, 'BUILD'),
    ('active', None, 'ACTIVE'),
    ('active', 'rebooting', 'REBOOT'),
    ('active', 'rebooting_hard', 'HARD_REBOOT'),
    ('active', 'deleting', 'ACTIVE'),
    ('stopped', None, 'SHUTOFF'),
    ('stopped', 'resize_prep', 'RESIZE'),
    ('error', None, 'ERROR'),
    ('error', 'rebuilding', 'REBUILD'),
    ('deleted', None, 'DELETED'),
    ('soft-delete', None, 'SOFT_DELETED'),
    ('shelved_offloaded', None, 'SHELVED_OFFLOADED'),
    ('resized', None, 'VERIFY_RESIZE'),
    ('bogus', None, 'UNKNOWN'),
])
def test_status_from_state(vm_state, task_state, status):
    assert common.status_from_state(vm_state, task_state) == status


def test_status_round_trip():
    vm_states, task_states = common.task_and_vm_state_from_status(['SHUTOFF'])
    assert vm_states == ['stopped'] and task_states == ['default']
    vm_states, task_states = common.task_and_vm_state_from_status(['resize'])
    assert vm_states == ['active', 'stopped']
    assert 'default' not in task_states and 'resize_prep' in task_states
    assert common.task_and_vm_state_from_status(['nope']) == ([], [])


@pytest.mark.parametrize('href, expected', [
    ('1', '1'),
    (7, '7'),
    ('m1.small', 'm1.small'),
    ('http://host/v2.1/flavors/abc', 'abc'),
    ('http://host/v2.1/p/flavors/abc/', 'abc'),
    ('http://glance:9292/v2/images/6b1c?x=1', '6b1c'),
])
def test_get_id_from_href(href, expected):
    assert common.get_id_from_href(href) == expected


class TestPolicy:
    def test_admin_and_member_rules(self):
        admin = context.RequestContext('admin', 'p1', roles=['admin', 'member', 'reader'])
        member = context.RequestContext('u', 'p1', roles=['member', 'reader'])
        reader = context.RequestContext('r', 'p1', roles=['reader'])
        rule = 'os_compute_api:servers:create'
        assert admin.can(rule, {'project_id': 'p2'})
        assert member.can(rule, {'project_id': 'p1'})
        assert not member.can(rule, {'project_id': 'p2'}, fatal=False)
        assert not reader.can(rule, {'project_id': 'p1'}, fatal=False)
        assert reader.can('os_compute_api:servers:show', {'project_id': 'p1'})
        with pytest.raises(exception.PolicyNotAuthorized):
            member.can('os_compute_api:os-flavor-manage:create')

    def test_every_rule_is_documented_and_unique(self):
        from novalite import policies
        names = [r.name for r in policies.list_rules()]
        assert len(names) == len(set(names))
        assert {'os_compute_api:servers:index', 'os_compute_api:os-flavor-manage:delete',
                'context_is_admin'} <= set(names)

    def test_override_rules(self):
        policy.reset()
        policy.init(rules={'os_compute_api:os-flavor-manage:create': '@'})
        member = context.RequestContext('u', 'p1', roles=['member'])
        assert member.can('os_compute_api:os-flavor-manage:create')
