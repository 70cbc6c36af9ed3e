"""Views of key pairs, per microversion."""
from __future__ import annotations

from typing import TYPE_CHECKING

from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import common

if TYPE_CHECKING:
    import datetime

    from novalite import objects
    from novalite.api.openstack import wsgi


def _time(value: datetime.datetime | None) -> str | None:
    return value.replace(tzinfo=None).isoformat(timespec='microseconds') \
        if value is not None else None


class ViewBuilder(common.ViewBuilder):
    _collection_name = 'os-keypairs'

    @staticmethod
    def _keypair(req: wsgi.Request, keypair: objects.KeyPair, keys: tuple[str, ...]) -> dict:
        body = {key: getattr(keypair, key) for key in keys}
        if avr.is_supported(req, '2.2'):
            body['type'] = keypair.type
        return body

    def create(self, req: wsgi.Request, keypair: objects.KeyPair, private_key: str | None) -> dict:
        body = self._keypair(req, keypair, ('name', 'public_key', 'fingerprint', 'user_id'))
        if private_key is not None:
            body['private_key'] = private_key
        return {'keypair': body}

    def show(self, req: wsgi.Request, keypair: objects.KeyPair) -> dict:
        body = self._keypair(req, keypair, ('name', 'public_key', 'fingerprint', 'user_id',
                                            'id'))
        body.update({'created_at': _time(keypair.created_at), 'deleted': False,
                     'deleted_at': None, 'updated_at': _time(keypair.updated_at)})
        return {'keypair': body}

    def index(self, req: wsgi.Request, keypairs: list) -> dict:
        body: dict = {'keypairs': [
            {'keypair': self._keypair(req, k, ('name', 'public_key', 'fingerprint'))}
            for k in keypairs]}
        if avr.is_supported(req, '2.35'):
            links = self._get_collection_links(req, keypairs, 'os-keypairs', 'name')
            if links:
                body['keypairs_links'] = links
        return body
