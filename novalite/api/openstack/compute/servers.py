"""The servers API: create, list, show, update and delete servers."""
from __future__ import annotations

import secrets
import time
from typing import Any

import webob.exc
from oslo_utils import strutils

from novalite import block_device, exception, objects, utils
from novalite import context as nl_context
from novalite.api import validation
from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import common, wsgi
from novalite.api.openstack.compute import flavors, server_search
from novalite.api.openstack.compute.schemas import empty_query, empty_query_v2102
from novalite.api.openstack.compute.schemas import servers as schema
from novalite.api.openstack.compute.views import servers as views_servers
from novalite.compute import pinned_az
from novalite.conf import CONF
from novalite.policies import servers as srv_policies
from novalite.volume import cinder

SERVERS = srv_policies.SERVERS

# Unambiguous characters only: the password may be read off a screen.
_PASSWORD_SYMBOLS = '23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz'


def _generate_password(length: int = 12) -> str:
    return ''.join(secrets.choice(_PASSWORD_SYMBOLS) for _ in range(length))


def disk_config_from_api(value: str | None) -> bool | None:
    """``OS-DCF:diskConfig`` as the instance keeps it (AUTO is True); None if absent."""
    if value is None:
        return None
    if value not in ('AUTO', 'MANUAL'):
        raise webob.exc.HTTPBadRequest(
            explanation="OS-DCF:diskConfig must be either 'MANUAL' or 'AUTO'.")
    return value == 'AUTO'


def _own(context: Any) -> dict:
    return {'project_id': context.project_id, 'user_id': context.user_id}


