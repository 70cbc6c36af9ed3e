"""Taking a stack down from its record: stop its processes, drop its databases, delete
its vhost, remove its network environment (OVS/OVN and Neutron) and its volume service
(Cinder and Ceph), and list whatever is still there."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from typing import Any

from novalite.allinone import glance as glance_process
from tests.devstack.harness import backends, cinder, neutron, process
from tests.devstack.harness.placement import PlacementProcess

# The daemons relaying the services into a compute's namespace (``forward-<host>``).
FORWARDER = 'forward-'
# The gate between the daemons and the database server (``tests.devstack.harness.dbgate``):
# stopped last too, so that no daemon's graceful stop meets an outage.
DB_GATE = 'dbgate'


def teardown(record: dict[str, Any], state_dir: str,
             daemons: dict[str, process.Process] | None = None,
             placement: PlacementProcess | None = None,
             glance: glance_process.GlanceProcess | None = None,
             network: neutron.NeutronEnvironment | None = None,
             volumes: cinder.CinderEnvironment | None = None) -> list[str]:
    """Remove what ``record`` lists; returns the errors met (it carries on past them)."""
    errors: list[str] = []
    daemons = daemons or {}
    # The network environment and the volume service go meanwhile (gunicorn's graceful
    # stop takes seconds; Ceph's OSD too).
    network_thread = _remove_network(record, network, errors)
    volumes_thread = _remove_volumes(record, volumes, errors)
    # Placement and Glance may be running without a recorded pid (their start failed):
    # their objects know them. Processes known only by a recorded pid (``down`` from
    # another shell) are signalled only while they still run our commands: pids get
    # reused.
    servers = {n: o for n, o in (('placement', placement), ('glance', glance)) if o is not None}
    handled = set(daemons) | set(servers)
    orphans = {n for n in record['pids']
               if n not in handled and _ours(record['pids'][n], state_dir)}
    # The API first (no new work), computes and services next, the servers they use last
    # and, after them, the forwarders that carry a namespaced compute's connections.
    order = sorted(handled | orphans, key=lambda n: (
        n.startswith(FORWARDER) or n == DB_GATE, n != 'api', not n.startswith('compute-'),
        n in ('placement', 'glance')))
    # SIGTERM to all first: each daemon's graceful stop takes seconds, in parallel.
    for name in order:
        if name.startswith(FORWARDER) or name == DB_GATE:
            continue  # stopped last, in order
        try:
            if name in daemons:
                daemons[name].signal(signal.SIGTERM)
            elif name in orphans:
                os.killpg(record['pids'][name], signal.SIGTERM)
        except ProcessLookupError:
            pass
    for name in order:
        try:
            if name in daemons:
                daemons[name].stop()
            elif name in servers:
                servers[name].stop()
            else:
                process.kill_group(record['pids'][name], signalled=True)
        except Exception as exc:
            errors.append('stopping %s: %r' % (name, exc))
    for db_name in record['databases']:
        try:
            backends.drop_database(record['backend'], db_name)
        except Exception as exc:
            errors.append('dropping database %s: %r' % (db_name, exc))
    if record.get('vhost'):
        try:
            backends.delete_vhost(record['vhost'])
        except Exception as exc:
            errors.append('deleting vhost %s: %r' % (record['vhost'], exc))
    for thread in (network_thread, volumes_thread):
        if thread is not None:
            thread.join()
    return errors


def _remove_network(record: dict[str, Any], network: neutron.NeutronEnvironment | None,
                    errors: list[str]) -> threading.Thread | None:
    """A thread stopping the network environment: the live object's graceful stop, or
    from the record alone. Its errors are appended to ``errors``."""
    if network is None and not record.get('network'):
        return None

    def remove() -> None:
        try:
            errors.extend(network.stop() if network is not None
                          else neutron.teardown(record['network']))
        except Exception as exc:
            errors.append('removing the network environment: %r' % exc)
    thread = threading.Thread(target=remove, name='network-teardown')
    thread.start()
    return thread


def _remove_volumes(record: dict[str, Any], volumes: cinder.CinderEnvironment | None,
                    errors: list[str]) -> threading.Thread | None:
    """A thread stopping Cinder and Ceph and removing their database, vhost and folder:
    the live object's stop, or from the record alone. Errors go to ``errors``."""
    if volumes is None and not record.get('volumes'):
        return None

    def remove() -> None:
        try:
            errors.extend(volumes.stop() if volumes is not None
                          else cinder.teardown(record['volumes']))
        except Exception as exc:
            errors.append('removing the volume service: %r' % exc)
    thread = threading.Thread(target=remove, name='volumes-teardown')
    thread.start()
    return thread


def _ours(pid: int, state_dir: str) -> bool:
    """Whether ``pid`` still runs one of this stack's commands (pids get reused)."""
    try:
        with open('/proc/%d/cmdline' % pid, 'rb') as f:
            cmdline = f.read().decode(errors='replace')
    except OSError:
        return False
    return state_dir in cmdline or 'gunicorn' in cmdline


def running_processes(state_dir: str) -> list[str]:
    """``pgrep -af`` lines of processes whose command line names ``state_dir``."""
    # The daemons' command lines name their config under <state_dir>/etc/; the harness's
    # own (``up --state-dir``) does not. Workers that retitle themselves are found by
    # their process group instead (see leftovers).
    result = subprocess.run(['pgrep', '-af', os.path.join(state_dir, 'etc', '')],
                            capture_output=True, text=True)
    return [line for line in result.stdout.splitlines() if line.strip()]


def leftovers(record: dict[str, Any], state_dir: str) -> list[str]:
    """Processes, databases and the vhost of ``record`` that still exist, the OVS/OVN
    and Neutron processes, namespaces, devices and database of its network, and the
    Cinder and Ceph processes, folder, database and vhost of its volume service."""
    left = ['process: %s' % line for line in running_processes(state_dir)]
    for name, pid in record['pids'].items():
        if process.group_alive(pid):
            left.append('process group of %s (pid %s)' % (name, pid))
    existing = set(backends.list_databases(record['backend'], record['name']))
    left += ['database %s' % n for n in record['databases'] if n in existing]
    if record.get('vhost') and record['vhost'] in backends.list_vhosts(record['vhost']):
        left.append('vhost %s' % record['vhost'])
    if record.get('network'):
        left += neutron.leftovers(record['network'])
    if record.get('volumes'):
        left += cinder.leftovers(record['volumes'])
    return left


def down_from_record(state_dir: str) -> list[str]:
    """Tear down the stack recorded in ``state_dir/stack.json`` (from any process)."""
    state_dir = os.path.abspath(state_dir)
    with open(os.path.join(state_dir, 'stack.json')) as f:
        record = json.load(f)
    return teardown(record, state_dir) + leftovers(record, state_dir)

