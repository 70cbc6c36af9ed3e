"""Online data migrations: ``novalite-manage db online_data_migrations``, as Nova's.

A schema migration changes the tables; an online data migration rewrites rows that the
running code can still read the old way, in small batches, while the cloud runs. Each is
a function ``fn(context, max_count) -> (found, done)``: how many rows still need it
(at most ``max_count`` looked at) and how many it migrated. ``MIGRATIONS`` lists them in
the order they run; a migration stays listed until the release after every deployment
has run it. None is pending today.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import prettytable
from oslo_log import log as logging

from novalite.context import RequestContext

LOG = logging.getLogger(__name__)

Migration = Callable[[RequestContext, int], tuple[int, int]]

MIGRATIONS: tuple[Migration, ...] = ()

# The batch size when no --max-count is given (then batches run until none migrates).
DEFAULT_BATCH = 50

# {migration name: (found, done)}
Results = dict[str, tuple[int, int]]


def run_batch(context: RequestContext, migrations: Sequence[Migration],
              max_count: int) -> tuple[Results, bool]:
    """One pass over ``migrations``, stopping once ``max_count`` rows were migrated in
    all. Returns their results and whether one of them raised."""
    results: Results = {}
    failed = False
    ran = 0
    for migration in migrations:
        name = migration.__name__
        try:
            found, done = migration(context, max_count - ran)
        except Exception:
            LOG.exception('Error attempting to run %s', name)
            print('Error attempting to run %s' % name)
            failed = True
            found = done = 0
        if found:
            print('%i rows matched query %s, %i migrated' % (found, name, done))
        results[name] = (found, done)
        ran += done
        if ran >= max_count:
            break
    return results, failed


def _table(results: Results) -> str:
    table = prettytable.PrettyTable(['Migration', 'Total Needed', 'Completed'])
    for name in sorted(results):
        table.add_row([name, *results[name]])
    return table.get_string()


def run(context: RequestContext, max_count: str | None,
        migrations: Sequence[Migration] = MIGRATIONS) -> int:
    """The command: one batch of ``max_count``, or batches until nothing is left.

    Exit 0: nothing left to migrate, 1: rows were migrated (with --max-count: run again),
    2: a migration failed (and, with --max-count, no other did any work), 127: bad
    --max-count.
    """
    unlimited = max_count is None
    if max_count is None:
        count = DEFAULT_BATCH
        print('Running batches of %i until complete' % count)
    else:
        try:
            count = int(max_count)
        except ValueError:
            count = -1
        if count < 1:
            print('Must supply a positive value for max_count')
            return 127
    totals: Results = {}
    while True:
        results, failed = run_batch(context, migrations, count)
        ran = 0
        for name, (found, done) in results.items():
            old_found, old_done = totals.get(name, (0, 0))
            totals[name] = (old_found + found, old_done + done)
            ran += done
        if not unlimited or not ran:
            break
    print(_table(totals))
    # Unlimited, the loop ends when no migration does any work: a failure left is one
    # that needs the operator. With --max-count, a failure may wait on rows another
    # migration is still moving, so it is fatal only when nothing else ran.
    if failed and (unlimited or not ran):
        print('Some migrations failed unexpectedly. Check log for details.')
        return 2
    return 1 if ran else 0
