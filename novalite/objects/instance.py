"""Instance: a server once it lives in a cell database.

A row of ``instances`` plus what hangs off it: the flavor (``instance_extra``),
metadata, system metadata, tags, and on request the latest fault. Compute hosts reach
these methods through the conductor (``remotable``), never the database.
"""
from __future__ import annotations

import datetime
import functools
import threading
import types
from collections import defaultdict
from collections.abc import Callable, Collection, MutableMapping
from typing import TYPE_CHECKING, Any, cast

import cachetools
from oslo_log import log as logging
from oslo_utils import timeutils, versionutils
from oslo_versionedobjects import fields

from novalite import exception
from novalite.context import RequestContext
from novalite.db import engine
from novalite.db.lazy import delete, func, or_, select, update
from novalite.db.lazy import main_models as models
from novalite.objects import base, instance_info_cache
from novalite.objects.flavor import Flavor
from novalite.objects.instance_info_cache import InstanceInfoCache

LOG = logging.getLogger(__name__)

# Loaded with every instance; 'fault' only when asked for (or touched).
_ALWAYS = ('flavor', 'metadata', 'system_metadata', 'tags')
_OPTIONAL = ('fault',)
_EXTRA_FIELDS = _ALWAYS + _OPTIONAL + ('old_flavor', 'new_flavor', 'info_cache')
_FLAVOR_FIELDS = {'flavor', 'old_flavor', 'new_flavor'}


# A server shows its fault only in these states (the API's views): the faults of
# others are not read.
FAULT_VM_STATES = ('error', 'deleted')


def _with_fault(rows: Sequence[Row[Any] | db_models.Instance]) -> list[str]:
    return [r.uuid for r in rows if r.vm_state in FAULT_VM_STATES or r.deleted]


@functools.cache
def _reads() -> types.SimpleNamespace:
    """The Core statements of the hot reads (a status poll, a list's extras), built once.

    Built on first use so that a process that never reads (a compute) does not import
    SQLAlchemy. A statement built once has its cache key computed once; building it per
    call cost its construction and its key every time (the extras' UNION most of all).
    """
    import sqlalchemy as sa
    from sqlalchemy.orm import Session

    from novalite.db.main import models as m

    inst = m.Instance.__table__
    by_uuid = sa.select(inst).where(inst.c.uuid == sa.bindparam('uuid'))

    def extras(match: Callable[[sa.Column[Any]], sa.ColumnElement[bool]]) -> sa.CompoundSelect:
        extra, meta = m.InstanceExtra.__table__, m.InstanceMetadata.__table__
        sysmeta, tag = m.InstanceSystemMetadata.__table__, m.Tag.__table__
        cache = m.InstanceInfoCache.__table__
        return sa.union_all(
            sa.select(sa.literal('f').label('kind'), extra.c.instance_uuid,
                      sa.null().label('key'), extra.c.flavor.label('value'))
            .where(match(extra.c.instance_uuid)),
            sa.select(sa.literal('m'), meta.c.instance_uuid, meta.c.key, meta.c.value)
            .where(match(meta.c.instance_uuid), meta.c.deleted == 0),
            sa.select(sa.literal('s'), sysmeta.c.instance_uuid, sysmeta.c.key,
                      sysmeta.c.value)
            .where(match(sysmeta.c.instance_uuid), sysmeta.c.deleted == 0),
            sa.select(sa.literal('t'), tag.c.resource_id, tag.c.tag, sa.null())
            .where(match(tag.c.resource_id)),
            sa.select(sa.literal('n'), cache.c.instance_uuid, sa.null(), cache.c.network_info)
            .where(match(cache.c.instance_uuid)))

    return types.SimpleNamespace(
        Session=Session,
        instance=by_uuid,
        live_instance=by_uuid.where(inst.c.deleted == 0),
        extras_of_one=extras(lambda column: column == sa.bindparam('uuid')),
        extras_of_many=extras(
            lambda column: column.in_(sa.bindparam('uuids', expanding=True))))