class ServersController(common.ComputeAPIUser, wsgi.Controller):
    _view_builder_class = views_servers.ViewBuilder

    # -- reading -----------------------------------------------------------------------

    @validation.query_schema(schema.query_params, '2.1', '2.25')
    @validation.query_schema(schema.query_params_v226, '2.26', '2.65')
    @validation.query_schema(schema.query_params_v266, '2.66', '2.72')
    @validation.query_schema(schema.query_params_v273, '2.73', '2.74')
    @validation.query_schema(schema.query_params_v275, '2.75')
    def index(self, req: wsgi.Request) -> dict:
        req.context.can(SERVERS % 'index', _own(req.context))
        return self._view_builder.index(req, self._get_servers(req, is_detail=False))

    @validation.query_schema(schema.query_params, '2.1', '2.25')
    @validation.query_schema(schema.query_params_v226, '2.26', '2.65')
    @validation.query_schema(schema.query_params_v266, '2.66', '2.72')
    @validation.query_schema(schema.query_params_v273, '2.73', '2.74')
    @validation.query_schema(schema.query_params_v275, '2.75')
    def detail(self, req: wsgi.Request) -> dict:
        req.context.can(SERVERS % 'detail', _own(req.context))
        return self._view_builder.detail(req, self._get_servers(req, is_detail=True))

    @validation.query_schema(empty_query, '2.1', '2.101')
    @validation.query_schema(empty_query_v2102, '2.102')
    def show(self, req: wsgi.Request, id: str) -> dict:
        context = req.context
        instance = self._get_instance(context, id, expected_attrs=['fault'])
        context.can(SERVERS % 'show', {'project_id': instance.project_id,
                                       'user_id': instance.user_id})
        return self._view_builder.show(req, instance, for_show=True)

    @validation.schema(schema.update, '2.1', '2.18')
    @validation.schema(schema.update_v219, '2.19', '2.89')
    @validation.schema(schema.update_v290, '2.90', '2.93')
    @validation.schema(schema.update_v294, '2.94', '2.103')
    @validation.schema(schema.update_v2104, '2.104')
    def update(self, req: wsgi.Request, id: str, body: dict) -> dict:
        context = req.context
        instance = self._get_instance(context, id)
        context.can(SERVERS % 'update', {'project_id': instance.project_id,
                                         'user_id': instance.user_id})
        fields = {'name': 'display_name', 'description': 'display_description',
                  'hostname': 'hostname', 'accessIPv4': 'access_ip_v4',
                  'accessIPv6': 'access_ip_v6'}
        server = body['server']
        updates = {fields[k]: v for k, v in server.items() if k in fields}
        if 'OS-DCF:diskConfig' in server:
            updates['auto_disk_config'] = disk_config_from_api(server['OS-DCF:diskConfig'])
        if 'pinned_availability_zone' in server:
            pinned_az.set_pinned_zone(context, instance, server['pinned_availability_zone'])
        instance = self.compute_api.update_instance(context, instance, updates)
        return self._view_builder.update(req, instance)

    def _get_instance(self, context: Any, instance_id: str,
                      expected_attrs: list | None = None) -> Any:
        instance = self.compute_api.get(context, instance_id, expected_attrs=expected_attrs)
        # Servers of other projects do not exist for non-admins (404, not 403).
        if not context.is_admin and instance.project_id != context.project_id:
            raise exception.InstanceNotFound(instance_id=instance_id)
        return instance

    def _get_servers(self, req: wsgi.Request, is_detail: bool) -> list:
        context = req.context
        search_opts = server_search.search_options(req, is_detail)
        if search_opts is None:
            return []
        sort_keys, sort_dirs = common.get_sort_params(req)
        # Keys Nova accepted but never sorted by are ignored (400 from 2.75 by schema).
        kept = [(k, d) for k, d in zip(sort_keys, sort_dirs, strict=True)
                if k not in schema.IGNORED_SORT_KEYS or
                (k == 'locked' and avr.is_supported(req, '2.73'))]
        sort_keys, sort_dirs = [k for k, _ in kept], [d for _, d in kept]
        if (not context.can(SERVERS % 'allow_all_filters', _own(context), fatal=False)
                and set(sort_keys) & set(schema.ADMIN_ONLY_SORT_KEYS)):
            raise webob.exc.HTTPForbidden(
                explanation='Only administrators can sort servers by %s'
                % ', '.join(schema.ADMIN_ONLY_SORT_KEYS))
        limit, marker = common.get_limit_and_marker(req)
        try:
            return list(self.compute_api.get_all(
                context, search_opts, limit=limit, marker=marker,
                sort_keys=sort_keys or None, sort_dirs=sort_dirs or None,
                expected_attrs=['fault'] if is_detail else None))
        except exception.MarkerNotFound as exc:
            raise webob.exc.HTTPBadRequest(explanation=exc.format_message()) from exc

    # -- writing -----------------------------------------------------------------------

    @wsgi.response(202)
    @validation.schema(schema.create, '2.1', '2.18')
    @validation.schema(schema.create_v219, '2.19', '2.31')
    @validation.schema(schema.create_v232, '2.32', '2.36')
    @validation.schema(schema.create_v237, '2.37', '2.41')
    @validation.schema(schema.create_v242, '2.42', '2.51')
    @validation.schema(schema.create_v252, '2.52', '2.56')
    @validation.schema(schema.create_v257, '2.57', '2.62')
    @validation.schema(schema.create_v263, '2.63', '2.73')
    @validation.schema(schema.create_v274, '2.74', '2.89')
    @validation.schema(schema.create_v290, '2.90', '2.93')
    @validation.schema(schema.create_v294, '2.94')
    def create(self, req: wsgi.Request, body: dict[str, Any]) -> wsgi.ResponseObject:
        received = time.time()
        context = req.context
        context.can(SERVERS % 'create', _own(context))
        server = body['server']
        min_count = int(server.get('min_count', 1))
        max_count = int(server.get('max_count', min_count))
        if min_count > max_count:
            raise webob.exc.HTTPBadRequest(explanation='min_count must be <= max_count')
        flavor = self._flavor_from_ref(context, server['flavorRef'])
        image_href = common.get_id_from_href(server['imageRef']) \
            if server.get('imageRef') else None
        image_href, volume_mappings = _block_devices(
            req, image_href, server.get('block_device_mapping_v2') or [])
        if volume_mappings:
            context.can(SERVERS % 'create:attach_volume', _own(context))
        admin_password = server.get('adminPass') or _generate_password()
        if server.get('trusted_image_certificates'):
            raise webob.exc.HTTPBadRequest(explanation=(
                'Image certificate validation (trusted_image_certificates) is not '
                'supported by novalite.'))
        requested = _requested_destination(context, server)
        config_drive = server.get('config_drive')
        try:
            instances, reservation_id = self.compute_api.create(
                context, flavor, image_href,
                name=server['name'],
                description=server.get('description'),
                min_count=min_count, max_count=max_count,
                key_name=server.get('key_name'),
                metadata=server.get('metadata'),
                user_data=server.get('user_data'),
                availability_zone=server.get('availability_zone'),
                requested_networks=server.get('networks'),
                scheduler_hints=(body.get('os:scheduler_hints') or
                                 body.get('OS-SCH-HNT:scheduler_hints')),
                tags=server.get('tags'),
                hostname=server.get('hostname'),
                admin_password=admin_password,
                access_ip_v4=server.get('accessIPv4'),
                access_ip_v6=server.get('accessIPv6'),
                config_drive=(strutils.bool_from_string(config_drive, strict=True)
                              if config_drive is not None else None),
                personality=server.get('personality'),
                # As Nova: an entry without a name is no group (the default applies).
                security_groups=[g['name'] for g in server.get('security_groups') or []
                                 if g.get('name')],
                auto_disk_config=disk_config_from_api(server.get('OS-DCF:diskConfig')),
                block_device_mapping=volume_mappings,
                **requested)
        except exception.FlavorNotFound as exc:
            raise webob.exc.HTTPBadRequest(explanation=exc.format_message()) from exc
        except exception.ImageNotFound as exc:
            raise webob.exc.HTTPBadRequest(
                explanation='Can not find requested image') from exc
        except exception.KeypairNotFound as exc:
            raise webob.exc.HTTPBadRequest(explanation='Invalid key_name provided.') from exc
        except (exception.NetworkNotFound, exception.PortNotFound,
                exception.SecurityGroupNotFound, exception.FixedIpAlreadyInUse) as exc:
            # Not found in a create's body: the body is wrong (400), as in Nova.
            raise webob.exc.HTTPBadRequest(explanation=exc.format_message()) from exc
        # The boot's timing is taken here and at the RPC dispatcher, not in the flow.
        uuids = [instance.uuid for instance in instances]
        utils.hop('api.received', uuids, at=received)
        utils.hop('api.answered', uuids)
        if strutils.bool_from_string(server.get('return_reservation_id', False), strict=True):
            return wsgi.ResponseObject({'reservation_id': reservation_id})
        view = self._view_builder.create(req, instances[0], admin_password)
        return wsgi.ResponseObject(view, headers={
            'Location': view['server']['links'][0]['href']})

    @staticmethod
    def _flavor_from_ref(context: nl_context.RequestContext,
                         flavor_ref: str | int) -> objects.Flavor:
        """The flavor a create asks for; an unknown one is a bad request (400), as in Nova.

        Disabled flavors and private flavors of other projects count as unknown.
        """
        flavor_id = common.get_id_from_href(flavor_ref)
        try:
            flavor = flavors.get_visible_flavor(context, flavor_id)
            if flavor.disabled:
                raise exception.FlavorNotFound(flavor_id=flavor_id)
        except exception.FlavorNotFound as exc:
            raise webob.exc.HTTPBadRequest(explanation=exc.format_message()) from exc
        return flavor

    @wsgi.response(204)
    @validation.no_body
    def delete(self, req: wsgi.Request, id: str) -> None:
        context = req.context
        instance = self._get_instance(context, id)
        context.can(SERVERS % 'delete', {'project_id': instance.project_id,
                                         'user_id': instance.user_id})
        if CONF.reclaim_instance_interval > 0:
            try:
                self.compute_api.soft_delete(context, instance)
                return
            except exception.InstanceInvalidState:
                pass  # never ran, or busy: deleted for good, as Nova does
        self.compute_api.delete(context, instance)


