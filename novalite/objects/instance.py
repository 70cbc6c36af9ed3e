"""Instance: a server once it lives in a cell database.

A row of ``instances`` plus what hangs off it: the flavor (``instance_extra``),
metadata, system metadata, tags, and on request the latest fault. Compute hosts reach
these methods through the conductor (``remotable``), never the database.
"""
from __future__ import annotations

import datetime
from collections import defaultdict
from typing import Any

from oslo_utils import timeutils
from oslo_versionedobjects import fields
from sqlalchemy import delete, func, literal, null, select, union_all, update

from novalite import exception
from novalite.db import engine
from novalite.db.main import models
from novalite.objects import base
from novalite.objects.flavor import Flavor

# Loaded with every instance; 'fault' only when asked for (or touched).
_ALWAYS = ('flavor', 'metadata', 'system_metadata', 'tags')
_OPTIONAL = ('fault',)
_EXTRA_FIELDS = _ALWAYS + _OPTIONAL + ('old_flavor', 'new_flavor')
_FLAVOR_FIELDS = {'flavor', 'old_flavor', 'new_flavor'}


# A server shows its fault only in these states (the API's views): the faults of
# others are not read.
FAULT_VM_STATES = ('error', 'deleted')


def _with_fault(rows: list) -> list[str]:
    return [r.uuid for r in rows if r.vm_state in FAULT_VM_STATES or r.deleted]


