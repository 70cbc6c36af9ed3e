"""ConsoleAuthToken: a console token a server's host authorized (cell database).

The token itself goes to the user inside the console's access URL; the database keeps
only its sha256 hash, with where the console is (host, port, path), its type and when it
expires (a UNIX time, ``[consoleauth] token_ttl`` seconds after it was authorized).
A proxy redeems a token once (``redeem``: the row goes with the read); the
os-console-auth-tokens API only reads it (``validate``).
"""
from __future__ import annotations

import hashlib
from typing import Any
from urllib import parse

from oslo_db import exception as db_exc
from oslo_log import log as logging
from oslo_utils import timeutils, uuidutils
from oslo_versionedobjects import fields

from novalite import exception
from novalite.context import RequestContext
from novalite.db import engine
from novalite.db.lazy import delete, select
from novalite.db.lazy import main_models as models
from novalite.objects import base

LOG = logging.getLogger(__name__)

# The columns a token's object is read from (the hash stays in the database).
_COLUMNS = ('id', 'console_type', 'host', 'port', 'tls_port', 'internal_access_path',
            'instance_uuid', 'access_url_base', 'expires', 'created_at', 'updated_at')


def token_hash(token: str) -> str:
    """What the database keeps of a token."""
    return hashlib.sha256(token.encode('utf-8')).hexdigest()


def _valid(token: str) -> Any:
    table = models.ConsoleAuthToken
    return select(table).where(table.token_hash == token_hash(token),
                               table.expires > timeutils.utcnow_ts())


@base.NovaliteObjectRegistry.register
class ConsoleAuthToken(base.NovaliteTimestampObject, base.NovaliteObject):
    """As Nova's (1.3): ``token`` is set only on the object ``authorize``,
    ``validate`` or ``redeem`` answered with."""

    VERSION = '1.0'
    id: int
    console_type: str
    host: str
    port: int
    tls_port: int | None
    internal_access_path: str | None
    instance_uuid: str
    access_url_base: str | None
    token: str
    expires: int

    fields: dict[str, fields.Field[Any]] = {
        **base.NovaliteTimestampObject.fields,
        'id': fields.IntegerField(),
        'console_type': fields.StringField(nullable=False),
        'host': fields.StringField(nullable=False),
        'port': fields.IntegerField(nullable=False),
        'tls_port': fields.IntegerField(nullable=True),
        'internal_access_path': fields.StringField(nullable=True),
        'instance_uuid': fields.UUIDField(nullable=False),
        'access_url_base': fields.StringField(nullable=True),
        'token': fields.StringField(nullable=False),
        'expires': fields.IntegerField(nullable=False),
    }

    @property
    def access_url(self) -> str | None:
        """The URL a user opens: the base URL with the token in its query string.

        noVNC (1.1 and later) takes the token inside its ``path`` parameter (the path of
        the proxy's websocket); the other clients take ``?token=``.
        """
        if not self.obj_attr_is_set('id') or not self.obj_attr_is_set('token'):
            return None
        base_url = self.access_url_base or ''
        if self.console_type == 'novnc':
            parsed = parse.urlparse(base_url)
            query = parse.parse_qs(parsed.query)
            query['path'] = ['%s?token=%s' % (query.get('path', [''])[0], self.token)]
            return parsed._replace(query=parse.urlencode(query, doseq=True)).geturl()
        return '%s?token=%s' % (base_url, self.token)

    @classmethod
    def _from_row(cls, context: RequestContext, row: Any, token: str) -> ConsoleAuthToken:
        obj = cls(context)
        for name in _COLUMNS:
            setattr(obj, name, getattr(row, name))
        obj.token = token
        obj.obj_reset_changes()
        return obj

    @base.remotable
    def authorize(self, ttl: int) -> str:
        """Store a new random token for this console, valid ``ttl`` seconds.

        :returns: the token (the database keeps only its hash)
        :raises ObjectActionError: the object was authorized already
        :raises ObjectActionError: the hash is taken (a uuid4 twice: never in practice)
        """
        if self.obj_attr_is_set('id'):
            raise exception.ObjectActionError(action='authorize',
                                              reason='must be a new object to authorize')
        token = uuidutils.generate_uuid()
        values = {name: getattr(self, name) for name in self.obj_get_changes()
                  if name in _COLUMNS}
        values.update(token_hash=token_hash(token), expires=timeutils.utcnow_ts() + ttl)
        try:
            with engine.cell_writer(self._context) as session:
                row = models.ConsoleAuthToken(**values)
                session.add(row)
                session.flush()
                authorized = self._from_row(self._context, row, token)
        except db_exc.DBDuplicateEntry as exc:
            raise exception.ObjectActionError(action='authorize',
                                              reason='the token is in use') from exc
        for name in _COLUMNS + ('token',):
            setattr(self, name, getattr(authorized, name))
        self.obj_reset_changes()
        LOG.debug('Authorized a %s console token for %s until %s', self.console_type,
                  self.instance_uuid, self.expires)
        return token

    @classmethod
    @base.remotable
    def validate(cls, context: RequestContext, token: str) -> ConsoleAuthToken:
        """The token's console, the token left in place.

        :raises InvalidToken: unknown or expired
        """
        with engine.cell_reader(context) as session:
            row = session.scalars(_valid(token)).first()
            if row is None:
                raise exception.InvalidToken(token='***')
            return cls._from_row(context, row, token)

    @classmethod
    @base.remotable
    def redeem(cls, context: RequestContext, token: str) -> ConsoleAuthToken:
        """The token's console; the token is deleted in the same transaction, so that
        of two proxies redeeming it at once only one gets it.

        :raises InvalidToken: unknown, expired or redeemed already
        """
        table = models.ConsoleAuthToken
        with engine.cell_writer(context) as session:
            row = session.scalars(_valid(token)).first()
            if row is None:
                raise exception.InvalidToken(token='***')
            found = cls._from_row(context, row, token)
            gone = session.connection().execute(
                delete(table).where(table.id == row.id)).rowcount
        if gone != 1:  # another redeem deleted it between our read and our delete
            raise exception.InvalidToken(token='***')
        return found

    @classmethod
    @base.remotable
    def clean_console_auths_for_instance(cls, context: RequestContext,
                                         instance_uuid: str) -> None:
        """Delete every token of the server (deleted or moved)."""
        table = models.ConsoleAuthToken
        with engine.cell_writer(context) as session:
            session.execute(delete(table).where(table.instance_uuid == instance_uuid))

    @classmethod
    @base.remotable
    def clean_expired_console_auths(cls, context: RequestContext) -> int:
        """Delete the cell's expired tokens; how many there were."""
        table = models.ConsoleAuthToken
        with engine.cell_writer(context) as session:
            return int(session.connection().execute(
                delete(table).where(table.expires <= timeutils.utcnow_ts())).rowcount)