def _block_devices(req: wsgi.Request, image_href: str | None, api_bdms: list[dict]
                   ) -> tuple[str | None, list[dict[str, Any]]]:
    """The image to boot from local disk and the volume mappings of
    block_device_mapping_v2 (400 for what makes no sense; see ``novalite.block_device``)."""
    for bdm in api_bdms:
        if bdm.get('volume_type') is not None and not avr.is_supported(req, '2.67'):
            raise webob.exc.HTTPBadRequest(explanation=(
                "Additional properties are not allowed ('volume_type' was unexpected)"))
        if 'tag' in bdm and not (avr.is_supported(req, '2.42') or
                                 avr.is_supported(req, '2.32', '2.32')):
            raise webob.exc.HTTPBadRequest(explanation=(
                "Additional properties are not allowed ('tag' was unexpected)"))
    if not api_bdms:
        return image_href, []
    try:
        image_href, volumes = block_device.parse(api_bdms, image_href)
    except exception.InvalidBDM as exc:
        raise webob.exc.HTTPBadRequest(explanation=exc.format_message()) from exc
    if volumes and not cinder.configured():
        raise webob.exc.HTTPBadRequest(explanation=NO_CINDER)
    return image_href, volumes


NO_CINDER = ('Volumes need the Block Storage service (Cinder), which this cloud does not '
             'have: its [cinder] options name no endpoint.')


def _requested_destination(context: nl_context.RequestContext,
                           server: dict[str, Any]) -> dict[str, Any]:
    """The host and node an administrator asked for (2.74); 400 if they do not exist."""
    host, node = server.get('host'), server.get('hypervisor_hostname')
    if not host and not node:
        return {}
    context.can(srv_policies.REQUESTED_DESTINATION, _own(context))
    if host:
        try:
            objects.HostMapping.get_by_host(context, host)
        except exception.HostMappingNotFound as exc:
            raise webob.exc.HTTPBadRequest(
                explanation='Compute host %s could not be found.' % host) from exc
    if node and not _node_exists(context, host, node):
        raise webob.exc.HTTPBadRequest(
            explanation='Compute node %s could not be found.' % node)
    return {'requested_host': host, 'requested_hypervisor_hostname': node}


def _node_exists(context: Any, host: str | None, node: str) -> bool:
    for cell in objects.CellMappingList.get_all(context):
        if cell.is_cell0:
            continue
        with nl_context.target_cell(context, cell) as cctxt:
            nodes = objects.ComputeNodeList.get_all_by_host(cctxt, host) if host \
                else objects.ComputeNodeList.get_all(cctxt)
            if any(n.hypervisor_hostname == node for n in nodes):
                return True
    return False
