"""BlockDeviceMapping: one disk of an instance that is not its image disk (cell database).

Block device mapping v2 as Nova keeps it: a volume attached to the server (``source_type``
volume, ``destination_type`` volume), a volume the compute host makes for it at build time
from an image, a snapshot or nothing (``source_type`` image / snapshot / blank,
``destination_type`` volume; ``volume_id`` is filled in once Cinder made it), or the image
booted from local disk (``source_type`` image, ``destination_type`` local, boot index 0).
``connection_info`` is what Cinder answered for this host's connector, kept as JSON so the
guest can be defined again (reboot, resize, unshelve) without asking Cinder.
"""
from __future__ import annotations

import functools
from typing import Any, cast

from oslo_serialization import jsonutils
from oslo_utils import timeutils, uuidutils
from oslo_versionedobjects import fields

from novalite import exception
from novalite.context import RequestContext
from novalite.db import engine
from novalite.db.lazy import main_models as models
from novalite.db.lazy import select, update
from novalite.objects import base

SOURCE_TYPES = ('blank', 'image', 'snapshot', 'volume')
DESTINATION_TYPES = ('local', 'volume')
# The columns a mapping carries, in the API's and RPC's plain-dict form.
_COLUMNS = ('uuid', 'instance_uuid', 'source_type', 'destination_type', 'guest_format',
            'device_type', 'disk_bus', 'boot_index', 'device_name', 'delete_on_termination',
            'snapshot_id', 'volume_id', 'volume_size', 'image_id', 'no_device',
            'connection_info', 'tag', 'attachment_id', 'volume_type')


@base.NovaliteObjectRegistry.register
class BlockDeviceMapping(base.NovalitePersistentObject, base.NovaliteObject):
    VERSION = '1.0'
    id: int
    uuid: str
    instance_uuid: str
    source_type: str | None
    destination_type: str | None
    guest_format: str | None
    device_type: str | None
    disk_bus: str | None
    boot_index: int | None
    device_name: str | None
    delete_on_termination: bool
    snapshot_id: str | None
    volume_id: str | None
    volume_size: int | None
    image_id: str | None
    no_device: bool
    connection_info: str | None
    tag: str | None
    attachment_id: str | None
    volume_type: str | None

    fields: dict[str, fields.Field[Any]] = {
        'id': fields.IntegerField(),
        'uuid': fields.UUIDField(),
        'instance_uuid': fields.UUIDField(),
        'source_type': fields.StringField(nullable=True),
        'destination_type': fields.StringField(nullable=True),
        'guest_format': fields.StringField(nullable=True),
        'device_type': fields.StringField(nullable=True),
        'disk_bus': fields.StringField(nullable=True),
        'boot_index': fields.IntegerField(nullable=True),
        'device_name': fields.StringField(nullable=True),
        'delete_on_termination': fields.BooleanField(default=False),
        'snapshot_id': fields.StringField(nullable=True),
        'volume_id': fields.StringField(nullable=True),
        'volume_size': fields.IntegerField(nullable=True),
        'image_id': fields.StringField(nullable=True),
        'no_device': fields.BooleanField(default=False),
        'connection_info': fields.SensitiveStringField(nullable=True),
        'tag': fields.StringField(nullable=True),
        'attachment_id': fields.UUIDField(nullable=True),
        'volume_type': fields.StringField(nullable=True),
    }

    # -- what the mapping is --------------------------------------------------------------

    @property
    def is_volume(self) -> bool:
        return self.destination_type == 'volume'

    @property
    def is_image(self) -> bool:
        """The image booted from the host's local disk (what imageRef alone means)."""
        return self.source_type == 'image' and self.destination_type == 'local'

    @property
    def is_root(self) -> bool:
        return self.boot_index == 0

    @property
    def connection(self) -> dict[str, Any] | None:
        """``connection_info`` as a dict (None until attached)."""
        return jsonutils.loads(self.connection_info) if self.connection_info else None

    def set_connection(self, info: dict[str, Any] | None) -> None:
        self.connection_info = jsonutils.dumps(info) if info is not None else None

    def to_request(self) -> dict[str, Any]:
        """The plain-dict form (the build request keeps mappings so, and RPC sends it)."""
        return {name: getattr(self, name) for name in _COLUMNS
                if self.obj_attr_is_set(name) and name != 'connection_info'}

    @classmethod
    def from_request(cls, context: RequestContext, values: dict[str, Any]) -> BlockDeviceMapping:
        return cls(context, **{k: v for k, v in values.items() if k in _COLUMNS})

    # -- reading ------------------------------------------------------------------------

    @classmethod
    @base.remotable
    def get_by_uuid(cls, context: RequestContext, bdm_uuid: str) -> BlockDeviceMapping:
        with engine.cell_reader(context) as session:
            row = session.scalars(select(models.BlockDeviceMapping)
                                  .filter_by(uuid=bdm_uuid, deleted=0)).first()
            if row is None:
                raise exception.VolumeBDMNotFound(volume_id=bdm_uuid)
            return cls._from_db_object(context, row)

    @classmethod
    @base.remotable
    def get_by_volume_and_instance(cls, context: RequestContext, volume_id: str,
                                   instance_uuid: str) -> BlockDeviceMapping:
        """:raises VolumeBDMNotFound: the volume is not attached to the instance"""
        with engine.cell_reader(context) as session:
            row = session.scalars(select(models.BlockDeviceMapping).filter_by(
                volume_id=volume_id, instance_uuid=instance_uuid, deleted=0)
                .order_by(models.BlockDeviceMapping.id.desc())).first()
            if row is None:
                raise exception.VolumeBDMNotFound(volume_id=volume_id)
            return cls._from_db_object(context, row)

    # -- writing ------------------------------------------------------------------------

    def _values(self) -> dict[str, Any]:
        values = self.obj_get_changes()
        for key in ('deleted', 'id', 'created_at', 'updated_at', 'deleted_at'):
            values.pop(key, None)
        return values

    @base.remotable
    def create(self) -> None:
        values = self._values()
        values.setdefault('uuid', uuidutils.generate_uuid())
        self._insert_in_cell(models.BlockDeviceMapping, values)

    @base.remotable
    def save(self) -> None:
        values = self._values()
        if not values:
            return
        with engine.cell_writer(self._context) as session:
            row = session.get(models.BlockDeviceMapping, self.id)
            if row is None or row.deleted:
                raise exception.VolumeBDMNotFound(volume_id=self.volume_id or self.uuid)
            for key, value in values.items():
                setattr(row, key, value)
            session.flush()
            self._set_from_db(self, row, skip=('deleted',))
        self.obj_reset_changes()

    @base.remotable
    def destroy(self) -> None:
        """Soft-delete the mapping (the volume is no longer the instance's)."""
        table = models.BlockDeviceMapping
        with engine.cell_writer(self._context) as session:
            session.execute(update(table).where(table.id == self.id, table.deleted == 0)
                            .values(deleted=table.id, deleted_at=timeutils.utcnow()))
        self.deleted = True
        self.obj_reset_changes()


