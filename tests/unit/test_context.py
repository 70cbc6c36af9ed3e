"""scatter_gather_cells: every cell at once, and an answer by the timeout even when a
cell's database hangs (the hung cell maps to ``did_not_respond_sentinel``)."""
from __future__ import annotations

import threading
import types
import uuid

import pytest

from novalite import context as nl_context

# How long a hung cell hangs unless the test releases it first: far beyond the timeouts
# the tests pass, so an answer that waited for the hang comes after it was released.
HANG = 20.0


def _cell(name: str) -> types.SimpleNamespace:
    return types.SimpleNamespace(uuid=str(uuid.uuid4()), name=name, transport_url='none:///',
                                 database_connection='sqlite:////nonexistent/%s' % name)


@pytest.fixture
def hang():
    """An event a hung cell waits on; set at the latest after HANG seconds, and in
    teardown so that the hung call ends with the test."""
    release = threading.Event()
    timer = threading.Timer(HANG, release.set)
    timer.daemon = True
    timer.start()
    try:
        yield release
    finally:
        release.set()
        timer.cancel()


def test_a_hung_cell_is_reported_as_not_responding_by_the_timeout(hang):
    good, hung = _cell('cell1'), _cell('cell2')

    def read(cctxt: nl_context.RequestContext) -> str:
        if cctxt.cell_uuid == hung.uuid:
            hang.wait()
        return 'rows of %s' % cctxt.cell_uuid

    results = nl_context.scatter_gather_cells(nl_context.get_admin_context(), [good, hung],
                                              0.5, read)

    assert not hang.is_set(), 'the answer waited for the hung cell'
    assert results == {good.uuid: 'rows of %s' % good.uuid,
                       hung.uuid: nl_context.did_not_respond_sentinel}


def test_a_single_hung_cell_is_reported_by_the_timeout_too(hang):
    hung = _cell('cell1')

    def read(cctxt: nl_context.RequestContext) -> str:
        hang.wait()
        return 'late'

    results = nl_context.scatter_gather_cells(nl_context.get_admin_context(), [hung], 0.5,
                                              read)

    assert not hang.is_set(), 'the answer waited for the hung cell'
    assert results == {hung.uuid: nl_context.did_not_respond_sentinel}


def test_each_cell_answers_in_its_own_context_and_errors_map_to_the_exception():
    ok, failing = _cell('cell1'), _cell('cell2')
    error = RuntimeError('cell2 is down')

    def read(cctxt: nl_context.RequestContext, suffix: str) -> str:
        if cctxt.cell_uuid == failing.uuid:
            raise error
        return cctxt.db_connection + suffix

    context = nl_context.get_admin_context()
    results = nl_context.scatter_gather_cells(context, [ok, failing], 5, read, '!')

    assert results == {ok.uuid: ok.database_connection + '!', failing.uuid: error}
    assert context.cell_uuid is None  # the caller's context is left untargeted


def test_one_cell_without_a_timeout_runs_on_the_callers_thread():
    cell = _cell('cell1')
    caller = threading.current_thread()
    results = nl_context.scatter_gather_cells(
        nl_context.get_admin_context(), [cell], None,
        lambda cctxt: threading.current_thread() is caller)
    assert results == {cell.uuid: True}
