"""How much of each daemon's idle memory its libraries take on their own.

Brings up the devstack-style stack (the layout of ``boot_storm.py --devstack``) with
``PYTHONPROFILEIMPORTTIME`` set, so that every daemon writes each module it imports to
its log. Once the stack is idle it reads each daemon's RSS (master and workers), then
imports the very modules that daemon imported, except novalite's own, in the same order,
in a fresh interpreter, and reads that interpreter's RSS: the memory the chosen libraries
(oslo.*, SQLAlchemy, kombu, keystoneauth1, ...) take before any novalite code, object,
connection or thread exists. A module the daemon did not import is not importable there
either (so an optional import a library tries, eventlet or cryptography, fails as it did
in the daemon).

    .venv/bin/python bench/library_rss.py

Prints one JSON line: per daemon, ``rss_mb`` (master, workers), ``libraries_rss_mb``,
``bare_python_rss_mb`` (an interpreter that imported nothing), and module counts.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench import procstats  # noqa: E402
from bench.boot_storm import DEVSTACK_CONF  # noqa: E402

# Run by a fresh interpreter: import the listed modules, allow no other top-level
# package, print the RSS in kB.
_IMPORTER = r'''
import importlib, importlib.abc, sys, warnings
warnings.simplefilter('ignore')
names = open(sys.argv[1]).read().split()
# -X importtime lists the imports a daemon tried, failed ones too. Two fail on purpose:
# eventlet, which the threading backend keeps out (novalite/concurrency.py), and
# cryptography, deferred until PyMySQL needs it (novalite/db/driver.py).
tops = ({n.split('.')[0] for n in names} | set(sys.builtin_module_names)) - {
    'eventlet', 'cryptography'}

class Absent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] not in tops:
            raise ImportError('not imported by the daemon: %s' % name)
        return None

sys.meta_path.insert(0, Absent())
if 'oslo_service.backend' in names:
    # As the daemon does before oslo.service's other modules bind their backend.
    from oslo_service import backend
    backend.init_backend(backend.BackendType.THREADING)
failed = []
for name in names:
    try:
        importlib.import_module(name)
    except Exception:
        failed.append(name)
import gc
gc.collect()
rss = [line for line in open('/proc/self/status') if line.startswith('VmRSS')][0]
print(rss.split()[1], len(sys.modules), len(failed), ','.join(failed))
'''


def imported_modules(log_file: str) -> list[str]:
    """The modules a daemon's log lists (``-X importtime``), first import first."""
    seen: dict[str, None] = {}
    with open(log_file, errors='replace') as f:
        for line in f:
            if not line.startswith('import time:') or 'imported package' in line:
                continue
            name = line.rsplit('|', 1)[-1].strip()
            if name and name not in ('__main__', '__mp_main__'):
                seen.setdefault(name, None)
    return list(seen)


def libraries_rss(modules: list[str], work_dir: str, name: str) -> dict:
    listing = os.path.join(work_dir, '%s.modules' % name)
    with open(listing, 'w') as f:
        f.write('\n'.join(m for m in modules if m.split('.')[0] != 'novalite'))
    env = {k: v for k, v in os.environ.items() if k != 'PYTHONPROFILEIMPORTTIME'}
    out = subprocess.run([sys.executable, '-c', _IMPORTER, listing], capture_output=True,
                         text=True, env=env, check=True).stdout.split()
    return {'libraries_rss_mb': round(int(out[0]) / 1024, 1), 'modules_loaded': int(out[1]),
            'import_failures': int(out[2]),
            'failed': out[3].split(',')[:20] if len(out) > 3 else []}


def bare_python_rss() -> float:
    out = subprocess.run([sys.executable, '-c', _IMPORTER, os.devnull], capture_output=True,
                         text=True, check=True).stdout.split()
    return round(int(out[0]) / 1024, 1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--settle', type=float, default=5.0,
                        help='seconds to wait after the stack is up (default 5)')
    args = parser.parse_args(argv)
    from novalite.devstack import Stack
    figures: dict = {'benchmark': 'library_rss', 'bare_python_rss_mb': bare_python_rss(),
                     'daemons': {}}
    os.environ['PYTHONPROFILEIMPORTTIME'] = '1'
    try:
        with tempfile.TemporaryDirectory(prefix='nl-bench-') as state_dir:
            stack = Stack(state_dir, backend='mysql', conf=DEVSTACK_CONF)
            try:
                stack.up()
                time.sleep(args.settle)
                for name, daemon in sorted(stack.daemons.items()):
                    modules = imported_modules(daemon.log_file)
                    entry = {'rss_mb': procstats.rss_mb(daemon.pid),
                             'modules': len(modules),
                             'novalite_modules': sum(1 for m in modules
                                                     if m.split('.')[0] == 'novalite')}
                    entry.update(libraries_rss(modules, state_dir, name))
                    figures['daemons'][name] = entry
            finally:
                stack.down(check=False)
    finally:
        del os.environ['PYTHONPROFILEIMPORTTIME']
    print(json.dumps(figures))
    return 0


if __name__ == '__main__':
    sys.exit(main())
