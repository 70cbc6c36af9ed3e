"""The base of every novalite object, the registry, and the RPC serializer."""
from __future__ import annotations

import contextlib
import copy
import datetime
import threading
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, Protocol, Self, TypeVar, cast

from oslo_serialization import jsonutils
from oslo_utils import timeutils
from oslo_versionedobjects import base as ovo_base
from oslo_versionedobjects import fields

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from novalite.context import RequestContext
    from novalite.db.api.models import Base as ApiModel
    from novalite.db.main.models import Base as CellModel

_VO = TypeVar('_VO', bound=ovo_base.VersionedObject)
_T = TypeVar('_T')

remotable = ovo_base.remotable


class NovaliteObjectRegistry(ovo_base.VersionedObjectRegistry):
    def registration_hook(self, cls: type[ovo_base.VersionedObject], index: int) -> None:
        from novalite import objects
        version = tuple(int(p) for p in cls.VERSION.split('.'))
        current = getattr(objects, cls.obj_name(), None)
        if current is None or version >= tuple(int(p) for p in current.VERSION.split('.')):
            setattr(objects, cls.obj_name(), cls)


class IndirectionAPI(Protocol):
    """What remotable methods call instead of running here: the conductor's RPC API
    (``novalite.conductor.rpcapi.ConductorAPI``)."""

    def object_class_action_versions(self, context: RequestContext, objname: str,
                                     objmethod: str, object_versions: dict[str, str],
                                     args: tuple[Any, ...], kwargs: dict[str, Any]
                                     ) -> Any: ...

    def object_action(self, context: RequestContext, objinst: NovaliteObject,
                      objmethod: str, args: tuple[Any, ...], kwargs: dict[str, Any]
                      ) -> Any: ...

    def object_backport_versions(self, context: RequestContext, objinst: NovaliteObject,
                                 object_versions: dict[str, str]) -> Any: ...


class _IndirectionAPI:
    """Where remotable methods go: the conductor for compute code, local otherwise.

    A descriptor on ``NovaliteObject.indirection_api``, the attribute remotable methods
    read (pinned by tests/unit/test_library_pins.py).

    A compute-only process sets ``process_api`` once: every object call in it goes over
    RPC to the conductor. When services share a process (tests, novalite-all), only the
    threads running compute code get the conductor, through :func:`indirection`; the
    conductor, scheduler and API threads of the same process use the database.
    """

    process_api: IndirectionAPI | None = None
    _local = threading.local()

    # Any: what ConductorAPI's callers get back is theirs to name.
    def __get__(self, obj: object, owner: type | None) -> Any:
        api = getattr(self._local, 'api', None)
        return api if api is not None else _IndirectionAPI.process_api


def set_process_indirection_api(api: IndirectionAPI | None) -> None:
    _IndirectionAPI.process_api = api


def process_indirection_api() -> Any:
    """The conductor every object call of this process goes to (a compute-only
    process), None when the process uses the database itself."""
    return _IndirectionAPI.process_api


def current_indirection_api() -> Any:
    return getattr(_IndirectionAPI._local, 'api', None) or _IndirectionAPI.process_api


@contextlib.contextmanager
def indirection(api: IndirectionAPI | None) -> Iterator[None]:
    """Send this thread's remotable object calls to ``api`` (the conductor) meanwhile."""
    previous = getattr(_IndirectionAPI._local, 'api', None)
    _IndirectionAPI._local.api = api
    try:
        yield
    finally:
        _IndirectionAPI._local.api = previous


