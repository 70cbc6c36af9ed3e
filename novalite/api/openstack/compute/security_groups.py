"""Security groups: the os-security-groups and os-security-group-rules proxies to Neutron
(2.1 to 2.35, 404 from 2.36 as in Nova), a server's groups
(GET /servers/{server_id}/os-security-groups) and the addSecurityGroup and
removeSecurityGroup server actions.

Without Neutron there is no group: lists are empty, everything else is 404.
"""
from __future__ import annotations

from typing import Any, Protocol

import webob.exc
from oslo_log import log as logging

from novalite import context as nl_context
from novalite import exception
from novalite.api import validation
from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import common, wsgi
from novalite.api.openstack.compute.schemas import security_groups as schema
from novalite.api.openstack.compute.views import security_groups as views
from novalite.conf import CONF
from novalite.network import client as neutron_client
from novalite.network import security_group_api as sg_api
from novalite.network import server_security_groups
from novalite.objects.instance_info_cache import InstanceInfoCache
from novalite.policies import security_groups as policies

LOG = logging.getLogger(__name__)


class Server(Protocol):
    """What these APIs read of a server (an ``objects.Instance``)."""

    uuid: str
    project_id: str | None
    info_cache: InstanceInfoCache

POLICY = policies.POLICY_NAME
NO_NETWORK_SERVICE = 'No network service (Neutron) is configured.'


def _own(context: nl_context.RequestContext) -> dict[str, str | None]:
    return {'project_id': context.project_id}


def _neutron(req: wsgi.Request) -> neutron_client.Client | None:
    return neutron_client.Client(req.context) if neutron_client.configured() else None


def _limited(items: list[sg_api.NovaGroup], req: wsgi.Request) -> list[sg_api.NovaGroup]:
    """``offset`` and ``limit`` (at most ``[api] max_limit``) applied, as Nova's
    ``common.limited``."""
    offset = int(req.GET.get('offset') or 0)
    limit = min(CONF.api.max_limit, int(req.GET.get('limit') or 0) or CONF.api.max_limit)
    return items[offset:offset + limit]


def _group_body(neutron: neutron_client.Client, group: sg_api.NovaGroup) -> dict:
    return {'security_group': views.group(group, sg_api.names_of(neutron, [group]))}


class SecurityGroupController(wsgi.Controller):
    """os-security-groups: the caller's groups in Neutron, in Nova's shape."""

    @staticmethod
    def _get(req: wsgi.Request, group_id: str
             ) -> tuple[neutron_client.Client, sg_api.NovaGroup]:
        group_id = sg_api.validate_id(group_id)
        neutron = _neutron(req)
        if neutron is None:
            raise exception.SecurityGroupNotFound(security_group_id=group_id)
        return neutron, sg_api.get(neutron, group_id)

    @wsgi.api_version('2.1', avr.MAX_PROXY_API_SUPPORT_VERSION)
    @validation.query_schema(schema.index_query)
    def index(self, req: wsgi.Request) -> dict:
        context = req.context
        context.can(POLICY % 'get', _own(context))
        neutron = _neutron(req)
        if neutron is None:
            return {'security_groups': []}
        everyone = bool(context.is_admin) and 'all_tenants' in req.GET
        found = _limited(sg_api.list_groups(neutron, context.project_id, everyone), req)
        return {'security_groups': views.groups(found, sg_api.names_of(neutron, found))}

    @wsgi.api_version('2.1', avr.MAX_PROXY_API_SUPPORT_VERSION)
    @validation.query_schema(schema.show_query)
    def show(self, req: wsgi.Request, id: str) -> dict:
        req.context.can(POLICY % 'show', _own(req.context))
        return _group_body(*self._get(req, id))

    @wsgi.api_version('2.1', avr.MAX_PROXY_API_SUPPORT_VERSION)
    @validation.schema(schema.create)
    def create(self, req: wsgi.Request, body: dict) -> dict:
        context = req.context
        context.can(POLICY % 'create', _own(context))
        neutron = _neutron(req)
        if neutron is None:
            raise webob.exc.HTTPNotFound(explanation=NO_NETWORK_SERVICE)
        values = body['security_group']
        created = sg_api.create(neutron, context.project_id, values['name'],
                                values['description'])
        return _group_body(neutron, created)

    @wsgi.api_version('2.1', avr.MAX_PROXY_API_SUPPORT_VERSION)
    @validation.schema(schema.update)
    def update(self, req: wsgi.Request, id: str, body: dict) -> dict:
        req.context.can(POLICY % 'update', _own(req.context))
        neutron, group = self._get(req, id)
        values = body['security_group']
        updated = sg_api.update(neutron, group['id'], values['name'], values['description'])
        return _group_body(neutron, updated)

    @wsgi.api_version('2.1', avr.MAX_PROXY_API_SUPPORT_VERSION)
    @wsgi.response(202)
    @validation.no_body
    def delete(self, req: wsgi.Request, id: str) -> None:
        req.context.can(POLICY % 'delete', _own(req.context))
        neutron, group = self._get(req, id)
        sg_api.destroy(neutron, group['id'])


