"""Instance.save with finish_event: a build's last write and its event in one transaction."""
from __future__ import annotations

import logging

import pytest

from novalite import context as nl_context
from novalite import exception, objects

BUILD = 'compute__do_build_and_run_instance'


def _building(dbs, cctxt):
    uuid = dbs.add_instance('h1')
    objects.InstanceAction.start_with_events(cctxt, uuid, 'create', [(BUILD, 'h1', None)])
    instance = objects.Instance.get_by_uuid(cctxt, uuid)
    instance.task_state = 'spawning'
    instance.save()
    return instance


def _events(cctxt, uuid):
    action = objects.InstanceAction.get_by_request_id(cctxt, uuid, cctxt.request_id)
    return {e.event: e for e in objects.InstanceActionEventList.get_by_action(cctxt,
                                                                                action.id)}


def test_active_and_the_build_event_finished_together(dbs):
    with nl_context.target_cell(dbs.context, dbs.cell) as cctxt:
        instance = _building(dbs, cctxt)
        instance.vm_state, instance.task_state = 'active', None
        instance.save(expected_task_state='spawning', finish_event=BUILD)
        assert objects.Instance.get_by_uuid(cctxt, instance.uuid).vm_state == 'active'
        event = _events(cctxt, instance.uuid)[BUILD]
        assert (event.result, event.host) == ('Success', 'h1')
        assert event.finish_time is not None


def test_a_refused_save_leaves_the_event_unfinished(dbs):
    with nl_context.target_cell(dbs.context, dbs.cell) as cctxt:
        instance = _building(dbs, cctxt)
        instance.vm_state, instance.task_state = 'active', None
        with pytest.raises(exception.UnexpectedTaskStateError):
            instance.save(expected_task_state='networking', finish_event=BUILD)
        assert _events(cctxt, instance.uuid)[BUILD].finish_time is None
        assert objects.Instance.get_by_uuid(cctxt, instance.uuid).task_state == 'spawning'


def test_without_an_action_the_state_is_still_saved(dbs, caplog):
    caplog.set_level(logging.WARNING)
    with nl_context.target_cell(dbs.context, dbs.cell) as cctxt:
        instance = objects.Instance.get_by_uuid(cctxt, dbs.add_instance('h1'))
        instance.task_state = 'spawning'
        instance.save(finish_event=BUILD)
        assert objects.Instance.get_by_uuid(cctxt, instance.uuid).task_state == 'spawning'
    assert 'event %s not recorded' % BUILD in caplog.text
