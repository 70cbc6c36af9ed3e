"""TaskLog: one host's run of a periodic task for one period (cell database).

The compute's instance usage audit writes it (through the conductor: ``begin_task`` as
RUNNING, ``end_task`` as DONE) and the os-instance_usage_audit_log API reads it.
"""
from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any

from oslo_db import exception as db_exc
from oslo_utils import timeutils
from oslo_versionedobjects import fields

from novalite import exception
from novalite.context import RequestContext
from novalite.db import engine
from novalite.db.lazy import main_models as models
from novalite.db.lazy import select, update
from novalite.objects import base

if TYPE_CHECKING:
    from sqlalchemy import Select

RUNNING, DONE = 'RUNNING', 'DONE'


# A bound of a period: a datetime, or its ISO 8601 text (how one crosses RPC as a plain
# argument: the message is JSON).
When = datetime.datetime | str


def _when(value: When) -> datetime.datetime | None:
    if isinstance(value, str):
        value = timeutils.parse_isotime(value)
    return base.naive_utc(value)


def _query(task_name: str, period_beginning: When, period_ending: When,
           host: str | None = None, state: str | None = None) -> Select[Any]:
    table = models.TaskLog
    query = select(table).where(
        table.task_name == task_name, table.deleted == 0,
        table.period_beginning == _when(period_beginning),
        table.period_ending == _when(period_ending))
    if host is not None:
        query = query.where(table.host == host)
    if state is not None:
        query = query.where(table.state == state)
    return query.order_by(table.id)


@base.NovaliteObjectRegistry.register
class TaskLog(base.NovalitePersistentObject, base.NovaliteObject):
    VERSION = '1.0'
    id: int
    task_name: str
    state: str
    host: str
    period_beginning: datetime.datetime
    period_ending: datetime.datetime
    message: str
    task_items: int
    errors: int

    fields: dict[str, fields.Field[Any]] = {
        'id': fields.IntegerField(read_only=True),
        'task_name': fields.StringField(),
        'state': fields.StringField(read_only=True),
        'host': fields.StringField(),
        'period_beginning': fields.DateTimeField(),
        'period_ending': fields.DateTimeField(),
        'message': fields.StringField(),
        'task_items': fields.IntegerField(),
        'errors': fields.IntegerField(),
    }

    @classmethod
    @base.remotable
    def get(cls, context: RequestContext, task_name: str, period_beginning: When,
            period_ending: When,
            host: str,
            state: str | None = None) -> TaskLog | None:
        with engine.cell_reader(context) as session:
            row = session.scalars(_query(task_name, period_beginning, period_ending,
                                         host, state)).first()
            return cls._from_db_object(context, row) if row is not None else None

    @base.remotable
    def begin_task(self) -> None:
        """Record the run as RUNNING.

        :raises TaskAlreadyRunning: this host has a record of the task for the period
        """
        values = {'task_name': self.task_name, 'host': self.host, 'state': RUNNING,
                  'period_beginning': base.naive_utc(self.period_beginning),
                  'period_ending': base.naive_utc(self.period_ending),
                  'message': self.message or '',
                  'task_items': self.task_items if self.obj_attr_is_set('task_items')
                  else 0}
        try:
            with engine.cell_writer(self._context) as session:
                session.add(models.TaskLog(**values))
                session.flush()
        except db_exc.DBDuplicateEntry as exc:
            raise exception.TaskAlreadyRunning(task_name=self.task_name,
                                               host=self.host) from exc

    @base.remotable
    def end_task(self) -> None:
        """Record the run as DONE with its error count and final message.

        :raises TaskNotRunning: no run of the task was begun for the period
        """
        values: dict[str, Any] = {'state': DONE, 'errors': self.errors}
        if self.message:
            values['message'] = self.message[:255]
        table = models.TaskLog
        with engine.cell_writer(self._context) as session:
            ids = list(session.scalars(
                _query(self.task_name, self.period_beginning, self.period_ending,
                       self.host).with_only_columns(table.id)))
            if ids:
                session.execute(update(table).where(table.id.in_(ids)).values(**values))
        if not ids:
            raise exception.TaskNotRunning(task_name=self.task_name, host=self.host)


@base.NovaliteObjectRegistry.register
class TaskLogList(base.ObjectListBase['TaskLog'], base.NovaliteObject):
    VERSION = '1.0'
    fields = {'objects': fields.ListOfObjectsField('TaskLog')}

    @classmethod
    @base.remotable
    def get_all(cls, context: RequestContext, task_name: str, period_beginning: When,
                period_ending: When,
                host: str | None = None,
                state: str | None = None) -> TaskLogList:
        with engine.cell_reader(context) as session:
            rows = session.scalars(_query(task_name, period_beginning, period_ending,
                                          host, state))
            return cls(context, objects=[TaskLog._from_db_object(context, r) for r in rows])
