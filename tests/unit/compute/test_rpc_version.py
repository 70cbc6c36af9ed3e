"""The compute manager serves the newest version its RPC client may send: a client
method at a version the manager's target does not reach fails every call with
UnsupportedVersion on the host."""
from __future__ import annotations

import inspect

from novalite.compute import manager, rpcapi


def test_the_manager_serves_the_clients_version() -> None:
    assert manager.ComputeManager.target.version == rpcapi.ComputeAPI.VERSION


def test_every_method_the_client_sends_is_the_managers() -> None:
    sent = {name for name, _ in inspect.getmembers(rpcapi.ComputeAPI, inspect.isfunction)
            if not name.startswith('_')}
    missing = sorted(name for name in sent if not hasattr(manager.ComputeManager, name))
    assert missing == []
