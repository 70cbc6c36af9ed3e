"""Chooses oslo.service's concurrency backend before anything imports oslo.service.

oslo.service binds its classes when first used, and oslo.messaging uses it at import
time, so the choice is made when the ``novalite`` package is imported: from the
environment variable ``NOVALITE_CONCURRENCY_BACKEND`` if set, else from
``[DEFAULT] concurrency_backend`` in the ``--config-file`` files on the command line,
else native threads (Nova 34's default).
"""
from __future__ import annotations

import configparser
import os
import sys

ENV_VAR = 'NOVALITE_CONCURRENCY_BACKEND'
_chosen: str | None = None


def _from_config_files(argv: list[str]) -> str | None:
    files = []
    for i, arg in enumerate(argv):
        if arg == '--config-file' and i + 1 < len(argv):
            files.append(argv[i + 1])
        elif arg.startswith('--config-file='):
            files.append(arg.split('=', 1)[1])
    value = None
    for path in files:
        parser = configparser.RawConfigParser(strict=False)
        try:
            parser.read(path)
        except configparser.Error:
            continue
        value = parser.defaults().get('concurrency_backend', value)
    return value


def choose(argv: list[str] | None = None) -> str:
    """Select and initialise the backend once; returns 'threading' or 'eventlet'."""
    global _chosen
    if _chosen is not None:
        return _chosen
    value = os.environ.get(ENV_VAR) or _from_config_files(argv if argv is not None
                                                          else sys.argv) or 'threading'
    value = value.strip().lower()
    if value not in ('threading', 'eventlet'):
        value = 'threading'
    from oslo_service import backend
    if value == 'eventlet':
        import eventlet
        eventlet.monkey_patch()
        backend.init_backend(backend.BackendType.EVENTLET)
    else:
        backend.init_backend(backend.BackendType.THREADING)
    _chosen = value
    return value