@base.NovaliteObjectRegistry.register
class Instance(base.NovalitePersistentObject, base.NovaliteObject):
    VERSION = '1.0'

    fields = {
        'id': fields.IntegerField(),
        'uuid': fields.UUIDField(),
        'user_id': fields.StringField(nullable=True),
        'project_id': fields.StringField(nullable=True),
        'image_ref': fields.StringField(nullable=True),
        'kernel_id': fields.StringField(nullable=True),
        'ramdisk_id': fields.StringField(nullable=True),
        'hostname': fields.StringField(nullable=True),
        'launch_index': fields.IntegerField(nullable=True),
        'key_name': fields.StringField(nullable=True),
        'key_data': fields.StringField(nullable=True),
        'power_state': fields.IntegerField(nullable=True),
        'vm_state': fields.StringField(nullable=True),
        'task_state': fields.StringField(nullable=True),
        'memory_mb': fields.IntegerField(nullable=True),
        'vcpus': fields.IntegerField(nullable=True),
        'root_gb': fields.IntegerField(nullable=True),
        'ephemeral_gb': fields.IntegerField(nullable=True),
        'instance_type_id': fields.IntegerField(nullable=True),
        'user_data': fields.StringField(nullable=True),
        'reservation_id': fields.StringField(nullable=True),
        'launched_at': fields.DateTimeField(nullable=True),
        'terminated_at': fields.DateTimeField(nullable=True),
        'availability_zone': fields.StringField(nullable=True),
        'display_name': fields.StringField(nullable=True),
        'display_description': fields.StringField(nullable=True),
        'launched_on': fields.StringField(nullable=True),
        'locked': fields.BooleanField(default=False),
        'locked_by': fields.StringField(nullable=True),
        'os_type': fields.StringField(nullable=True),
        'architecture': fields.StringField(nullable=True),
        'root_device_name': fields.StringField(nullable=True),
        'config_drive': fields.StringField(nullable=True),
        'access_ip_v4': fields.IPV4AddressField(nullable=True),
        'access_ip_v6': fields.IPV6AddressField(nullable=True),
        'auto_disk_config': fields.BooleanField(default=False),
        'progress': fields.IntegerField(nullable=True),
        'shutdown_terminate': fields.BooleanField(default=False),
        'disable_terminate': fields.BooleanField(default=False),
        'host': fields.StringField(nullable=True),
        'node': fields.StringField(nullable=True),
        'compute_id': fields.IntegerField(nullable=True),
        'hidden': fields.BooleanField(default=False),
        'flavor': fields.ObjectField('Flavor'),
        # The flavors of a resize under way (instance_extra's 'old'/'new'): the old one
        # comes back on revert, the new one is what the destination claims.
        'old_flavor': fields.ObjectField('Flavor', nullable=True),
        'new_flavor': fields.ObjectField('Flavor', nullable=True),
        'metadata': fields.DictOfStringsField(default={}),
        'system_metadata': fields.DictOfNullableStringsField(default={}),
        'tags': fields.ListOfStringsField(default=[]),
        'fault': fields.ObjectField('InstanceFault', nullable=True),
    }

    @property
    def name(self) -> str:
        return 'instance-%08x' % self.id if self.obj_attr_is_set('id') else self.uuid

    # -- loading -----------------------------------------------------------------------

    @classmethod
    def _from_db_object(cls, context, row, extras: dict | None = None,
                        expected_attrs: tuple = ()) -> Instance:
        obj = cls(context)
        cls._set_from_db(obj, row, skip=_EXTRA_FIELDS + ('deleted',))
        obj.deleted = row.deleted != 0
        extras = extras or {}
        if extras.get('flavor'):
            flavors = base.from_json(extras['flavor'])
            obj.flavor = Flavor.obj_from_primitive(flavors['cur'])
            for key, name in (('old', 'old_flavor'), ('new', 'new_flavor')):
                setattr(obj, name, Flavor.obj_from_primitive(flavors[key])
                        if flavors.get(key) else None)
        obj.metadata = extras.get('metadata', {})
        obj.system_metadata = extras.get('system_metadata', {})
        obj.tags = extras.get('tags', [])
        if 'fault' in expected_attrs:
            obj.fault = extras.get('fault')
        obj.obj_reset_changes()
        return obj

    @staticmethod
    def _load_extras(context, session, uuids: list[str], expected_attrs: tuple = (),
                     fault_uuids: list[str] | None = None) -> dict:
        """The extra parts of many instances: flavor, metadata, system metadata and tags
        in one query; the latest fault (when asked for) of ``fault_uuids`` (default: all)
        in another."""
        from novalite.objects.instance_fault import InstanceFault
        extras: dict[str, dict[str, Any]] = defaultdict(dict)
        if not uuids:
            return extras
        meta, sysmeta, tag = (models.InstanceMetadata, models.InstanceSystemMetadata,
                              models.Tag)
        parts = union_all(
            select(literal('f').label('kind'), models.InstanceExtra.instance_uuid,
                   null().label('key'), models.InstanceExtra.flavor.label('value'))
            .where(models.InstanceExtra.instance_uuid.in_(uuids)),
            select(literal('m'), meta.instance_uuid, meta.key, meta.value)
            .where(meta.instance_uuid.in_(uuids), meta.deleted == 0),
            select(literal('s'), sysmeta.instance_uuid, sysmeta.key, sysmeta.value)
            .where(sysmeta.instance_uuid.in_(uuids), sysmeta.deleted == 0),
            select(literal('t'), tag.resource_id, tag.tag, null())
            .where(tag.resource_id.in_(uuids)))
        for kind, uuid, key, value in session.execute(parts):
            if kind == 'f':
                extras[uuid]['flavor'] = value
            elif kind == 'm':
                extras[uuid].setdefault('metadata', {})[key] = value
            elif kind == 's':
                extras[uuid].setdefault('system_metadata', {})[key] = value
            else:
                extras[uuid].setdefault('tags', []).append(key)
        for extra in extras.values():
            if 'tags' in extra:
                extra['tags'].sort()
        wanted = uuids if fault_uuids is None else fault_uuids
        if 'fault' in expected_attrs and wanted:
            for uuid, fault in InstanceFault.latest_for_instances(context, session, wanted):
                extras[uuid]['fault'] = fault
        return extras

    @base.remotable_classmethod
    def get_by_uuid(cls, context, uuid: str, expected_attrs: list | None = None) -> Instance:
        expected = tuple(expected_attrs or ())
        with engine.cell_reader(context) as session:
            query = select(models.Instance).filter_by(uuid=uuid)
            if getattr(context, 'read_deleted', 'no') == 'no':
                query = query.filter_by(deleted=0)
            row = session.scalars(query).first()
            if row is None:
                raise exception.InstanceNotFound(instance_id=uuid)
            extras = cls._load_extras(context, session, [uuid], expected,
                                      fault_uuids=_with_fault([row]))
            return cls._from_db_object(context, row, extras.get(uuid), expected)

    def obj_load_attr(self, attrname: str) -> None:
        if attrname == 'fault':
            from novalite.objects.instance_fault import InstanceFault
            self.fault = InstanceFault.get_latest_for_instance(self._context, self.uuid)
            self.obj_reset_changes(['fault'])
            return
        if attrname in ('old_flavor', 'new_flavor'):
            setattr(self, attrname, None)
            self.obj_reset_changes([attrname])
            return
        if attrname in ('metadata', 'system_metadata', 'tags'):
            setattr(self, attrname, self.fields[attrname].default.copy()
                    if hasattr(self.fields[attrname].default, 'copy') else [])
            self.obj_reset_changes([attrname])
            return
        raise exception.ObjectActionError(action='obj_load_attr',
                                          reason='attribute %s not lazy-loadable' % attrname)

    # -- writing -----------------------------------------------------------------------

    def _column_values(self, changes: dict) -> dict:
        values = {k: v for k, v in changes.items() if k not in _EXTRA_FIELDS}
        for key in ('launched_at', 'terminated_at', 'created_at', 'updated_at',
                    'deleted_at'):
            if key in values:
                values[key] = base.naive_utc(values[key])
        if 'deleted' in values:
            values['deleted'] = self.id if values['deleted'] else 0
        return values

    @staticmethod
    def _write_extras(session, uuid: str, changes: dict, creating: bool) -> None:
        if 'flavor' in changes:
            doc = {'cur': changes['flavor'].obj_to_primitive()}
            for key, name in (('old', 'old_flavor'), ('new', 'new_flavor')):
                if changes.get(name) is not None:
                    doc[key] = changes[name].obj_to_primitive()
            flavor = base.to_json(doc)
            if creating:
                session.add(models.InstanceExtra(instance_uuid=uuid, flavor=flavor))
            else:
                session.execute(update(models.InstanceExtra)
                                .where(models.InstanceExtra.instance_uuid == uuid)
                                .values(flavor=flavor))
        for key, table in (('metadata', models.InstanceMetadata),
                           ('system_metadata', models.InstanceSystemMetadata)):
            if key in changes:
                if not creating:
                    session.execute(delete(table).where(table.instance_uuid == uuid))
                session.add_all(table(instance_uuid=uuid, key=k, value=v)
                                for k, v in changes[key].items())
        if 'tags' in changes:
            if not creating:
                session.execute(delete(models.Tag).where(models.Tag.resource_id == uuid))
            session.add_all(models.Tag(resource_id=uuid, tag=t) for t in set(changes['tags']))

    @base.remotable
    def create(self) -> None:
        if self.obj_attr_is_set('id'):
            raise exception.ObjectActionError(action='create', reason='already created')
        changes = self.obj_get_changes()
        values = self._column_values(changes)
        values.pop('deleted', None)
        with engine.cell_writer(self._context) as session:
            if 'flavor' not in changes:
                changes['flavor'] = self.flavor
            row = models.Instance(**values)
            session.add(row)
            session.flush()
            self._write_extras(session, row.uuid, changes, creating=True)
            session.flush()
            self._set_from_db(self, row, skip=_EXTRA_FIELDS + ('deleted',))
        self.deleted = False
        for key in _ALWAYS:
            if not self.obj_attr_is_set(key):
                setattr(self, key, self.fields[key].default
                        if key != 'flavor' else changes['flavor'])
        self.obj_reset_changes()

    @base.remotable
    def save(self, expected_vm_state: Any = None, expected_task_state: Any = None) -> None:
        """Write the changed fields.

        :param expected_task_state: a state or list of states; the update happens only if
            the stored task_state is one of them (compare and swap), else
            ``UnexpectedTaskStateError``. Same for ``expected_vm_state``.
        """
        changes = self.obj_get_changes()
        changes.pop('fault', None)
        if not changes:
            return
        if _FLAVOR_FIELDS & set(changes):
            # The three flavors are one JSON document: write it whole.
            for name in _FLAVOR_FIELDS - set(changes):
                changes[name] = getattr(self, name) if self.obj_attr_is_set(name) else None
        values = self._column_values(changes)
        values['updated_at'] = timeutils.utcnow()
        with engine.cell_writer(self._context) as session:
            query = update(models.Instance).where(models.Instance.uuid == self.uuid,
                                                  models.Instance.deleted == 0)
            for column, expected in (('task_state', expected_task_state),
                                     ('vm_state', expected_vm_state)):
                if expected is None:
                    continue
                states = expected if isinstance(expected, (list, tuple, set)) else [expected]
                col = getattr(models.Instance, column)
                if None in states:
                    others = [s for s in states if s is not None]
                    query = query.where(col.is_(None) | col.in_(others))
                else:
                    query = query.where(col.in_(states))
            if session.execute(query.values(**values)).rowcount != 1:
                row = session.scalars(select(models.Instance).filter_by(uuid=self.uuid)).first()
                if row is None or row.deleted:
                    raise exception.InstanceNotFound(instance_id=self.uuid)
                raise exception.UnexpectedTaskStateError(
                    instance_uuid=self.uuid, expected=expected_task_state or expected_vm_state,
                    actual=row.task_state if expected_task_state is not None else row.vm_state)
            self._write_extras(session, self.uuid, changes, creating=False)
        self.updated_at = values['updated_at'].replace(tzinfo=datetime.UTC)
        self.obj_reset_changes()

    @base.remotable
    def destroy(self) -> None:
        """Soft-delete the instance (and its metadata, tags); it answers 404 from then on.

        Plain fields changed and not saved yet (a power state, ``terminated_at``) are
        written with it, in the same statement.
        """
        now = timeutils.utcnow()
        changes = {k: v for k, v in self.obj_get_changes().items()
                   if k not in _EXTRA_FIELDS and k not in ('fault', 'deleted', 'id', 'uuid')}
        values = self._column_values(changes)
        values.update(deleted=models.Instance.id, deleted_at=now, vm_state='deleted',
                      task_state=None)
        values.setdefault('terminated_at', func.coalesce(models.Instance.terminated_at, now))
        with engine.cell_writer(self._context) as session:
            done = session.execute(update(models.Instance).where(
                models.Instance.uuid == self.uuid, models.Instance.deleted == 0)
                .values(**values)).rowcount
            if done != 1:
                raise exception.InstanceNotFound(instance_id=self.uuid)
            for table in (models.InstanceMetadata, models.InstanceSystemMetadata,
                          models.InstanceExtra, models.InstanceInfoCache):
                session.execute(update(table).where(table.instance_uuid == self.uuid)
                                .values(deleted=table.id, deleted_at=now))
            session.execute(delete(models.Tag).where(models.Tag.resource_id == self.uuid))
        self.deleted = True
        self.vm_state = 'deleted'
        self.task_state = None
        self.obj_reset_changes()