@functools.cache
def _writes() -> types.SimpleNamespace:
    """The Core inserts of a new instance, built once (see ``_reads``)."""
    return types.SimpleNamespace(insert_instance=models.Instance.__table__.insert(),
                                 insert_extra=models.InstanceExtra.__table__.insert())


@functools.lru_cache(maxsize=256)
def _update_statement(columns: tuple[str, ...], task_state_may_be_none: bool | None,
                      vm_state_may_be_none: bool | None) -> Update:
    """The UPDATE of a live instance's ``columns``, built once per shape of a save: the
    columns written, and whether (and how) the stored task and vm states are checked.

    Parameters: ``w_uuid``, ``v_<column>`` for each column, ``w_task_state`` /
    ``w_vm_state`` (lists of the expected states other than None). A save built its
    statement per call before; the building was two fifths of a save's CPU.
    """
    import sqlalchemy as sa

    table = models.Instance.__table__
    statement = sa.update(table).where(table.c.uuid == sa.bindparam('w_uuid'),
                                       table.c.deleted == 0)
    for column, may_be_none in (('task_state', task_state_may_be_none),
                                ('vm_state', vm_state_may_be_none)):
        if may_be_none is None:
            continue
        matches = table.c[column].in_(sa.bindparam('w_' + column, expanding=True))
        statement = statement.where(table.c[column].is_(None) | matches
                                    if may_be_none else matches)
    return statement.values({name: sa.bindparam('v_' + name) for name in columns})


# Field types whose coercion gives back a value of this Python type unchanged: such a
# value is stored without coercing it (UUIDField's coercion alone parses the uuid).
_STORED_AS_IS: dict[type, type] = {fields.StringField: str, fields.UUIDField: str,
                                   fields.IntegerField: int, fields.BooleanField: bool,
                                   fields.DateTimeField: datetime.datetime}


@functools.cache
def _column_plan(names: tuple[str, ...]) -> tuple[tuple[int, str, str, Any, bool], ...]:
    """For a row with columns ``names``: (index, field, storage attribute, type stored
    as is or None, nullable) of each column that is a plain field of Instance."""
    plan = []
    for index, name in enumerate(names):
        field = Instance.fields.get(name)
        if field is None or name in _EXTRA_FIELDS or name == 'deleted':
            continue
        plan.append((index, name, '_obj_' + name, _STORED_AS_IS.get(type(field)),
                     field.nullable))
    return tuple(plan)


def _copy_columns(obj: Instance, row: Row[Any] | db_models.Instance) -> None:
    """Set the instance's plain fields from a row: what ``_set_from_db`` does, without
    coercing values that already have their field's type (an instance has 47 columns
    and a status poll reads one per request). Datetimes get UTC as their zone, as the
    field's coercion would give them; other values go through the field's setter."""
    if hasattr(row, '_fields'):  # cheaper than an isinstance of Row; the checker needs it said
        names, values = row._fields, tuple(cast('Row[Any]', row))
    else:  # an ORM row (the list queries)
        names = _orm_column_names()
        values = tuple(getattr(row, name) for name in names)
    for index, name, attr, stored_as, nullable in _column_plan(names):
        value = values[index]
        if value is None:
            if nullable:
                setattr(obj, attr, None)
                continue
        elif stored_as is datetime.datetime and isinstance(value, datetime.datetime):
            setattr(obj, attr, value if value.tzinfo is not None
                    else value.replace(tzinfo=datetime.UTC))
            continue
        elif type(value) is stored_as:
            setattr(obj, attr, value)
            continue
        setattr(obj, name, value)


@functools.cache
def _orm_column_names() -> tuple[str, ...]:
    return tuple(column.name for column in models.Instance.__table__.columns)