class NovaliteObject(ovo_base.VersionedObject):
    """Base class of every novalite object."""

    OBJ_SERIAL_NAMESPACE = 'novalite_object'
    OBJ_PROJECT_NAMESPACE = 'novalite'
    indirection_api = _IndirectionAPI()

    def obj_reset_changes(self, fields: Iterable[str] | None = None,
                          recursive: bool = False) -> None:
        """oslo.versionedobjects' own, taking any iterable of names (a tuple, a set)."""
        super().obj_reset_changes(list(fields) if fields is not None else None,
                                  recursive=recursive)

    # The three methods below answer exactly as oslo.versionedobjects' own, which every
    # RPC message and every JSON column of an object goes through. Theirs build the list
    # of field names again for each field they test, and a primitive asks an object (and
    # each of its sub-objects, again for each level above it) what changed twice: about
    # a fifth of the API's CPU for a POST /servers went there.
    # They read the library's private storage: a field's value in ``_obj_<name>`` of
    # the instance's __dict__, the changed names in ``_changed_fields``, the primitive's
    # keys from ``_obj_primitive_key``. tests/unit/test_library_pins.py fails when
    # oslo.versionedobjects changes any of them (and tests/unit/objects/test_primitive.py
    # when the answers differ from the library's own).

    def obj_attr_is_set(self, attrname: str) -> bool:
        if attrname not in self.fields and attrname not in self.obj_extra_fields:
            return super().obj_attr_is_set(attrname)  # raises its AttributeError
        return hasattr(self, '_obj_' + attrname)

    def obj_what_changed(self) -> set[str]:
        fields = self.fields
        changes = {name for name in self._changed_fields if name in fields}
        for name in fields:
            value = getattr(self, '_obj_' + name, None)
            if isinstance(value, ovo_base.VersionedObject) and value.obj_what_changed():
                changes.add(name)
        return changes

    def obj_to_primitive(self, target_version: str | None = None,
                         version_manifest: dict | None = None) -> dict:
        if (target_version not in (None, self.VERSION)) or version_manifest:
            # A backport to an older version: the library's own path does it.
            return super().obj_to_primitive(target_version, version_manifest)
        primitive = {}
        values = self.__dict__
        for name, field in self.fields.items():
            key = '_obj_' + name
            if key in values:
                primitive[name] = field.to_primitive(self, name, values[key])
        prefixed = self._obj_primitive_key
        obj = {prefixed('name'): self.obj_name(),
               prefixed('namespace'): self.OBJ_PROJECT_NAMESPACE,
               prefixed('version'): self.VERSION, prefixed('data'): primitive}
        changes = [name for name in self.obj_what_changed() if name in primitive]
        if changes:
            obj[prefixed('changes')] = changes
        return obj

    @staticmethod
    def _set_from_db(obj: NovaliteObject, db_obj: Any, skip: tuple[str, ...] = ()) -> None:
        """Copy the model's columns that are fields of ``obj`` (``db_obj``: a model
        instance or a Core row of either database)."""
        for name in obj.fields:
            if name in skip or not hasattr(db_obj, name):
                continue
            value = getattr(db_obj, name)
            if isinstance(value, datetime.datetime) and value.tzinfo is None:
                value = value.replace(tzinfo=datetime.UTC)
            setattr(obj, name, value)


class NovaliteObjectDictCompat(ovo_base.VersionedObjectDictCompat):
    pass


if TYPE_CHECKING:
    # The mixins below are always combined with NovaliteObject: the checker sees them so.
    _ObjectMixin = NovaliteObject
else:
    _ObjectMixin = object


class NovalitePersistentObject(_ObjectMixin):
    """Timestamps and soft-delete fields that rows of the cell database carry."""

    created_at: datetime.datetime | None
    updated_at: datetime.datetime | None
    deleted_at: datetime.datetime | None
    deleted: bool

    fields: dict[str, fields.Field[Any]] = {
        'created_at': fields.DateTimeField(nullable=True),
        'updated_at': fields.DateTimeField(nullable=True),
        'deleted_at': fields.DateTimeField(nullable=True),
        'deleted': fields.BooleanField(default=False),
    }

    @classmethod
    def _from_db_object(cls, context: RequestContext, row: Any) -> Self:
        """The object for a row whose ``deleted`` column is 0 or the row's id."""
        obj = cls(context)
        cls._set_from_db(obj, row, skip=('deleted',))
        obj.deleted = bool(row.deleted)
        obj.obj_reset_changes()
        return obj

    def _insert_in_cell(self, model: type[CellModel], values: dict[str, Any],
                        skip: tuple[str, ...] = ()) -> None:
        """Insert ``values`` as a new ``model`` row of the context's cell and take back
        what the database filled in (id, timestamps); the object has no changes after."""
        from novalite.db import engine
        with engine.cell_writer(self._context) as session:
            row = model(**values)
            session.add(row)
            session.flush()
            self._set_from_db(self, row, skip=('deleted',) + skip)
        self.deleted = False
        self.obj_reset_changes()


