"""CPU time and memory of process trees, read from /proc (Linux only).

A benchmark names the processes it measures by their top pids (a daemon, or gunicorn's
master); everything forked below them counts with them.
"""
from __future__ import annotations

import os
import time

_TICKS = os.sysconf('SC_CLK_TCK')
_PAGE = os.sysconf('SC_PAGE_SIZE')


def _stat(pid: int) -> list[str] | None:
    try:
        with open('/proc/%d/stat' % pid) as f:
            data = f.read()
    except OSError:
        return None
    # The command name may hold spaces: the fields start after its closing bracket.
    return data[data.rindex(')') + 2:].split()


def _children() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir('/proc'):
        if entry.isdigit():
            fields = _stat(int(entry))
            if fields is not None:
                children.setdefault(int(fields[1]), []).append(int(entry))
    return children


def tree(pid: int, children: dict[int, list[int]] | None = None) -> list[int]:
    """``pid`` and every process below it."""
    children = _children() if children is None else children
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children.get(current, []))
    return found


def cpu_seconds(pid: int) -> float:
    """User plus system CPU of ``pid``'s tree so far (exited children that were waited
    for included)."""
    total = 0
    for member in tree(pid):
        fields = _stat(member)
        if fields is not None:
            # utime, stime, cutime, cstime: fields 14-17 of stat, 12-15 after the name.
            total += sum(int(v) for v in fields[11:15])
    return total / _TICKS


def cpu_by_process(pid: int) -> dict[int, float]:
    """User plus system CPU of each live process of ``pid``'s tree (its own, not its
    children's), by pid."""
    times = {}
    for member in tree(pid):
        fields = _stat(member)
        if fields is not None:
            times[member] = (int(fields[11]) + int(fields[12])) / _TICKS
    return times


def rss_mb(pid: int) -> list[float]:
    """Resident memory of each process of ``pid``'s tree, in MiB."""
    sizes = []
    for member in tree(pid):
        fields = _stat(member)
        if fields is not None:
            sizes.append(round(int(fields[21]) * _PAGE / 2 ** 20, 1))
    return sizes


def pss_mb(pid: int) -> list[float]:
    """Proportional set size of each process of ``pid``'s tree, in MiB: its resident
    pages with each shared page divided among the processes that map it (a forked
    worker's RSS counts in full what it shares with its master; PSS does not). From
    ``/proc/<pid>/smaps_rollup`` (Linux 4.14 on); a process that cannot be read is
    left out."""
    sizes = []
    for member in tree(pid):
        try:
            with open('/proc/%d/smaps_rollup' % member) as f:
                for line in f:
                    if line.startswith('Pss:'):
                        sizes.append(round(int(line.split()[1]) / 1024, 1))
                        break
        except OSError:
            continue
    return sizes


class CpuMeter:
    """CPU seconds used by named process trees between ``start()`` and ``stop()``."""

    def __init__(self, pids: dict[str, int]) -> None:
        self.pids = pids
        self._before: dict[str, float] = {}

    def start(self) -> None:
        self._before = {name: cpu_seconds(pid) for name, pid in self.pids.items()}

    def stop(self) -> dict[str, float]:
        return {name: round(cpu_seconds(pid) - self._before.get(name, 0.0), 3)
                for name, pid in self.pids.items()}


class SpreadMeter:
    """How CPU between ``start()`` and ``stop()`` spread over the processes of each named
    tree (a master and its workers): whether the workers shared the load."""

    def __init__(self, pids: dict[str, int]) -> None:
        self.pids = pids
        self._before: dict[str, dict[int, float]] = {}

    def start(self) -> None:
        self._before = {name: cpu_by_process(pid) for name, pid in self.pids.items()}

    def stop(self) -> dict[str, list[float]]:
        spread = {}
        for name, pid in self.pids.items():
            before = self._before.get(name, {})
            spread[name] = [round(cpu - before.get(member, 0.0), 2)
                            for member, cpu in sorted(cpu_by_process(pid).items())]
        return spread


