"""InstanceAction and InstanceActionEvent: the history of what was done to a server."""
from __future__ import annotations

import traceback as tb
import types
from typing import TYPE_CHECKING, Any, cast

from oslo_utils import timeutils
from oslo_versionedobjects import fields

from novalite import exception
from novalite.context import RequestContext
from novalite.db import engine
from novalite.db.lazy import insert, select, update
from novalite.db.lazy import main_models as models
from novalite.objects import base


def _naive(value: datetime.datetime | None) -> datetime.datetime | None:
    return base.naive_utc(value) if value is not None else timeutils.utcnow()


if TYPE_CHECKING:
    import datetime

    from sqlalchemy.engine import CursorResult, Result
    from sqlalchemy.orm import Session


def _inserted_id(result: Result[Any]) -> int:
    """The primary key of the one row an INSERT wrote."""
    # An INSERT's result is a CursorResult (the library's stub says Result).
    key = cast('CursorResult[Any]', result).inserted_primary_key
    assert key is not None
    return key[0]


@base.NovaliteObjectRegistry.register
class InstanceAction(base.NovalitePersistentObject, base.NovaliteObject):
    VERSION = '1.0'
    id: int
    action: str | None
    instance_uuid: str | None
    request_id: str | None
    user_id: str | None
    project_id: str | None
    start_time: datetime.datetime | None
    finish_time: datetime.datetime | None
    message: str | None

    fields: dict[str, fields.Field[Any]] = {
        'id': fields.IntegerField(),
        'action': fields.StringField(nullable=True),
        'instance_uuid': fields.UUIDField(nullable=True),
        'request_id': fields.StringField(nullable=True),
        'user_id': fields.StringField(nullable=True),
        'project_id': fields.StringField(nullable=True),
        'start_time': fields.DateTimeField(nullable=True),
        'finish_time': fields.DateTimeField(nullable=True),
        'message': fields.StringField(nullable=True),
    }

    @classmethod
    @base.remotable
    def action_start(cls, context: RequestContext, instance_uuid: str, action_name: str,
                     want_result: bool = True) -> InstanceAction | None:
        now = timeutils.utcnow()
        with engine.cell_writer(context) as session:
            # updated_at starts at the start time so that changes-since finds new actions.
            row = models.InstanceAction(
                action=action_name, instance_uuid=instance_uuid,
                request_id=context.request_id, user_id=context.user_id,
                project_id=context.project_id, start_time=now, updated_at=now)
            session.add(row)
            session.flush()
            return cls._from_db_object(context, row) if want_result else None

    @classmethod
    def start_with_events(cls, context: RequestContext, instance_uuid: str, action_name: str,
                          events: list[tuple[str, str | None, str | None]]) -> None:
        """The action and its first events, written together (database side only: the
        conductor creating an instance). Each event is ``(name, host, result)``: with a
        result (``Success``/``Error``) it is finished at once, without one only started."""
        now = timeutils.utcnow()
        with engine.cell_writer(context) as session:
            action_id = _inserted_id(session.execute(insert(models.InstanceAction).values(
                action=action_name, instance_uuid=instance_uuid,
                request_id=context.request_id, user_id=context.user_id,
                project_id=context.project_id, start_time=now,
                updated_at=now)))
            if events:
                session.execute(insert(models.InstanceActionEvent), [
                    {'event': name, 'action_id': action_id, 'host': host, 'start_time': now,
                     'finish_time': now if result else None, 'result': result}
                    for name, host, result in events])

    @classmethod
    @base.remotable
    def get_by_request_id(cls, context: RequestContext, instance_uuid: str,
                          request_id: str) -> InstanceAction:
        with engine.cell_reader(context) as session:
            row = session.scalars(select(models.InstanceAction)
                                  .filter_by(instance_uuid=instance_uuid,
                                             request_id=request_id)
                                  .order_by(models.InstanceAction.id.desc())).first()
            if row is None:
                raise exception.InstanceActionNotFound(request_id=request_id,
                                                       instance_uuid=instance_uuid)
            return cls._from_db_object(context, row)


@base.NovaliteObjectRegistry.register
class InstanceActionList(base.ObjectListBase['InstanceAction'], base.NovaliteObject):
    VERSION = '1.0'
    fields = {'objects': fields.ListOfObjectsField('InstanceAction')}

    @classmethod
    def get_by_instance_uuid(cls, context: RequestContext, instance_uuid: str,
                             limit: int | None = None,
                             marker: str | None = None,
                             filters: dict | None = None) -> InstanceActionList:
        """The actions of an instance, newest first.

        :param marker: the request id of the last action of the previous page
        :param filters: ``changes-since`` / ``changes-before`` on ``updated_at``
        :raises MarkerNotFound: no action of this instance has the marker's request id
        """
        filters = filters or {}
        action = models.InstanceAction
        query = select(action).filter_by(instance_uuid=instance_uuid)
        if filters.get('changes-since') is not None:
            query = query.where(action.updated_at >= base.naive_utc(filters['changes-since']))
        if filters.get('changes-before') is not None:
            query = query.where(action.updated_at <= base.naive_utc(filters['changes-before']))
        with engine.cell_reader(context) as session:
            if marker is not None:
                row = session.scalars(select(action).filter_by(
                    instance_uuid=instance_uuid, request_id=marker)).first()
                if row is None:
                    raise exception.MarkerNotFound(marker=marker)
                query = query.where((action.created_at < row.created_at) |
                                    ((action.created_at == row.created_at) &
                                     (action.id < row.id)))
            query = query.order_by(action.created_at.desc(), action.id.desc())
            if limit is not None:
                query = query.limit(limit)
            return cls(context, objects=[InstanceAction._from_db_object(context, r)
                                         for r in session.scalars(query)])


