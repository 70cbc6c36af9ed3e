"""Floating IPs: the os-floating-ips proxy to Neutron (2.1 to 2.35, 404 from 2.36) and the
addFloatingIp and removeFloatingIp server actions (2.1 to 2.43), as Nova's.

After a server's floating IP changes, its network info cache is refreshed from Neutron
(best effort: Neutron's ``network-changed`` event makes the compute host refresh it too).
Without Neutron there is no floating IP and no pool: lists are empty, the rest is 404.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import webob.exc
from oslo_log import log as logging
from oslo_utils import netutils

from novalite import exception
from novalite.api import validation
from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import common, wsgi
from novalite.api.openstack.compute.schemas import floating_ips as schema
from novalite.network import api as network_api
from novalite.network import client as neutron_client
from novalite.network import floating_ip_api as fip_api
from novalite.network import model
from novalite.policies import floating_ips as policies

if TYPE_CHECKING:
    from novalite.context import RequestContext

LOG = logging.getLogger(__name__)

POLICY = policies.BASE_POLICY_NAME
# addFloatingIp and removeFloatingIp are gone from 2.44 (Nova: 404).
MAX_ACTION_VERSION = '2.43'


class InfoCache(Protocol):
    network_info: model.NetworkInfo

    def save(self) -> None: ...


class Server(Protocol):
    """What these APIs read of a server (an ``objects.Instance``)."""

    uuid: str
    project_id: str | None
    availability_zone: str | None
    host: str | None

    @property
    def info_cache(self) -> InfoCache | None: ...

    def obj_attr_is_set(self, attrname: str) -> bool: ...


Handler = Callable[[wsgi.Request, Server, dict[str, Any]], wsgi.ResponseObject]


def _view(fip: fip_api.FloatingIP) -> dict[str, Any]:
    network = fip['network_details']
    port = fip.get('port_details')
    return {'id': fip['id'], 'ip': fip['floating_ip_address'],
            'pool': network.get('name') or network['id'],
            'fixed_ip': fip.get('fixed_ip_address'),
            'instance_id': port['device_id'] if port else None}


def _neutron(req: wsgi.Request) -> neutron_client.Client | None:
    return neutron_client.Client(req.context) if neutron_client.configured() else None


def refresh_cache(context: RequestContext, instance: Server) -> None:
    """The server's network info cache as Neutron has it now; never fails the request."""
    if not instance.obj_attr_is_set('id'):
        return  # still a build request: no ports, no cache
    try:
        cache = instance.info_cache
        if cache is None:
            return
        cache.network_info = network_api.API().get_instance_nw_info(
            context, instance, cache.network_info)
        cache.save()
    except Exception as exc:  # the compute host's refresh on network-changed follows
        LOG.warning('Could not refresh the network info cache of %s: %s',
                    instance.uuid, exc)


class FloatingIPController(common.ComputeAPIUser, wsgi.Controller):
    """os-floating-ips: the project's floating IPs in Neutron."""

    @staticmethod
    def _get(req: wsgi.Request, fip_id: str) -> tuple[neutron_client.Client,
                                                       fip_api.FloatingIP]:
        neutron = _neutron(req)
        try:
            if neutron is None:
                raise exception.FloatingIpNotFound(id=fip_id)
            return neutron, fip_api.get(neutron, fip_id)
        except exception.NotFound as exc:
            raise webob.exc.HTTPNotFound(
                explanation='Floating IP not found for ID %s' % fip_id) from exc

    @wsgi.api_version('2.1', avr.MAX_PROXY_API_SUPPORT_VERSION)
    @validation.query_schema(schema.show_query)
    def show(self, req: wsgi.Request, id: str) -> dict:
        req.context.can(POLICY % 'show', {'project_id': req.context.project_id})
        return {'floating_ip': _view(self._get(req, id)[1])}

    @wsgi.api_version('2.1', avr.MAX_PROXY_API_SUPPORT_VERSION)
    @validation.query_schema(schema.index_query)
    def index(self, req: wsgi.Request) -> dict:
        context = req.context
        context.can(POLICY % 'list', {'project_id': context.project_id})
        neutron = _neutron(req)
        fips = fip_api.list_for_project(neutron, context.project_id) if neutron else []
        return {'floating_ips': [_view(f) for f in fips]}

    @wsgi.api_version('2.1', avr.MAX_PROXY_API_SUPPORT_VERSION)
    @validation.schema(schema.create)
    def create(self, req: wsgi.Request, body: dict | None = None) -> dict:
        context = req.context
        context.can(POLICY % 'create', {'project_id': context.project_id})
        pool = (body or {}).get('pool')
        neutron = _neutron(req)
        try:
            if neutron is None:
                raise exception.FloatingIpPoolNotFound()
            fip = fip_api.allocate(neutron, context.project_id, pool)
        except exception.NoMoreFloatingIps as exc:
            raise webob.exc.HTTPNotFound(
                explanation='No more floating IPs in pool %s.' % pool if pool
                else 'No more floating IPs available.') from exc
        except exception.FloatingIpLimitExceeded as exc:
            raise webob.exc.HTTPForbidden(
                explanation='IP allocation over quota in pool %s.' % pool if pool
                else 'IP allocation over quota.') from exc
        return {'floating_ip': _view(fip)}

    @wsgi.api_version('2.1', avr.MAX_PROXY_API_SUPPORT_VERSION)
    @wsgi.response(202)
    @validation.no_body
    def delete(self, req: wsgi.Request, id: str) -> None:
        context = req.context
        context.can(POLICY % 'delete', {'project_id': context.project_id})
        neutron, fip = self._get(req, id)
        server_id = (fip.get('port_details') or {}).get('device_id')
        fip_api.release(neutron, fip)
        if server_id:
            try:
                refresh_cache(context, self.compute_api.get(context, server_id))
            except exception.InstanceNotFound:
                pass  # a port that is no server's


