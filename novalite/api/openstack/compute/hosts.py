"""The os-hosts API (2.1 to 2.42; 404 from 2.43): hosts and their services, a host's
resource table, enabling a host, maintenance mode and power actions.

Deprecated in Nova in favour of os-hypervisors and os-services, still what
``openstack host list/show/set`` calls. ``service`` is the service's RPC topic
(``compute``, ``conductor``, ``scheduler``) and only enabled services are listed, as in
Nova. Updates and power actions are the host's compute driver's to answer: the fake
driver does as asked, libvirt has neither maintenance mode nor host power (501).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import webob.exc

from novalite import context as nl_context
from novalite import exception
from novalite.api import validation
from novalite.api.openstack import wsgi
from novalite.api.openstack.compute.schemas import hosts as schema
from novalite.compute import host_actions
from novalite.policies import hosts as hosts_policies
from novalite.servicegroup import api as servicegroup

# What a host call takes: a bool (enable, maintenance) or an action name (power).
_Value = TypeVar('_Value', bool, str)

_NOT_SUPPORTED = 'The requested functionality is not supported.'


def _enabled(value: str) -> bool:
    return value.strip().lower() == 'enable'


class HostController(wsgi.Controller):

    def __init__(self, host_api: host_actions.HostAPI | None = None) -> None:
        super().__init__()
        self.host_api = host_api or host_actions.HostAPI(servicegroup.API())

    @wsgi.api_version('2.1', '2.42')
    @validation.query_schema(schema.index_query)
    def index(self, req: wsgi.Request) -> dict:
        context = req.context
        context.can(hosts_policies.BASE % 'list', {})
        return {'hosts': self.host_api.list_hosts(context, req.GET.get('zone'))}

    @wsgi.api_version('2.1', '2.42')
    @validation.query_schema(schema.no_query)
    def show(self, req: wsgi.Request, id: str) -> dict:
        context = req.context
        context.can(hosts_policies.BASE % 'show', {})
        try:
            return {'host': self.host_api.host_resources(context, id)}
        except (exception.HostMappingNotFound, exception.ComputeHostNotFound) as exc:
            raise webob.exc.HTTPNotFound(explanation=exc.format_message()) from exc

    @wsgi.api_version('2.1', '2.42')
    @validation.schema(schema.update)
    def update(self, req: wsgi.Request, id: str, body: dict) -> dict:
        context = req.context
        context.can(hosts_policies.BASE % 'update', {})
        result = {'host': id}
        if 'status' in body:
            status = self._ask(self.host_api.set_host_enabled, context, id,
                               _enabled(body['status']))
            if status not in ('enabled', 'disabled'):
                raise webob.exc.HTTPBadRequest(explanation=status)
            result['status'] = status
        if 'maintenance_mode' in body:
            mode = self._ask(self.host_api.set_host_maintenance, context, id,
                             _enabled(body['maintenance_mode']))
            if mode not in ('on_maintenance', 'off_maintenance'):
                raise webob.exc.HTTPBadRequest(explanation=mode)
            result['maintenance_mode'] = mode
        return result

    @staticmethod
    def _ask(call: Callable[[nl_context.RequestContext, str, _Value], str],
             context: nl_context.RequestContext, host: str, value: _Value) -> str:
        """The compute host's answer, its failures as Nova's codes."""
        try:
            return call(context, host, value)
        except NotImplementedError as exc:
            raise webob.exc.HTTPNotImplemented(explanation=_NOT_SUPPORTED) from exc
        except (exception.HostMappingNotFound, exception.ComputeHostNotFound) as exc:
            raise webob.exc.HTTPNotFound(explanation=exc.format_message()) from exc
        except exception.ComputeServiceUnavailable as exc:
            raise webob.exc.HTTPBadRequest(explanation=exc.format_message()) from exc

    def _power(self, req: wsgi.Request, host: str, action: str, rule: str) -> dict:
        context = req.context
        context.can(hosts_policies.BASE % rule, {})
        result = self._ask(self.host_api.host_power_action, context, host, action)
        return {'host': host, 'power_action': result}

    @wsgi.api_version('2.1', '2.42')
    @validation.query_schema(schema.no_query)
    def startup(self, req: wsgi.Request, id: str) -> dict:
        return self._power(req, id, 'startup', 'start')

    @wsgi.api_version('2.1', '2.42')
    @validation.query_schema(schema.no_query)
    def shutdown(self, req: wsgi.Request, id: str) -> dict:
        return self._power(req, id, 'shutdown', 'shutdown')

    @wsgi.api_version('2.1', '2.42')
    @validation.query_schema(schema.no_query)
    def reboot(self, req: wsgi.Request, id: str) -> dict:
        return self._power(req, id, 'reboot', 'reboot')
