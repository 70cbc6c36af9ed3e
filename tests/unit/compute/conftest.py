"""The compute tests use the scheduler tests' real Placement and SQLite cell."""
import pytest

from novalite import transient
from novalite.compute import delete
from tests.unit.scheduler.conftest import cloud, ctxt, fake_rpc, placement, reportclient

__all__ = ['cloud', 'ctxt', 'fake_rpc', 'no_pause', 'placement', 'reportclient']


@pytest.fixture
def no_pause(monkeypatch):
    """Retries of outages (``novalite.transient``) without their pauses."""
    monkeypatch.setattr(transient, 'PAUSE_STEP', 0)
    monkeypatch.setattr(delete, 'RETRY_MAX_DELAY', 0)
