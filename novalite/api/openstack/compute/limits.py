"""The limits API: the caller's absolute limits and usage (rate limits are gone: [])."""
from __future__ import annotations

from novalite import quota
from novalite.api import validation
from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import wsgi
from novalite.api.openstack.compute.schemas import limits as schema
from novalite.policies import limits as limits_policies

# Quota resource → the absolute limits it is shown as.
LIMIT_NAMES = {
    'ram': ['maxTotalRAMSize'],
    'instances': ['maxTotalInstances'],
    'cores': ['maxTotalCores'],
    'key_pairs': ['maxTotalKeypairs'],
    'floating_ips': ['maxTotalFloatingIps'],
    'metadata_items': ['maxServerMeta', 'maxImageMeta'],
    'injected_files': ['maxPersonality'],
    'injected_file_content_bytes': ['maxPersonalitySize'],
    'security_groups': ['maxSecurityGroups'],
    'security_group_rules': ['maxSecurityGroupRules'],
    'server_groups': ['maxServerGroups'],
    'server_group_members': ['maxServerGroupMembers'],
}

# Quota resource → the usage it is shown as.
USED_NAMES = {
    'ram': 'totalRAMUsed',
    'cores': 'totalCoresUsed',
    'instances': 'totalInstancesUsed',
    'floating_ips': 'totalFloatingIpsUsed',
    'security_groups': 'totalSecurityGroupsUsed',
    'server_groups': 'totalServerGroupsUsed',
}

_NETWORK_NAMES = {'maxSecurityGroups', 'maxSecurityGroupRules', 'maxTotalFloatingIps',
                  'totalFloatingIpsUsed', 'totalSecurityGroupsUsed'}


def _hidden(req: wsgi.Request) -> set[str]:
    hidden: set[str] = set()
    if avr.is_supported(req, '2.36'):
        hidden |= _NETWORK_NAMES
    if avr.is_supported(req, '2.39'):
        hidden.add('maxImageMeta')
    if avr.is_supported(req, '2.57'):
        hidden |= {'maxPersonality', 'maxPersonalitySize'}
    return hidden


class LimitsController(wsgi.Controller):

    @validation.query_schema(schema.index_query, '2.1', '2.74')
    @validation.query_schema(schema.index_query_v275, '2.75')
    def index(self, req: wsgi.Request) -> dict:
        context = req.context
        project_id = context.project_id
        if 'tenant_id' in req.GET:
            project_id = req.GET['tenant_id']
            context.can(limits_policies.OTHER_PROJECT, {'project_id': project_id})
        context.can(limits_policies.BASE, {'project_id': project_id})
        limits = quota.get_project_limits(project_id)
        usage = quota.in_use(context, project_id)
        absolute = {}
        for resource, names in LIMIT_NAMES.items():
            for name in names:
                absolute[name] = limits[resource]
        for resource, name in USED_NAMES.items():
            absolute[name] = usage.get(resource, 0)
        hidden = _hidden(req)
        return {'limits': {'rate': [],
                           'absolute': {k: v for k, v in absolute.items()
                                        if k not in hidden}}}
