"""Versioned objects: the nouns that cross RPC and hide where each is stored.

Each class registers itself as an attribute of this package (``objects.Instance``),
after ``register_all()`` has imported the modules, as in Nova.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # The classes as the checker sees them; at run time each module's import sets them.
    from novalite.objects.aggregate import Aggregate as Aggregate
    from novalite.objects.aggregate import AggregateList as AggregateList
    from novalite.objects.block_device import BlockDeviceMapping as BlockDeviceMapping
    from novalite.objects.block_device import BlockDeviceMappingList as BlockDeviceMappingList
    from novalite.objects.build_request import BuildRequest as BuildRequest
    from novalite.objects.build_request import BuildRequestList as BuildRequestList
    from novalite.objects.cell_mapping import CellMapping as CellMapping
    from novalite.objects.cell_mapping import CellMappingList as CellMappingList
    from novalite.objects.compute_node import ComputeNode as ComputeNode
    from novalite.objects.compute_node import ComputeNodeList as ComputeNodeList
    from novalite.objects.console_auth_token import ConsoleAuthToken as ConsoleAuthToken
    from novalite.objects.flavor import Flavor as Flavor
    from novalite.objects.flavor import FlavorList as FlavorList
    from novalite.objects.host_mapping import HostMapping as HostMapping
    from novalite.objects.host_mapping import HostMappingList as HostMappingList
    from novalite.objects.image_meta import ImageMeta as ImageMeta
    from novalite.objects.instance import Instance as Instance
    from novalite.objects.instance import InstanceList as InstanceList
    from novalite.objects.instance_action import InstanceAction as InstanceAction
    from novalite.objects.instance_action import InstanceActionEvent as InstanceActionEvent
    from novalite.objects.instance_action import InstanceActionEventList as InstanceActionEventList
    from novalite.objects.instance_action import InstanceActionList as InstanceActionList
    from novalite.objects.instance_fault import InstanceFault as InstanceFault
    from novalite.objects.instance_group import InstanceGroup as InstanceGroup
    from novalite.objects.instance_group import InstanceGroupList as InstanceGroupList
    from novalite.objects.instance_info_cache import InstanceInfoCache as InstanceInfoCache
    from novalite.objects.instance_mapping import InstanceMapping as InstanceMapping
    from novalite.objects.instance_mapping import InstanceMappingList as InstanceMappingList
    from novalite.objects.keypair import KeyPair as KeyPair
    from novalite.objects.keypair import KeyPairList as KeyPairList
    from novalite.objects.migrate_data import LiveMigrateData as LiveMigrateData
    from novalite.objects.migration import Migration as Migration
    from novalite.objects.migration import MigrationList as MigrationList
    from novalite.objects.request_spec import RequestSpec as RequestSpec
    from novalite.objects.selection import Selection as Selection
    from novalite.objects.service import Service as Service
    from novalite.objects.service import ServiceList as ServiceList
    from novalite.objects.task_log import TaskLog as TaskLog
    from novalite.objects.task_log import TaskLogList as TaskLogList


def register_all() -> None:
    # Importing a module registers the objects it defines.
    __import__('novalite.objects.aggregate')
    __import__('novalite.objects.block_device')
    __import__('novalite.objects.build_request')
    __import__('novalite.objects.cell_mapping')
    __import__('novalite.objects.compute_node')
    __import__('novalite.objects.console_auth_token')
    __import__('novalite.objects.flavor')
    __import__('novalite.objects.host_mapping')
    __import__('novalite.objects.image_meta')
    __import__('novalite.objects.instance')
    __import__('novalite.objects.instance_action')
    __import__('novalite.objects.instance_fault')
    __import__('novalite.objects.instance_group')
    __import__('novalite.objects.instance_info_cache')
    __import__('novalite.objects.instance_mapping')
    __import__('novalite.objects.keypair')
    __import__('novalite.objects.migrate_data')
    __import__('novalite.objects.migration')
    __import__('novalite.objects.request_spec')
    __import__('novalite.objects.selection')
    __import__('novalite.objects.service')
    __import__('novalite.objects.task_log')
