"""ComputeNode: one hypervisor's resources and usage (cell database).

Its uuid is also the uuid of the host's root resource provider in Placement.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oslo_utils import uuidutils
from oslo_versionedobjects import fields

from novalite import exception
from novalite.context import RequestContext
from novalite.db import engine
from novalite.db.lazy import main_models as models
from novalite.db.lazy import select, update
from novalite.objects import base

# Fields stored as JSON text.
_JSON_FIELDS = ('stats', 'supported_instances')


if TYPE_CHECKING:
    import netaddr
    from sqlalchemy import Select

    from novalite.db.main import models as main_db


@base.NovaliteObjectRegistry.register
class ComputeNode(base.NovalitePersistentObject, base.NovaliteObject):
    VERSION = '1.0'
    id: int
    uuid: str
    service_id: int | None
    host: str | None
    vcpus: int
    memory_mb: int
    local_gb: int
    vcpus_used: int
    memory_mb_used: int
    local_gb_used: int
    hypervisor_type: str
    hypervisor_version: int
    hypervisor_hostname: str | None
    cpu_info: str
    free_ram_mb: int | None
    free_disk_gb: int | None
    current_workload: int | None
    running_vms: int | None
    disk_available_least: int | None
    host_ip: netaddr.IPAddress | None
    cpu_allocation_ratio: float | None
    ram_allocation_ratio: float | None
    disk_allocation_ratio: float | None
    mapped: int
    stats: dict[str, str | None] | None
    supported_instances: list[list[str]] | None

    fields: dict[str, fields.Field[Any]] = {
        'id': fields.IntegerField(read_only=True),
        'uuid': fields.UUIDField(),
        'service_id': fields.IntegerField(nullable=True),
        'host': fields.StringField(nullable=True),
        'vcpus': fields.IntegerField(),
        'memory_mb': fields.IntegerField(),
        'local_gb': fields.IntegerField(),
        'vcpus_used': fields.IntegerField(default=0),
        'memory_mb_used': fields.IntegerField(default=0),
        'local_gb_used': fields.IntegerField(default=0),
        'hypervisor_type': fields.StringField(),
        'hypervisor_version': fields.IntegerField(),
        'hypervisor_hostname': fields.StringField(nullable=True),
        'cpu_info': fields.StringField(default='{}'),
        'free_ram_mb': fields.IntegerField(nullable=True),
        'free_disk_gb': fields.IntegerField(nullable=True),
        'current_workload': fields.IntegerField(nullable=True),
        'running_vms': fields.IntegerField(nullable=True),
        'disk_available_least': fields.IntegerField(nullable=True),
        'host_ip': fields.IPAddressField(nullable=True),
        'cpu_allocation_ratio': fields.FloatField(nullable=True),
        'ram_allocation_ratio': fields.FloatField(nullable=True),
        'disk_allocation_ratio': fields.FloatField(nullable=True),
        'mapped': fields.IntegerField(default=0),
        # Counters the resource tracker keeps (failed_builds, ...), for the scheduler.
        'stats': fields.DictOfNullableStringsField(nullable=True),
        # [arch, hypervisor type, vm mode] triples the driver can run.
        'supported_instances': fields.ListOfListsOfStringsField(nullable=True),
    }

    @classmethod
    def _from_db_object(cls, context: RequestContext, row: main_db.ComputeNode) -> ComputeNode:
        obj = cls(context)
        cls._set_from_db(obj, row, skip=('deleted',) + _JSON_FIELDS)
        for name in _JSON_FIELDS:
            setattr(obj, name, base.from_json(getattr(row, name), None))
        obj.deleted = bool(row.deleted)
        obj.obj_reset_changes()
        return obj

    @classmethod
    @base.remotable
    def get_by_host_and_nodename(cls, context: RequestContext, host: str,
                                 nodename: str) -> ComputeNode:
        with engine.cell_reader(context) as session:
            row = session.scalars(select(models.ComputeNode)
                                  .filter_by(host=host, hypervisor_hostname=nodename,
                                             deleted=0)).first()
            if row is None:
                raise exception.ComputeHostNotFound(host=host)
            return cls._from_db_object(context, row)

    def _values(self) -> dict:
        values = self.obj_get_changes()
        values.pop('deleted', None)
        for key in ('created_at', 'updated_at', 'deleted_at'):
            if key in values:
                values[key] = base.naive_utc(values[key])
        if 'host_ip' in values and values['host_ip'] is not None:
            values['host_ip'] = str(values['host_ip'])
        for name in _JSON_FIELDS:
            if name in values:
                values[name] = (base.to_json(values[name]) if values[name] is not None
                                else None)
        return values

    @base.remotable
    def create(self) -> None:
        values = self._values()
        values.setdefault('uuid', uuidutils.generate_uuid())
        self._insert_in_cell(models.ComputeNode, values, skip=_JSON_FIELDS)
        for name in _JSON_FIELDS:
            if not self.obj_attr_is_set(name):
                setattr(self, name, None)
        self.obj_reset_changes()

    @base.remotable
    def save(self) -> None:
        """Write the changed fields: one UPDATE, without reading the row first (the
        resource tracker saves its node's usage after every claim)."""
        values = self._values()
        if not values:
            return
        table = models.ComputeNode.__table__
        with engine.cell_writer(self._context) as session:
            result = session.connection().execute(
                update(table).where(table.c.id == self.id).values(**values))
        if result.rowcount == 0:
            raise exception.ComputeNodeNotFound(node=self.id)
        self.obj_reset_changes()


@base.NovaliteObjectRegistry.register
class ComputeNodeList(base.ObjectListBase['ComputeNode'], base.NovaliteObject):
    VERSION = '1.0'
    fields = {'objects': fields.ListOfObjectsField('ComputeNode')}

    @classmethod
    def _get(cls, context: RequestContext, query: Select[Any]) -> ComputeNodeList:
        with engine.cell_reader(context) as session:
            return cls(context, objects=[ComputeNode._from_db_object(context, r)
                                         for r in session.scalars(query)])

    @classmethod
    def get_all(cls, context: RequestContext) -> ComputeNodeList:
        return cls._get(context, select(models.ComputeNode).filter_by(deleted=0))

    @classmethod
    def get_all_by_uuids(cls, context: RequestContext, uuids: list[str]) -> ComputeNodeList:
        return cls._get(context, select(models.ComputeNode).where(
            models.ComputeNode.uuid.in_(uuids), models.ComputeNode.deleted == 0))

    @classmethod
    def get_all_by_not_mapped(cls, context: RequestContext,
                              mapped_less_than: int = 1) -> ComputeNodeList:
        return cls._get(context, select(models.ComputeNode).where(
            models.ComputeNode.mapped < mapped_less_than, models.ComputeNode.deleted == 0))

    @classmethod
    @base.remotable
    def get_all_by_host(cls, context: RequestContext, host: str) -> ComputeNodeList:
        return cls._get(context, select(models.ComputeNode).filter_by(host=host, deleted=0))
