"""The fake driver's live migration copy: a guest's memory moved at a fixed rate.

A :class:`CopyJob` stands for what libvirt does between the two hosts: it copies the
guest's memory at ``[fake_driver] live_migration_mb_per_second`` (and, in a block
migration, its root disk over the same time), reports the counters every
``PROGRESS_INTERVAL`` seconds, and ends in one of three ways: complete, aborted (an
operator's ``live_migration_abort``) or failed (fault injection). A forced completion
copies the rest at once, as a paused guest converges at once. :class:`LiveMigrations`
keeps a host's running copies, so that abort and force complete find them, and turns
an outcome into the compute manager's ``post_method`` or ``recover_method``.
"""
from __future__ import annotations

import dataclasses
import enum
import threading
import time
from collections.abc import Callable

from oslo_log import log as logging

from novalite import exception, objects
from novalite.conf import CONF
from novalite.context import RequestContext
from novalite.virt import driver

LOG = logging.getLogger(__name__)

MiB = 1024 ** 2
GiB = 1024 ** 3
# Seconds between two progress reports, as Nova's libvirt monitor polls its job.
PROGRESS_INTERVAL = 0.5


class Outcome(enum.Enum):
    COMPLETED = 'completed'
    CANCELLED = 'cancelled'
    FAILED = 'failed'


@dataclasses.dataclass(frozen=True)
class Progress:
    """Bytes copied so far, as a migration records them (``memory_*``, ``disk_*``)."""
    memory_total: int
    memory_processed: int
    disk_total: int
    disk_processed: int

    def save_into(self, migration: objects.Migration) -> None:
        migration.memory_total = self.memory_total
        migration.memory_processed = self.memory_processed
        migration.memory_remaining = self.memory_total - self.memory_processed
        migration.disk_total = self.disk_total
        migration.disk_processed = self.disk_processed
        migration.disk_remaining = self.disk_total - self.disk_processed
        migration.save()


class CopyJob:
    """One guest's copy to its destination; :meth:`run` it on the migrating thread,
    :meth:`abort` or :meth:`force_complete` it from another.

    :param memory_total: bytes of guest memory
    :param disk_total: bytes of disk to copy beside (0: none)
    :param bytes_per_second: the memory copy's rate
    :param fail_at: the fraction of the copy at which it fails, or None
    """

    def __init__(self, memory_total: int, disk_total: int, bytes_per_second: float,
                 fail_at: float | None = None) -> None:
        self.memory_total = memory_total
        self.disk_total = disk_total
        self.bytes_per_second = bytes_per_second
        self.fail_at = fail_at
        self.forced = False
        self._request: Outcome | None = None
        self._over = False
        self._lock = threading.Lock()
        self._wake = threading.Event()

    @classmethod
    def for_guest(cls, memory_mb: int, disk_gb: int, dest: str) -> CopyJob:
        """The copy of a guest of ``memory_mb`` MiB and ``disk_gb`` GiB of disk to move
        (0: shared or no disk) to ``dest``, as the ``[fake_driver]`` options say: at
        ``live_migration_mb_per_second``, failing half-way to the hosts of
        ``fail_live_migration_on_hosts``."""
        fail_at = 0.5 if dest in CONF.fake_driver.fail_live_migration_on_hosts else None
        return cls(memory_total=memory_mb * MiB, disk_total=disk_gb * GiB,
                   bytes_per_second=CONF.fake_driver.live_migration_mb_per_second * MiB,
                   fail_at=fail_at)

    def abort(self) -> None:
        """:raises MigrationError: the copy is over already"""
        self._ask(Outcome.CANCELLED)

    def force_complete(self) -> None:
        """:raises MigrationError: the copy is over already"""
        self._ask(Outcome.COMPLETED)

    def _ask(self, outcome: Outcome) -> None:
        with self._lock:
            if self._over:
                raise exception.MigrationError(reason='the migration is over already')
            if self._request is None:
                self._request = outcome
                self.forced = outcome is Outcome.COMPLETED
        self._wake.set()

    def run(self, report: Callable[[Progress], None]) -> Outcome:
        """Copy until an outcome, calling ``report`` at the start, every
        ``PROGRESS_INTERVAL`` seconds and at the end."""
        started = time.monotonic()
        elapsed = 0.0
        while True:
            fraction = self._fraction(elapsed)
            with self._lock:
                outcome, fraction = self._decide(fraction)
                self._over = outcome is not None
            report(self._progress(fraction))
            if outcome is not None:
                return outcome
            self._wake.wait(min(PROGRESS_INTERVAL, self._seconds_to(fraction)))
            elapsed = time.monotonic() - started

    def _fraction(self, elapsed: float) -> float:
        if not self.memory_total:
            return 1.0
        return min(1.0, elapsed * self.bytes_per_second / self.memory_total)

    def _decide(self, fraction: float) -> tuple[Outcome | None, float]:
        """The outcome reached at ``fraction`` (None: copy on), and the fraction
        copied by then."""
        if self._request is Outcome.COMPLETED:
            return Outcome.COMPLETED, 1.0
        if self._request is Outcome.CANCELLED:
            return Outcome.CANCELLED, fraction
        if self.fail_at is not None and fraction >= self.fail_at:
            return Outcome.FAILED, self.fail_at
        if fraction >= 1.0:
            return Outcome.COMPLETED, 1.0
        return None, fraction

    def _seconds_to(self, fraction: float) -> float:
        """Seconds until the copy reaches its end (or its failure point)."""
        target = 1.0 if self.fail_at is None else self.fail_at
        return max(0.0, (target - fraction) * self.memory_total / self.bytes_per_second)

    def _progress(self, fraction: float) -> Progress:
        return Progress(memory_total=self.memory_total,
                        memory_processed=int(self.memory_total * fraction),
                        disk_total=self.disk_total,
                        disk_processed=int(self.disk_total * fraction))


