"""A server list while one cell's database hangs: the list answers by the cells'
timeout with the servers of the cells that answered (novalite has no 2.69 partial
records: the hung cell's servers are left out, as Nova does before 2.69)."""
from __future__ import annotations

import datetime
import threading
import types
import uuid

import pytest

from novalite import context as nl_context
from novalite import objects
from novalite.compute import instance_list

objects.register_all()

# Far beyond the list's timeout in these tests: an answer that waited for the hung cell
# comes after it was released.
HANG = 20.0


@pytest.fixture
def hang():
    release = threading.Event()
    timer = threading.Timer(HANG, release.set)
    timer.daemon = True
    timer.start()
    try:
        yield release
    finally:
        release.set()  # the hung call ends with the test
        timer.cancel()


def _cell(name: str) -> types.SimpleNamespace:
    return types.SimpleNamespace(uuid=str(uuid.uuid4()), name=name, transport_url='none:///',
                                 database_connection='sqlite:////nonexistent/%s' % name)


def _instances(count: int) -> list[objects.Instance]:
    t0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    return [objects.Instance(uuid=str(uuid.uuid4()),
                             created_at=t0 + datetime.timedelta(minutes=n))
            for n in range(count)]


def test_the_list_answers_without_the_servers_of_a_hung_cell(hang, monkeypatch):
    good, hung = _cell('cell1'), _cell('cell2')
    in_good, in_hung = _instances(2), _instances(3)

    def get_by_filters(cls, cctxt, filters, **kwargs):
        if cctxt.cell_uuid == hung.uuid:
            hang.wait()
            return objects.InstanceList(objects=in_hung)
        return objects.InstanceList(objects=in_good)

    monkeypatch.setattr(objects.CellMappingList, 'get_all',
                        classmethod(lambda cls, ctxt: [good, hung]))
    monkeypatch.setattr(objects.InstanceList, 'get_by_filters', classmethod(get_by_filters))
    monkeypatch.setattr(instance_list, '_build_request_instances', lambda *a, **k: [])
    monkeypatch.setattr(instance_list, 'CELL_TIMEOUT', 0.5, raising=False)

    found = instance_list.get_instances_sorted(nl_context.get_admin_context(), {}, None,
                                               None, ['created_at'], ['desc'], [])

    assert not hang.is_set(), 'the list waited for the hung cell'
    assert [i.uuid for i in found] == [i.uuid for i in reversed(in_good)]
