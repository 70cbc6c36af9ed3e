"""Chooses oslo.service's concurrency backend before anything imports oslo.service.

oslo.service binds its classes when first used, and oslo.messaging uses it at import
time, so the choice is made when the ``novalite`` package is imported: from the
environment variable ``NOVALITE_CONCURRENCY_BACKEND`` if set, else from
``[DEFAULT] concurrency_backend`` in the ``--config-file`` files on the command line,
else native threads (Nova 34's default).

A process of the threading backend never loads eventlet: futurist, oslo.concurrency and
oslo.log import it whenever it is installed (it is, for the optional backend), which
costs every daemon 17 MB of memory and 0.2 s of start-up CPU (eventlet, greenlet and
dnspython) for nothing. Those libraries treat it as absent.
"""
from __future__ import annotations

import configparser
import importlib.abc
import os
import sys
import types
from collections.abc import Sequence

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


class _WithoutEventlet(importlib.abc.MetaPathFinder):
    """Makes ``import eventlet`` fail as if it were not installed."""

    def find_spec(self, name: str, path: Sequence[str] | None = None,
                  target: types.ModuleType | None = None) -> None:
        if name == 'eventlet' or name.startswith('eventlet.'):
            raise ImportError('eventlet is not used with concurrency_backend = threading',
                              name=name)
        return None


def _keep_eventlet_out() -> None:
    if 'eventlet' not in sys.modules and \
            not any(isinstance(f, _WithoutEventlet) for f in sys.meta_path):
        sys.meta_path.insert(0, _WithoutEventlet())


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
        _keep_eventlet_out()
        backend.init_backend(backend.BackendType.THREADING)
    _chosen = value
    return value
