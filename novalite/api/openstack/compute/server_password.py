"""GET and DELETE /servers/{server_id}/os-server-password: the encrypted password a
guest posted to the metadata service, kept in its system metadata as Nova keeps it.

The password is split over ``password_0`` .. ``password_3`` (255 characters each, the
system metadata's value size). Clearing it empties those keys; the guest's own
password does not change.
"""
from __future__ import annotations

from collections.abc import Mapping

from novalite.api import validation
from novalite.api.openstack import common, wsgi
from novalite.api.openstack.compute.schemas import server_password as schema
from novalite.objects.instance import Instance
from novalite.policies import server_password as sp_policies

CHUNKS = 4
CHUNK_LENGTH = 255
MAX_SIZE = CHUNKS * CHUNK_LENGTH


def extract_password(system_metadata: Mapping[str, str | None]) -> str | None:
    """The stored password, its chunks joined in key order; None if there is none."""
    joined = ''.join(system_metadata[key] or '' for key in sorted(system_metadata)
                     if key.startswith('password_'))
    return joined or None


def convert_password(password: str | bytes | None) -> dict[str, str]:
    """The system metadata keys that store ``password`` (all empty for None)."""
    text = password.decode('utf-8') if isinstance(password, bytes) else (password or '')
    return {'password_%d' % index: text[index * CHUNK_LENGTH:(index + 1) * CHUNK_LENGTH]
            for index in range(CHUNKS)}


class ServerPasswordController(common.ComputeAPIUser, wsgi.Controller):

    def _instance(self, req: wsgi.Request, server_id: str, action: str) -> Instance:
        instance = common.get_instance(self.compute_api, req.context, server_id)
        req.context.can(sp_policies.BASE_POLICY_NAME % action,
                        {'project_id': instance.project_id})
        return instance

    @validation.query_schema(schema.index_query, '2.1', '2.101')
    @validation.query_schema(schema.index_query_v2102, '2.102')
    def index(self, req: wsgi.Request, server_id: str) -> dict:
        instance = self._instance(req, server_id, 'show')
        return {'password': extract_password(dict(instance.system_metadata or {})) or ''}

    @wsgi.response(204)
    @validation.no_body
    def clear(self, req: wsgi.Request, server_id: str) -> None:
        instance = self._instance(req, server_id, 'clear')
        system_metadata = dict(instance.system_metadata or {})
        system_metadata.update(convert_password(None))
        self.compute_api.update_instance(req.context, instance,
                                         {'system_metadata': system_metadata})
