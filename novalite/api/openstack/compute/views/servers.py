"""Views of servers: the short list entry and the full server, per microversion."""
from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import common
from novalite.api.openstack.compute.views import security_groups as sg_views
from novalite.api.openstack.compute.views import server_fields
from novalite.network import model
from novalite.policies import servers as srv_policies

if TYPE_CHECKING:
    import datetime
    from collections.abc import Callable

    from novalite import objects
    from novalite.api.openstack import wsgi

# Statuses in which a server reports progress, and those that show its fault.
_PROGRESS_STATUSES = ('ACTIVE', 'BUILD', 'REBUILD', 'RESIZE', 'VERIFY_RESIZE', 'MIGRATING')
_FAULT_STATUSES = ('ERROR', 'DELETED')


def _usage_time(value: datetime.datetime | None) -> str | None:
    # OS-SRV-USG times keep Nova's format: no zone, microseconds.
    if value is None:
        return None
    return value.replace(tzinfo=None).isoformat(timespec='microseconds')


def _field(instance: objects.Instance, name: str, default: object = None) -> Any:
    """A field of ``instance``, or ``default`` while unset or None (a server still being
    built may come from its BuildRequest, where the host fields are not set yet).

    Read where the object keeps a field's value once set (``_obj_<name>``): the same
    answer as ``obj_attr_is_set`` and the getter give, at a fraction of the cost for the
    37 fields of every server of a list.
    """
    value = getattr(instance, '_obj_' + name, None)
    return default if value is None else value


def _addresses(instance: objects.Instance) -> dict[str, list[dict[str, Any]]]:
    """By network label, from the network info cache (none yet while building)."""
    cache = _field(instance, 'info_cache')
    return model.addresses(cache.network_info) if cache is not None else {}


def host_id(project_id: str | None, host: str | None) -> str:
    """An opaque host id: the same host looks different to every project."""
    if not host:
        return ''
    return hashlib.sha224(((project_id or '') + host).encode('utf-8')).hexdigest()


