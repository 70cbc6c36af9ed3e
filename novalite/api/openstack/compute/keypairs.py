"""The os-keypairs API: import or generate, list, show and delete a user's key pairs."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import webob.exc

from novalite import crypto, exception, objects
from novalite.api import validation
from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import common, wsgi
from novalite.api.openstack.compute.schemas import keypairs as schema
from novalite.api.openstack.compute.views import keypairs as view
from novalite.conf import CONF
from novalite.objects import keypair as keypair_obj
from novalite.policies import keypairs as kp_policies

if TYPE_CHECKING:
    from novalite.context import RequestContext

POLICY = kp_policies.POLICY_ROOT


def _user_id(req: wsgi.Request, action: str, requested: str | None = None) -> str:
    """The user whose key pairs the request is about (another one from 2.10, if the
    policy allows: administrators by default)."""
    context = req.context
    user_id = context.user_id
    if avr.is_supported(req, '2.10'):
        user_id = requested or req.GET.get('user_id') or user_id
    context.can(POLICY % action, {'user_id': user_id})
    if user_id is None:
        # Key pairs belong to users; every token the API's auth accepts names one.
        raise webob.exc.HTTPForbidden(explanation='The request names no user.')
    return user_id


class KeypairController(wsgi.Controller[view.ViewBuilder]):
    _view_builder_class = view.ViewBuilder

    @validation.query_schema(schema.index_query, '2.1', '2.9')
    @validation.query_schema(schema.index_query_v210, '2.10', '2.34')
    @validation.query_schema(schema.index_query_v235, '2.35', '2.74')
    @validation.query_schema(schema.index_query_v275, '2.75')
    def index(self, req: wsgi.Request) -> dict:
        user_id = _user_id(req, 'index')
        limit = marker = None
        if avr.is_supported(req, '2.35'):
            limit, marker = common.get_limit_and_marker(req)
        try:
            keypairs = objects.KeyPairList.get_by_user(req.context, user_id, limit=limit,
                                                       marker=marker)
        except exception.MarkerNotFound as exc:
            raise webob.exc.HTTPBadRequest(explanation=exc.format_message()) from exc
        return self._view_builder.index(req, list(keypairs))

    @validation.query_schema(schema.show_query, '2.1', '2.9')
    @validation.query_schema(schema.show_query_v210, '2.10', '2.74')
    @validation.query_schema(schema.show_query_v275, '2.75')
    def show(self, req: wsgi.Request, id: str) -> dict:
        user_id = _user_id(req, 'show')
        return self._view_builder.show(
            req, objects.KeyPair.get_by_name(req.context, user_id, id))

    @validation.query_schema(schema.show_query, '2.1', '2.9')
    @validation.query_schema(schema.show_query_v210, '2.10', '2.74')
    @validation.query_schema(schema.show_query_v275, '2.75')
    def delete(self, req: wsgi.Request, id: str) -> wsgi.ResponseObject:
        user_id = _user_id(req, 'delete')
        objects.KeyPair.get_by_name(req.context, user_id, id).destroy()
        return wsgi.ResponseObject(None, code=204 if avr.is_supported(req, '2.2') else 202)

    @validation.schema(schema.create, '2.1', '2.1')
    @validation.schema(schema.create_v22, '2.2', '2.9')
    @validation.schema(schema.create_v210, '2.10', '2.91')
    @validation.schema(schema.create_v292, '2.92')
    def create(self, req: wsgi.Request, body: dict) -> wsgi.ResponseObject:
        params = body['keypair']
        user_id = _user_id(req, 'create', params.get('user_id'))
        key_type = params.get('type', keypair_obj.KEYPAIR_TYPE_SSH)
        _check_quota(req.context, user_id)
        keypair, private_key = _make(req.context, user_id, params['name'], key_type,
                                     params.get('public_key'))
        keypair.create()
        return wsgi.ResponseObject(self._view_builder.create(req, keypair, private_key),
                                   code=201 if avr.is_supported(req, '2.2') else 200)


def _check_quota(context: RequestContext, user_id: str) -> None:
    limit = CONF.quota.key_pairs
    if limit >= 0 and objects.KeyPairList.get_count_by_user(context, user_id) >= limit:
        raise exception.KeypairLimitExceeded()


def _make(context: RequestContext, user_id: str, name: str, key_type: str,
          public_key: str | None) -> tuple[Any, str | None]:
    """The key pair to store, and the private key when the server generated it."""
    private_key = None
    if public_key is not None:
        fingerprint = crypto.fingerprint(public_key, key_type)
    elif key_type == keypair_obj.KEYPAIR_TYPE_X509:
        private_key, public_key, fingerprint = crypto.generate_x509_cert(user_id)
    else:
        private_key, public_key, fingerprint = crypto.generate_key_pair()
    keypair = objects.KeyPair(context, name=name, user_id=user_id, type=key_type,
                              public_key=public_key, fingerprint=fingerprint)
    return keypair, private_key
