"""The os-shelve server actions: shelve, shelveOffload, unshelve."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import webob.exc

from novalite import availability_zones
from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import common, wsgi
from novalite.api.openstack.compute.schemas import shelve as schema
from novalite.api.validation import validators
from novalite.compute import api_shelve
from novalite.policies import shelve as policies

if TYPE_CHECKING:
    from novalite import objects
    from novalite.context import RequestContext

_UNSHELVE_V277 = validators.SchemaValidator(schema.unshelve_v277)
_UNSHELVE_V291 = validators.SchemaValidator(schema.unshelve_v291)


def actions(controller: common.ComputeAPIUser) -> dict[str, tuple[str, dict, Any]]:
    return {
        'shelve': ('shelve', schema.shelve,
                   lambda req, instance, args: _shelve(controller, req, instance)),
        'shelveOffload': ('shelveOffload', schema.shelve_offload,
                          lambda req, instance, args: _offload(controller, req, instance)),
        'unshelve': ('unshelve', schema.unshelve,
                     lambda req, instance, args: _unshelve(controller, req, instance, args)),
    }


def _shelve(controller: common.ComputeAPIUser, req: wsgi.Request,
            instance: objects.Instance) -> wsgi.ResponseObject:
    req.context.can(policies.POLICY_ROOT % 'shelve', common.instance_target(instance))
    controller.compute_api.shelve(req.context, instance)
    return wsgi.ResponseObject(None, code=202)


def _offload(controller: common.ComputeAPIUser, req: wsgi.Request,
             instance: objects.Instance) -> wsgi.ResponseObject:
    req.context.can(policies.POLICY_ROOT % 'shelve_offload',
                    common.instance_target(instance))
    controller.compute_api.shelve_offload(req.context, instance)
    return wsgi.ResponseObject(None, code=202)


def _unshelve(controller: common.ComputeAPIUser, req: wsgi.Request, instance: objects.Instance,
              args: object) -> wsgi.ResponseObject:
    context = req.context
    context.can(policies.POLICY_ROOT % 'unshelve', common.instance_target(instance))
    kwargs: dict[str, Any] = {}
    if avr.is_supported(req, '2.77'):
        checker = _UNSHELVE_V291 if avr.is_supported(req, '2.91') else _UNSHELVE_V277
        checker.validate({'unshelve': args})
        # The schema let through an object or null.
        args = args if isinstance(args, dict) else {}
        if 'availability_zone' in args:
            zone = args['availability_zone']
            if zone is not None and \
                    zone not in availability_zones.get_availability_zones(context)[0]:
                raise webob.exc.HTTPBadRequest(
                    explanation='The requested availability zone is not available')
            kwargs['new_az'] = zone
        if args.get('host'):
            context.can(policies.POLICY_ROOT % 'unshelve_to_host',
                        common.instance_target(instance))
            if not _compute_host_exists(context, args['host']):
                raise webob.exc.HTTPBadRequest(
                    explanation='Compute host %s could not be found.' % args['host'])
            kwargs['host'] = args['host']
    try:
        controller.compute_api.unshelve(context, instance, **kwargs)
    except api_shelve.UnshelveInvalidState as exc:
        raise webob.exc.HTTPConflict(explanation=exc.format_message()) from exc
    return wsgi.ResponseObject(None, code=202)


def _compute_host_exists(context: RequestContext, host: str) -> bool:
    return any(service.host == host and service.binary == 'novalite-compute'
               for service in availability_zones.all_services(context))
