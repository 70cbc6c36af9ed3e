"""The CPU of the API database calls every boot makes; prints one JSON line.

In-process, on a throw-away MariaDB (or PostgreSQL) database named ``nlbench_*`` and
dropped afterwards:

- ``get_limits``: the quota limits of a project and user (the class, project and user
  rows in one query), which the API reads for each POST and the conductor again for
  its recheck;
- ``post_rows``: the request spec, build request and instance mapping the API writes
  for each server of a POST, in one transaction.

Each figure is the CPU milliseconds per call of this thread (``time.thread_time``): the
least and the median of five rounds, after a warm-up::

    .venv/bin/python bench/api_db_calls.py
    .venv/bin/python bench/api_db_calls.py --db postgresql --calls 300

Run it on two commits in turns to see what a change to these calls did.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
import uuid
from collections.abc import Callable

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _HERE)
sys.path.insert(0, os.path.dirname(_HERE))
import procstats  # noqa: E402


def per_call_ms(fn: Callable[[], None], calls: int, rounds: int = 5) -> dict:
    for _ in range(max(calls // 4, 10)):
        fn()
    means = []
    for _ in range(rounds):
        started = time.thread_time()
        for _ in range(calls):
            fn()
        means.append((time.thread_time() - started) / calls * 1000)
    means.sort()
    return {'min': round(means[0], 3), 'median': round(means[len(means) // 2], 3),
            'calls': calls * rounds}


def measure(calls: int) -> dict:
    from novalite import context as nl_context
    from novalite import objects, quota
    from novalite.db import engine
    ctxt = nl_context.get_admin_context()
    flavor = objects.Flavor(id=1, flavorid='f1', name='f1', memory_mb=512, vcpus=1,
                            root_gb=1, ephemeral_gb=0, swap=0, extra_specs={})

    def post_rows() -> None:
        instance_uuid = str(uuid.uuid4())
        instance = objects.Instance(ctxt, uuid=instance_uuid, project_id='p1',
                                    user_id='u1', flavor=flavor)
        spec = objects.RequestSpec.from_components(ctxt, instance_uuid, None, flavor, 1)
        build_request = objects.BuildRequest(ctxt, instance_uuid=instance_uuid,
                                             project_id='p1', user_id='u1',
                                             instance=instance, tags=[])
        mapping = objects.InstanceMapping(ctxt, instance_uuid=instance_uuid,
                                          cell_mapping=None, project_id='p1', user_id='u1',
                                          queued_for_delete=False)
        with engine.api_writer() as session:
            spec.create(session=session)
            build_request.create(session=session)
            mapping.create(session=session)

    return {'get_limits_cpu_ms': per_call_ms(
                lambda: quota.get_limits(ctxt, 'p1', 'u1'), calls),
            'post_rows_cpu_ms': per_call_ms(post_rows, calls)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--db', choices=['mysql', 'postgresql'], default='mysql')
    parser.add_argument('--calls', type=int, default=200, help='calls per round')
    args = parser.parse_args(argv)
    from novalite import objects
    from novalite.conf import CONF
    from novalite.db import engine, migration
    from tests.devstack.harness import backends
    objects.register_all()
    name = 'nlbench_%s' % uuid.uuid4().hex[:8]
    url = backends.create_database(args.db, name)
    try:
        migration.db_sync('api', url=url)
        CONF.set_override('connection', url, group='api_database')
        figures = {'benchmark': 'api_db_calls', 'db': args.db,
                   'yardstick_ms': procstats.yardstick_ms()}
        figures.update(measure(args.calls))
    finally:
        engine.dispose_all()
        backends.drop_database(args.db, name)
    print(json.dumps(figures))
    return 0


if __name__ == '__main__':
    sys.exit(main())
