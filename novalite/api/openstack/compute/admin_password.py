"""changePassword: set the administrator password inside the guest."""
from __future__ import annotations

from typing import TYPE_CHECKING

import webob.exc

from novalite import exception
from novalite.api.openstack import common, wsgi
from novalite.api.openstack.compute.schemas import admin_password as schema
from novalite.policies import admin_password as policies

if TYPE_CHECKING:
    from novalite import objects


def actions(controller: common.ComputeAPIUser) -> dict:
    """body key → (name in 409 messages, schema, handler)"""

    def change_password(req: wsgi.Request, instance: objects.Instance,
                        args: dict) -> wsgi.ResponseObject:
        req.context.can(policies.BASE_POLICY_NAME, common.instance_target(instance))
        try:
            controller.compute_api.set_admin_password(req.context, instance,
                                                      args['adminPass'])
        except (exception.InstancePasswordSetFailed, exception.SetAdminPasswdNotSupported,
                exception.InstanceAgentNotEnabled) as exc:
            raise webob.exc.HTTPConflict(explanation=exc.format_message()) from exc
        except NotImplementedError as exc:
            raise webob.exc.HTTPNotImplemented(
                explanation='Unable to set password on instance') from exc
        return wsgi.ResponseObject(None, code=202)

    return {'changePassword': ('changePassword', schema.change_password, change_password)}
