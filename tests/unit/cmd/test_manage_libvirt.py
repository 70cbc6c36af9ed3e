"""novalite-manage libvirt get_machine_type / update_machine_type /
list_unset_machine_type on MariaDB, with Nova's answers and exit codes.

``cloud`` (module-wide: the schemas are made once) is a deployment set up by
simple_cell_setup; ``Cloud.add_server`` writes a server's rows as the API and the
conductor leave them (instance, system metadata, mapping, request spec).
"""
from __future__ import annotations

import pytest
from oslo_utils import uuidutils
from sqlalchemy import select
from sqlalchemy.orm import Session

from novalite import objects
from novalite.db import engine
from novalite.db.api import models as api_models
from novalite.db.main import models as main_models
from novalite.objects import base
from tests.fixtures import databases
from tests.unit.cmd.deployment import Deployment


class Cloud(Deployment):
    """A Deployment with cells set up and servers written straight into its databases."""

    def cell_id(self, name: str = 'cell1') -> int:
        with Session(engine.get_engine(self.api_url)) as session:
            return session.scalars(select(api_models.CellMapping.id)
                                   .filter_by(name=name)).one()

    def cell_uuid(self, name: str = 'cell1') -> str:
        with Session(engine.get_engine(self.api_url)) as session:
            return session.scalars(select(api_models.CellMapping.uuid)
                                   .filter_by(name=name)).one()

    def add_server(self, vm_state: str = 'stopped', sysmeta: dict | None = None,
                   mapped: bool = True, deleted: bool = False,
                   image_properties: dict | None = None) -> str:
        uuid = uuidutils.generate_uuid()
        with Session(engine.get_engine(self.cell_url)) as session, session.begin():
            row = main_models.Instance(uuid=uuid, project_id='project', user_id='user',
                                       vm_state=vm_state, host='host1')
            session.add(row)
            session.flush()
            if deleted:
                row.deleted = row.id
            for key, value in (sysmeta or {}).items():
                session.add(main_models.InstanceSystemMetadata(instance_uuid=uuid, key=key,
                                                               value=value))
        if not mapped:
            return uuid
        image = objects.ImageMeta.from_dict({'id': uuidutils.generate_uuid(),
                                             **(image_properties or {})})
        spec = objects.RequestSpec(instance_uuid=uuid, project_id='project', image=image)
        with Session(engine.get_engine(self.api_url)) as session, session.begin():
            session.add(api_models.InstanceMapping(instance_uuid=uuid, project_id='project',
                                                   cell_id=self.cell_id()))
            session.add(api_models.RequestSpec(instance_uuid=uuid,
                                               spec=base.obj_to_json(spec)))
        return uuid

    def add_service(self, host: str, binary: str = 'novalite-compute',
                    version: int = 1) -> int:
        """A services row of cell1, as a service of that version writes it; its id."""
        with Session(engine.get_engine(self.cell_url)) as session, session.begin():
            row = main_models.Service(uuid=uuidutils.generate_uuid(), host=host,
                                      binary=binary, topic='compute', version=version)
            session.add(row)
            session.flush()
            return row.id

    def delete_service(self, service_id: int) -> None:
        with Session(engine.get_engine(self.cell_url)) as session, session.begin():
            row = session.get(main_models.Service, service_id)
            assert row is not None
            row.deleted = row.id

    def sysmeta(self, uuid: str) -> dict[str, str | None]:
        with Session(engine.get_engine(self.cell_url)) as session:
            rows = session.scalars(select(main_models.InstanceSystemMetadata)
                                   .filter_by(instance_uuid=uuid, deleted=0))
            return {r.key: r.value for r in rows}

    def spec_image_properties(self, uuid: str) -> dict[str, str | None]:
        with Session(engine.get_engine(self.api_url)) as session:
            text = session.scalars(select(api_models.RequestSpec.spec)
                                   .filter_by(instance_uuid=uuid)).one()
        return base.obj_from_json(text).image.properties


class _NoCapture:
    def readouterr(self):
        return type('Captured', (), {'out': ''})()


@pytest.fixture(scope='module')
def _module_cloud(tmp_path_factory):
    objects.register_all()
    tmp_path = tmp_path_factory.mktemp('cloud')
    gen = databases.database_factory('mysql', tmp_path)
    cloud = Cloud(next(gen), tmp_path, _NoCapture())
    for argv in (('api_db', 'sync'), ('db', 'sync'), ('cell_v2', 'simple_cell_setup')):
        assert cloud.manage(*argv)[0] == 0, argv
    yield cloud
    gen.close()


