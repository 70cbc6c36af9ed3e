"""trigger_crash_dump (2.17): inject an NMI into the guest."""
from __future__ import annotations

from typing import TYPE_CHECKING

import webob.exc

from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import common, wsgi
from novalite.api.openstack.compute.schemas import trigger_crash_dump as schema
from novalite.policies import trigger_crash_dump as policies

if TYPE_CHECKING:
    from novalite import objects


def actions(controller: common.ComputeAPIUser) -> dict:
    """body key → (name in 409 messages, schema, handler)"""

    def trigger_crash_dump(req: wsgi.Request, instance: objects.Instance,
                           args: object) -> wsgi.ResponseObject:
        if not avr.is_supported(req, '2.17'):
            # An action of a later microversion does not exist before it (Nova: 404).
            raise webob.exc.HTTPNotFound()
        req.context.can(policies.POLICY_NAME, common.instance_target(instance))
        controller.compute_api.trigger_crash_dump(req.context, instance)
        return wsgi.ResponseObject(None, code=202)

    return {'trigger_crash_dump': ('trigger_crash_dump', schema.trigger_crash_dump,
                                   trigger_crash_dump)}
