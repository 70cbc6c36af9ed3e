"""The compute API: what the REST layer asks of servers (hop 2 of the boot path).

``create`` counts quota and writes RequestSpec + BuildRequest + InstanceMapping in one
API-database transaction that holds the project's quota lock (``quota.project_lock``),
then casts to the conductor. ``get``/``get_all`` read
build requests and every cell; ``delete`` picks the right path for where the server
is (a build request, cell0, a host that is up, or a host that is down). The power
actions (reboot, stop, start) check the state, record an action and cast to the host.
"""
from __future__ import annotations

import contextlib
import datetime
from collections.abc import Callable, Iterator
from typing import Any, cast

from oslo_log import log as logging
from oslo_utils import timeutils, uuidutils

from novalite import context as nl_context
from novalite import exception, objects, quota, utils
from novalite.compute import (
    api_consoles,
    api_delete,
    api_images,
    api_inplace,
    api_migrate,
    api_rebuild,
    api_shelve,
    api_volume_attach,
    api_volumes,
    disk_config,
    instance_actions,
    instance_edit,
    lookups,
    power_state,
    task_states,
    vm_states,
)
from novalite.compute import rpcapi as compute_rpcapi
from novalite.compute.api_images import image_properties
from novalite.conductor import rpcapi as conductor_rpcapi
from novalite.conf import CONF
from novalite.context import RequestContext
from novalite.image import glance
from novalite.network import requests as net_requests
from novalite.scheduler.client import report
from novalite.servicegroup import api as servicegroup_api
from novalite.volume import cinder

LOG = logging.getLogger(__name__)

MULTI_NAME_TEMPLATE = '%(name)s-%(count)d'

# Nova's rules: a hard reboot recovers servers a soft one cannot reach, and may
# replace a reboot (or pause/suspend transition) that is stuck.
_HARD_REBOOT_VM_STATES = (vm_states.ACTIVE, vm_states.STOPPED, vm_states.PAUSED,
                          vm_states.SUSPENDED, vm_states.ERROR)
_HARD_REBOOT_TASK_STATES = (None, task_states.REBOOTING, task_states.REBOOTING_HARD)


