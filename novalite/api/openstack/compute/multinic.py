"""The addFixedIp and removeFixedIp server actions (until 2.43; 404 from 2.44, as in
Nova): another address for the server on a network, or one address less."""
from __future__ import annotations

from typing import TYPE_CHECKING

import webob.exc

from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import common, wsgi
from novalite.api.openstack.compute.schemas import multinic as schema
from novalite.compute import api_interfaces
from novalite.policies import multinic as policies

if TYPE_CHECKING:
    from novalite import objects


def _until_2_43(req: wsgi.Request) -> None:
    if avr.is_supported(req, '2.44'):
        raise webob.exc.HTTPNotFound(
            explanation='The resource could not be found for API version %s.'
            % req.api_version_request.get_string())


def actions(controller: common.ComputeAPIUser) -> dict:
    """body key → (name in 409 messages, schema, handler)"""

    def add_fixed_ip(req: wsgi.Request, instance: objects.Instance,
                     args: dict) -> wsgi.ResponseObject:
        _until_2_43(req)
        req.context.can(policies.BASE_POLICY_NAME % 'add', common.instance_target(instance))
        api_interfaces.InterfacesAPI(controller.compute_api).add_fixed_ip(
            req.context, instance, str(args['networkId']))
        return wsgi.ResponseObject(None, code=202)

    def remove_fixed_ip(req: wsgi.Request, instance: objects.Instance, args: dict
                        ) -> wsgi.ResponseObject:
        _until_2_43(req)
        req.context.can(policies.BASE_POLICY_NAME % 'remove',
                        common.instance_target(instance))
        api_interfaces.InterfacesAPI(controller.compute_api).remove_fixed_ip(
            req.context, instance, args['address'])
        return wsgi.ResponseObject(None, code=202)

    return {'addFixedIp': ('addFixedIp', schema.add_fixed_ip, add_fixed_ip),
            'removeFixedIp': ('removeFixedIp', schema.remove_fixed_ip, remove_fixed_ip)}
