"""A test double of novalite.compute.api.API: servers kept in memory, calls recorded."""
from __future__ import annotations

import datetime
import re
from typing import Any

from oslo_utils import uuidutils

from novalite import exception, objects


class ComputeAPIDouble:
    """Answers like the compute API for the controller; raises what it is told to.

    ``create_error``: an exception ``create`` raises instead of creating.
    ``calls``: (method name, arguments) of every call, for assertions.
    """

    def __init__(self) -> None:
        self.instances: dict[str, Any] = {}
        self.calls: list[tuple[str, dict]] = []
        self.create_error: Exception | None = None

    def add(self, project_id: str = 'demo', **fields: Any) -> Any:
        """Store an instance as if it had been built; returns it."""
        now = datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
        values = dict(uuid=uuidutils.generate_uuid(), display_name='server',
                      display_description=None, project_id=project_id, user_id=project_id,
                      vm_state='active', task_state=None, power_state=1, host=None,
                      node=None, image_ref='', metadata={}, tags=[], locked=False,
                      progress=0, created_at=now, updated_at=now, launched_at=None,
                      terminated_at=None, key_name=None, availability_zone=None,
                      access_ip_v4=None, access_ip_v6=None, config_drive='',
                      auto_disk_config=False, reservation_id='r-test', launch_index=0,
                      hostname='server', kernel_id='', ramdisk_id='',
                      root_device_name=None, user_data=None, fault=None,
                      flavor=objects.Flavor(flavorid='1', name='m1.tiny', memory_mb=512,
                                            vcpus=1, root_gb=1, ephemeral_gb=0, swap=0,
                                            extra_specs={'hw:cpu_policy': 'shared'}))
        values.update(fields)
        instance = objects.Instance(**values)
        self.instances[instance.uuid] = instance
        return instance

    def create(self, context: Any, flavor: Any, image_href: str | None, **kwargs: Any
               ) -> tuple[list, str]:
        self.calls.append(('create', dict(kwargs, flavor=flavor, image_href=image_href)))
        if self.create_error is not None:
            raise self.create_error
        instances = [self.add(project_id=context.project_id, user_id=context.user_id,
                              display_name=kwargs['name'], vm_state='building',
                              task_state='scheduling', flavor=flavor,
                              image_ref=image_href or '')
                     for _ in range(kwargs.get('max_count', 1))]
        return instances, 'r-abcdefgh'

    def get(self, context: Any, instance_uuid: str, expected_attrs: Any = None) -> Any:
        self.calls.append(('get', {'uuid': instance_uuid, 'expected_attrs': expected_attrs}))
        if instance_uuid not in self.instances:
            raise exception.InstanceNotFound(instance_id=instance_uuid)
        return self.instances[instance_uuid]

    def get_all(self, context: Any, search_opts: dict, limit: int | None = None,
                marker: str | None = None, sort_keys: Any = None, sort_dirs: Any = None,
                expected_attrs: Any = None) -> list:
        self.calls.append(('get_all', {'search_opts': search_opts, 'limit': limit,
                                       'marker': marker, 'sort_keys': sort_keys,
                                       'sort_dirs': sort_dirs,
                                       'expected_attrs': expected_attrs}))
        found = [i for i in self.instances.values() if self._matches(i, search_opts)]
        found.sort(key=lambda i: i.created_at, reverse=True)
        if marker is not None:
            uuids = [i.uuid for i in found]
            if marker not in uuids:
                raise exception.MarkerNotFound(marker=marker)
            found = found[uuids.index(marker) + 1:]
        return found[:limit] if limit is not None else found

    @staticmethod
    def _matches(instance: Any, opts: dict) -> bool:
        if 'project_id' in opts and instance.project_id != opts['project_id']:
            return False
        if 'vm_state' in opts and instance.vm_state not in opts['vm_state']:
            return False
        if opts.get('name') and not re.search(opts['name'], instance.display_name):
            return False
        return True

    def delete(self, context: Any, instance: Any) -> None:
        self.calls.append(('delete', {'uuid': instance.uuid}))
        del self.instances[instance.uuid]
