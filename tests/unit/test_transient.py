"""transient.call: the first try on the caller's thread, retries only of outages."""
from __future__ import annotations

import threading

import oslo_messaging as messaging
import pytest

from novalite import exception, transient


@pytest.fixture(autouse=True)
def no_pause(monkeypatch):
    monkeypatch.setattr(transient, 'PAUSE_STEP', 0)


def test_a_first_try_that_succeeds_runs_on_the_callers_thread():
    seen = []

    def step() -> str:
        seen.append(threading.current_thread())
        return 'done'

    assert transient.call('step', step) == 'done'
    assert seen == [threading.current_thread()]


def test_an_outage_is_tried_again_after_undoing_the_failed_try():
    answers = [messaging.MessagingTimeout('no answer'), messaging.MessagingTimeout('again'),
               'done']
    undone = []

    def step() -> str:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    assert transient.call('step', step, before_retry=lambda: undone.append(1)) == 'done'
    assert answers == [] and undone == [1, 1]


def test_a_failure_that_is_not_an_outage_is_raised_at_once():
    calls = []

    def step() -> None:
        calls.append(1)
        raise exception.InstanceNotFound(instance_id='x')

    with pytest.raises(exception.InstanceNotFound):
        transient.call('step', step, max_retries=5)
    assert calls == [1]


@pytest.mark.parametrize('max_retries', [0, 1, 3])
def test_max_retries_bounds_the_tries(max_retries):
    calls = []

    def step() -> None:
        calls.append(1)
        raise messaging.MessagingTimeout('no answer')

    with pytest.raises(messaging.MessagingTimeout):
        transient.call('step', step, max_retries=max_retries)
    assert len(calls) == max_retries + 1


def test_a_deadline_already_passed_allows_no_retry():
    calls = []

    def step() -> None:
        calls.append(1)
        raise messaging.MessagingTimeout('no answer')

    with pytest.raises(messaging.MessagingTimeout):
        transient.call('step', step, until=0.0)
    assert calls == [1]