class LiveMigrations:
    """The live migrations a fake host runs as their source, by instance uuid."""

    def __init__(self) -> None:
        self._jobs: dict[str, CopyJob] = {}
        self._lock = threading.Lock()

    def running(self, instance: objects.Instance) -> CopyJob:
        """:raises MigrationError: no live migration of ``instance`` runs here"""
        with self._lock:
            job = self._jobs.get(instance.uuid)
        if job is None:
            raise exception.MigrationError(
                reason='no live migration of instance %s runs on this host' % instance.uuid)
        return job

    def migrate(self, context: RequestContext, instance: objects.Instance, dest: str,
                post_method: driver.PostMethod, recover_method: driver.RecoverMethod,
                block_migration: bool, migrate_data: objects.LiveMigrateData,
                job: CopyJob, pause: Callable[[], None]) -> None:
        """Run ``job`` to its outcome, saving its progress in the migration, then call
        ``post_method`` (after ``pause`` when it was forced) or ``recover_method``.

        :raises MigrationError: ``instance`` is being live-migrated already
        """
        with self._lock:
            if instance.uuid in self._jobs:
                raise exception.MigrationError(
                    reason='instance %s is being live-migrated already' % instance.uuid)
            self._jobs[instance.uuid] = job
        try:
            outcome = job.run(
                lambda progress: _save_progress(instance.uuid, migrate_data, progress))
        finally:
            with self._lock:
                del self._jobs[instance.uuid]
        if outcome is Outcome.COMPLETED:
            if job.forced:
                # As libvirt: the guest paused to converge; it runs again on the destination.
                try:
                    pause()
                except exception.InstanceNotFound:
                    pass  # deleted meanwhile: the destination has it all the same
            post_method(context, instance, dest, block_migration, migrate_data)
        elif outcome is Outcome.CANCELLED:
            recover_method(context, instance, dest, migrate_data, error=None,
                           migration_status='cancelled')
        else:
            recover_method(context, instance, dest, migrate_data,
                           error=exception.MigrationError(
                               reason='fake driver told to fail live migrations to host %s'
                               % dest),
                           migration_status='error')


def _save_progress(instance_uuid: str, migrate_data: objects.LiveMigrateData,
                   progress: Progress) -> None:
    """Progress into the migration's counters; a failed save is only logged: the copy
    goes on (the next save carries the figures)."""
    if migrate_data.migration is None:
        return
    try:
        progress.save_into(migrate_data.migration)
    except Exception:
        LOG.warning('Could not save the live migration progress of instance %s',
                    instance_uuid, exc_info=True)
