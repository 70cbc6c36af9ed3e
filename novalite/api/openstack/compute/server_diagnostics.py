"""GET /servers/{server_id}/diagnostics: what the hypervisor says about a running guest.

From 2.48 the answer has one standard shape whatever the driver; before, it is the
driver's own dict. A guest that is not running answers 409, a driver that cannot tell
answers 501.
"""
from __future__ import annotations

import webob.exc

from novalite import exception
from novalite.api import validation
from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import common, wsgi
from novalite.api.openstack.compute.schemas import empty_query, empty_query_v2102
from novalite.policies import server_diagnostics as sd_policies

_PLAIN_FIELDS = ('state', 'driver', 'hypervisor', 'hypervisor_os', 'uptime', 'config_drive')


def instance_diagnostics(diags: dict) -> dict:
    """The 2.48 view: counts next to the details lists."""
    body = {key: diags.get(key) for key in _PLAIN_FIELDS}
    for kind in ('cpu', 'nic', 'disk'):
        details = list(diags.get('%s_details' % kind) or [])
        body['num_%ss' % kind] = len(details)
        body['%s_details' % kind] = details
    body['memory_details'] = dict(diags.get('memory_details') or
                                  {'maximum': None, 'used': None})
    return body


class ServerDiagnosticsController(common.ComputeAPIUser, wsgi.Controller):

    @validation.query_schema(empty_query, '2.1', '2.101')
    @validation.query_schema(empty_query_v2102, '2.102')
    def index(self, req: wsgi.Request, server_id: str) -> dict:
        context = req.context
        instance = common.get_instance(self.compute_api, context, server_id)
        context.can(sd_policies.BASE_POLICY_NAME, {'project_id': instance.project_id})
        try:
            if avr.is_supported(req, '2.48'):
                return instance_diagnostics(
                    self.compute_api.get_instance_diagnostics(context, instance))
            return self.compute_api.get_diagnostics(context, instance)
        except exception.InstanceInvalidState as exc:
            if 'attr' not in exc.kwargs:
                raise webob.exc.HTTPConflict(explanation=exc.format_message()) from exc
            raise webob.exc.HTTPConflict(
                explanation="Cannot 'get_diagnostics' instance %s while it is in %s %s"
                            % (server_id, exc.kwargs['attr'], exc.kwargs['state'])) from exc
        except (exception.Conflict, exception.ServiceUnavailable) as exc:
            raise webob.exc.HTTPConflict(explanation=exc.format_message()) from exc
        except NotImplementedError as exc:
            raise webob.exc.HTTPNotImplemented(
                explanation='The requested functionality is not supported.') from exc
