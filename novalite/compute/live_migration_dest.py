"""Live migration on the destination host: its pre-check, getting ready, taking the
instance over, and removing what it made when the migration fails."""
from __future__ import annotations

from typing import TYPE_CHECKING

from novalite import objects

if TYPE_CHECKING:
    from novalite.compute.manager import ComputeManager
    from novalite.context import RequestContext


def check_can_live_migrate_destination(mgr: ComputeManager, context: RequestContext,
                                       instance: objects.Instance,
                                       block_migration: bool | None,
                                       migration: objects.Migration
                                       ) -> objects.LiveMigrateData:
    raise NotImplementedError()


def pre_live_migration(mgr: ComputeManager, context: RequestContext,
                       instance: objects.Instance,
                       migrate_data: objects.LiveMigrateData) -> objects.LiveMigrateData:
    raise NotImplementedError()


def post_live_migration_at_destination(mgr: ComputeManager, context: RequestContext,
                                       instance: objects.Instance, block_migration: bool,
                                       migrate_data: objects.LiveMigrateData) -> None:
    raise NotImplementedError()


def rollback_live_migration_at_destination(mgr: ComputeManager, context: RequestContext,
                                           instance: objects.Instance, destroy_disks: bool,
                                           migrate_data: objects.LiveMigrateData) -> None:
    raise NotImplementedError()