# -- server actions ---------------------------------------------------------------------------

def _fixed_address(instance: Server, address: str, wanted: str | None) -> str:
    """The fixed IP of the server to put ``address`` on: ``wanted``, or its first IPv4."""
    # A server still being scheduled (no cell row yet) has no ports.
    cache = instance.info_cache if instance.obj_attr_is_set('id') else None
    network_info = cache.network_info if cache is not None else []
    if not network_info:
        raise webob.exc.HTTPBadRequest(explanation='Instance network is not ready yet')
    fixed = [ip['address'] for vif in network_info for ip in model.fixed_ips(vif)]
    if not fixed:
        raise webob.exc.HTTPBadRequest(explanation='No fixed IPs associated to instance')
    if wanted:
        if wanted not in fixed:
            raise webob.exc.HTTPBadRequest(
                explanation='Specified fixed address not assigned to instance')
        return wanted
    found = next((a for a in fixed if netutils.is_valid_ipv4(a)), None)
    if found is None:
        raise webob.exc.HTTPBadRequest(explanation=(
            'Unable to associate floating IP %s to any fixed IPs for instance %s. Instance '
            'has no fixed IPv4 addresses to associate.' % (address, instance.uuid)))
    return found


def _add(req: wsgi.Request, instance: Server, args: dict[str, Any]) -> wsgi.ResponseObject:
    context = req.context
    context.can(POLICY % 'add', {'project_id': instance.project_id})
    address = args['address']
    fixed = _fixed_address(instance, address, args.get('fixed_address'))
    neutron = _neutron(req)
    if neutron is None:
        raise webob.exc.HTTPNotFound(explanation='floating IP not found')
    try:
        fip_api.associate(neutron, instance.uuid, address, fixed)
    except exception.FloatingIpAssociateFailed as exc:
        raise webob.exc.HTTPBadRequest(explanation=exc.format_message()) from exc
    except exception.FloatingIpNotFoundForAddress as exc:
        raise webob.exc.HTTPNotFound(explanation='floating IP not found') from exc
    except (exception.FixedIpNotFoundForAddress, exception.FloatingIpMultipleFoundForAddress,
            neutron_client.NeutronError) as exc:
        raise webob.exc.HTTPBadRequest(explanation=(
            'Unable to associate floating IP %s to fixed IP %s for instance %s. Error: %s'
            % (address, fixed, instance.uuid, exc.format_message()))) from exc
    refresh_cache(context, instance)
    return wsgi.ResponseObject(None, code=202)


def _remove(req: wsgi.Request, instance: Server,
            args: dict[str, Any]) -> wsgi.ResponseObject:
    context = req.context
    # The policy first, as Nova: a reader is refused whatever the address, not told
    # whether it exists.
    context.can(POLICY % 'remove', {'project_id': instance.project_id})
    address = args['address']
    neutron = _neutron(req)
    try:
        if neutron is None:
            raise exception.FloatingIpNotFoundForAddress(address=address)
        server_id = fip_api.server_of(neutron, address)
    except exception.FloatingIpNotFoundForAddress as exc:
        raise webob.exc.HTTPNotFound(explanation=exc.format_message()) from exc
    if neutron is None or server_id != instance.uuid:
        raise webob.exc.HTTPConflict(
            explanation='Floating IP %s is not associated with instance %s.'
            % (address, instance.uuid))
    fip_api.disassociate(neutron, address)
    refresh_cache(context, instance)
    return wsgi.ResponseObject(None, code=202)


def actions(controller: common.ComputeAPIUser) -> dict:
    """body key → (name in 409 messages, schema, handler)"""

    def versioned(handler: Handler) -> Handler:
        def run(req: wsgi.Request, instance: Server,
                args: dict[str, Any]) -> wsgi.ResponseObject:
            if not avr.is_supported(req, '2.1', MAX_ACTION_VERSION):
                raise webob.exc.HTTPNotFound()
            return handler(req, instance, args)
        return run

    return {'addFloatingIp': ('addFloatingIp', schema.add_floating_ip, versioned(_add)),
            'removeFloatingIp': ('removeFloatingIp', schema.remove_floating_ip,
                                 versioned(_remove))}