@base.NovaliteObjectRegistry.register
class BlockDeviceMappingList(base.ObjectListBase['BlockDeviceMapping'], base.NovaliteObject):
    VERSION = '1.0'
    fields = {'objects': fields.ListOfObjectsField('BlockDeviceMapping')}

    @classmethod
    @base.remotable
    def get_by_instance_uuid(cls, context: RequestContext,
                             instance_uuid: str) -> BlockDeviceMappingList:
        with engine.cell_reader(context) as session:
            rows = session.scalars(select(models.BlockDeviceMapping).filter_by(
                instance_uuid=instance_uuid, deleted=0)
                .order_by(models.BlockDeviceMapping.id))
            return cls(context, objects=[BlockDeviceMapping._from_db_object(context, r)
                                         for r in rows])

    @classmethod
    def bdms_by_instance_uuid(cls, context: RequestContext,
                              uuids: list[str]) -> dict[str, list[BlockDeviceMapping]]:
        """The volume mappings of several instances of this cell (the server views)."""
        found: dict[str, list[BlockDeviceMapping]] = {u: [] for u in uuids}
        if not uuids:
            return found
        with engine.cell_reader(context) as session:
            rows = session.scalars(select(models.BlockDeviceMapping).where(
                models.BlockDeviceMapping.instance_uuid.in_(uuids),
                models.BlockDeviceMapping.deleted == 0)
                .order_by(models.BlockDeviceMapping.id))
            for row in rows:
                found[cast(str, row.instance_uuid)].append(
                    BlockDeviceMapping._from_db_object(context, row))
        return found

    @staticmethod
    def volumes_attached(context: RequestContext, uuids: list[str]
                         ) -> dict[str, list[tuple[str, bool]]]:
        """(volume id, delete_on_termination) of each instance's volumes: the server
        views' read, one light query for a whole list (no objects made)."""
        found: dict[str, list[tuple[str, bool]]] = {}
        if not uuids:
            return found
        with engine.cell_connection(context) as connection:
            rows = connection.execute(_attached_statement(), {'uuids': list(uuids)})
            for uuid, volume_id, delete in rows:
                found.setdefault(uuid, []).append((volume_id, bool(delete)))
        return found

    @classmethod
    def from_requests(cls, context: RequestContext,
                      values: list[dict[str, Any]]) -> BlockDeviceMappingList:
        return cls(context, objects=[BlockDeviceMapping.from_request(context, v)
                                     for v in values])

    def root_bdm(self) -> BlockDeviceMapping | None:
        return next((bdm for bdm in self.objects if bdm.is_root), None)

    def volumes(self) -> list[BlockDeviceMapping]:
        return [bdm for bdm in self.objects if bdm.is_volume]


@functools.cache
def _attached_statement() -> Any:
    """Built once, on first use (a compute never imports SQLAlchemy's Core here)."""
    import sqlalchemy as sa

    from novalite.db.main import models as m
    table = m.BlockDeviceMapping.__table__
    return (sa.select(table.c.instance_uuid, table.c.volume_id,
                      table.c.delete_on_termination)
            .where(table.c.instance_uuid.in_(sa.bindparam('uuids', expanding=True)),
                   table.c.deleted == 0, table.c.destination_type == 'volume',
                   table.c.volume_id.is_not(None))
            .order_by(table.c.id))
