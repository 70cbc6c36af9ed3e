"""os-interface: a server's ports, as Neutron has them, attached and detached.

GET lists Neutron's ports whose device is the server (as the caller may see them),
with the device tag the host cached (2.70). POST attaches the user's port, or a new
port on a network (a call to the server's host: the answer is the attached port);
DELETE detaches one (a cast: 202).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import webob.exc

from novalite import exception
from novalite.api import validation
from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import common, wsgi
from novalite.api.openstack.compute.schemas import empty_query, empty_query_v2102
from novalite.api.openstack.compute.schemas import interfaces as schema
from novalite.api.openstack.compute.server_actions import _conflict
from novalite.compute import api_interfaces
from novalite.policies import attach_interfaces as policies

if TYPE_CHECKING:
    from novalite import objects
    from novalite.compute.api import API as ComputeAPI


def _view(port: dict[str, Any], tags: dict[str, str | None] | None) -> dict[str, Any]:
    """One ``interfaceAttachment``; ``tag`` only when ``tags`` are given (2.70)."""
    info: dict[str, Any] = {
        'net_id': port['network_id'], 'port_id': port['id'],
        'mac_addr': port['mac_address'], 'port_state': port.get('status'),
        'fixed_ips': [{'subnet_id': f['subnet_id'], 'ip_address': f['ip_address']}
                      for f in port.get('fixed_ips') or []]}
    if tags is not None:
        info['tag'] = tags.get(port['id'])
    return info


class InterfaceAttachmentController(common.ComputeAPIUser, wsgi.Controller):
    """:param interfaces_api: the os-interface compute API (tests pass a double)."""

    def __init__(self, compute_api: ComputeAPI | None = None,
                 interfaces_api: api_interfaces.InterfacesAPI | None = None) -> None:
        super().__init__(compute_api)
        self._interfaces_api = interfaces_api

    @property
    def interfaces_api(self) -> api_interfaces.InterfacesAPI:
        if self._interfaces_api is None:
            self._interfaces_api = api_interfaces.InterfacesAPI(self.compute_api)
        return self._interfaces_api

    def _tags(self, req: wsgi.Request, instance: objects.Instance) -> dict[str, str | None] | None:
        return self.interfaces_api.tags(instance) if avr.is_supported(req, '2.70') \
            else None

    @validation.query_schema(empty_query, '2.1', '2.101')
    @validation.query_schema(empty_query_v2102, '2.102')
    def index(self, req: wsgi.Request, server_id: str) -> dict:
        context = req.context
        instance = common.get_instance(self.compute_api, context, server_id)
        context.can(policies.POLICY_ROOT % 'list', {'project_id': instance.project_id})
        ports = self.interfaces_api.list_ports(context, instance)
        tags = self._tags(req, instance)
        return {'interfaceAttachments': [_view(port, tags) for port in ports]}

    @validation.query_schema(empty_query, '2.1', '2.101')
    @validation.query_schema(empty_query_v2102, '2.102')
    def show(self, req: wsgi.Request, server_id: str, id: str) -> dict:
        context = req.context
        instance = common.get_instance(self.compute_api, context, server_id)
        context.can(policies.POLICY_ROOT % 'show', {'project_id': instance.project_id})
        port = self.interfaces_api.show_port(context, instance, id)
        return {'interfaceAttachment': _view(port, self._tags(req, instance))}

    @validation.schema(schema.create, '2.1', '2.48')
    @validation.schema(schema.create_v249, '2.49')
    def create(self, req: wsgi.Request, server_id: str, body: dict) -> dict:
        context = req.context
        instance = common.get_instance(self.compute_api, context, server_id)
        context.can(policies.POLICY_ROOT % 'create', {'project_id': instance.project_id})
        attachment = body.get('interfaceAttachment') or {}
        network_id = attachment.get('net_id')
        port_id = attachment.get('port_id')
        requested_ip = (attachment.get('fixed_ips') or [{}])[0].get('ip_address')
        if network_id and port_id:
            raise webob.exc.HTTPBadRequest(
                explanation='Must not input both network_id and port_id')
        if requested_ip and not network_id:
            raise webob.exc.HTTPBadRequest(
                explanation='Must input network_id when request IP address')
        try:
            vif = self.interfaces_api.attach_interface(
                context, instance, network_id, port_id, requested_ip, attachment.get('tag'))
        except exception.NetworkAmbiguous as exc:
            # 409 for a create, 400 here: Nova's codes.
            raise webob.exc.HTTPBadRequest(explanation=exc.format_message()) from exc
        except exception.InstanceInvalidState as exc:
            raise _conflict(exc, 'attach_interface', server_id) from exc
        except exception.ServiceUnavailable as exc:
            raise webob.exc.HTTPConflict(explanation=exc.format_message()) from exc
        return self.show(req, server_id, vif['id'])

    @wsgi.response(202)
    @validation.no_body
    def delete(self, req: wsgi.Request, server_id: str, id: str) -> None:
        context = req.context
        instance = common.get_instance(self.compute_api, context, server_id)
        context.can(policies.POLICY_ROOT % 'delete', {'project_id': instance.project_id})
        try:
            self.interfaces_api.detach_interface(context, instance, id)
        except exception.InstanceInvalidState as exc:
            raise _conflict(exc, 'detach_interface', server_id) from exc
        except exception.ServiceUnavailable as exc:
            raise webob.exc.HTTPConflict(explanation=exc.format_message()) from exc