class NovaliteTimestampObject(_ObjectMixin):
    """Timestamps of rows in the API database."""

    created_at: datetime.datetime | None
    updated_at: datetime.datetime | None

    fields: dict[str, fields.Field[Any]] = {
        'created_at': fields.DateTimeField(nullable=True),
        'updated_at': fields.DateTimeField(nullable=True),
    }


class ObjectListBase(ovo_base.ObjectListBase[_VO]):
    """A list of novalite objects of one class (``InstanceList``: ``Instance``)."""


class NovaliteObjectSerializer(ovo_base.VersionedObjectSerializer):
    """Serializes novalite objects for RPC; lists and dicts of them too."""

    OBJ_BASE_CLASS = NovaliteObject


def insert_row(model: type[ApiModel], values: dict[str, Any],
               session: Session | None = None) -> int:
    """Insert a row of ``model`` (a declarative class) with ``values`` in the caller's
    API-database transaction ``session`` (so that several rows commit together), or in a
    transaction of its own; return its id.

    A Core INSERT of the model's table, its columns' defaults included: the ORM's unit of
    work, for one row nobody reads back, cost more than the statement.
    """
    from novalite.db import engine
    with (contextlib.nullcontext(session) if session is not None
          else engine.api_writer()) as transaction:
        key = transaction.connection().execute(
            model.__table__.insert(), values).inserted_primary_key
    assert key is not None, 'a single-row INSERT has its primary key'
    return key[0]


# Values a copy may share with its original: nobody can change them in place.
_IMMUTABLE = (str, int, float, bool, bytes, type(None), datetime.datetime, datetime.date)


def fresh_copy(value: _T) -> _T:
    """A copy that shares nothing changeable with ``value``: objects, dicts, lists and
    sets are copied all the way down (an object keeps its context as it is).

    An object is copied from its ``__dict__``, where oslo.versionedobjects keeps all of
    its state (tests/unit/test_library_pins.py pins that, against ``obj_clone``).
    """
    return cast(_T, _copied(value))


def _copied(value: object) -> object:
    if isinstance(value, _IMMUTABLE):
        return value
    if isinstance(value, ovo_base.VersionedObject):
        new = object.__new__(type(value))
        new.__dict__.update((key, item if key == '_context' else _copied(item))
                            for key, item in value.__dict__.items())
        return new
    if type(value) is dict:
        return {key: _copied(item) for key, item in value.items()}
    if type(value) is list:
        return [_copied(item) for item in value]
    if type(value) is set:
        return set(value)
    return copy.copy(value)


def naive_utc(value: datetime.datetime | None) -> datetime.datetime | None:
    """A timezone-aware datetime as the naive UTC value the database stores."""
    if value is None:
        return None
    if value.tzinfo is not None:
        value = timeutils.normalize_time(value)
    return value


def to_json(value: object) -> str:
    return jsonutils.dumps(value)


def from_json(value: str | None, default: Any = None) -> Any:
    return jsonutils.loads(value) if value else default


def obj_to_json(obj: NovaliteObject) -> str:
    return jsonutils.dumps(obj.obj_to_primitive())


def obj_from_json(value: str) -> Any:
    return NovaliteObject.obj_from_primitive(jsonutils.loads(value))
