"""LiveMigrateData: what the two hosts of a live migration tell each other.

One object travels the whole conversation, as Nova's ``LiveMigrateData``: the
destination's pre-check fills what it offers (its address, whether it shares the
source's instance folder), the source's pre-check what it needs (whether block
migration is needed), ``pre_live_migration`` on the destination the network info as
bound there; the source's driver reads it all when it migrates. Driver-private values
(a libvirt serial port range, a disk list) go in ``driver_data``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oslo_versionedobjects import fields

from novalite.network import model
from novalite.objects import base
from novalite.objects.instance_info_cache import NetworkModelField

if TYPE_CHECKING:
    from novalite.objects.migration import Migration


@base.NovaliteObjectRegistry.register
class LiveMigrateData(base.NovaliteObject):
    VERSION = '1.0'
    migration: Migration | None
    block_migration: bool | None
    is_shared_instance_path: bool
    is_shared_block_storage: bool
    target_connect_addr: str | None
    dest_host: str | None
    dest_zone: str | None
    # The network info as bound on the destination (inactive bindings with Neutron's
    # binding-extended; else the source's own, to be rebound after the move).
    dest_network_info: model.NetworkInfo
    # The ports whose destination binding novalite created (deleted on rollback).
    bound_ports: list[str]
    # Volumes: volume id -> the source's attachment id (kept until the move ends) and
    # the destination's new attachment id.
    old_attachments: dict[str, str]
    new_attachments: dict[str, str]
    driver_data: dict[str, str | None]

    fields: dict[str, fields.Field[Any]] = {
        'migration': fields.ObjectField('Migration', nullable=True),
        'block_migration': fields.BooleanField(nullable=True),
        'is_shared_instance_path': fields.BooleanField(default=False),
        'is_shared_block_storage': fields.BooleanField(default=False),
        'target_connect_addr': fields.StringField(nullable=True),
        'dest_host': fields.StringField(nullable=True),
        # The destination's availability zone (the conductor's, which reads the
        # aggregates): the server's zone once it runs there.
        'dest_zone': fields.StringField(nullable=True),
        'dest_network_info': NetworkModelField(default=[]),
        'bound_ports': fields.ListOfStringsField(default=[]),
        'old_attachments': fields.DictOfStringsField(default={}),
        'new_attachments': fields.DictOfStringsField(default={}),
        'driver_data': fields.DictOfNullableStringsField(default={}),
    }

    @classmethod
    def new(cls, migration: Migration | None = None, block_migration: bool | None = None
            ) -> LiveMigrateData:
        """A fresh object with every field set (defaults), so readers need no checks."""
        return cls(migration=migration, block_migration=block_migration,
                   is_shared_instance_path=False, is_shared_block_storage=False,
                   target_connect_addr=None, dest_host=None, dest_zone=None,
                   dest_network_info=[],
                   bound_ports=[], old_attachments={}, new_attachments={}, driver_data={})
