"""The evacuate server action (administrators): rebuild a server of a dead host on
another host, with Nova's microversions (onSharedStorage until 2.14, force 2.29-2.67)."""
from __future__ import annotations

import secrets
from typing import TYPE_CHECKING

import webob.exc
from oslo_utils import strutils

from novalite import exception
from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import wsgi
from novalite.api.openstack.compute import migrate_server
from novalite.api.openstack.compute.schemas import migrate_server as schema
from novalite.policies import migrate_server as policies

if TYPE_CHECKING:
    from novalite import objects
    from novalite.api.openstack import common
    from novalite.compute.api import API as ComputeAPI

# Unambiguous characters only, as the password of a new server.
_PASSWORD_SYMBOLS = '23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz'


def _generate_password(length: int = 12) -> str:
    return ''.join(secrets.choice(_PASSWORD_SYMBOLS) for _ in range(length))


def actions(controller: common.ComputeAPIUser) -> dict:
    def handler(req: wsgi.Request, instance: objects.Instance,
                args: dict) -> wsgi.ResponseObject | dict:
        return evacuate(controller.compute_api, req, instance, args)
    return {'evacuate': ('evacuate', schema.evacuate_any, handler)}


def evacuate(compute_api: ComputeAPI, req: wsgi.Request, instance: objects.Instance,
             args: dict) -> wsgi.ResponseObject | dict:
    context = req.context
    migrate_server.validate_for_version(req, {'evacuate': args}, [
        ('2.1', schema.evacuate), ('2.14', schema.evacuate_v214),
        ('2.29', schema.evacuate_v229), ('2.68', schema.evacuate_v268)])
    context.can(policies.EVACUATE, {'project_id': instance.project_id})
    host = args.get('host')
    password = args.get('adminPass')
    if not avr.is_supported(req, '2.14'):
        on_shared_storage = strutils.bool_from_string(args['onSharedStorage'], strict=True)
        if on_shared_storage and password:
            raise webob.exc.HTTPBadRequest(
                explanation="admin password can't be changed on existing disk")
    if not password:
        password = _generate_password()
    try:
        compute_api.evacuate(context, instance, host, password)
    except exception.ComputeHostNotFound as exc:
        raise webob.exc.HTTPNotFound(
            explanation='Compute host %s not found.' % host) from exc
    except (exception.ComputeServiceInUse, exception.MigrationPreCheckError) as exc:
        raise webob.exc.HTTPBadRequest(explanation=exc.format_message()) from exc
    if avr.is_supported(req, '2.14'):
        return wsgi.ResponseObject(None, code=200)
    return wsgi.ResponseObject({'adminPass': password}, code=200)
