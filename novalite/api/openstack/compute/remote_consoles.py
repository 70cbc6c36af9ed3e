"""A server's remote console URL: POST /servers/{server_id}/remote-consoles (2.6+) and
the server actions it replaced (os-getVNCConsole, os-getSerialConsole,
os-getSPICEConsole, os-getRDPConsole; until 2.5, 404 from 2.6, as in Nova).

novalite serves VNC (noVNC) and serial consoles. SPICE and MKS answer Nova's 400
"Unavailable console type" (Nova's answer with ``[spice]``/``[mks] enabled`` off, their
defaults); RDP, gone with Nova's Hyper-V driver, answers 400 too.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import webob.exc

from novalite import exception
from novalite.api import validation
from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import common, wsgi
from novalite.api.openstack.compute.schemas import remote_consoles as schema
from novalite.compute import api_consoles
from novalite.policies import remote_consoles as rc_policies

if TYPE_CHECKING:
    from novalite import objects
    from novalite.compute.api import API as ComputeAPI
    from novalite.context import RequestContext

# The compute API's call for a protocol: (api, context, instance, console type) -> {'url'}
Handler = Callable[['ComputeAPI', 'RequestContext', 'objects.Instance', str], dict]

HANDLERS: dict[str, Handler] = {
    'vnc': lambda api, *args: api.get_vnc_console(*args),
    'serial': lambda api, *args: api.get_serial_console(*args),
    'spice': api_consoles.get_unavailable_console,
    'mks': api_consoles.get_unavailable_console,
}


def get_console_url(api: ComputeAPI, req: wsgi.Request, instance: objects.Instance,
                    protocol: str, console_type: str) -> str:
    """The console's URL, the compute API's refusals as Nova's HTTP errors.

    InstanceInvalidState is left to the caller, which words its 409.
    """
    req.context.can(rc_policies.BASE_POLICY_NAME, {'project_id': instance.project_id})
    try:
        return HANDLERS[protocol](api, req.context, instance, console_type)['url']
    except exception.InstanceNotFound as exc:
        raise webob.exc.HTTPNotFound(explanation=exc.format_message()) from exc
    except (exception.ConsoleTypeInvalid, exception.ConsoleTypeUnavailable,
            exception.ConsolePortRangeExhausted) as exc:
        raise webob.exc.HTTPBadRequest(explanation=exc.format_message()) from exc
    except (exception.Conflict, exception.ConsoleNotAvailable,
            exception.ServiceUnavailable) as exc:
        # Conflict: the server is not ready (Nova's InstanceNotReady).
        raise webob.exc.HTTPConflict(explanation=exc.format_message()) from exc
    except NotImplementedError as exc:
        raise webob.exc.HTTPNotImplemented(
            explanation='The requested functionality is not supported.') from exc


class RemoteConsolesController(common.ComputeAPIUser, wsgi.Controller):

    @wsgi.api_version('2.6')
    @validation.schema(schema.create_v26, '2.6', '2.7')
    @validation.schema(schema.create_v28, '2.8', '2.98')
    @validation.schema(schema.create_v299, '2.99')
    def create(self, req: wsgi.Request, server_id: str, body: dict) -> dict:
        instance = common.get_instance(self.compute_api, req.context, server_id)
        protocol = body['remote_console']['protocol']
        console_type = body['remote_console']['type']
        if protocol == 'rdp':
            req.context.can(rc_policies.BASE_POLICY_NAME, {'project_id': instance.project_id})
            raise webob.exc.HTTPBadRequest(
                explanation='Unavailable console type %s.' % protocol)
        try:
            url = get_console_url(self.compute_api, req, instance, protocol, console_type)
        except exception.InstanceInvalidState as exc:
            # Worded as the legacy actions' 409 (server_actions).
            raise webob.exc.HTTPConflict(
                explanation="Cannot 'get_%s_console' instance %s while it is in %s %s"
                % (protocol, server_id, exc.kwargs.get('attr'), exc.kwargs.get('state'))
            ) from exc
        return {'remote_console': {'protocol': protocol, 'type': console_type, 'url': url}}


def _until_2_5(req: wsgi.Request) -> None:
    if avr.is_supported(req, '2.6'):
        raise webob.exc.HTTPNotFound(
            explanation='The resource could not be found for API version %s.'
            % req.api_version_request.get_string())


def actions(controller: common.ComputeAPIUser) -> dict:
    """The legacy actions, for ``server_actions``: body key → (name in 409 messages,
    schema, handler)."""

    def legacy(protocol: str) -> Callable[[wsgi.Request, objects.Instance, dict], dict]:
        def handler(req: wsgi.Request, instance: objects.Instance, args: dict) -> dict:
            _until_2_5(req)
            console_type = args['type']
            url = get_console_url(controller.compute_api, req, instance, protocol,
                                  console_type)
            return {'console': {'type': console_type, 'url': url}}
        return handler

    def get_rdp_console(req: wsgi.Request, instance: objects.Instance,
                        args: object) -> dict:
        _until_2_5(req)
        raise webob.exc.HTTPBadRequest(
            explanation='RDP consoles are only available when using the Hyper-V driver, '
                        'which was removed from Nova in the 29.0.0 (Caracal) release.')

    return {
        'os-getVNCConsole': ('get_vnc_console', schema.get_vnc_console, legacy('vnc')),
        'os-getSerialConsole': ('get_serial_console', schema.get_serial_console,
                                legacy('serial')),
        'os-getSPICEConsole': ('get_spice_console', schema.get_spice_console,
                               legacy('spice')),
        'os-getRDPConsole': ('get_rdp_console', schema.get_rdp_console, get_rdp_console),
    }
