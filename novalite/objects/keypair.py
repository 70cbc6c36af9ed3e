"""KeyPair: a user's public key, injected into servers booted with its name (API DB)."""
from __future__ import annotations

from oslo_versionedobjects import fields
from sqlalchemy import select

from novalite import exception
from novalite.db import engine
from novalite.db.api import models
from novalite.objects import base

KEYPAIR_TYPE_SSH = 'ssh'
KEYPAIR_TYPE_X509 = 'x509'


@base.NovaliteObjectRegistry.register
class KeyPair(base.NovaliteTimestampObject, base.NovaliteObject):
    VERSION = '1.0'

    fields = {
        'id': fields.IntegerField(),
        'name': fields.StringField(nullable=True),
        'user_id': fields.StringField(nullable=True),
        'fingerprint': fields.StringField(nullable=True),
        'public_key': fields.StringField(nullable=True),
        'type': fields.StringField(default=KEYPAIR_TYPE_SSH),
    }

    @classmethod
    def get_by_name(cls, context, user_id: str, name: str) -> KeyPair:
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
        with engine.api_writer() as session:
            row = models.KeyPair(**self.obj_get_changes())
            session.add(row)
            session.flush()
            self._set_from_db(self, row)
        self.obj_reset_changes()

    def destroy(self) -> None:
        with engine.api_writer() as session:
            row = session.scalars(select(models.KeyPair)
                                  .filter_by(user_id=self.user_id, name=self.name)).first()
            if row is None:
                raise exception.KeypairNotFound(user_id=self.user_id, name=self.name)
            session.delete(row)