class ParsedOnce:
    """Objects deserialized from JSON once per distinct text, handed out as fresh copies.

    A status poll deserializes the same documents again and again (a server's flavor,
    the instance of a build request), and ``obj_from_primitive`` coerces every field of
    every object. The text itself is the key: the same text always gives the same
    objects, so an entry can never be stale and needs no invalidation (a changed
    document is another text: a miss). Each caller gets its own copy (``base.fresh_copy``),
    free to change it. The least recently used texts go beyond ``size`` entries.
    """

    def __init__(self, parse: Callable[[str], Any], size: int) -> None:
        self._parse_once = cachetools.cached(cachetools.LRUCache(size),
                                             lock=threading.Lock())(parse)

    def __call__(self, text: str) -> Any:
        return base.fresh_copy(self._parse_once(text))


def _parse_flavors(text: str) -> dict[str, Any]:
    """instance_extra's flavor document: 'cur', and 'old'/'new' during a resize."""
    flavors = base.from_json(text)
    return {key: Flavor.obj_from_primitive(flavors[key]) if flavors.get(key) else None
            for key in ('cur', 'old', 'new')}


# Few distinct flavor documents exist: one per flavor (and pair during resizes).
_flavors = ParsedOnce(_parse_flavors, size=256)
# One network info document per server: parsed once per change, not per status poll.
_network_infos = ParsedOnce(base.from_json, size=1024)


def _latest_faults(context: RequestContext, session: Session | Connection,
                   uuids: list[str]) -> list:
    """(uuid, latest fault) pairs; ``session`` may be a Core connection, which gets an
    ORM session of its own (in its transaction) for the fault rows."""
    from novalite.objects.instance_fault import InstanceFault
    reads = _reads()
    if isinstance(session, reads.Session):
        return list(InstanceFault.latest_for_instances(context, session, uuids))
    with reads.Session(bind=session) as orm_session:
        return list(InstanceFault.latest_for_instances(context, orm_session, uuids))


if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from sqlalchemy import Update
    # What save() compares a stored state with: one state (None too) or any of several.
    ExpectedState = str | Collection[str | None] | None
    import netaddr
    from sqlalchemy.engine import Connection, CursorResult, Row
    from sqlalchemy.orm import Session

    from novalite import objects
    from novalite.db.main import models as db_models
    from novalite.db.main.api import Marker


