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
``by_package_mb`` (what the RSS grew by while each top-level package's modules were
imported, the largest first), ``bare_python_rss_mb`` (an interpreter that imported
nothing), and module counts.
"""
from __future__ import annotations

import argparse
import ast
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

def rss_kb():
    return int([line for line in open('/proc/self/status')
                if line.startswith('VmRSS')][0].split()[1])

sys.meta_path.insert(0, Absent())
# -X importtime lists a module when its import completes, so a module's own imports come
# before it: what RSS grows by at each name is mostly that module's own body, charged
# to its top-level package.
failed = []
by_package = {}
# The daemon selects oslo.service's threading backend before oslo.service's public
# modules bind theirs. The selection imports the backend's modules, which the log lists
# (after oslo_service.backend, before the public ones), so select it just before the
# first public module: selecting it earlier would charge all of those to oslo_service.
selected = False
for name in names:
    before = rss_kb()
    try:
        if (not selected and name.startswith('oslo_service.')
                and not name.split('.')[1].startswith(('_', 'backend'))):
            backend = importlib.import_module('oslo_service.backend')
            backend.init_backend(backend.BackendType.THREADING)
            selected = True
        importlib.import_module(name)
    except Exception:
        failed.append(name)
    top = name.split('.')[0]
    by_package[top] = by_package.get(top, 0) + rss_kb() - before
import gc
gc.collect()
# A literal, not JSON: importing json here would count it (and a bare run may not).
print(repr({'rss_kb': rss_kb(), 'modules': len(sys.modules), 'failed': failed,
            'by_package_kb': by_package}))
'''

# Packages listed by name in ``by_package_mb``; the rest are summed.
TOP_PACKAGES = 12


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
    out = ast.literal_eval(subprocess.run([sys.executable, '-c', _IMPORTER, listing],
                                          capture_output=True, text=True, env=env,
                                          check=True).stdout)
    packages = sorted(out['by_package_kb'].items(), key=lambda item: -item[1])
    top = {name: round(kb / 1024, 1) for name, kb in packages[:TOP_PACKAGES]}
    top['(the other %d)' % max(len(packages) - TOP_PACKAGES, 0)] = round(
        sum(kb for _, kb in packages[TOP_PACKAGES:]) / 1024, 1)
    return {'libraries_rss_mb': round(out['rss_kb'] / 1024, 1),
            'modules_loaded': out['modules'], 'import_failures': len(out['failed']),
            'failed': out['failed'][:20], 'by_package_mb': top}


def bare_python_rss() -> float:
    out = subprocess.run([sys.executable, '-c', _IMPORTER, os.devnull], capture_output=True,
                         text=True, check=True).stdout
    return round(ast.literal_eval(out)['rss_kb'] / 1024, 1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--settle', type=float, default=5.0,
                        help='seconds to wait after the stack is up (default 5)')
    args = parser.parse_args(argv)
    from tests.devstack.harness import Stack
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
