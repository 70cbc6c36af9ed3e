"""InstanceInfoCache: what an instance's ports look like (cell database).

The network info (``novalite.network.model``) the compute host last learnt from
Neutron, kept so that showing a server (its ``addresses``) never asks Neutron. It is
written with the instance's own save when it changed (one statement more in the same
transaction), or alone with ``save()``; the compute host refreshes it after every
change it makes to the ports and on Neutron's ``network-changed`` event.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oslo_serialization import jsonutils
from oslo_versionedobjects import fields

from novalite.context import RequestContext
from novalite.db import engine
from novalite.db.lazy import main_models as models
from novalite.db.lazy import select, update
from novalite.network import model
from novalite.objects import base

if TYPE_CHECKING:
    from oslo_versionedobjects.base import VersionedObject
    from sqlalchemy.engine import Connection


class NetworkModel(fields.FieldType):
    """A network info list; JSON text on the wire, as in the column."""

    @staticmethod
    def coerce(obj: VersionedObject | None, attr: str, value: object) -> model.NetworkInfo:
        if isinstance(value, str):
            value = jsonutils.loads(value)
        if not isinstance(value, list):
            raise ValueError('network info must be a list of VIFs, not %r' % type(value))
        return value

    @staticmethod
    def to_primitive(obj: VersionedObject, attr: str, value: model.NetworkInfo) -> str:
        return jsonutils.dumps(value)

    @staticmethod
    def from_primitive(obj: VersionedObject, attr: str, value: object) -> model.NetworkInfo:
        if not isinstance(value, (str, bytes)):  # to_primitive gives JSON text
            raise ValueError('network info on the wire must be JSON text, not %r'
                             % type(value))
        return jsonutils.loads(value)


class NetworkModelField(fields.AutoTypedField):
    AUTO_TYPE = NetworkModel()


def write(conn: Connection, instance_uuid: str, network_info: model.NetworkInfo) -> None:
    """Store ``network_info`` on the transaction's connection ``conn`` (update the live
    row, or insert one)."""
    table = models.InstanceInfoCache.__table__
    text = jsonutils.dumps(network_info)
    done = conn.execute(update(table).where(table.c.instance_uuid == instance_uuid)
                        .values(network_info=text)).rowcount
    if not done:
        conn.execute(table.insert(), {'instance_uuid': instance_uuid, 'network_info': text,
                                      'deleted': 0})


@base.NovaliteObjectRegistry.register
class InstanceInfoCache(base.NovaliteObject):
    VERSION = '1.0'
    instance_uuid: str
    network_info: model.NetworkInfo

    fields: dict[str, fields.Field[Any]] = {
        'instance_uuid': fields.UUIDField(),
        'network_info': NetworkModelField(default=[]),
    }

    @classmethod
    def loaded(cls, context: RequestContext, instance_uuid: str,
               network_info: model.NetworkInfo | None = None) -> InstanceInfoCache:
        """The cache as stored (nothing changed yet)."""
        cache = cls(context, instance_uuid=instance_uuid, network_info=network_info or [])
        cache.obj_reset_changes()
        return cache

    @classmethod
    @base.remotable
    def get_by_instance_uuid(cls, context: RequestContext, instance_uuid: str) -> InstanceInfoCache:
        table = models.InstanceInfoCache.__table__
        with engine.cell_connection(context) as connection:
            text = connection.execute(select(table.c.network_info).where(
                table.c.instance_uuid == instance_uuid, table.c.deleted == 0)).scalar()
        return cls.loaded(context, instance_uuid, jsonutils.loads(text) if text else [])

    @base.remotable
    def save(self) -> None:
        if 'network_info' not in self.obj_what_changed():
            return
        with engine.cell_writer(self._context) as session:
            write(session.connection(), self.instance_uuid, self.network_info)
        self.obj_reset_changes()
