"""State checks and the metadata quota of the compute API's server edits."""
from __future__ import annotations

import pytest

from novalite import exception, objects
from novalite.compute import instance_edit
from novalite.conf import CONF

objects.register_all()


def _instance(vm_state, task_state=None):
    return objects.Instance(uuid='6a0c7a5e-6d3c-4f57-9c55-2d2f7a6d1c11', vm_state=vm_state,
                            task_state=task_state)


@pytest.mark.parametrize('vm_state', ['active', 'paused', 'suspended', 'stopped'])
def test_settled_servers_may_change(vm_state):
    instance_edit.check_state(_instance(vm_state), instance_edit.TAG_STATES, 'update tags')


@pytest.mark.parametrize('vm_state', ['building', 'error', 'deleted'])
def test_building_or_broken_servers_are_a_conflict(vm_state):
    with pytest.raises(exception.InstanceInvalidState) as raised:
        instance_edit.check_state(_instance(vm_state), instance_edit.TAG_STATES,
                                  'update tags')
    assert raised.value.code == 409
    assert vm_state in raised.value.format_message()


def test_metadata_needs_no_task_in_progress():
    instance_edit.check_state(_instance('active'), instance_edit.METADATA_STATES, 'x')
    with pytest.raises(exception.InstanceInvalidState):
        instance_edit.check_state(_instance('active', 'rebooting'),
                                  instance_edit.METADATA_STATES, 'x',
                                  task_state_must_be_none=True)


def test_metadata_quota():
    CONF.set_override('metadata_items', 1, group='quota')
    try:
        instance_edit.check_metadata_quota({'a': '1'})
        with pytest.raises(exception.MetadataLimitExceeded) as raised:
            instance_edit.check_metadata_quota({'a': '1', 'b': '2'})
    finally:
        CONF.clear_override('metadata_items', group='quota')
    assert raised.value.code == 403
    CONF.set_override('metadata_items', -1, group='quota')
    try:
        instance_edit.check_metadata_quota({str(i): 'x' for i in range(500)})
    finally:
        CONF.clear_override('metadata_items', group='quota')
