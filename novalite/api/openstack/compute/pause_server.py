"""The pause and unpause server actions."""
from __future__ import annotations

from typing import TYPE_CHECKING

import webob.exc

from novalite.api.openstack import common, wsgi
from novalite.api.openstack.compute.schemas import pause_server as schema
from novalite.policies import pause_server as policies

if TYPE_CHECKING:
    from collections.abc import Callable

    from novalite import objects
    from novalite.context import RequestContext


def actions(controller: common.ComputeAPIUser) -> dict:
    """body key → (name in 409 messages, schema, handler)"""

    def pause(req: wsgi.Request, instance: objects.Instance, args: object) -> wsgi.ResponseObject:
        req.context.can(policies.POLICY_ROOT % 'pause', common.instance_target(instance))
        return _call(controller.compute_api.pause, req, instance)

    def unpause(req: wsgi.Request, instance: objects.Instance, args: object) -> wsgi.ResponseObject:
        req.context.can(policies.POLICY_ROOT % 'unpause', common.instance_target(instance))
        return _call(controller.compute_api.unpause, req, instance)

    return {'pause': ('pause', schema.pause, pause),
            'unpause': ('unpause', schema.unpause, unpause)}


def _call(method: Callable[[RequestContext, objects.Instance], object], req: wsgi.Request,
          instance: objects.Instance) -> wsgi.ResponseObject:
    try:
        method(req.context, instance)
    except NotImplementedError as exc:
        raise webob.exc.HTTPNotImplemented(
            explanation='The requested functionality is not supported.') from exc
    return wsgi.ResponseObject(None, code=202)
