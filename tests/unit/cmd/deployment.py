"""A deployment's databases and config file, driven through novalite-manage/-status."""
from __future__ import annotations

import pathlib

from oslo_utils import uuidutils
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from novalite.cmd import manage, status
from novalite.db import engine
from novalite.db.main import models as main_models
from tests.fixtures.databases import DatabaseFactory


class Deployment:
    """An API database and a cell database (empty), named in a config file.

    The cell0 database is created under the name ``map_cell0`` derives by default.
    """

    def __init__(self, factory: DatabaseFactory, tmp_path: pathlib.Path, capsys,
                 transport_url: str = 'fake://') -> None:
        self.api_url = factory('api')
        self.cell_url = factory('cell')
        self._capsys = capsys
        if factory.backend == 'sqlite':
            self.cell0_url = self.cell_url.replace('.sqlite', '_cell0.sqlite')
        else:
            self.cell0_url = factory.named(make_url(self.cell_url).database + '_cell0')
        self.config_file = tmp_path / 'novalite.conf'
        self.config_file.write_text(
            '[DEFAULT]\ntransport_url = %s\n[api_database]\nconnection = %s\n'
            '[database]\nconnection = %s\n' % (transport_url, self.api_url, self.cell_url))

    def _run(self, main, argv: tuple[str, ...]) -> tuple[int, str]:
        self._capsys.readouterr()
        rc = main(['--config-file', str(self.config_file), *argv])
        return rc, self._capsys.readouterr().out

    def manage(self, *argv: str) -> tuple[int, str]:
        """(exit code, standard output) of ``novalite-manage ARGV``."""
        return self._run(manage.main, argv)

    def status(self, *argv: str) -> tuple[int, str]:
        return self._run(status.main, argv)

    def add_compute_node(self, host: str, nodename: str | None = None,
                         url: str | None = None) -> str:
        """Insert a compute_nodes row as a compute service would; returns its uuid."""
        node_uuid = uuidutils.generate_uuid()
        with Session(engine.get_engine(url or self.cell_url)) as session, session.begin():
            session.add(main_models.ComputeNode(
                uuid=node_uuid, host=host, hypervisor_hostname=nodename or host, vcpus=4,
                memory_mb=4096, local_gb=40, hypervisor_type='fake', hypervisor_version=1,
                cpu_info='{}'))
        return node_uuid

    def node_mapped(self, node_uuid: str, url: str | None = None) -> int:
        with Session(engine.get_engine(url or self.cell_url)) as session:
            return session.query(main_models.ComputeNode).filter_by(uuid=node_uuid).one().mapped