@base.NovaliteObjectRegistry.register
class InstanceActionEvent(base.NovalitePersistentObject, base.NovaliteObject):
    VERSION = '1.0'
    id: int
    event: str | None
    action_id: int | None
    start_time: datetime.datetime | None
    finish_time: datetime.datetime | None
    result: str | None
    traceback: str | None
    host: str | None
    details: str | None

    fields: dict[str, fields.Field[Any]] = {
        'id': fields.IntegerField(),
        'event': fields.StringField(nullable=True),
        'action_id': fields.IntegerField(nullable=True),
        'start_time': fields.DateTimeField(nullable=True),
        'finish_time': fields.DateTimeField(nullable=True),
        'result': fields.StringField(nullable=True),
        'traceback': fields.StringField(nullable=True),
        'host': fields.StringField(nullable=True),
        'details': fields.StringField(nullable=True),
    }

    @staticmethod
    def _action_id(session: Session, context: RequestContext, instance_uuid: str) -> int:
        """The id of the instance's latest action of this request."""
        actions = models.InstanceAction.__table__
        action_id = session.execute(
            select(actions.c.id).where(actions.c.instance_uuid == instance_uuid,
                                       actions.c.request_id == context.request_id)
            .order_by(actions.c.id.desc()).limit(1)).scalar()
        if action_id is None:
            raise exception.InstanceActionNotFound(request_id=context.request_id,
                                                   instance_uuid=instance_uuid)
        return action_id

    @classmethod
    @base.remotable
    def event_start(cls, context: RequestContext, instance_uuid: str, event_name: str,
                    host: str | None = None) -> InstanceActionEvent:
        with engine.cell_writer(context) as session:
            action_id = cls._action_id(session, context, instance_uuid)
            row = models.InstanceActionEvent(event=event_name, action_id=action_id,
                                             start_time=timeutils.utcnow(), host=host)
            session.add(row)
            actions = models.InstanceAction.__table__
            session.execute(update(actions).where(actions.c.id == action_id)
                            .values(updated_at=timeutils.utcnow()))
            session.flush()
            return cls._from_db_object(context, row)

    @classmethod
    @base.remotable
    def event_finish(cls, context: RequestContext, instance_uuid: str, event_name: str,
                     exc_val: str | None = None, exc_tb: str | None = None,
                     host: str | None = None) -> InstanceActionEvent:
        """Finish the latest unfinished event of that name; an error also marks the action
        failed (``message = 'Error'``), as Nova does.

        Core statements, not the ORM's unit of work: every build and every action on a
        server ends here, and the ORM's bookkeeping cost more than the statements.
        """
        now = timeutils.utcnow()
        actions = models.InstanceAction.__table__
        events = models.InstanceActionEvent.__table__
        finished = {'finish_time': now, 'result': 'Error' if exc_val else 'Success',
                    'traceback': exc_tb, 'details': exc_val}
        with engine.cell_writer(context) as session:
            action_id = cls._action_id(session, context, instance_uuid)
            started = session.execute(
                select(events).where(events.c.action_id == action_id,
                                     events.c.event == event_name)
                .order_by(events.c.id.desc()).limit(1)).first()
            if started is None:
                values = {'event': event_name, 'action_id': action_id, 'start_time': now,
                          'host': host, 'created_at': now, 'updated_at': None,
                          'deleted_at': None, 'deleted': 0, **finished}
                values['id'] = _inserted_id(session.execute(insert(events).values(**values)))
            else:
                values = {**started._mapping, 'updated_at': now, **finished}
                session.execute(update(events).where(events.c.id == started.id)
                                .values(updated_at=now, **finished))
            session.execute(update(actions).where(actions.c.id == action_id).values(
                updated_at=now, **({'message': 'Error'} if exc_val else {})))
        return cls._from_db_object(context, types.SimpleNamespace(**values))

    @classmethod
    def format_error(cls, error: BaseException) -> tuple[str, str]:
        message = getattr(error, 'format_message', lambda: str(error))()
        return message, ''.join(tb.format_exception(type(error), error, error.__traceback__))


@base.NovaliteObjectRegistry.register
class InstanceActionEventList(base.ObjectListBase['InstanceActionEvent'], base.NovaliteObject):
    VERSION = '1.0'
    fields = {'objects': fields.ListOfObjectsField('InstanceActionEvent')}

    @classmethod
    def get_by_action(cls, context: RequestContext, action_id: int) -> InstanceActionEventList:
        with engine.cell_reader(context) as session:
            rows = session.scalars(select(models.InstanceActionEvent)
                                   .filter_by(action_id=action_id)
                                   .order_by(models.InstanceActionEvent.id))
            return cls(context, objects=[InstanceActionEvent._from_db_object(context, r)
                                         for r in rows])
