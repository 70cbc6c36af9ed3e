"""The rescue and unrescue server actions."""
from __future__ import annotations

import secrets
from typing import TYPE_CHECKING

import webob.exc
from oslo_utils import uuidutils

from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import common, wsgi
from novalite.api.openstack.compute.schemas import rescue as schema
from novalite.policies import rescue as policies

if TYPE_CHECKING:
    from novalite import objects

# Unambiguous characters only, as for the password of a new server.
_PASSWORD_SYMBOLS = '23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz'


def _generate_password(length: int = 12) -> str:
    return ''.join(secrets.choice(_PASSWORD_SYMBOLS) for _ in range(length))


def _rescue_image(image_ref: str | None) -> str | None:
    """The image id of ``rescue_image_ref`` (an id or a link ending in one)."""
    if not image_ref:
        return None
    image_uuid = image_ref.split('/').pop()
    if image_uuid and not uuidutils.is_uuid_like(image_uuid):
        raise webob.exc.HTTPBadRequest(explanation='Invalid rescue_image_ref provided.')
    return image_uuid or None


def actions(controller: common.ComputeAPIUser) -> dict:
    """body key → (name in 409 messages, schema, handler)"""

    def rescue(req: wsgi.Request, instance: objects.Instance, args: dict | None) -> dict:
        password = (args or {}).get('adminPass') or _generate_password()
        req.context.can(policies.BASE_POLICY_NAME, common.instance_target(instance))
        image_ref = _rescue_image((args or {}).get('rescue_image_ref'))
        try:
            controller.compute_api.rescue(
                req.context, instance, rescue_password=password, rescue_image_ref=image_ref,
                allow_bfv_rescue=avr.is_supported(req, '2.87'))
        except NotImplementedError as exc:
            raise webob.exc.HTTPNotImplemented(
                explanation='The requested functionality is not supported.') from exc
        return {'adminPass': password}

    def unrescue(req: wsgi.Request, instance: objects.Instance,
                 args: object) -> wsgi.ResponseObject:
        req.context.can(policies.UNRESCUE_POLICY_NAME, {'project_id': instance.project_id})
        controller.compute_api.unrescue(req.context, instance)
        return wsgi.ResponseObject(None, code=202)

    return {'rescue': ('rescue', schema.rescue, rescue),
            'unrescue': ('unrescue', schema.unrescue, unrescue)}
