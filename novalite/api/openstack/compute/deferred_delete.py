"""restore and forceDelete: what can be done to a SOFT_DELETED server
(``[DEFAULT] reclaim_instance_interval`` > 0)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from novalite.api.openstack import common, wsgi
from novalite.api.openstack.compute.schemas import deferred_delete as schema
from novalite.policies import deferred_delete as policies

if TYPE_CHECKING:
    from novalite import objects


def actions(controller: common.ComputeAPIUser) -> dict:
    """body key → (name in 409 messages, schema, handler)"""

    def restore(req: wsgi.Request, instance: objects.Instance, args: object) -> wsgi.ResponseObject:
        req.context.can(policies.POLICY_ROOT % 'restore',
                        {'project_id': instance.project_id})
        controller.compute_api.restore(req.context, instance)
        return wsgi.ResponseObject(None, code=202)

    def force_delete(req: wsgi.Request, instance: objects.Instance,
                     args: object) -> wsgi.ResponseObject:
        req.context.can(policies.POLICY_ROOT % 'force', common.instance_target(instance))
        controller.compute_api.force_delete(req.context, instance)
        return wsgi.ResponseObject(None, code=202)

    return {'restore': ('restore', schema.restore, restore),
            'forceDelete': ('forceDelete', schema.force_delete, force_delete)}