class SecurityGroupRulesController(wsgi.Controller):
    """os-security-group-rules: ingress rules from a CIDR or from a group."""

    @wsgi.api_version('2.1', avr.MAX_PROXY_API_SUPPORT_VERSION)
    @validation.schema(schema.create_rules)
    def create(self, req: wsgi.Request, body: dict) -> dict:
        context = req.context
        context.can(POLICY % 'rule:create', _own(context))
        args = body['security_group_rule']
        parent_id = sg_api.validate_id(args['parent_group_id'])
        neutron = _neutron(req)
        if neutron is None:
            raise exception.SecurityGroupNotFound(security_group_id=parent_id)
        parent = sg_api.get(neutron, parent_id)
        sources: views.Sources = {}
        group_id = args.get('group_id')
        if group_id is not None:
            source = sg_api.get(neutron, sg_api.validate_id(group_id))
            sources[source['id']] = {'name': source['name'], 'tenant_id': source['project_id']}
            new_rule = sg_api.new_ingress_rule(args.get('ip_protocol'), args.get('from_port'),
                                               args.get('to_port'), group_id=group_id)
        else:
            new_rule = sg_api.new_ingress_rule(
                args.get('ip_protocol'), args.get('from_port'), args.get('to_port'),
                cidr=sg_api.parse_cidr(args.get('cidr')))
        if new_rule is None:
            raise webob.exc.HTTPBadRequest(
                explanation='Not enough parameters to build a valid rule.')
        new_rule['parent_group_id'] = parent['id']
        _check_prefix(new_rule.get('cidr'))
        created = sg_api.create_rule(neutron, context.project_id, parent, new_rule)
        return {'security_group_rule': views.rule(created, sources)}

    @wsgi.api_version('2.1', avr.MAX_PROXY_API_SUPPORT_VERSION)
    @wsgi.response(202)
    @validation.no_body
    def delete(self, req: wsgi.Request, id: str) -> None:
        req.context.can(POLICY % 'rule:delete', _own(req.context))
        rule_id = sg_api.validate_id(id)
        neutron = _neutron(req)
        if neutron is None:
            raise exception.SecurityGroupNotFoundForRule(rule_id=rule_id)
        rule = sg_api.get_rule(neutron, rule_id)
        sg_api.get(neutron, rule['parent_group_id'])
        sg_api.delete_rule(neutron, rule['id'])


def _check_prefix(cidr: str | None) -> None:
    """A /0 is only "any address" (Nova refuses 10.0.0.0/0)."""
    if not cidr:
        return
    net, _slash, prefix = cidr.partition('/')
    if net not in ('0.0.0.0', '::') and prefix == '0':
        raise webob.exc.HTTPBadRequest(explanation='Bad prefix for network in cidr %s'
                                       % cidr)


class ServerSecurityGroupController(common.ComputeAPIUser, wsgi.Controller):
    """GET /servers/{server_id}/os-security-groups: the groups of the server's ports."""

    @validation.query_schema(schema.server_sg_index_query, '2.1', '2.101')
    @validation.query_schema(schema.server_sg_index_query_v2102, '2.102')
    def index(self, req: wsgi.Request, server_id: str) -> dict:
        context = req.context
        instance: Server = common.get_instance(self.compute_api, context, server_id)
        context.can(POLICY % 'list', {'project_id': instance.project_id})
        neutron = _neutron(req)
        if neutron is None:
            return {'security_groups': []}
        found = server_security_groups.groups_of(neutron, instance.uuid)
        return {'security_groups': views.groups(found, sg_api.names_of(neutron, found))}


# -- server actions ---------------------------------------------------------------------------

def _group_name(args: dict[str, Any]) -> str:
    name = args.get('name')
    if name is None:
        raise webob.exc.HTTPBadRequest(explanation='Security group not specified')
    if not name.strip():
        raise webob.exc.HTTPBadRequest(explanation='Security group name cannot be empty')
    return name


def _cache_groups(neutron: neutron_client.Client, instance: Server) -> None:
    """Write the ports' groups, as they are now, into the server's network info cache
    (the server views read them there)."""
    try:
        groups = server_security_groups.port_groups(neutron, instance.uuid)
        cache = instance.info_cache
        cache.network_info = [{**vif, 'security_groups': groups.get(vif['id'], [])}
                              for vif in cache.network_info]
        cache.save()
    except Exception as exc:
        # The change itself is done: a stale cache heals on the next refresh.
        LOG.warning('Could not cache the security groups of %s: %s', instance.uuid, exc)


def actions(controller: common.ComputeAPIUser) -> dict:
    """body key → (name in 409 messages, schema, handler)"""

    def change(req: wsgi.Request, instance: Server, args: dict[str, Any],
               verb: str) -> wsgi.ResponseObject:
        context = req.context
        context.can(POLICY % verb, {'project_id': instance.project_id})
        name = _group_name(args)
        neutron = _neutron(req)
        if neutron is None:
            raise server_security_groups.not_found(name, context.project_id)
        if verb == 'add':
            server_security_groups.add_to_server(neutron, context.project_id,
                                                 instance.uuid, name)
        else:
            server_security_groups.remove_from_server(neutron, context.project_id,
                                                      instance.uuid, name)
        _cache_groups(neutron, instance)
        return wsgi.ResponseObject(None, code=202)

    def add(req: wsgi.Request, instance: Server,
            args: dict[str, Any]) -> wsgi.ResponseObject:
        return change(req, instance, args, 'add')

    def remove(req: wsgi.Request, instance: Server,
               args: dict[str, Any]) -> wsgi.ResponseObject:
        return change(req, instance, args, 'remove')

    return {'addSecurityGroup': ('addSecurityGroup', schema.add_security_group, add),
            'removeSecurityGroup': ('removeSecurityGroup', schema.remove_security_group,
                                    remove)}