class API:
    """Server operations, as Nova's ``nova.compute.api.API``.

    Create, read, update, delete and the power actions are here; the other actions are
    flow functions of their own modules (each takes this API first, as the compute
    manager's flows take the manager), made methods below.
    """

    def __init__(self, image_api: glance.API | None = None,
                 compute_task_api: conductor_rpcapi.ComputeTaskAPI | None = None,
                 compute_rpcapi: compute_rpcapi.ComputeAPI | None = None,
                 reportclient: report.SchedulerReportClient | None = None,
                 volume_api: cinder.API | None = None) -> None:
        self.image_api = image_api or glance.API()
        self.volume_api = volume_api or cinder.API()
        self._task_api = compute_task_api
        self._compute_rpcapi = compute_rpcapi
        self._reportclient = reportclient
        self.servicegroup_api = servicegroup_api.API()

    # RPC clients are made on first use: the API process may start before rpc.init().
    @property
    def compute_task_api(self) -> conductor_rpcapi.ComputeTaskAPI:
        if self._task_api is None:
            self._task_api = conductor_rpcapi.ComputeTaskAPI()
        return self._task_api

    @property
    def compute_rpcapi(self) -> compute_rpcapi.ComputeAPI:
        if self._compute_rpcapi is None:
            self._compute_rpcapi = compute_rpcapi.ComputeAPI()
        return self._compute_rpcapi

    @property
    def reportclient(self) -> report.SchedulerReportClient:
        if self._reportclient is None:
            self._reportclient = report.SchedulerReportClient()
        return self._reportclient

    # -- the other actions: flow functions of their own modules, made methods ----------

    # In place (compute/api_inplace.py).
    pause = api_inplace.pause
    unpause = api_inplace.unpause
    suspend = api_inplace.suspend
    resume = api_inplace.resume
    lock = api_inplace.lock
    is_expected_locked_by = api_inplace.is_expected_locked_by
    unlock = api_inplace.unlock
    rescue = api_inplace.rescue
    unrescue = api_inplace.unrescue
    set_admin_password = api_inplace.set_admin_password
    trigger_crash_dump = api_inplace.trigger_crash_dump
    reset_state = api_inplace.reset_state
    soft_delete = api_inplace.soft_delete
    restore = api_inplace.restore
    force_delete = api_inplace.force_delete
    # Images of servers (compute/api_images.py).
    create_image_record = api_images.create_image_record
    delete_image_quietly = api_images.delete_image_quietly
    snapshot = api_images.snapshot
    backup = api_images.backup
    # Rebuild (compute/api_rebuild.py).
    rebuild = api_rebuild.rebuild
    # Shelving (compute/api_shelve.py).
    shelve = api_shelve.shelve
    shelve_offload = api_shelve.shelve_offload
    unshelve = api_shelve.unshelve
    # Delete (compute/api_delete.py).
    delete = api_delete.delete
    # Volumes (compute/api_volume_attach.py).
    get_volume_mappings = api_volume_attach.get_volume_mappings
    attach_volume = api_volume_attach.attach_volume
    detach_volume = api_volume_attach.detach_volume
    swap_volume = api_volume_attach.swap_volume
    # Consoles (compute/api_consoles.py).
    get_vnc_console = api_consoles.get_vnc_console
    get_serial_console = api_consoles.get_serial_console
    # Resize and migrations (compute/api_migrate.py).
    resize = api_migrate.resize
    confirm_resize = api_migrate.confirm_resize
    revert_resize = api_migrate.revert_resize
    live_migrate = api_migrate.live_migrate
    live_migrate_abort = api_migrate.live_migrate_abort
    live_migrate_force_complete = api_migrate.live_migrate_force_complete
    evacuate = api_migrate.evacuate

    # -- create ------------------------------------------------------------------------

    def check_image(self, context: RequestContext, image_href: str | None,
                    flavor: objects.Flavor) -> dict[str, Any]:
        if not image_href:
            # Nothing to boot from: neither an image nor a volume (Nova's answer).
            raise exception.InvalidBDMBootSequence()
        image = self.image_api.get(context, image_href)
        if image.get('status') != 'active':
            raise exception.ImageNotActive(image_id=image_href)
        if flavor.memory_mb < int(image.get('min_ram') or 0):
            raise exception.FlavorMemoryTooSmall()
        min_disk = int(image.get('min_disk') or 0)
        size_gb = (int(image.get('size') or 0) + (1 << 30) - 1) >> 30
        if flavor.root_gb and flavor.root_gb < max(min_disk, size_gb):
            raise exception.FlavorDiskTooSmall()
        return image

    def _count_allowed(self, context: RequestContext, flavor: objects.Flavor, min_count: int,
                       max_count: int) -> int:
        """The most instances in [min_count, max_count] that quota allows."""
        deltas = {'instances': max_count, 'cores': flavor.vcpus * max_count,
                  'ram': flavor.memory_mb * max_count}
        left = quota.headroom(context, deltas, context.project_id, context.user_id)
        fits = [max_count]
        for key, per_instance in (('instances', 1), ('cores', flavor.vcpus),
                                  ('ram', flavor.memory_mb)):
            if left[key] >= 0 and per_instance:
                fits.append(max(left[key], 0) // per_instance)
        count = min(fits)
        if count < min_count:
            quota.check_deltas(context, {k: v // max_count * min_count
                                         for k, v in deltas.items()},
                               context.project_id, context.user_id)
        return max(count, min_count)

    def _new_instance(self, context: RequestContext, flavor: objects.Flavor,
                      image_href: str | None,
                      image: dict | None, index: int, count: int, reservation_id: str,
                      **kw: Any) -> objects.Instance:
        name = kw['name']
        display_name = MULTI_NAME_TEMPLATE % {'name': name, 'count': index + 1} \
            if count > 1 else name
        system_metadata = {'image_%s' % k: str(v) for k, v in
                           (image or {}).items() if k in ('min_ram', 'min_disk',
                                                          'disk_format', 'container_format')}
        # Image properties travel with the server, as in Nova (shown from 2.98).
        for key, value in image_properties(image or {}).items():
            system_metadata['image_%s' % key] = str(value)[:255]
        system_metadata['image_base_image_ref'] = image_href or ''
        instance = objects.Instance(
            context, uuid=uuidutils.generate_uuid(), user_id=context.user_id,
            project_id=context.project_id, image_ref=image_href or '',
            display_name=display_name, display_description=kw.get('description'),
            hostname=kw.get('hostname') if count == 1 and kw.get('hostname') else
            utils.sanitize_hostname(display_name),
            launch_index=index, key_name=kw.get('key_name'), key_data=kw.get('key_data'),
            power_state=power_state.NOSTATE, vm_state=vm_states.BUILDING,
            task_state=task_states.SCHEDULING, memory_mb=flavor.memory_mb,
            vcpus=flavor.vcpus, root_gb=flavor.root_gb, ephemeral_gb=flavor.ephemeral_gb,
            instance_type_id=flavor.id, flavor=flavor, user_data=kw.get('user_data'),
            reservation_id=reservation_id, availability_zone=kw.get('availability_zone'),
            locked=False, progress=0, auto_disk_config=bool(kw.get('auto_disk_config')),
            config_drive='True' if kw.get('config_drive') else '',
            access_ip_v4=kw.get('access_ip_v4'), access_ip_v6=kw.get('access_ip_v6'),
            metadata=dict(kw.get('metadata') or {}), system_metadata=system_metadata,
            tags=list(kw.get('tags') or []), host=None, node=None, launched_at=None,
            terminated_at=None, deleted=False, hidden=False, os_type=None,
            architecture=None, created_at=timeutils.utcnow(with_timezone=True),
            updated_at=None)
        return instance

    def create(self, context: RequestContext, flavor: objects.Flavor, image_href: str | None, *,
               name: str, description: str | None = None, min_count: int = 1, max_count: int = 1,
               key_name: str | None = None, metadata: dict | None = None,
               user_data: str | None = None, availability_zone: str | None = None,
               requested_networks: list[dict[str, Any]] | str | None = None,
               scheduler_hints: dict | None = None, tags: list | None = None,
               hostname: str | None = None, admin_password: str | None = None,
               access_ip_v4: str | None = None, access_ip_v6: str | None = None,
               config_drive: bool | None = None, personality: list | None = None,
               requested_host: str | None = None, requested_hypervisor_hostname: str | None = None,
               security_groups: list[str] | None = None,
               auto_disk_config: bool | None = None,
               block_device_mapping: list[dict[str, Any]] | None = None) -> tuple[list, str]:
        """Accept a boot request; return the (not yet scheduled) instances and the
        reservation id. Nothing is written when a check fails.

        :param block_device_mapping: the volume mappings (``block_device.parse``); one with
            boot index 0 makes the server volume-backed (then ``image_href`` is None)
        """
        if flavor.disabled:
            raise exception.FlavorNotFound(flavor_id=flavor.flavorid)
        image: dict[str, Any] | None = None
        if image_href:
            image = self.check_image(context, image_href, flavor)
            # An image of a volume-backed server: its mappings (volumes made from its
            # snapshots) boot the new server, as in Nova.
            defined = api_images.image_defined_mappings(image)
            if defined:
                block_device_mapping = defined + list(block_device_mapping or [])
        volumes = api_volumes.check_create(
            context, self.image_api, self.volume_api, flavor, block_device_mapping,
            max_count, (availability_zone or '').split(':', 1)[0] or None) \
            if block_device_mapping else None
        if volumes is not None and volumes.volume_backed:
            image = volumes.root_image or {}
            image_href = None
        elif image is None:
            image = self.check_image(context, image_href, flavor)
        if volumes is not None and not availability_zone:
            availability_zone = volumes.availability_zone
        auto_disk_config = disk_config.for_image(image, auto_disk_config)
        # Authentication gives every API request its project and user.
        assert context.project_id is not None and context.user_id is not None
        key_data = None
        if key_name:
            key_data = objects.KeyPair.get_by_name(context, context.user_id,
                                                   key_name).public_key
        metadata = metadata or {}
        limit = CONF.quota.metadata_items
        if 0 <= limit < len(metadata):
            raise exception.QuotaError(message='Quota exceeded for metadata_items: '
                                               'Requested %d, limit %d' % (len(metadata), limit))
        # Networks first, as Nova: the port quota may lower max_count before the
        # instance quota is counted (once, under the project's lock, below).
        network_requests, count = net_requests.resolve(
            context, requested_networks, min_count, max_count, security_groups)
        force_hosts, force_nodes = self._parse_az_host(context, availability_zone)
        if availability_zone and (force_hosts or force_nodes):
            availability_zone = availability_zone.split(':', 1)[0] or None
        # 2.74: the RequestSpec has no requested_destination yet, so a requested host or
        # node is forced like "az:host:node" (the API checked that it exists).
        force_hosts = [requested_host] if requested_host else force_hosts
        force_nodes = [requested_hypervisor_hostname] if requested_hypervisor_hostname \
            else force_nodes
        group = self._server_group(context, scheduler_hints)
        reservation_id = utils.generate_reservation_id()
        image_meta = objects.ImageMeta.from_dict(image) if image else None
        # Counted where no other create of the project counts or writes until this one's
        # build requests are committed: concurrent creates cannot together pass a limit,
        # and a multi-create gets what is left (down to its min_count).
        reserved: list[objects.BlockDeviceMapping] = []
        try:
            instances, build_requests, specs = self._write_create(
                context, flavor, image_href, image, image_meta, count, min_count,
                reservation_id, group, volumes, reserved, network_requests,
                name=name, description=description, hostname=hostname, key_name=key_name,
                key_data=key_data, user_data=user_data, availability_zone=availability_zone,
                config_drive=config_drive, access_ip_v4=access_ip_v4,
                access_ip_v6=access_ip_v6, metadata=metadata, tags=tags,
                auto_disk_config=auto_disk_config, scheduler_hints=scheduler_hints,
                force_hosts=force_hosts, force_nodes=force_nodes,
                security_groups=security_groups)
        except BaseException:
            api_volumes.unreserve(context, self.volume_api, reserved)
            raise
        self.compute_task_api.schedule_and_build_instances(
            context, build_requests=build_requests, request_specs=specs, image=image,
            admin_password=admin_password, injected_files=personality or [],
            requested_networks=network_requests, block_device_mapping=[], tags=tags)
        return instances, reservation_id

    def _write_create(self, context: RequestContext, flavor: objects.Flavor,
                      image_href: str | None, image: dict[str, Any] | None,
                      image_meta: objects.ImageMeta | None, count: int, min_count: int,
                      reservation_id: str, group: objects.InstanceGroup | None,
                      volumes: api_volumes.CreateVolumes | None,
                      reserved: list[objects.BlockDeviceMapping],
                      network_requests: list[net_requests.NetworkRequest], *,
                      scheduler_hints: dict | None, force_hosts: list, force_nodes: list,
                      security_groups: list[str] | None, **kw: Any
                      ) -> tuple[list[objects.Instance], list[objects.BuildRequest],
                                 list[objects.RequestSpec]]:
        """The create's rows, under the project's quota lock (see ``create``); the
        volumes reserved for the servers are added to ``reserved`` as they are."""
        assert context.project_id is not None
        availability_zone = kw['availability_zone']
        tags = kw['tags']
        with quota.project_lock(context.project_id) as session:
            count = self._count_allowed(context, flavor, min_count, count)
            if group is not None:
                self._check_group_members(context, group, count)
            instances, build_requests, specs = [], [], []
            for index in range(count):
                instance = self._new_instance(
                    context, flavor, image_href, image, index, count, reservation_id, **kw)
                spec = objects.RequestSpec.from_components(
                    context, instance.uuid, image_meta, flavor, count,
                    availability_zone=availability_zone, scheduler_hints=scheduler_hints,
                    force_hosts=force_hosts, force_nodes=force_nodes,
                    security_groups=security_groups)
                spec.instance_group = group
                bdms: list[objects.BlockDeviceMapping] = []
                if volumes is not None:
                    spec.is_bfv = volumes.volume_backed
                    bdms = api_volumes.reserve(context, self.volume_api, instance.uuid,
                                               volumes.mappings)
                    reserved.extend(bdms)
                # A NetworkRequest's values are all strings or None.
                spec.requested_networks = [cast('dict[str, str | None]', dict(r))
                                           for r in network_requests]
                build_request = objects.BuildRequest(
                    context, instance_uuid=instance.uuid, project_id=context.project_id,
                    user_id=context.user_id, instance=instance, tags=list(tags or []),
                    block_device_mappings=bdms)
                instances.append(instance)
                build_requests.append(build_request)
                specs.append(spec)
            uuids = [i.uuid for i in instances]
            for instance, build_request, spec in zip(instances, build_requests, specs,
                                                     strict=True):
                spec.create(session=session)
                build_request.create(session=session)
                objects.InstanceMapping(
                    context, instance_uuid=instance.uuid, cell_mapping=None,
                    project_id=context.project_id, user_id=context.user_id,
                    queued_for_delete=False).create(session=session)
            if group is not None:
                objects.InstanceGroup.add_members(context, group.uuid, uuids,
                                                  session=session)
        return instances, build_requests, specs

    @staticmethod
    def _check_group_members(context: RequestContext, group: objects.InstanceGroup,
                             count: int) -> None:
        limit = quota.get_limits(context, context.project_id,
                                 context.user_id)['server_group_members']
        if 0 <= limit < len(group.get_live_members()) + count:
            raise exception.QuotaError(message='Quota exceeded, too many servers in group')

    @staticmethod
    def _server_group(context: RequestContext, scheduler_hints: dict[str, Any] | None
                      ) -> objects.InstanceGroup | None:
        """The server group of the ``group`` hint; the new servers join it."""
        group_uuid = (scheduler_hints or {}).get('group')
        if not group_uuid:
            return None
        if isinstance(group_uuid, list):
            group_uuid = group_uuid[0]
        try:
            # Another project's group is not found either (the lookup is scoped), so a
            # hint cannot add members to it nor tell it from a uuid nobody used.
            return objects.InstanceGroup.get_by_uuid(context, group_uuid)
        except exception.InstanceGroupNotFound as exc:
            # Nova's 400 carries the lookup's own message.
            raise exception.Invalid(exc.format_message()) from exc

    @staticmethod
    def _parse_az_host(context: RequestContext, availability_zone: str | None) -> tuple[list, list]:
        """Admins may ask for a host: ``zone:host`` or ``zone:host:node``."""
        if not availability_zone or ':' not in availability_zone:
            return [], []
        context.can('os_compute_api:servers:create:forced_host')
        parts = availability_zone.split(':')
        host = parts[1] if len(parts) > 1 and parts[1] else None
        node = parts[2] if len(parts) > 2 and parts[2] else None
        return ([host] if host else []), ([node] if node else [])

    # -- read --------------------------------------------------------------------------

    def get(self, context: RequestContext, instance_uuid: str,
            expected_attrs: list[str] | None = None) -> objects.Instance:
        """The server, from its cell or, while it is being scheduled, its BuildRequest."""
        for _attempt in range(2):
            try:
                cell, build_request = lookups.locate(context, instance_uuid)
            except exception.InstanceMappingNotFound as exc:
                raise exception.InstanceNotFound(instance_id=instance_uuid) from exc
            if cell is not None:
                with nl_context.target_cell(context, cell) as cctxt:
                    return objects.Instance.get_by_uuid(cctxt, instance_uuid,
                                                        expected_attrs=expected_attrs)
            if build_request is None:
                # The conductor may have just moved it into a cell: read the mapping again.
                continue
            instance = build_request.instance
            if expected_attrs and 'fault' in expected_attrs:
                instance.fault = None
            return instance
        raise exception.InstanceNotFound(instance_id=instance_uuid)

    def get_all(self, context: RequestContext, search_opts: dict, limit: int | None = None,
                marker: str | None = None, sort_keys: list | None = None,
                sort_dirs: list | None = None, expected_attrs: list | None = None) -> list:
        """Servers matching ``search_opts`` from build requests and every cell, merged in
        sort order, paginated with a marker that may live anywhere."""
        from novalite.compute import instance_list
        return instance_list.get_instances_sorted(
            context, dict(search_opts), limit, marker, sort_keys or ['created_at'],
            sort_dirs or ['desc'], expected_attrs or [])

    # -- update, metadata, tags --------------------------------------------------------

    def update_instance(self, context: RequestContext, instance: objects.Instance,
                        updates: dict[str, Any]) -> objects.Instance:
        """Change plain fields (name, description, hostname, access IPs). A server still
        being scheduled has its BuildRequest changed instead."""
        if not instance.obj_attr_is_set('id'):
            try:
                build_request = objects.BuildRequest.get_by_instance_uuid(
                    context, instance.uuid)
                for key, value in updates.items():
                    setattr(build_request.instance, key, value)
                build_request.save()
                return build_request.instance
            except exception.BuildRequestNotFound:
                instance = self.get(context, instance.uuid)
        for key, value in updates.items():
            setattr(instance, key, value)
        instance.save()
        return instance

    def update_instance_metadata(self, context: RequestContext, instance: objects.Instance,
                                 metadata: dict, delete: bool = False) -> dict:
        """Merge ``metadata`` into the server's (or replace it when ``delete``)."""
        instance_edit.check_instance_lock(context, instance)
        instance_edit.check_state(instance, instance_edit.METADATA_STATES,
                                  'update metadata', task_state_must_be_none=True)
        new = dict(metadata) if delete else dict(instance.metadata, **metadata)
        instance_edit.check_metadata_quota(new)
        instance.metadata = new
        instance.save()
        return new

    def delete_instance_metadata(self, context: RequestContext, instance: objects.Instance,
                                 key: str) -> None:
        instance_edit.check_instance_lock(context, instance)
        instance_edit.check_state(instance, instance_edit.METADATA_STATES,
                                  'delete metadata', task_state_must_be_none=True)
        instance.metadata = {k: v for k, v in instance.metadata.items() if k != key}
        instance.save()

    def set_tags(self, context: RequestContext, instance: objects.Instance,
                 tags: list[str]) -> list[str]:
        """Replace the server's tags; tags change only on a server that is in a cell
        and not building (409 otherwise, as in Nova)."""
        instance_edit.check_state(instance, instance_edit.TAG_STATES, 'update tags')
        instance.tags = sorted(set(tags))
        instance.save()
        return list(instance.tags)

    # -- instance actions --------------------------------------------------------------

    def actions_get(self, context: RequestContext, instance: objects.Instance,
                    limit: int | None = None, marker: str | None = None,
                    filters: dict | None = None) -> list:
        """The server's actions, newest first (none while it is being scheduled)."""
        return instance_edit.in_cell(
            context, instance.uuid, [], lambda cctxt: list(
                objects.InstanceActionList.get_by_instance_uuid(
                    cctxt, instance.uuid, limit=limit, marker=marker, filters=filters)))

    def action_get_by_request_id(self, context: RequestContext, instance: objects.Instance,
                                 request_id: str
                                 ) -> tuple[objects.InstanceAction, list[Any]] | None:
        """The action of one request with its events, or None."""
        def get(cctxt: RequestContext) -> tuple[objects.InstanceAction, list[Any]] | None:
            try:
                action = objects.InstanceAction.get_by_request_id(cctxt, instance.uuid,
                                                                  request_id)
            except exception.InstanceActionNotFound:
                return None
            return action, list(objects.InstanceActionEventList.get_by_action(
                cctxt, action.id))
        return instance_edit.in_cell(context, instance.uuid, None, get)

    def get_instances_host_statuses(self, instances: list) -> dict[str, str]:
        """UP, DOWN, MAINTENANCE, UNKNOWN or '' of each server's host (2.16)."""
        return instance_edit.host_statuses(instances, self.servicegroup_api)

    # -- power and console -------------------------------------------------------------

    def reboot(self, context: RequestContext, instance: objects.Instance, reboot_type: str) -> None:
        """SOFT needs a running ACTIVE server; HARD also restarts a stopped, paused,
        suspended or failed one, and may interrupt a reboot under way."""
        instance_edit.check_instance_lock(context, instance)
        if reboot_type == 'SOFT':
            instance_edit.check_instance_state(instance, 'reboot', (vm_states.ACTIVE,))
            if instance.power_state != power_state.RUNNING:
                raise exception.InstanceInvalidState(
                    attr='power_state', instance_uuid=instance.uuid, method='reboot',
                    state=power_state.STATE_MAP.get(instance.power_state)
                    if instance.power_state is not None else None)
        else:
            instance_edit.check_instance_state(
                instance, 'reboot', _HARD_REBOOT_VM_STATES, _HARD_REBOOT_TASK_STATES)
        task_state = task_states.REBOOTING if reboot_type == 'SOFT' else \
            task_states.REBOOTING_HARD
        self.cast_power(context, instance, instance_actions.REBOOT, task_state,
                         lambda cctxt: self.compute_rpcapi.reboot_instance(
                             cctxt, instance, reboot_type))

    def stop(self, context: RequestContext, instance: objects.Instance) -> None:
        instance_edit.check_instance_lock(context, instance)
        instance_edit.check_instance_state(instance, 'stop',
                                           (vm_states.ACTIVE, vm_states.ERROR))
        self.cast_power(context, instance, instance_actions.STOP, task_states.POWERING_OFF,
                         lambda cctxt: self.compute_rpcapi.stop_instance(cctxt, instance))

    def start(self, context: RequestContext, instance: objects.Instance) -> None:
        instance_edit.check_instance_lock(context, instance)
        instance_edit.check_instance_state(instance, 'start', (vm_states.STOPPED,))
        self.cast_power(context, instance, instance_actions.START, task_states.POWERING_ON,
                         lambda cctxt: self.compute_rpcapi.start_instance(cctxt, instance))

    def get_console_output(self, context: RequestContext, instance: objects.Instance,
                           tail_length: int | None = None) -> str:
        """The last ``tail_length`` lines (all when None) of the guest's console log."""
        with self.host_context(context, instance) as cctxt:
            return self.compute_rpcapi.get_console_output(cctxt, instance, tail_length)

    def cast_power(self, context: RequestContext, instance: objects.Instance, action: str,
                   task_state: str, cast: Callable[[RequestContext], None]) -> None:
        """Record ``action``, set ``task_state`` (so the host's power sync leaves the
        server alone until the operation ends) and cast."""
        with self.host_context(context, instance) as cctxt:
            objects.InstanceAction.action_start(cctxt, instance.uuid, action,
                                                want_result=False)
            expected = instance.task_state
            instance.task_state = task_state
            instance.save(expected_task_state=[expected])
            cast(cctxt)

    @contextlib.contextmanager
    def host_context(self, context: RequestContext,
                     instance: objects.Instance) -> Iterator[RequestContext]:
        """The server's cell context, once its compute service is known to be up.

        :raises Conflict: (409) the server has no host
        :raises ServiceUnavailable: its compute service is down
        """
        if not instance.obj_attr_is_set('id') or not instance.host:
            raise exception.Conflict(message='Instance %s is not on a compute host yet.'
                                     % instance.uuid)
        with self.cell_context(context, instance) as cctxt:
            service = objects.Service.get_by_host_and_binary(cctxt, instance.host,
                                                             'novalite-compute')
            if service is None or not self.servicegroup_api.service_is_up(service):
                raise exception.ServiceUnavailable()
            yield cctxt

    @contextlib.contextmanager
    def cell_context(self, context: RequestContext,
                     instance: objects.Instance) -> Iterator[RequestContext]:
        """The cell context of a server that has a cell (its instance is made), the
        instance's own context switched to it; its host's service is not looked at."""
        mapping = objects.InstanceMapping.get_by_instance_uuid(context, instance.uuid)
        assert mapping.cell_mapping is not None, 'a server with an id is in a cell'
        with nl_context.target_cell(context, mapping.cell_mapping) as cctxt:
            instance._context = cctxt
            yield cctxt

    # -- migrations --------------------------------------------------------------------

    def get_migrations(self, context: RequestContext, filters: dict) -> list:
        """Migrations of every cell matching ``filters`` (the os-migrations list)."""
        from novalite.compute import migration_list
        return migration_list.get_migrations(context, filters)

    def get_migrations_sorted(self, context: RequestContext, filters: dict,
                              limit: int | None = None, marker: str | None = None) -> list:
        """The same, newest first and paged (2.59)."""
        from novalite.compute import migration_list
        return migration_list.get_migrations_sorted(context, filters, limit, marker)

    def get_migrations_in_progress_by_instance(self, context: RequestContext, instance_uuid: str,
                                               migration_type: str | None = None) -> list:
        """The server's unfinished migrations (none while it is being scheduled)."""
        return instance_edit.in_cell(
            context, instance_uuid, [], lambda cctxt: list(
                objects.MigrationList.get_in_progress_by_instance(
                    cctxt, instance_uuid, migration_type)))

    def get_migration_by_id_and_instance(self, context: RequestContext, migration_id: int,
                                         instance_uuid: str) -> objects.Migration:
        """:raises MigrationNotFound: no migration with this id belongs to the server"""
        def get(cctxt: RequestContext) -> objects.Migration:
            migration = objects.Migration.get_by_id(cctxt, migration_id)
            if migration.instance_uuid != instance_uuid:
                raise exception.MigrationNotFound(migration_id=migration_id)
            return migration
        found = instance_edit.in_cell(context, instance_uuid, None, get)
        if found is None:
            raise exception.MigrationNotFound(migration_id=migration_id)
        return found

    # -- usage -------------------------------------------------------------------------

    def get_instances_in_window(self, context: RequestContext, start: datetime.datetime,
                                stop: datetime.datetime,
                                project_id: str | None = None, limit: int | None = None,
                                marker: str | None = None) -> list:
        """Instances, deleted ones included, that ran between ``start`` and ``stop``."""
        from novalite.compute import usage
        return usage.instances_in_window(context, start, stop, project_id, limit, marker)

    # -- diagnostics -------------------------------------------------------------------

    def get_diagnostics(self, context: RequestContext, instance: objects.Instance) -> dict:
        """The driver's free-form diagnostics of the guest (before 2.48)."""
        with self.host_context(context, instance) as cctxt:
            return self.compute_rpcapi.get_diagnostics(cctxt, instance)

    def get_instance_diagnostics(self, context: RequestContext, instance: objects.Instance) -> dict:
        """The guest's diagnostics in the standard format (2.48)."""
        with self.host_context(context, instance) as cctxt:
            return self.compute_rpcapi.get_instance_diagnostics(cctxt, instance)

    # -- external events ---------------------------------------------------------------

    def get_instances_for_events(self, context: RequestContext,
                                 uuids: set[str]) -> dict[str, objects.Instance]:
        """{uuid: instance} of the servers that are in a cell (others are left out)."""
        found = {}
        for uuid in uuids:
            try:
                mapping = objects.InstanceMapping.get_by_instance_uuid(context, uuid)
            except exception.InstanceMappingNotFound:
                continue
            if mapping.cell_mapping is None:
                continue
            with nl_context.target_cell(context, mapping.cell_mapping) as cctxt:
                try:
                    found[uuid] = objects.Instance.get_by_uuid(cctxt, uuid)
                except exception.InstanceNotFound:
                    continue
        return found

    def external_instance_event(self, context: RequestContext,
                                instances: list[objects.Instance],
                                events: list[dict[str, Any]]) -> None:
        """Cast the events to the hosts of their servers, one message per host."""
        by_host: dict[tuple[str | None, str | None],
                      tuple[objects.CellMapping, list[objects.Instance],
                            list[dict[str, Any]]]] = {}
        for instance in instances:
            mapping = objects.InstanceMapping.get_by_instance_uuid(context, instance.uuid)
            assert mapping.cell_mapping is not None, 'get_instances_for_events: in a cell'
            key = (mapping.cell_mapping.uuid, instance.host)
            entry = by_host.setdefault(key, (mapping.cell_mapping, [], []))
            if instance.uuid not in {i.uuid for i in entry[1]}:
                entry[1].append(instance)
            entry[2].extend(e for e in events if e['server_uuid'] == instance.uuid
                            and e not in entry[2])
        for (_cell_uuid, host), (cell, host_instances, host_events) in by_host.items():
            with nl_context.target_cell(context, cell) as cctxt:
                self.compute_rpcapi.external_instance_event(cctxt, host_instances,
                                                            host_events, host)