@base.NovaliteObjectRegistry.register
class Instance(base.NovalitePersistentObject, base.NovaliteObject):
    # 1.0: initial
    # 1.1: save() takes finish_event
    # 1.2: info_cache
    VERSION = '1.2'
    id: int
    uuid: str
    user_id: str | None
    project_id: str | None
    image_ref: str | None
    kernel_id: str | None
    ramdisk_id: str | None
    hostname: str | None
    launch_index: int | None
    key_name: str | None
    key_data: str | None
    power_state: int | None
    vm_state: str | None
    task_state: str | None
    memory_mb: int | None
    vcpus: int | None
    root_gb: int | None
    ephemeral_gb: int | None
    instance_type_id: int | None
    user_data: str | None
    reservation_id: str | None
    launched_at: datetime.datetime | None
    terminated_at: datetime.datetime | None
    availability_zone: str | None
    display_name: str | None
    display_description: str | None
    launched_on: str | None
    locked: bool
    locked_by: str | None
    os_type: str | None
    architecture: str | None
    root_device_name: str | None
    config_drive: str | None
    access_ip_v4: netaddr.IPAddress | None
    access_ip_v6: netaddr.IPAddress | None
    auto_disk_config: bool
    progress: int | None
    shutdown_terminate: bool
    disable_terminate: bool
    host: str | None
    node: str | None
    compute_id: int | None
    hidden: bool
    flavor: objects.Flavor
    old_flavor: objects.Flavor | None
    new_flavor: objects.Flavor | None
    metadata: dict[str, str]
    system_metadata: dict[str, str | None]
    tags: list[str]
    fault: objects.InstanceFault | None
    info_cache: objects.InstanceInfoCache

    fields: dict[str, fields.Field[Any]] = {
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
        # The ports as last seen (instance_info_caches); written with save() when changed.
        'info_cache': fields.ObjectField('InstanceInfoCache'),
    }

    def obj_make_compatible(self, primitive: dict, target_version: str) -> None:
        super().obj_make_compatible(primitive, target_version)
        if versionutils.convert_version_to_tuple(target_version) < (1, 2):
            primitive.pop('info_cache', None)

    @property
    def name(self) -> str:
        return 'instance-%08x' % self.id if self.obj_attr_is_set('id') else self.uuid

    # -- loading -----------------------------------------------------------------------

    @classmethod
    def _from_db_object(cls, context: RequestContext, row: Row[Any] | db_models.Instance,
                        extras: dict | None = None,
                        expected_attrs: tuple = ()) -> Instance:
        obj = cls(context)
        _copy_columns(obj, row)
        obj.deleted = row.deleted != 0
        extras = extras or {}
        if extras.get('flavor'):
            flavors = _flavors(extras['flavor'])
            obj.flavor = flavors['cur']
            obj.old_flavor = flavors['old']
            obj.new_flavor = flavors['new']
        obj.metadata = extras.get('metadata', {})
        obj.system_metadata = extras.get('system_metadata', {})
        obj.tags = extras.get('tags', [])
        obj.info_cache = InstanceInfoCache.loaded(
            context, obj.uuid, _network_infos(extras['network']) if extras.get('network')
            else None)
        if 'fault' in expected_attrs:
            obj.fault = extras.get('fault')
        obj.obj_reset_changes()
        return obj

    @staticmethod
    def _load_extras(context: RequestContext, session: Session | Connection, uuids: list[str],
                     expected_attrs: tuple = (),
                     fault_uuids: list[str] | None = None) -> dict:
        """The extra parts of many instances: flavor, metadata, system metadata and tags
        in one query; the latest fault (when asked for) of ``fault_uuids`` (default: all)
        in another. ``session`` is an ORM session or a Core connection."""
        extras: dict[str, dict[str, Any]] = defaultdict(dict)
        if not uuids:
            return extras
        reads = _reads()
        if len(uuids) == 1:
            parts = session.execute(reads.extras_of_one, {'uuid': uuids[0]})
        else:
            parts = session.execute(reads.extras_of_many, {'uuids': list(uuids)})
        for kind, uuid, key, value in parts:
            if kind == 'f':
                extras[uuid]['flavor'] = value
            elif kind == 'm':
                extras[uuid].setdefault('metadata', {})[key] = value
            elif kind == 's':
                extras[uuid].setdefault('system_metadata', {})[key] = value
            elif kind == 'n':
                extras[uuid]['network'] = value
            else:
                extras[uuid].setdefault('tags', []).append(key)
        for extra in extras.values():
            if 'tags' in extra:
                extra['tags'].sort()
        wanted = uuids if fault_uuids is None else fault_uuids
        if 'fault' in expected_attrs and wanted:
            for uuid, fault in _latest_faults(context, session, wanted):
                extras[uuid]['fault'] = fault
        return extras

    @classmethod
    @base.remotable
    def get_by_uuid(cls, context: RequestContext, uuid: str,
                    expected_attrs: list | None = None) -> Instance:
        expected = tuple(expected_attrs or ())
        reads = _reads()
        query = reads.live_instance if getattr(context, 'read_deleted', 'no') == 'no' \
            else reads.instance
        with engine.cell_connection(context) as connection:
            row = connection.execute(query, {'uuid': uuid}).first()
            if row is None:
                raise exception.InstanceNotFound(instance_id=uuid)
            extras = cls._load_extras(context, connection, [uuid], expected,
                                      fault_uuids=_with_fault([row]))
        return cls._from_db_object(context, row, extras.get(uuid), expected)

    def obj_load_attr(self, attrname: str) -> None:
        if attrname == 'fault':
            from novalite.objects.instance_fault import InstanceFault
            self.fault = InstanceFault.get_latest_for_instance(self._context, self.uuid)
            self.obj_reset_changes(['fault'])
            return
        if attrname == 'info_cache':
            self.info_cache = InstanceInfoCache.get_by_instance_uuid(self._context, self.uuid)
            self.obj_reset_changes(['info_cache'])
            return
        if attrname in ('old_flavor', 'new_flavor'):
            setattr(self, attrname, None)
            self.obj_reset_changes([attrname])
            return
        if attrname in ('metadata', 'system_metadata', 'tags'):
            copy = getattr(self.fields[attrname].default, 'copy', None)
            setattr(self, attrname, copy() if copy is not None else [])
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
        for key in ('access_ip_v4', 'access_ip_v6'):
            # The fields hold netaddr addresses; the columns are strings, and no driver
            # binds an IPAddress (SQLite refuses it: "type 'IPAddress' is not supported").
            if values.get(key) is not None:
                values[key] = str(values[key])
        return values

    @staticmethod
    def _write_extras(conn: Connection, uuid: str, changes: dict, creating: bool) -> None:
        """The flavor document, metadata, system metadata and tags in ``changes``, as
        Core statements on the transaction's connection ``conn``."""
        if 'flavor' in changes:
            doc = {'cur': changes['flavor'].obj_to_primitive()}
            for key, name in (('old', 'old_flavor'), ('new', 'new_flavor')):
                if changes.get(name) is not None:
                    doc[key] = changes[name].obj_to_primitive()
            flavor = base.to_json(doc)
            if creating:
                conn.execute(_writes().insert_extra, {'instance_uuid': uuid, 'flavor': flavor})
            else:
                conn.execute(update(models.InstanceExtra.__table__)
                             .where(models.InstanceExtra.__table__.c.instance_uuid == uuid)
                             .values(flavor=flavor))
        for key, table in (('metadata', models.InstanceMetadata.__table__),
                           ('system_metadata', models.InstanceSystemMetadata.__table__)):
            if key in changes:
                if not creating:
                    conn.execute(delete(table).where(table.c.instance_uuid == uuid))
                rows = [{'instance_uuid': uuid, 'key': k, 'value': v}
                        for k, v in changes[key].items()]
                if rows:
                    conn.execute(table.insert(), rows)
        if 'tags' in changes:
            tags = models.Tag.__table__
            if not creating:
                conn.execute(delete(tags).where(tags.c.resource_id == uuid))
            rows = [{'resource_id': uuid, 'tag': t} for t in sorted(set(changes['tags']))]
            if rows:
                conn.execute(tags.insert(), rows)

    @base.remotable
    def create(self) -> None:
        if self.obj_attr_is_set('id'):
            raise exception.ObjectActionError(action='create', reason='already created')
        changes = self.obj_get_changes()
        values = self._column_values(changes)
        values.pop('deleted', None)
        if 'flavor' not in changes:
            changes['flavor'] = self.flavor
        with engine.cell_writer(self._context) as session:
            if session.new or session.dirty or session.deleted:
                session.flush()  # rows an enclosing transaction added go in first, as before
            conn = session.connection()
            result = conn.execute(_writes().insert_instance, values)
            # What the row holds now: the values given, the columns' defaults (filled in
            # by SQLAlchemy, client side) and NULL for the rest.
            stored = result.last_inserted_params()
            key = result.inserted_primary_key
            # One row inserted with one set of parameters: one mapping and its key.
            assert isinstance(stored, MutableMapping) and key is not None
            stored['id'] = key[0]
            row = types.SimpleNamespace(**{name: stored.get(name)
                                           for name in _orm_column_names()})
            self._write_extras(conn, row.uuid, changes, creating=True)
            self._set_from_db(self, row, skip=_EXTRA_FIELDS + ('deleted',))
        if not self.obj_attr_is_set('info_cache'):
            self.info_cache = InstanceInfoCache.loaded(self._context, self.uuid)
        self.deleted = False
        for key in _ALWAYS:
            if not self.obj_attr_is_set(key):
                setattr(self, key, self.fields[key].default
                        if key != 'flavor' else changes['flavor'])
        self.obj_reset_changes()

    @base.remotable
    def save(self, expected_vm_state: ExpectedState = None,
             expected_task_state: ExpectedState = None,
             finish_event: str | None = None) -> None:
        """Write the changed fields.

        :param expected_task_state: a state or list of states; the update happens only if
            the stored task_state is one of them (compare and swap), else
            ``UnexpectedTaskStateError``. Same for ``expected_vm_state``.
        :param finish_event: also finish, successfully, this request's instance action
            event of that name, in the same transaction: a compute's last write of a
            build (ACTIVE, and the build event done) is one conductor round trip, not two.
        """
        if finish_event is None:
            self._write_changes(expected_vm_state, expected_task_state)
            return
        from novalite.objects.instance_action import InstanceActionEvent
        with engine.cell_transaction(self._context):
            self._write_changes(expected_vm_state, expected_task_state)
            try:
                InstanceActionEvent.event_finish(self._context, self.uuid, finish_event,
                                                 host=self.host)
            except exception.InstanceActionNotFound:
                # The record of the action is missing, not the instance's state: the
                # state is written all the same.
                LOG.warning('No action of request %s for instance %s: event %s not '
                            'recorded', self._context.request_id, self.uuid, finish_event)

    def _write_changes(self, expected_vm_state: ExpectedState,
                       expected_task_state: ExpectedState) -> None:
        changes = self.obj_get_changes()
        changes.pop('fault', None)
        cache = changes.pop('info_cache', None)
        if not changes:
            if cache is not None:
                self.info_cache.save()
            return
        if _FLAVOR_FIELDS & set(changes):
            # The three flavors are one JSON document: write it whole.
            for name in _FLAVOR_FIELDS - set(changes):
                changes[name] = getattr(self, name) if self.obj_attr_is_set(name) else None
        values = self._column_values(changes)
        values['updated_at'] = timeutils.utcnow()
        params = {'v_' + name: value for name, value in values.items()}
        params['w_uuid'] = self.uuid
        shapes: list[bool | None] = []
        for column, expected in (('task_state', expected_task_state),
                                 ('vm_state', expected_vm_state)):
            if expected is None:
                shapes.append(None)
                continue
            states = [expected] if isinstance(expected, str) else expected
            shapes.append(None in states)
            params['w_' + column] = sorted(s for s in states if s is not None)
        statement = _update_statement(tuple(sorted(values)), *shapes)
        with engine.cell_writer(self._context) as session:
            conn = session.connection()
            if conn.execute(statement, params).rowcount != 1:
                row = session.scalars(select(models.Instance).filter_by(uuid=self.uuid)).first()
                if row is None or row.deleted:
                    raise exception.InstanceNotFound(instance_id=self.uuid)
                raise exception.UnexpectedTaskStateError(
                    instance_uuid=self.uuid, expected=expected_task_state or expected_vm_state,
                    actual=row.task_state if expected_task_state is not None else row.vm_state)
            self._write_extras(conn, self.uuid, changes, creating=False)
            if cache is not None:
                instance_info_cache.write(conn, self.uuid, cache.network_info)
        self.updated_at = values['updated_at'].replace(tzinfo=datetime.UTC)
        self.obj_reset_changes()
        if cache is not None:
            cache.obj_reset_changes()

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
            # An UPDATE's result is a CursorResult (the library's stub says Result).
            done = cast('CursorResult[Any]', session.execute(update(models.Instance).where(
                models.Instance.uuid == self.uuid, models.Instance.deleted == 0)
                .values(**values))).rowcount
            if done != 1:
                raise exception.InstanceNotFound(instance_id=self.uuid)
            for table in (models.InstanceMetadata, models.InstanceSystemMetadata,
                          models.InstanceExtra, models.InstanceInfoCache,
                          models.BlockDeviceMapping):
                session.execute(update(table).where(table.instance_uuid == self.uuid)
                                .values(deleted=table.id, deleted_at=now))
            session.execute(delete(models.Tag).where(models.Tag.resource_id == self.uuid))
        self.deleted = True
        self.vm_state = 'deleted'
        self.task_state = None
        self.obj_reset_changes()