class ViewBuilder(common.ViewBuilder):
    _collection_name = 'servers'

    def basic(self, req: wsgi.Request, instance: objects.Instance) -> dict:
        return {'server': {'id': instance.uuid, 'name': instance.display_name,
                           'links': self._get_links(req, instance.uuid)}}

    def create(self, req: wsgi.Request, instance: objects.Instance,
               admin_password: str | None) -> dict:
        """The 202 body of server create."""
        disk_config = 'AUTO' if _field(instance, 'auto_disk_config') else 'MANUAL'
        server = {'id': instance.uuid, 'links': self._get_links(req, instance.uuid),
                  'OS-DCF:diskConfig': disk_config,
                  'security_groups': sg_views.requested(req)}
        if admin_password:
            server['adminPass'] = admin_password
        return {'server': server}

    def show(self, req: wsgi.Request, instance: objects.Instance, extend: dict | None = None,
             for_show: bool = False) -> dict:
        """The full view. ``extend`` caches per-list policy answers (see :meth:`detail`);
        ``for_show``: fields only GET /servers/{id} (and update) carry (2.71)."""
        extend = extend if extend is not None else self._policy_answers(req, [instance])

        def f(name: str, default: object = None) -> Any:
            return _field(instance, name, default)

        status = common.status_from_state(f('vm_state'), f('task_state'))
        server: dict[str, Any] = {
            'id': instance.uuid,
            'name': f('display_name'),
            'status': status,
            'tenant_id': f('project_id'),
            'user_id': f('user_id'),
            'metadata': dict(f('metadata', {})),
            'hostId': host_id(f('project_id'), f('host')),
            'image': server_fields.image_with_properties(req, instance,
                                                         self._image(req, instance)),
            'flavor': self._flavor(req, instance, extend['extra_specs']),
            'created': common.isotime(f('created_at')),
            'updated': common.isotime(f('updated_at') or f('created_at')),
            'addresses': _addresses(instance),
            'accessIPv4': str(f('access_ip_v4', '')),
            'accessIPv6': str(f('access_ip_v6', '')),
            'links': self._get_links(req, instance.uuid),
            'OS-DCF:diskConfig': 'AUTO' if f('auto_disk_config') else 'MANUAL',
            'OS-EXT-AZ:availability_zone': f('availability_zone', ''),
            'config_drive': f('config_drive', ''),
            'key_name': f('key_name'),
            'OS-SRV-USG:launched_at': _usage_time(f('launched_at')),
            'OS-SRV-USG:terminated_at': _usage_time(f('terminated_at')),
            'OS-EXT-STS:task_state': f('task_state'),
            'OS-EXT-STS:vm_state': f('vm_state'),
            'OS-EXT-STS:power_state': f('power_state', 0),
            'os-extended-volumes:volumes_attached': extend['volumes'].get(instance.uuid, [])
            if 'volumes' in extend else
            server_fields.volumes_attached(req, [instance]).get(instance.uuid, []),
        }
        # Those of its ports; none (no key, as in Nova) while it has no port.
        groups = extend.get('security_groups', {}).get(instance.uuid)
        if groups:
            server['security_groups'] = groups
        if status in _PROGRESS_STATUSES:
            server['progress'] = f('progress', 0)
        if extend['extended_attributes']:
            server.update(self._extended_attributes(req, instance))
        if avr.is_supported(req, '2.9'):
            server['locked'] = bool(f('locked'))
        if avr.is_supported(req, '2.19'):
            server['description'] = f('display_description')
        if avr.is_supported(req, '2.26'):
            server['tags'] = list(f('tags', []))
        if status in _FAULT_STATUSES:
            fault = self._fault(req, instance)
            if fault:
                server['fault'] = fault
        server.update(server_fields.by_microversion(req, instance, extend, for_show))
        return {'server': server}

    def update(self, req: wsgi.Request, instance: objects.Instance) -> dict:
        """The body of PUT /servers/{id}: the show view from 2.75, fewer fields before."""
        body = self.show(req, instance, for_show=True)
        if not avr.is_supported(req, '2.75'):
            body['server'] = {k: v for k, v in body['server'].items()
                              if not k.startswith(server_fields.NOT_IN_UPDATE_BEFORE_275)}
        return body

    def index(self, req: wsgi.Request, instances: list) -> dict:
        return self._list(req, instances, lambda i: self.basic(req, i), 'servers')

    def detail(self, req: wsgi.Request, instances: list) -> dict:
        extend = self._policy_answers(req, instances)
        return self._list(req, instances, lambda i: self.show(req, i, extend),
                          'servers/detail')

    def _list(self, req: wsgi.Request, instances: list[objects.Instance],
              render: Callable[[objects.Instance], dict], collection: str) -> dict:
        body: dict = {'servers': [render(i)['server'] for i in instances]}
        links = self._get_collection_links(req, instances, collection)
        if links:
            body['servers_links'] = links
        return body

    @staticmethod
    def _policy_answers(req: wsgi.Request, instances: list) -> dict:
        context = req.context
        own = {'project_id': context.project_id, 'user_id': context.user_id}
        answers: dict[str, object] = {
            'extended_attributes': context.can(srv_policies.EXTENDED_ATTRIBUTES, own,
                                               fatal=False),
            'extra_specs': (avr.is_supported(req, '2.47') and
                            context.can(srv_policies.SERVERS % 'show:flavor-extra-specs',
                                        own, fatal=False)),
        }
        answers.update(server_fields.host_status_answers(req, instances))
        answers.update(server_fields.request_specs(req, instances))
        answers['security_groups'] = sg_views.for_servers(req, instances)
        answers['volumes'] = server_fields.volumes_attached(req, instances)
        return answers

    def _image(self, req: wsgi.Request, instance: objects.Instance) -> dict | str:
        if not _field(instance, 'image_ref'):
            return ''
        image_id = str(_field(instance, 'image_ref'))
        return {'id': image_id, 'links': [
            {'rel': 'bookmark', 'href': self._get_bookmark_link(req, image_id, 'images')}]}

    def _flavor(self, req: wsgi.Request, instance: objects.Instance, extra_specs: bool) -> dict:
        flavor = _field(instance, 'flavor')
        if not avr.is_supported(req, '2.47'):
            return {'id': flavor.flavorid, 'links': [
                {'rel': 'bookmark',
                 'href': self._get_bookmark_link(req, flavor.flavorid, 'flavors')}]}
        body = {'vcpus': flavor.vcpus, 'ram': flavor.memory_mb, 'disk': flavor.root_gb,
                'ephemeral': flavor.ephemeral_gb, 'swap': flavor.swap,
                'original_name': flavor.name}
        if extra_specs:
            body['extra_specs'] = dict(flavor.extra_specs or {})
        return body

    @staticmethod
    def _extended_attributes(req: wsgi.Request, instance: objects.Instance) -> dict:
        attrs = {'OS-EXT-SRV-ATTR:host': _field(instance, 'host'),
                 'OS-EXT-SRV-ATTR:hypervisor_hostname': _field(instance, 'node'),
                 'OS-EXT-SRV-ATTR:instance_name': instance.name}
        if avr.is_supported(req, '2.3'):
            attrs.update({
                'OS-EXT-SRV-ATTR:reservation_id': _field(instance, 'reservation_id'),
                'OS-EXT-SRV-ATTR:launch_index': _field(instance, 'launch_index'),
                'OS-EXT-SRV-ATTR:hostname': _field(instance, 'hostname'),
                'OS-EXT-SRV-ATTR:kernel_id': _field(instance, 'kernel_id') or '',
                'OS-EXT-SRV-ATTR:ramdisk_id': _field(instance, 'ramdisk_id') or '',
                'OS-EXT-SRV-ATTR:root_device_name': _field(instance, 'root_device_name'),
                'OS-EXT-SRV-ATTR:user_data': _field(instance, 'user_data'),
            })
        return attrs

    @staticmethod
    def _fault(req: wsgi.Request, instance: objects.Instance) -> dict | None:
        if not instance.obj_attr_is_set('fault') or instance.fault is None:
            return None
        fault = instance.fault
        body = {'code': fault.code, 'created': common.isotime(fault.created_at),
                'message': fault.message}
        # A 500's details are a traceback: only administrators see them.
        if fault.details and (req.context.is_admin or fault.code != 500):
            body['details'] = fault.details
        return body
