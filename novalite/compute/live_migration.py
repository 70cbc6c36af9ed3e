"""Live migration on the source host (Nova's ``_do_live_migration`` and after).

Flow: ``queue`` (RPC cast from the conductor) → the host's live migration executor →
``pre_live_migration`` on the destination (a call) → the driver migrates → ``post``
(the guest runs on the destination) or ``rollback`` (it still runs here).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from novalite import objects

if TYPE_CHECKING:
    from novalite.compute.manager import ComputeManager
    from novalite.context import RequestContext


class LiveMigrations:
    """The live migrations this host runs as source (filled in below)."""


def stop(mgr: ComputeManager) -> None:
    """Stop the executor (service stop)."""


def check_can_live_migrate_source(mgr: ComputeManager, context: RequestContext,
                                  instance: objects.Instance,
                                  migrate_data: objects.LiveMigrateData
                                  ) -> objects.LiveMigrateData:
    raise NotImplementedError()


def queue(mgr: ComputeManager, context: RequestContext, instance: objects.Instance, dest: str,
          block_migration: bool, migration: objects.Migration,
          migrate_data: objects.LiveMigrateData) -> None:
    raise NotImplementedError()


def abort(mgr: ComputeManager, context: RequestContext, instance: objects.Instance,
          migration_id: int) -> None:
    raise NotImplementedError()


def force_complete(mgr: ComputeManager, context: RequestContext,
                   instance: objects.Instance) -> None:
    raise NotImplementedError()
