"""The database tests borrow the scheduler tests' SQLite cell (and its Placement)."""
from tests.unit.scheduler.conftest import cloud, ctxt, fake_rpc, placement, reportclient

__all__ = ['cloud', 'ctxt', 'fake_rpc', 'placement', 'reportclient']
