"""A deployment's databases and config file, driven through novalite-manage/-status."""
from __future__ import annotations

import pathlib

from oslo_utils import uuidutils
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from novalite.cmd import manage, status
from novalite.db import engine
from novalite.db.api import models as api_models
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

    def add_instance(self, host: str | None = None, deleted: bool = False,
                     url: str | None = None, project_id: str = 'project') -> str:
        """Insert an instances row (soft-deleted as Nova does if ``deleted``) with no
        instance mapping, as a cell database from before cells v2 has; its uuid."""
        uuid = uuidutils.generate_uuid()
        with Session(engine.get_engine(url or self.cell_url)) as session, session.begin():
            row = main_models.Instance(uuid=uuid, host=host, project_id=project_id,
                                       user_id='user')
            session.add(row)
            session.flush()
            if deleted:
                row.deleted = row.id
        return uuid

    def remove_instance(self, uuid: str, url: str | None = None) -> None:
        """Delete the instances row for good, as archiving does."""
        with Session(engine.get_engine(url or self.cell_url)) as session, session.begin():
            session.query(main_models.Instance).filter_by(uuid=uuid).delete()

    def instance_mappings(self) -> dict[str, str | None]:
        """{instance uuid: cell uuid or None} of the API database's instance mappings."""
        with Session(engine.get_engine(self.api_url)) as session:
            return {m.instance_uuid: m.cell_mapping.uuid if m.cell_mapping else None
                    for m in session.query(api_models.InstanceMapping)}

    def add_instance_mapping(self, uuid: str, cell_id: int | None) -> None:
        with Session(engine.get_engine(self.api_url)) as session, session.begin():
            session.add(api_models.InstanceMapping(instance_uuid=uuid, cell_id=cell_id,
                                                   project_id='project'))

    def remove_instance_mapping(self, uuid: str) -> None:
        with Session(engine.get_engine(self.api_url)) as session, session.begin():
            session.query(api_models.InstanceMapping).filter_by(instance_uuid=uuid).delete()

    def cells(self) -> dict[str, api_models.CellMapping]:
        """{name: cell mapping row} of the API database."""
        with Session(engine.get_engine(self.api_url), expire_on_commit=False) as session:
            return {c.name: c for c in session.query(api_models.CellMapping)}
