"""Scheduling while one cell's database hangs: the host manager's look-up of compute
nodes answers by its cell timeout, and the hosts of the cells that answered are used."""
from __future__ import annotations

import threading
import uuid

import pytest

from novalite import objects
from novalite.scheduler import host_manager, manager
from tests.unit.scheduler.test_manager import _spec

# Far beyond the timeout the test sets: a schedule that waited for the hung cell ends
# after it was released.
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
        release.set()  # the hung look-up ends with the test
        timer.cancel()


def test_a_hung_cell_does_not_block_scheduling_in_the_others(cloud, hang, monkeypatch,
                                                            tmp_path):
    node = cloud.add_host('alive')
    hung = objects.CellMapping(cloud.context, uuid=str(uuid.uuid4()), name='cell2',
                               transport_url='none:///',
                               database_connection='sqlite:///%s' % (tmp_path / 'c2.sqlite'))
    hung.create()
    real = host_manager._cell_hosts

    def cell_hosts(cctxt, uuids, with_uuids):
        if cctxt.cell_uuid == hung.uuid:
            hang.wait()
        return real(cctxt, uuids, with_uuids)

    monkeypatch.setattr(host_manager, '_cell_hosts', cell_hosts)
    monkeypatch.setattr(host_manager, 'CELL_TIMEOUT', 0.5)
    scheduler = manager.SchedulerManager(reportclient=cloud.reportclient)

    [selections] = scheduler.select_destinations(cloud.context, _spec(), [str(uuid.uuid4())],
                                                 return_alternates=False)

    assert not hang.is_set(), 'scheduling waited for the hung cell'
    assert [s.compute_node_uuid for s in selections] == [node]
