"""InstanceFault: why an instance went to ERROR (cell database)."""
from __future__ import annotations

import traceback
from typing import TYPE_CHECKING, Any

from oslo_versionedobjects import fields

from novalite import exception
from novalite.context import RequestContext
from novalite.db import engine
from novalite.db.lazy import main_models as models
from novalite.db.lazy import select
from novalite.objects import base

if TYPE_CHECKING:
    from collections.abc import Iterator

    from sqlalchemy.orm import Session

    from novalite import objects


@base.NovaliteObjectRegistry.register
class InstanceFault(base.NovalitePersistentObject, base.NovaliteObject):
    VERSION = '1.0'
    id: int
    instance_uuid: str
    code: int
    message: str | None
    details: str | None
    host: str | None

    fields: dict[str, fields.Field[Any]] = {
        'id': fields.IntegerField(),
        'instance_uuid': fields.UUIDField(),
        'code': fields.IntegerField(),
        'message': fields.StringField(nullable=True),
        'details': fields.StringField(nullable=True),
        'host': fields.StringField(nullable=True),
    }

    @classmethod
    def latest_for_instances(cls, context: RequestContext, session: Session,
                             uuids: list[str]) -> Iterator[tuple[str, InstanceFault]]:
        """(uuid, latest fault) pairs, for instances that have a fault."""
        rows = session.scalars(select(models.InstanceFault)
                               .where(models.InstanceFault.instance_uuid.in_(uuids),
                                      models.InstanceFault.deleted == 0)
                               .order_by(models.InstanceFault.created_at.desc(),
                                         models.InstanceFault.id.desc()))
        seen: set[str] = set()
        for row in rows:
            if row.instance_uuid not in seen:
                seen.add(row.instance_uuid)
                yield row.instance_uuid, cls._from_db_object(context, row)

    @classmethod
    @base.remotable
    def get_latest_for_instance(cls, context: RequestContext,
                                instance_uuid: str) -> InstanceFault | None:
        with engine.cell_reader(context) as session:
            for _uuid, fault in cls.latest_for_instances(context, session, [instance_uuid]):
                return fault
        return None

    @base.remotable
    def create(self) -> None:
        with engine.cell_writer(self._context) as session:
            row = models.InstanceFault(instance_uuid=self.instance_uuid, code=self.code,
                                       message=(self.message or '')[:255],
                                       details=self.details, host=self.host)
            session.add(row)
            session.flush()
            self._set_from_db(self, row, skip=('deleted',))
        self.deleted = False
        self.obj_reset_changes()

    @classmethod
    def from_exception(cls, context: RequestContext, instance_uuid: str, error: BaseException,
                       host: str | None = None, with_traceback: bool = True) -> InstanceFault:
        """A fault that says what ``error`` says; a non-"safe" 500 hides its text from
        non-admins in the API view, as Nova does."""
        code = getattr(error, 'code', 500)
        code = code if isinstance(code, int) else 500
        if isinstance(error, exception.NovaliteException):
            message = error.format_message()
        else:
            # Its text may be anything (a database error's SQL): every user sees the
            # message, so only the class is named, as Nova does; the traceback below
            # holds the text, for administrators.
            message = type(error).__name__
        details = ''
        # A traceback only for a 500, which only administrators see: a 4xx fault (a
        # quota, a conflict) is shown to the server's owner, details included.
        if with_traceback and error.__traceback__ is not None and code == 500:
            details = ''.join(traceback.format_exception(type(error), error,
                                                         error.__traceback__))
        elif message:
            details = message
        return cls(context, instance_uuid=instance_uuid, code=code, message=message[:255],
                   details=details, host=host)


def add_instance_fault_from_exc(context: RequestContext, instance: objects.Instance,
                                error: BaseException,
                                host: str | None = None) -> None:
    """Record ``error`` as the latest fault of ``instance``."""
    InstanceFault.from_exception(context, instance.uuid, error, host=host).create()