@base.NovaliteObjectRegistry.register
class InstanceList(base.ObjectListBase, base.NovaliteObject):
    VERSION = '1.0'
    fields = {'objects': fields.ListOfObjectsField('Instance')}

    @classmethod
    def _from_rows(cls, context, session, rows, expected_attrs=()) -> InstanceList:
        uuids = [r.uuid for r in rows]
        extras = Instance._load_extras(context, session, uuids, tuple(expected_attrs),
                                       fault_uuids=_with_fault(rows))
        return cls(context, objects=[
            Instance._from_db_object(context, r, extras.get(r.uuid), tuple(expected_attrs))
            for r in rows])

    @base.remotable_classmethod
    def get_by_host(cls, context, host: str, expected_attrs: list | None = None) -> InstanceList:
        with engine.cell_reader(context) as session:
            rows = list(session.scalars(select(models.Instance)
                                        .filter_by(host=host, deleted=0)))
            return cls._from_rows(context, session, rows, expected_attrs or ())

    @base.remotable_classmethod
    def get_by_uuids(cls, context, uuids: list[str]) -> InstanceList:
        """The instances of this cell with these uuids, deleted ones included (what a
        compute host asks about allocations and guests it does not track)."""
        if not uuids:
            return cls(context, objects=[])
        with engine.cell_reader(context) as session:
            rows = list(session.scalars(select(models.Instance)
                                        .where(models.Instance.uuid.in_(list(uuids)))))
            return cls._from_rows(context, session, rows)

    @classmethod
    def get_by_filters(cls, context, filters: dict, sort_keys: list[str] | None = None,
                       sort_dirs: list[str] | None = None, limit: int | None = None,
                       marker: str | None = None,
                       expected_attrs: list | None = None) -> InstanceList:
        """Instances of this cell matching ``filters``; see ``db.main.api.instance_query``."""
        from novalite.db.main import api as db_api
        with engine.cell_reader(context) as session:
            rows = db_api.instance_get_all(session, context, filters, sort_keys or
                                           ['created_at', 'id'], sort_dirs or ['desc', 'desc'],
                                           limit, marker)
            return cls._from_rows(context, session, rows, expected_attrs or ())

    @classmethod
    def get_counts(cls, context, project_id: str, user_id: str | None = None) -> dict:
        """Usage of the project (and user) in this cell: instances, cores, ram."""
        query = select(func.count(models.Instance.id),
                       func.coalesce(func.sum(models.Instance.vcpus), 0),
                       func.coalesce(func.sum(models.Instance.memory_mb), 0)).where(
            models.Instance.deleted == 0, models.Instance.project_id == project_id)
        with engine.cell_reader(context) as session:
            project = session.execute(query).one()
            counts = {'project': dict(zip(('instances', 'cores', 'ram'),
                                          (int(v) for v in project), strict=True))}
            if user_id:
                user = session.execute(query.where(models.Instance.user_id == user_id)).one()
                counts['user'] = dict(zip(('instances', 'cores', 'ram'),
                                          (int(v) for v in user), strict=True))
        return counts
