"""The suspend and resume server actions."""
from __future__ import annotations

from typing import TYPE_CHECKING

from novalite.api.openstack import common, wsgi
from novalite.api.openstack.compute import pause_server
from novalite.api.openstack.compute.schemas import suspend_server as schema
from novalite.policies import suspend_server as policies

if TYPE_CHECKING:
    from novalite import objects


def actions(controller: common.ComputeAPIUser) -> dict:
    """body key → (name in 409 messages, schema, handler)"""

    def suspend(req: wsgi.Request, instance: objects.Instance, args: object) -> wsgi.ResponseObject:
        req.context.can(policies.POLICY_ROOT % 'suspend', common.instance_target(instance))
        return pause_server._call(controller.compute_api.suspend, req, instance)

    def resume(req: wsgi.Request, instance: objects.Instance, args: object) -> wsgi.ResponseObject:
        req.context.can(policies.POLICY_ROOT % 'resume', common.instance_target(instance))
        return pause_server._call(controller.compute_api.resume, req, instance)

    return {'suspend': ('suspend', schema.suspend, suspend),
            'resume': ('resume', schema.resume, resume)}
