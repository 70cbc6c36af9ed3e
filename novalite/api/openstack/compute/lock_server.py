"""The lock and unlock server actions (a reason from 2.73)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import common, wsgi
from novalite.api.openstack.compute.schemas import lock_server as schema
from novalite.api.validation import validators
from novalite.policies import lock_server as policies

if TYPE_CHECKING:
    from novalite import objects

_LOCK_V2_73 = validators.SchemaValidator(schema.lock_v2_73)


def actions(controller: common.ComputeAPIUser) -> dict:
    """body key → (name in 409 messages, schema, handler)"""

    def lock(req: wsgi.Request, instance: objects.Instance, args: object) -> wsgi.ResponseObject:
        reason = None
        if avr.is_supported(req, '2.73'):
            _LOCK_V2_73.validate({'lock': args})
            reason = args.get('locked_reason') if isinstance(args, dict) else None
        req.context.can(policies.POLICY_ROOT % 'lock', common.instance_target(instance))
        controller.compute_api.lock(req.context, instance, reason=reason)
        return wsgi.ResponseObject(None, code=202)

    def unlock(req: wsgi.Request, instance: objects.Instance, args: object) -> wsgi.ResponseObject:
        target = {'project_id': instance.project_id}
        req.context.can(policies.POLICY_ROOT % 'unlock', target)
        if not controller.compute_api.is_expected_locked_by(req.context, instance):
            req.context.can(policies.POLICY_ROOT % 'unlock:unlock_override', target)
        controller.compute_api.unlock(req.context, instance)
        return wsgi.ResponseObject(None, code=202)

    return {'lock': ('lock', schema.lock, lock),
            'unlock': ('unlock', schema.unlock, unlock)}