@base.NovaliteObjectRegistry.register
class InstanceList(base.ObjectListBase['Instance'], base.NovaliteObject):
    VERSION = '1.0'
    fields = {'objects': fields.ListOfObjectsField('Instance')}

    @classmethod
    def _from_rows(cls, context: RequestContext, session: Session | Connection,
                   rows: Sequence[Row[Any] | db_models.Instance],
                   expected_attrs: Iterable[str] = ()) -> InstanceList:
        uuids = [r.uuid for r in rows]
        extras = Instance._load_extras(context, session, uuids, tuple(expected_attrs),
                                       fault_uuids=_with_fault(rows))
        return cls(context, objects=[
            Instance._from_db_object(context, r, extras.get(r.uuid), tuple(expected_attrs))
            for r in rows])

    @classmethod
    @base.remotable
    def get_by_host(cls, context: RequestContext, host: str,
                    expected_attrs: list | None = None) -> InstanceList:
        with engine.cell_reader(context) as session:
            rows = list(session.scalars(select(models.Instance)
                                        .filter_by(host=host, deleted=0)))
            return cls._from_rows(context, session, rows, expected_attrs or ())

    @classmethod
    @base.remotable
    def get_active_by_window_joined(cls, context: RequestContext, begin: datetime.datetime | str,
                                    end: datetime.datetime | str | None = None,
                                    host: str | None = None,
                                    expected_attrs: list | None = None) -> InstanceList:
        """Instances, deleted ones included, that existed between ``begin`` and ``end``
        (datetimes, or ISO 8601 text over RPC): not terminated before ``begin``, launched
        before ``end`` (the usage audit)."""
        def naive(value: datetime.datetime | str) -> datetime.datetime | None:
            if isinstance(value, str):
                value = timeutils.parse_isotime(value)
            return base.naive_utc(value)

        table = models.Instance
        query = select(table).where(or_(table.terminated_at.is_(None),
                                        table.terminated_at > naive(begin)))
        if end is not None:
            query = query.where(table.launched_at < naive(end))
        if host is not None:
            query = query.where(table.host == host)
        with engine.cell_reader(context) as session:
            rows = list(session.scalars(query.order_by(table.id)))
            return cls._from_rows(context, session, rows, expected_attrs or ())

    @classmethod
    @base.remotable
    def get_by_uuids(cls, context: RequestContext, uuids: list[str]) -> InstanceList:
        """The instances of this cell with these uuids, deleted ones included (what a
        compute host asks about allocations and guests it does not track)."""
        if not uuids:
            return cls(context, objects=[])
        with engine.cell_reader(context) as session:
            rows = list(session.scalars(select(models.Instance)
                                        .where(models.Instance.uuid.in_(list(uuids)))))
            return cls._from_rows(context, session, rows)

    @classmethod
    def get_by_filters(cls, context: RequestContext, filters: dict,
                       sort_keys: list[str] | None = None,
                       sort_dirs: list[str] | None = None, limit: int | None = None,
                       marker: Marker | None = None,
                       expected_attrs: list | None = None) -> InstanceList:
        """Instances of this cell matching ``filters``; see ``db.main.api.instance_query``."""
        from novalite.db.main import api as db_api
        with engine.cell_reader(context) as session:
            query = db_api.instance_query(session, context, filters, sort_keys or
                                          ['created_at', 'id'], sort_dirs or ['desc', 'desc'],
                                          limit, marker)
            # Plain rows, not ORM objects: a list of a hundred servers spent a fifth of
            # its time making (and reading back) ORM objects it never keeps.
            connection = session.connection()
            rows = connection.execute(query.statement).all()
            return cls._from_rows(context, connection, rows, expected_attrs or ())

    @classmethod
    def get_counts(cls, context: RequestContext, project_id: str,
                   user_id: str | None = None) -> dict:
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
