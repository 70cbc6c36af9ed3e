"""InstanceActionEvent.event_finish: the event finished, the action touched or failed."""
from __future__ import annotations

import pytest

from novalite import context as nl_context
from novalite import exception, objects


def _action(dbs, cctxt, events):
    uuid = dbs.add_instance('h1')
    objects.InstanceAction.start_with_events(cctxt, uuid, 'reboot', events)
    return uuid, objects.InstanceAction.get_by_request_id(cctxt, uuid, cctxt.request_id)


def _events(cctxt, action):
    return {e.event: e for e in objects.InstanceActionEventList.get_by_action(cctxt,
                                                                                action.id)}


def test_a_started_event_is_finished(dbs):
    with nl_context.target_cell(dbs.context, dbs.cell) as cctxt:
        uuid, action = _action(dbs, cctxt, [('compute_reboot', 'h1', None)])
        returned = objects.InstanceActionEvent.event_finish(cctxt, uuid, 'compute_reboot')
        stored = _events(cctxt, action)['compute_reboot']
        assert (stored.result, stored.host, stored.details) == ('Success', 'h1', None)
        assert stored.finish_time is not None and stored.start_time is not None
        assert (returned.id, returned.result, returned.host) == (stored.id, 'Success', 'h1')
        again = objects.InstanceAction.get_by_request_id(cctxt, uuid, cctxt.request_id)
        assert again.updated_at >= action.updated_at and again.message is None


def test_an_error_fails_the_action_and_an_unstarted_event_is_recorded(dbs):
    with nl_context.target_cell(dbs.context, dbs.cell) as cctxt:
        uuid, action = _action(dbs, cctxt, [])
        objects.InstanceActionEvent.event_finish(cctxt, uuid, 'compute_reboot',
                                                 exc_val='it broke', exc_tb='Traceback',
                                                 host='h2')
        stored = _events(cctxt, action)['compute_reboot']
        assert (stored.result, stored.details, stored.traceback, stored.host) == (
            'Error', 'it broke', 'Traceback', 'h2')
        assert stored.start_time == stored.finish_time
        again = objects.InstanceAction.get_by_request_id(cctxt, uuid, cctxt.request_id)
        assert again.message == 'Error'


def test_without_the_action_it_says_so(dbs):
    with nl_context.target_cell(dbs.context, dbs.cell) as cctxt:
        uuid = dbs.add_instance('h1')
        with pytest.raises(exception.InstanceActionNotFound):
            objects.InstanceActionEvent.event_finish(cctxt, uuid, 'compute_reboot')
