"""KeyPair: a user's public key, injected into servers booted with its name (API DB)."""
from __future__ import annotations

from typing import Any

from oslo_db import exception as db_exc
from oslo_versionedobjects import fields

from novalite import exception
from novalite.context import RequestContext
from novalite.db import engine
from novalite.db.lazy import api_models as models
from novalite.db.lazy import func, select
from novalite.objects import base

KEYPAIR_TYPE_SSH = 'ssh'
KEYPAIR_TYPE_X509 = 'x509'


@base.NovaliteObjectRegistry.register
class KeyPair(base.NovaliteTimestampObject, base.NovaliteObject):
    VERSION = '1.0'
    id: int
    name: str | None
    user_id: str | None
    fingerprint: str | None
    public_key: str | None
    type: str

    fields: dict[str, fields.Field[Any]] = {
        'id': fields.IntegerField(),
        'name': fields.StringField(nullable=True),
        'user_id': fields.StringField(nullable=True),
        'fingerprint': fields.StringField(nullable=True),
        'public_key': fields.StringField(nullable=True),
        'type': fields.StringField(default=KEYPAIR_TYPE_SSH),
    }

    @classmethod
    def get_by_name(cls, context: RequestContext, user_id: str, name: str) -> KeyPair:
        with engine.api_reader() as session:
            row = session.scalars(select(models.KeyPair)
                                  .filter_by(user_id=user_id, name=name)).first()
            if row is None:
                raise exception.KeypairNotFound(user_id=user_id, name=name)
            obj = cls(context)
            cls._set_from_db(obj, row)
            obj.obj_reset_changes()
            return obj

    def create(self) -> None:
        """Insert the key pair; ``KeyPairExists`` if the user has one of that name."""
        with engine.api_writer() as session:
            taken = session.scalars(select(models.KeyPair.id).filter_by(
                user_id=self.user_id, name=self.name)).first()
            if taken is not None:
                raise exception.KeyPairExists(key_name=self.name)
            row = models.KeyPair(**self.obj_get_changes())
            session.add(row)
            try:
                session.flush()
            except db_exc.DBDuplicateEntry as exc:
                raise exception.KeyPairExists(key_name=self.name) from exc
            self._set_from_db(self, row)
        self.obj_reset_changes()

    def destroy(self) -> None:
        with engine.api_writer() as session:
            row = session.scalars(select(models.KeyPair)
                                  .filter_by(user_id=self.user_id, name=self.name)).first()
            if row is None:
                raise exception.KeypairNotFound(user_id=self.user_id, name=self.name)
            session.delete(row)


@base.NovaliteObjectRegistry.register
class KeyPairList(base.ObjectListBase['KeyPair'], base.NovaliteObject):
    VERSION = '1.0'
    fields = {'objects': fields.ListOfObjectsField('KeyPair')}

    @classmethod
    def get_by_user(cls, context: RequestContext, user_id: str, limit: int | None = None,
                    marker: str | None = None) -> KeyPairList:
        """The user's key pairs by name; ``marker`` is the name of the last one seen.

        :raises MarkerNotFound: the user has no key pair named ``marker``
        """
        with engine.api_reader() as session:
            query = select(models.KeyPair).filter_by(user_id=user_id)
            if marker is not None:
                if session.scalars(select(models.KeyPair.id).filter_by(
                        user_id=user_id, name=marker)).first() is None:
                    raise exception.MarkerNotFound(marker=marker)
                query = query.where(models.KeyPair.name > marker)
            query = query.order_by(models.KeyPair.name.asc(), models.KeyPair.id.asc())
            if limit is not None:
                query = query.limit(limit)
            objs = []
            for row in session.scalars(query):
                obj = KeyPair(context)
                KeyPair._set_from_db(obj, row)
                obj.obj_reset_changes()
                objs.append(obj)
        return cls(context, objects=objs)

    @classmethod
    def get_count_by_user(cls, context: RequestContext, user_id: str) -> int:
        with engine.api_reader() as session:
            return session.scalar(select(func.count(models.KeyPair.id))
                                  .filter_by(user_id=user_id)) or 0
