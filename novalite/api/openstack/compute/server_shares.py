"""The server shares API (2.97): /servers/{server_id}/shares[/{share_id}].

Shares are Manila file shares mounted into a guest over virtiofs. novalite has no
Manila client and its computes do not report ``COMPUTE_STORAGE_VIRTIO_FS``, so a server
never has a share: the list is empty, a share is not found, and an attach takes the
path Nova takes for a host without virtiofs (409, before Manila is asked).
"""
from __future__ import annotations

import webob.exc

from novalite.api import validation
from novalite.api.openstack import common, wsgi
from novalite.api.openstack.compute.schemas import server_shares as schema
from novalite.compute import vm_states
from novalite.objects.instance import Instance
from novalite.policies import server_shares as ss_policies

POLICY = ss_policies.POLICY_ROOT
NOT_CONFIGURED = ('Feature not supported because either compute or instance are not '
                  'configured correctly.')


class ServerSharesController(common.ComputeAPIUser, wsgi.Controller):

    def _instance(self, req: wsgi.Request, server_id: str, action: str) -> Instance:
        instance = common.get_instance(self.compute_api, req.context, server_id)
        req.context.can(POLICY % action, {'project_id': instance.project_id})
        return instance

    @staticmethod
    def _check_state(instance: Instance, action: str, allowed: tuple[str, ...]) -> None:
        if instance.vm_state not in allowed:
            raise webob.exc.HTTPConflict(
                explanation="Cannot '%s' instance %s while it is in vm_state %s"
                % (action, instance.uuid, instance.vm_state))

    @staticmethod
    def _not_found(share_id: str) -> webob.exc.HTTPNotFound:
        return webob.exc.HTTPNotFound(explanation='Share %s could not be found.' % share_id)

    @wsgi.api_version('2.97')
    @validation.query_schema(schema.index_query)
    def index(self, req: wsgi.Request, server_id: str) -> dict:
        self._instance(req, server_id, 'index')
        return {'shares': []}

    @wsgi.api_version('2.97')
    @wsgi.response(201)
    @validation.schema(schema.create)
    def create(self, req: wsgi.Request, server_id: str, body: dict) -> dict:
        instance = self._instance(req, server_id, 'create')
        self._check_state(instance, 'create share', (vm_states.STOPPED,))
        raise webob.exc.HTTPConflict(explanation=NOT_CONFIGURED)

    @wsgi.api_version('2.97')
    @validation.query_schema(schema.show_query)
    def show(self, req: wsgi.Request, server_id: str, id: str) -> dict:
        self._instance(req, server_id, 'show')
        raise self._not_found(id)

    @wsgi.api_version('2.97')
    @validation.no_body
    def delete(self, req: wsgi.Request, server_id: str, id: str) -> None:
        instance = self._instance(req, server_id, 'delete')
        self._check_state(instance, 'delete share', (vm_states.STOPPED, vm_states.ERROR))
        raise self._not_found(id)
