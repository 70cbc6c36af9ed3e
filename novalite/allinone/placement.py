"""The real Placement (openstack-placement) served in-process over HTTP on loopback.

Placement keeps its database transaction factory in a module global
(``placement.db_api.placement_context_manager``), so a process can serve only one
Placement at a time: ``start()`` refuses while another ``PlacementServer`` runs.
Everything else (configuration, schema, server socket) belongs to the instance, and
novalite's global ``CONF`` is never touched.
"""
from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Any

from oslo_config import cfg
from oslo_db.sqlalchemy import enginefacade
from placement import conf as placement_conf
from placement import db_api, deploy, policy
from placement.db.sqlalchemy import migration
from placement.objects import resource_class, trait

from novalite.allinone.wsgi import WSGIServer

if TYPE_CHECKING:
    from _typeshed.wsgi import WSGIApplication

# The one PlacementServer allowed to run in this process (see the module docstring).
_RUNNING: PlacementServer | None = None
_RUNNING_LOCK = threading.Lock()


class PlacementServer:
    """Serve Placement with ``[api] auth_strategy = noauth2`` on 127.0.0.1.

    :param state_dir: directory of the SQLite database file (``placement.sqlite``),
        kept across restarts.
    :param connection: a database URL to use instead of the SQLite file.
    :param port: the port to listen on; 0 lets the OS pick a free one.
    """

    def __init__(self, state_dir: str, connection: str | None = None, port: int = 0) -> None:
        self.connection = connection or 'sqlite:///%s' % os.path.join(
            os.path.abspath(state_dir), 'placement.sqlite')
        self.port = port
        self.url: str | None = None
        self.conf: cfg.ConfigOpts | None = None
        self._server: WSGIServer | None = None
        self._reset_facade: Any = None
        self._engine: Any = None

    def start(self) -> str:
        """Create the schema (if missing), start serving, and return the endpoint URL."""
        global _RUNNING
        with _RUNNING_LOCK:
            if _RUNNING is not None:
                raise RuntimeError('A PlacementServer already runs in this process (%s); '
                                   'placement allows one database per process.' % _RUNNING.url)
            _RUNNING = self
        try:
            # One request at a time: Placement on a SQLite file fails with "database is
            # locked" when its transactions interleave.
            self._server = WSGIServer(self._load_app(), port=self.port, threaded=False)
            self._server.start()
        except BaseException:
            self._release()
            raise
        self.url = self._server.url
        return self.url

    def _load_app(self) -> WSGIApplication:
        conf = cfg.ConfigOpts()
        placement_conf.register_opts(conf)
        conf.set_default('connection', self.connection, group='placement_database')
        conf.set_default('auth_strategy', 'noauth2', group='api')
        conf([], project='placement', default_config_files=[])
        self.conf = conf

        # A private factory patched into placement's global context manager, instead of
        # placement's configure() which may run only once per process.
        facade = enginefacade.transaction_context()
        db_conf = dict(conf.placement_database.items())
        db_conf.pop('sync_on_startup', None)
        facade.configure(**db_conf)
        self._reset_facade = db_api.placement_context_manager.patch_factory(facade)
        self._engine = db_api.get_placement_engine()
        # Tables from the models (create_all skips existing ones): much faster than
        # replaying placement's migrations on every cold start.
        migration.create_schema(self._engine)
        # Placement syncs os-traits and standard resource classes once per process;
        # this database may be new, so sync again.
        trait._TRAITS_SYNCED = False
        resource_class._RESOURCE_CLASSES_SYNCED = False
        policy.reset()
        return deploy.loadapp(conf)

    def stop(self) -> None:
        """Stop serving and let another PlacementServer start (idempotent)."""
        if self._server is not None:
            self._server.stop()
            self._server = None
        self._release()

    def _release(self) -> None:
        global _RUNNING
        if self._reset_facade is not None:
            self._reset_facade()
            self._reset_facade = None
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None
        policy.reset()
        with _RUNNING_LOCK:
            if _RUNNING is self:
                _RUNNING = None

    def __enter__(self) -> PlacementServer:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