def pids_named(*names: str) -> dict[str, int]:
    """The oldest process of each command name (``/proc/<pid>/comm``), e.g. ``mariadbd``
    or ``beam.smp`` (RabbitMQ); its children count with it. Names not running are left out."""
    found: dict[str, int] = {}
    for entry in sorted(os.listdir('/proc'), key=lambda e: int(e) if e.isdigit() else 0):
        if not entry.isdigit():
            continue
        try:
            with open('/proc/%s/comm' % entry) as f:
                comm = f.read().strip()
        except OSError:
            continue
        if comm in names and comm not in found:
            found[comm] = int(entry)
    return found


def yardstick_ms(rounds: int = 5) -> float:
    """CPU ms of a fixed pure-Python workload (JSON, dicts, sorting, string formatting:
    what the daemons do most), the least of ``rounds``.

    This machine's speed changes from hour to hour (one benchmark's figures by up to
    1.6 times, with no code changed): a benchmark prints this beside its figures, so two
    runs are compared knowing whether the machine itself was as fast both times.
    """
    import json
    doc = {'server': {'id': 'a' * 36, 'links': [{'rel': 'self', 'href': 'x' * 60}] * 2,
                      'metadata': {'k%d' % i: 'v%d' % i for i in range(20)},
                      'flavor': {'vcpus': 1, 'ram': 512, 'disk': 1}}}
    best = float('inf')
    for _ in range(rounds):
        start = time.process_time()
        for i in range(2000):
            text = json.dumps(doc, sort_keys=True)
            back = json.loads(text)
            keys = sorted(back['server']['metadata'], key=lambda k: (len(k), k))
            '%s-%d-%s' % (keys[0], i, back['server']['id'])
        best = min(best, time.process_time() - start)
    return round(best * 1000, 1)


def yardstick_ms_per_cpu(rounds: int = 3) -> list[float]:
    """:func:`yardstick_ms` pinned to each CPU of this process in turn.

    The two CPUs of one machine need not be as fast as each other: on one of these
    machines one of them ran the yardstick in 27 ms and the other in 47. A storm uses
    both, while :func:`yardstick_ms` (the least of its rounds) reads the faster one.
    """
    allowed = sorted(os.sched_getaffinity(0))
    figures = []
    try:
        for cpu in allowed:
            os.sched_setaffinity(0, {cpu})
            figures.append(yardstick_ms(rounds))
    finally:
        os.sched_setaffinity(0, allowed)
    return figures


def _mariadb():
    """A connection to the devstack MariaDB server, or None without one."""
    import pymysql
    from sqlalchemy.engine import make_url

    from tests.devstack.harness import backends
    url = make_url(backends.SERVER_URLS['mysql'])
    try:
        return pymysql.connect(host=url.host or '127.0.0.1', port=url.port or 3306,
                               user=url.username or 'root', password=url.password or '',
                               connect_timeout=5)
    except pymysql.err.MySQLError:
        return None


def innodb_deadlocks() -> int | None:
    """The MariaDB server's count of InnoDB deadlocks so far (every database on it), or
    None. Placement's allocation writes deadlock with each other under concurrency (gap
    locks on ``allocations``), and Placement retries each after sleeping one second."""
    connection = _mariadb()
    if connection is None:
        return None
    try:
        with connection.cursor() as cursor:
            cursor.execute("SHOW GLOBAL STATUS LIKE 'Innodb_deadlocks'")
            row = cursor.fetchone()
    finally:
        connection.close()
    return int(row[1]) if row else None


def db_roundtrip_ms(count: int = 300) -> float | None:
    """Wall ms of one ``SELECT 1`` to the devstack MariaDB (the median of ``count``), or
    None without one. The boot path is made of round trips (to MariaDB, RabbitMQ,
    Placement): on this machine their cost moves with the hour as much as Python's speed
    does, and the yardstick does not see it."""
    import statistics

    connection = _mariadb()
    if connection is None:
        return None
    walls = []
    try:
        with connection.cursor() as cursor:
            for _ in range(count):
                start = time.perf_counter()
                cursor.execute('SELECT 1')
                cursor.fetchall()
                walls.append(time.perf_counter() - start)
    finally:
        connection.close()
    return round(statistics.median(walls) * 1000, 3)
