"""The compute tests use the scheduler tests' real Placement and SQLite cell."""
from tests.unit.scheduler.conftest import cloud, ctxt, fake_rpc, placement, reportclient

__all__ = ['cloud', 'ctxt', 'fake_rpc', 'placement', 'reportclient']
