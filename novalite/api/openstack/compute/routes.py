"""The route table of the Compute API v2.1: every path, method and controller action.

Each path is served with and without a leading ``/{project_id}``, as Nova's mapper does:
a project id in the URL is hex digits and dashes (so ``/servers/detail`` can never be
read as project ``servers``). Matching is exact, as in Nova: a trailing slash is
another path, and a path served only for other methods is not found (404).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable

import routes

from novalite import objects
from novalite.api.openstack import faults, versions, wsgi
from novalite.api.openstack.compute import (
    aggregates,
    availability_zone,
    console_auth_tokens,
    extension_info,
    flavor_access,
    flavors,
    flavors_extraspecs,
    floating_ip_pools,
    floating_ips,
    hosts,
    hypervisors,
    image_metadata,
    images,
    instance_actions,
    instance_usage_audit_log,
    interfaces,
    ips,
    keypairs,
    limits,
    migrations,
    networks,
    quota_classes,
    quota_sets,
    remote_consoles,
    removed,
    security_groups,
    server_actions,
    server_diagnostics,
    server_external_events,
    server_groups,
    server_metadata,
    server_migrations,
    server_password,
    server_shares,
    server_tags,
    server_topology,
    servers,
    services,
    simple_tenant_usage,
    volume_attachments,
    volumes,
    volumes_boot,
)

# A project id in a URL, as Nova's mapper takes it: Keystone's ids are hex (with dashes
# in some deployments); a name such as "demo" is not a project id here.
PROJECT_ID_TOKEN = '/{project_id:[0-9a-f-]+}'

# (path, {HTTP method: (controller name, action)}), in the order they are matched.
ROUTE_LIST: tuple[tuple[str, dict[str, tuple[str, str]]], ...] = (
    # The v2.1 document again, inside the API: at /{project_id}/ (the plain / is the
    # unauthenticated document of the URL map) and by id.
    ('/', {'GET': ('versions', 'show')}),
    ('/versions/{id}', {'GET': ('versions', 'show')}),
    ('/extensions', {'GET': ('extensions', 'index')}),
    ('/extensions/{id}', {'GET': ('extensions', 'show')}),
    ('/flavors', {'GET': ('flavors', 'index'), 'POST': ('flavors', 'create')}),
    ('/flavors/detail', {'GET': ('flavors', 'detail')}),
    ('/flavors/{id}', {'GET': ('flavors', 'show'), 'PUT': ('flavors', 'update'),
                       'DELETE': ('flavors', 'delete')}),
    ('/flavors/{id}/action', {'POST': ('flavor_access', 'action')}),
    ('/flavors/{flavor_id}/os-flavor-access', {'GET': ('flavor_access', 'index')}),
    ('/flavors/{flavor_id}/os-extra_specs', {'GET': ('extra_specs', 'index'),
                                             'POST': ('extra_specs', 'create')}),
    ('/flavors/{flavor_id}/os-extra_specs/{id}', {'GET': ('extra_specs', 'show'),
                                                  'PUT': ('extra_specs', 'update'),
                                                  'DELETE': ('extra_specs', 'delete')}),
    # The images proxy to Glance (to 2.35; its metadata to 2.38).
    ('/images', {'GET': ('images', 'index')}),
    ('/images/detail', {'GET': ('images', 'detail')}),
    ('/images/{id}', {'GET': ('images', 'show'), 'DELETE': ('images', 'delete')}),
    ('/images/{image_id}/metadata', {'GET': ('image_metadata', 'index'),
                                     'POST': ('image_metadata', 'create'),
                                     'PUT': ('image_metadata', 'update_all')}),
    ('/images/{image_id}/metadata/{id}', {'GET': ('image_metadata', 'show'),
                                          'PUT': ('image_metadata', 'update'),
                                          'DELETE': ('image_metadata', 'delete')}),
    ('/limits', {'GET': ('limits', 'index')}),
    ('/os-aggregates', {'GET': ('aggregates', 'index'), 'POST': ('aggregates', 'create')}),
    ('/os-aggregates/{id}', {'GET': ('aggregates', 'show'), 'PUT': ('aggregates', 'update'),
                             'DELETE': ('aggregates', 'delete')}),
    ('/os-aggregates/{id}/action', {'POST': ('aggregates', 'action')}),
    ('/os-aggregates/{id}/images', {'POST': ('aggregates', 'images')}),
    ('/os-availability-zone', {'GET': ('availability_zone', 'index')}),
    ('/os-availability-zone/detail', {'GET': ('availability_zone', 'detail')}),
    ('/os-console-auth-tokens/{id}', {'GET': ('console_auth_tokens', 'show')}),
    ('/os-floating-ip-pools', {'GET': ('floating_ip_pools', 'index')}),
    ('/os-floating-ips', {'GET': ('floating_ips', 'index'),
                          'POST': ('floating_ips', 'create')}),
    ('/os-floating-ips/{id}', {'GET': ('floating_ips', 'show'),
                               'DELETE': ('floating_ips', 'delete')}),
    ('/os-hosts', {'GET': ('hosts', 'index')}),
    ('/os-hosts/{id}', {'GET': ('hosts', 'show'), 'PUT': ('hosts', 'update')}),
    ('/os-hosts/{id}/reboot', {'GET': ('hosts', 'reboot')}),
    ('/os-hosts/{id}/shutdown', {'GET': ('hosts', 'shutdown')}),
    ('/os-hosts/{id}/startup', {'GET': ('hosts', 'startup')}),
    ('/os-hypervisors', {'GET': ('hypervisors', 'index')}),
    ('/os-hypervisors/detail', {'GET': ('hypervisors', 'detail')}),
    ('/os-hypervisors/statistics', {'GET': ('hypervisors', 'statistics')}),
    ('/os-hypervisors/{id}', {'GET': ('hypervisors', 'show')}),
    ('/os-hypervisors/{id}/search', {'GET': ('hypervisors', 'search')}),
    ('/os-hypervisors/{id}/servers', {'GET': ('hypervisors', 'servers')}),
    ('/os-hypervisors/{id}/uptime', {'GET': ('hypervisors', 'uptime')}),
    ('/os-instance_usage_audit_log', {'GET': ('instance_usage_audit_log', 'index')}),
    ('/os-instance_usage_audit_log/{id}', {'GET': ('instance_usage_audit_log', 'show')}),
    ('/os-keypairs', {'GET': ('keypairs', 'index'), 'POST': ('keypairs', 'create')}),
    ('/os-keypairs/{id}', {'GET': ('keypairs', 'show'), 'DELETE': ('keypairs', 'delete')}),
    ('/os-migrations', {'GET': ('migrations', 'index')}),
    ('/os-quota-class-sets/{id}', {'GET': ('quota_classes', 'show'),
                                   'PUT': ('quota_classes', 'update')}),
    ('/os-quota-sets/{id}', {'GET': ('quota_sets', 'show'), 'PUT': ('quota_sets', 'update'),
                             'DELETE': ('quota_sets', 'delete')}),
    ('/os-quota-sets/{id}/detail', {'GET': ('quota_sets', 'detail')}),
    ('/os-quota-sets/{id}/defaults', {'GET': ('quota_sets', 'defaults')}),
    ('/os-security-group-rules', {'POST': ('security_group_rules', 'create')}),
    ('/os-security-group-rules/{id}', {'DELETE': ('security_group_rules', 'delete')}),
    ('/os-security-groups', {'GET': ('security_groups', 'index'),
                             'POST': ('security_groups', 'create')}),
    ('/os-security-groups/{id}', {'GET': ('security_groups', 'show'),
                                  'PUT': ('security_groups', 'update'),
                                  'DELETE': ('security_groups', 'delete')}),
    ('/os-server-groups', {'GET': ('server_groups', 'index'),
                           'POST': ('server_groups', 'create')}),
    ('/os-server-groups/{id}', {'GET': ('server_groups', 'show'),
                                'DELETE': ('server_groups', 'delete')}),
    ('/os-server-external-events', {'POST': ('server_external_events', 'create')}),
    ('/os-services', {'GET': ('services', 'index')}),
    ('/os-services/{id}', {'PUT': ('services', 'update'), 'DELETE': ('services', 'delete')}),
    ('/os-simple-tenant-usage', {'GET': ('simple_tenant_usage', 'index')}),
    ('/os-simple-tenant-usage/{id}', {'GET': ('simple_tenant_usage', 'show')}),
    # The volume and snapshot proxies to Cinder (to 2.35).
    ('/os-snapshots', {'GET': ('snapshots', 'index'), 'POST': ('snapshots', 'create')}),
    ('/os-snapshots/detail', {'GET': ('snapshots', 'detail')}),
    ('/os-snapshots/{id}', {'GET': ('snapshots', 'show'), 'DELETE': ('snapshots', 'delete')}),
    ('/os-volumes', {'GET': ('volumes', 'index'), 'POST': ('volumes', 'create')}),
    ('/os-volumes/detail', {'GET': ('volumes', 'detail')}),
    ('/os-volumes/{id}', {'GET': ('volumes', 'show'), 'DELETE': ('volumes', 'delete')}),
    ('/servers', {'GET': ('servers', 'index'), 'POST': ('servers', 'create')}),
    ('/servers/detail', {'GET': ('servers', 'detail')}),
    ('/servers/{id}', {'GET': ('servers', 'show'), 'PUT': ('servers', 'update'),
                       'DELETE': ('servers', 'delete')}),
    ('/servers/{id}/action', {'POST': ('server_actions', 'action')}),
    ('/servers/{server_id}/diagnostics', {'GET': ('server_diagnostics', 'index')}),
    ('/servers/{server_id}/remote-consoles', {'POST': ('remote_consoles', 'create')}),
    ('/servers/{server_id}/os-server-password', {'GET': ('server_password', 'index'),
                                                 'DELETE': ('server_password', 'clear')}),
    ('/servers/{server_id}/os-volume_attachments',
     {'GET': ('volume_attachments', 'index'), 'POST': ('volume_attachments', 'create')}),
    ('/servers/{server_id}/os-volume_attachments/{id}',
     {'GET': ('volume_attachments', 'show'), 'PUT': ('volume_attachments', 'update'),
      'DELETE': ('volume_attachments', 'delete')}),
    ('/servers/{server_id}/topology', {'GET': ('server_topology', 'index')}),
    ('/servers/{server_id}/shares', {'GET': ('server_shares', 'index'),
                                     'POST': ('server_shares', 'create')}),
    ('/servers/{server_id}/shares/{id}', {'GET': ('server_shares', 'show'),
                                          'DELETE': ('server_shares', 'delete')}),
    ('/servers/{server_id}/metadata', {'GET': ('server_metadata', 'index'),
                                       'POST': ('server_metadata', 'create'),
                                       'PUT': ('server_metadata', 'update_all')}),
    ('/servers/{server_id}/metadata/{id}', {'GET': ('server_metadata', 'show'),
                                            'PUT': ('server_metadata', 'update'),
                                            'DELETE': ('server_metadata', 'delete')}),
    ('/servers/{server_id}/ips', {'GET': ('ips', 'index')}),
    ('/servers/{server_id}/ips/{id}', {'GET': ('ips', 'show')}),
    ('/servers/{server_id}/os-interface', {'GET': ('interfaces', 'index'),
                                           'POST': ('interfaces', 'create')}),
    ('/servers/{server_id}/os-interface/{id}', {'GET': ('interfaces', 'show'),
                                                'DELETE': ('interfaces', 'delete')}),
    ('/servers/{server_id}/migrations', {'GET': ('server_migrations', 'index')}),
    ('/servers/{server_id}/migrations/{id}', {'GET': ('server_migrations', 'show'),
                                              'DELETE': ('server_migrations', 'delete')}),
    ('/servers/{server_id}/migrations/{id}/action', {'POST': ('server_migrations', 'action')}),
    ('/servers/{server_id}/os-instance-actions', {'GET': ('instance_actions', 'index')}),
    ('/servers/{server_id}/os-security-groups', {'GET': ('server_security_groups',
                                                         'index')}),
    ('/servers/{server_id}/os-instance-actions/{id}',
     {'GET': ('instance_actions', 'show')}),
    ('/servers/{server_id}/tags', {'GET': ('server_tags', 'index'),
                                   'PUT': ('server_tags', 'update_all'),
                                   'DELETE': ('server_tags', 'delete_all')}),
    ('/servers/{server_id}/tags/{id}', {'GET': ('server_tags', 'show'),
                                        'PUT': ('server_tags', 'update'),
                                        'DELETE': ('server_tags', 'delete')}),
    # Nova's old name of /servers, until 2.102.
    ('/os-volumes_boot', {'GET': ('volumes_boot', 'index'), 'POST': ('volumes_boot', 'create')}),
    ('/os-volumes_boot/detail', {'GET': ('volumes_boot', 'detail')}),
    ('/os-volumes_boot/{id}', {'GET': ('volumes_boot', 'show'), 'PUT': ('volumes_boot', 'update'),
                               'DELETE': ('volumes_boot', 'delete')}),
    ('/os-volumes_boot/{id}/action', {'POST': ('volumes_boot_actions', 'action')}),
    # APIs Nova removed: 410 Gone (the os-networks reads: the proxy, networks.py).
    *removed.ROUTES,
)


def _quota_zone_host_controllers() -> dict[str, wsgi.Controller]:
    """Limits, quotas, zones, aggregates, server groups, hypervisors, removed APIs."""
    return {'limits': limits.LimitsController(),
            'quota_sets': quota_sets.QuotaSetsController(),
            'quota_classes': quota_classes.QuotaClassSetsController(),
            'availability_zone': availability_zone.AvailabilityZoneController(),
            'aggregates': aggregates.AggregateController(),
            'server_groups': server_groups.ServerGroupController(),
            'hypervisors': hypervisors.HypervisorsController(),
            'removed': removed.RemovedController(),
            'versions': versions.VersionsController(),
            'extensions': extension_info.ExtensionInfoController()}


def _image_controllers() -> dict[str, wsgi.Controller]:
    """The images proxy to Glance."""
    return {'images': images.ImagesController(),
            'image_metadata': image_metadata.ImageMetadataController()}


def _network_controllers() -> dict[str, wsgi.Controller]:
    """Security groups, networks, floating IPs: the proxies to Neutron."""
    return {'security_groups': security_groups.SecurityGroupController(),
            'security_group_rules': security_groups.SecurityGroupRulesController(),
            'server_security_groups': security_groups.ServerSecurityGroupController(),
            'networks': networks.NetworkController(),
            'floating_ips': floating_ips.FloatingIPController(),
            'floating_ip_pools': floating_ip_pools.FloatingIPPoolsController()}


def _volume_controllers() -> dict[str, wsgi.Controller]:
    """The volume and snapshot proxies to Cinder."""
    return {'volumes': volumes.VolumeController(),
            'snapshots': volumes.SnapshotController()}


def _admin_controllers() -> dict[str, wsgi.Controller]:
    """Migrations, usage, diagnostics, external events, hosts, the usage audit log and
    console tokens: operator and service APIs."""
    return {'migrations': migrations.MigrationsController(),
            'server_migrations': server_migrations.ServerMigrationsController(),
            'simple_tenant_usage': simple_tenant_usage.SimpleTenantUsageController(),
            'server_diagnostics': server_diagnostics.ServerDiagnosticsController(),
            'console_auth_tokens': console_auth_tokens.ConsoleAuthTokensController(),
            'server_external_events':
                server_external_events.ServerExternalEventsController(),
            'hosts': hosts.HostController(),
            'instance_usage_audit_log':
                instance_usage_audit_log.InstanceUsageAuditLogController()}


class APIRouterV21:
    """Routes a request to the Resource of its controller (``paste.app_factory``).

    :param controllers: override controllers by name (tests give servers a compute API
        double this way); the others are built with their defaults.
    """

    def __init__(self, controllers: dict[str, wsgi.Controller] | None = None) -> None:
        objects.register_all()
        built = {'flavors': flavors.FlavorsController(),
                 'flavor_access': flavor_access.FlavorAccessController(),
                 'extra_specs': flavors_extraspecs.FlavorExtraSpecsController(),
                 'keypairs': keypairs.KeypairController(),
                 'servers': servers.ServersController(),
                 'server_actions': server_actions.ServerActionsController(),
                 'server_metadata': server_metadata.ServerMetadataController(),
                 'server_tags': server_tags.ServerTagsController(),
                 'ips': ips.IPsController(),
                 'interfaces': interfaces.InterfaceAttachmentController(),
                 'instance_actions': instance_actions.InstanceActionsController(),
                 'server_password': server_password.ServerPasswordController(),
                 'server_topology': server_topology.ServerTopologyController(),
                 'volume_attachments': volume_attachments.VolumeAttachmentController(),
                 'volumes_boot': volumes_boot.VolumesBootController(),
                 'volumes_boot_actions': volumes_boot.VolumesBootActionsController(),
                 'server_shares': server_shares.ServerSharesController(),
                 'remote_consoles': remote_consoles.RemoteConsolesController(),
                 'services': services.ServiceController()}
        built.update(_quota_zone_host_controllers())
        built.update(_admin_controllers())
        built.update(_network_controllers())
        built.update(_image_controllers())
        built.update(_volume_controllers())
        built.update(controllers or {})
        resources = {name: wsgi.Resource(ctrl) for name, ctrl in built.items()}
        self.map = routes.Mapper()
        for path, methods in ROUTE_LIST:
            for method, (name, action) in methods.items():
                for prefix in (PROJECT_ID_TOKEN, ''):
                    if prefix + path:
                        self.map.connect(prefix + path, controller=resources[name],
                                         action=action, conditions={'method': [method]})
        # Compiled now, not by the first request: once in the master, before the API's
        # worker processes fork, instead of once in each (0.1 s of CPU).
        self.map.create_regs()

    @classmethod
    def factory(cls, global_conf: dict, **local_conf: str) -> APIRouterV21:
        return cls()

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        # The mapper itself, not routes' RoutesMiddleware: that one also builds a URL
        # generator and sets routes' thread-local request config for every request,
        # neither of which novalite uses.
        found = self.map.routematch(environ=environ)
        if not found:
            return faults.json_fault(404, 'The resource could not be found.')(
                environ, start_response)
        match = found[0]
        environ['wsgiorg.routing_args'] = ((), match)
        return match['controller'](environ, start_response)