@pytest.fixture
def cloud(_module_cloud, capsys):
    _module_cloud._capsys = capsys
    yield _module_cloud
    _module_cloud._capsys = _NoCapture()


def test_get_machine_type(cloud):
    uuid = cloud.add_server(sysmeta={'image_hw_machine_type': 'pc-q35-8.2'})
    assert cloud.manage('libvirt', 'get_machine_type', uuid) == (0, 'pc-q35-8.2\n')

    unset = cloud.add_server()
    rc, out = cloud.manage('libvirt', 'get_machine_type', unset)
    assert (rc, out) == (3, 'No machine type registered for instance %s\n' % unset)

    missing = uuidutils.generate_uuid()
    rc, out = cloud.manage('libvirt', 'get_machine_type', missing)
    assert rc == 2 and missing in out
    # Mapped, but gone from its cell.
    gone = cloud.add_server(deleted=True)
    rc, out = cloud.manage('libvirt', 'get_machine_type', gone)
    assert rc == 2 and 'could not be found' in out


def test_update_machine_type_checks_as_nova(cloud):
    uuid = cloud.add_server(vm_state='active',
                            sysmeta={'image_hw_machine_type': 'pc-q35-5.2'})
    rc, out = cloud.manage('libvirt', 'update_machine_type', uuid, 'pc-q35-6.2')
    assert rc == 3 and 'vm_state active' in out
    cloud.add_server()  # another server's rows stay as they are

    stopped = cloud.add_server(sysmeta={'image_hw_machine_type': 'pc-q35-5.2'})
    for target, code in (('pc-q35-5.1', 4), ('pc-i440fx-6.2', 4), ('q35', 4),
                         ('foo', 5)):
        rc, out = cloud.manage('libvirt', 'update_machine_type', stopped, target)
        assert rc == code, (target, out)
        assert cloud.sysmeta(stopped)['image_hw_machine_type'] == 'pc-q35-5.2'

    rc, out = cloud.manage('libvirt', 'update_machine_type', stopped, 'pc-q35-6.2')
    assert rc == 0
    assert out == ('Updated instance %s machine type to pc-q35-6.2 (previously '
                   'pc-q35-5.2)\n' % stopped)
    assert cloud.sysmeta(stopped)['image_hw_machine_type'] == 'pc-q35-6.2'

    # --force skips every check, the state's included.
    rc, out = cloud.manage('libvirt', 'update_machine_type', uuid, 'pc-i440fx-2.11',
                           '--force')
    assert rc == 0 and out.startswith('Forcing update of machine type.\n')
    assert cloud.sysmeta(uuid)['image_hw_machine_type'] == 'pc-i440fx-2.11'

    shelved = cloud.add_server(vm_state='shelved_offloaded')
    rc, out = cloud.manage('libvirt', 'update_machine_type', shelved, 'q35')
    assert rc == 0 and '(previously None)' in out
    assert cloud.manage('libvirt', 'update_machine_type', uuidutils.generate_uuid(),
                        'q35')[0] == 2


def test_list_unset_machine_type(cloud):
    # Earlier tests of the module leave servers of their own: compare what this adds.
    rc, before = cloud.manage('libvirt', 'list_unset_machine_type')
    known = set(before.split()) if rc == 3 else set()
    unset = cloud.add_server(vm_state='active')
    cloud.add_server(vm_state='building')
    cloud.add_server(vm_state='active', deleted=True)
    cloud.add_server(sysmeta={'image_hw_machine_type': 'q35'})
    rc, out = cloud.manage('libvirt', 'list_unset_machine_type')
    assert rc == 3
    assert set(out.split()) - known == {unset}

    rc, out = cloud.manage('libvirt', 'list_unset_machine_type', '--cell-uuid',
                           cloud.cell_uuid('cell0'))
    assert (rc, out) == (0, 'No instances found without hw_machine_type set.\n')
    rc, out = cloud.manage('libvirt', 'list_unset_machine_type', '--cell-uuid',
                           cloud.cell_uuid())
    assert rc == 3 and unset in out.split()
    missing = uuidutils.generate_uuid()
    rc, out = cloud.manage('libvirt', 'list_unset_machine_type', '--cell-uuid', missing)
    assert rc == 2 and missing in out
