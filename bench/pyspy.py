"""Sampling profiles of running daemons with py-spy, and what they say in a few lines.

``Profiler(pids, out_dir)`` starts one ``py-spy record`` per process tree (children
included, so a daemon's forked workers count with it) and ``stop()`` ends them and reads
their collapsed stacks back. Only samples of the thread holding the GIL are kept
(``--gil``): a thread waiting for a socket, a lock or a queue does not hold it, so the
samples are the Python CPU of the process, and each frame's share of them says where that
CPU went.

``top(stacks)`` groups the samples two ways: by library (the package of the innermost frame
that is not the standard library's, "novalite" for novalite's own) and by function of
novalite (inclusive: every sample with that function anywhere on the stack).

Read a saved profile again::

    .venv/bin/python bench/pyspy.py /tmp/prof/conductor.txt
    .venv/bin/python bench/pyspy.py /tmp/get.txt --under _Connection.handle
"""
from __future__ import annotations

import collections
import os
import re
import shutil
import signal
import subprocess
import sys
import time

_FRAME = re.compile(r'^(?P<func>.*?) \((?P<file>[^:()]*)(?::(?P<line>\d+))?\)$')


def available() -> str | None:
    """The py-spy executable beside this Python, or on PATH."""
    beside = os.path.join(os.path.dirname(sys.executable), 'py-spy')
    return beside if os.path.exists(beside) else shutil.which('py-spy')


class Profiler:
    def __init__(self, pids: dict[str, int], out_dir: str, rate: int = 67) -> None:
        exe = available()
        if exe is None:
            raise SystemExit('py-spy is not installed (pip install py-spy)')
        os.makedirs(out_dir, exist_ok=True)
        self.paths = {name: os.path.join(out_dir, '%s.txt' % name) for name in pids}
        self.procs = {
            name: subprocess.Popen(
                [exe, 'record', '--pid', str(pid), '--subprocesses', '--nonblocking',
                 '--rate', str(rate), '--gil', '--format', 'raw', '--output', self.paths[name]],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for name, pid in pids.items()}
        time.sleep(1.0)  # py-spy attaches before the measured work starts

    def stop(self) -> dict[str, collections.Counter]:
        for proc in self.procs.values():
            proc.send_signal(signal.SIGINT)
        for proc in self.procs.values():
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
        return {name: read(path) for name, path in self.paths.items() if os.path.exists(path)}


def read(path: str) -> collections.Counter:
    """Collapsed stacks (``frame;frame;... count`` per line) into a Counter."""
    stacks: collections.Counter = collections.Counter()
    with open(path) as f:
        for line in f:
            stack, _, count = line.rstrip('\n').rpartition(' ')
            if stack and count.isdigit():
                stacks[stack] += int(count)
    return stacks


def _frames(stack: str) -> list[tuple[str, str]]:
    frames = []
    for frame in stack.split(';'):
        match = _FRAME.match(frame)
        if match:
            frames.append((match.group('func'), match.group('file')))
    return frames


def _library(path: str) -> str | None:
    """The top-level package of a frame's file (py-spy shortens paths to start at it),
    None for the standard library's."""
    if '/site-packages/' in path:
        path = path.split('/site-packages/', 1)[1]
    if '/novalite/' in path:
        return 'novalite'
    top_level = path.lstrip('/').split('/', 1)[0].removesuffix('.py')
    if not top_level or top_level in sys.stdlib_module_names or path.startswith('/'):
        return None
    return top_level


def top(stacks: collections.Counter, limit: int = 12) -> dict:
    """Shares of the samples by library (innermost non-stdlib frame) and by novalite
    function (inclusive)."""
    total = sum(stacks.values())
    libraries: collections.Counter = collections.Counter()
    functions: collections.Counter = collections.Counter()
    for stack, count in stacks.items():
        frames = _frames(stack)
        owner = 'stdlib'
        for _, path in reversed(frames):
            library = _library(path)
            if library is not None:
                owner = library
                break
        libraries[owner] += count
        seen = set()
        for func, path in frames:
            if _library(path) == 'novalite':
                key = '%s:%s' % (path.split('novalite/', 1)[-1], func)
                if key not in seen:
                    seen.add(key)
                    functions[key] += count

    def share(counter: collections.Counter) -> dict[str, float]:
        return {key: round(100.0 * value / total, 1)
                for key, value in counter.most_common(limit)}

    return {'samples': total, 'by_library_pct': share(libraries),
            'novalite_functions_inclusive_pct': share(functions)}


def under(stacks: collections.Counter, function: str) -> collections.Counter:
    """Only the samples with a frame of ``function`` (e.g. ``_Connection.handle``): the
    work done on behalf of it, the rest of the process left out."""
    return collections.Counter({stack: count for stack, count in stacks.items()
                                if any(func == function for func, _ in _frames(stack))})


if __name__ == '__main__':
    import argparse
    import json
    parser = argparse.ArgumentParser(description='Summarise py-spy raw profiles.')
    parser.add_argument('profiles', nargs='+')
    parser.add_argument('--under', metavar='FUNCTION',
                        help='only samples with this function on the stack')
    cli = parser.parse_args()
    for name in cli.profiles:
        stacks = read(name)
        if cli.under:
            stacks = under(stacks, cli.under)
        print(json.dumps({'profile': name, 'under': cli.under, **top(stacks, limit=25)},
                         indent=1))
