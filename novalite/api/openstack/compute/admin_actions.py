"""os-resetState: an admin puts a server back in ACTIVE or ERROR with no task."""
from __future__ import annotations

from typing import TYPE_CHECKING

from novalite.api.openstack import wsgi
from novalite.api.openstack.compute.schemas import reset_server_state as schema
from novalite.compute import vm_states
from novalite.policies import admin_actions as policies

if TYPE_CHECKING:
    from novalite import objects
    from novalite.api.openstack import common

_STATES = {'active': vm_states.ACTIVE, 'error': vm_states.ERROR}


def actions(controller: common.ComputeAPIUser) -> dict:
    """body key → (name in 409 messages, schema, handler)"""

    def reset_state(req: wsgi.Request, instance: objects.Instance,
                    args: dict) -> wsgi.ResponseObject:
        req.context.can(policies.POLICY_ROOT % 'reset_state',
                        {'project_id': instance.project_id})
        controller.compute_api.reset_state(req.context, instance, _STATES[args['state']])
        return wsgi.ResponseObject(None, code=202)

    return {'os-resetState': ('resetState', schema.reset_state, reset_state)}
