"""``python -m tests.devstack.harness up|down --state-dir DIR``: the stack by hand.

``up`` prints the clouds.yaml path and stays in the foreground until SIGINT or SIGTERM,
then tears everything down; ``down`` removes a stack whose ``up`` was killed.
"""
from __future__ import annotations

import argparse
import os
import signal
import sys
import threading

from tests.devstack.harness import stack as devstack
from tests.devstack.harness import teardown
from tests.devstack.harness.placement import ISOLATIONS


def _up(args: argparse.Namespace) -> int:
    conf = {'DEFAULT': {'concurrency_backend': args.concurrency}}
    if args.consoles:
        # Guests' serial consoles too (the fake driver serves one per running guest).
        conf['serial_console'] = {'enabled': True}
    stack = devstack.Stack(args.state_dir, backend=args.db, conf=conf,
                           computes=tuple(args.compute), auth=args.auth,
                           placement_isolation=args.placement_isolation,
                           network=args.network, config_files=tuple(args.config_file),
                           volumes=args.volumes, consoles=args.consoles)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    stack.up()
    print('novalite devstack up in %.1f s (%s, vhost %s)'
          % (stack.timings['up'], args.db, stack.name))
    print('Compute API: %s  Placement: %s  Glance: %s'
          % (stack.api_url, stack.placement.url, stack.glance_url))
    if stack.neutron is not None:
        print('Neutron: %s  (OVN chassis %s)' % (stack.neutron.url, ', '.join(stack.computes)))
    if stack.cinder is not None:
        print('Cinder: %s  (RBD on Ceph in %s; libvirt secret %s)'
              % (stack.cinder.url, stack.cinder.ceph.dir, stack.cinder.secret_uuid))
    if stack.consoles:
        print('Console proxies: noVNC %s  serial %s' % (stack.novncproxy_url,
                                                        stack.serialproxy_url))
    print('clouds.yaml: %s' % stack.clouds_yaml)
    print('  export OS_CLIENT_CONFIG_FILE=%s OS_CLOUD=novalite' % stack.clouds_yaml)
    print('  openstack server create --image %s --flavor m1.nano --nic none --wait vm1'
          % devstack.IMAGE_NAME)
    if stack.consoles:
        print('  openstack console url show --novnc vm1   (or --serial)')
    print('logs: %s   (Ctrl-C tears the stack down)' % stack.log_dir, flush=True)
    while not stop.wait(1):
        dead = [n for n, d in stack.daemons.items() if not d.running()]
        if dead:
            print('exited: %s (see the logs); still running the rest' % ', '.join(dead),
                  flush=True)
            stop.wait()
    left = stack.down(check=False)
    print('torn down in %.1f s%s' % (stack.timings['down'],
                                     '; LEFT BEHIND: %s' % left if left else ''))
    return 1 if left else 0


def _down(args: argparse.Namespace) -> int:
    left = teardown.down_from_record(args.state_dir)
    for item in left:
        print('left behind: %s' % item)
    return 1 if left else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog='python -m tests.devstack.harness', description=__doc__)
    parser.add_argument('action', choices=['up', 'down'])
    parser.add_argument('--state-dir', required=True,
                        help='Folder for configs, logs and the record of what was made.')
    parser.add_argument('--db', choices=['mysql', 'postgresql'], default='mysql')
    parser.add_argument('--concurrency', choices=['threading', 'eventlet'],
                        default='threading')
    parser.add_argument('--auth', choices=['noauth2', 'keystone'], default='noauth2',
                        help='keystone: a real Keystone too, the API behind auth_token '
                             '(clouds.yaml gets a password cloud per user).')
    parser.add_argument('--network', action='store_true',
                        help='Also the real Neutron (ML2/OVN, .venv-neutron) with an OVN '
                             'chassis per compute host; needs root and Open vSwitch/OVN '
                             '(tools/setup.sh). One such stack per machine.')
    parser.add_argument('--volumes', action='store_true',
                        help='Also the real Cinder (.venv-cinder) on a one-node Ceph '
                             '(tools/setup.sh installs it); its own database and vhost.')
    parser.add_argument('--consoles', action='store_true',
                        help='Also the console proxies novalite-novncproxy (Debian\'s noVNC) '
                             'and novalite-serialproxy, their URLs in every daemon\'s '
                             '[vnc] and [serial_console] options.')
    parser.add_argument('--compute', action='append', default=None,
                        help='A compute host name (repeat it; default hostA and hostB).')
    parser.add_argument('--placement-isolation', choices=sorted(ISOLATIONS),
                        default='default',
                        help="Placement's transaction isolation on MariaDB: the server's "
                             'default (REPEATABLE READ) or read-committed, which spares '
                             "concurrent claims the deadlocks of Placement's allocation "
                             'writes (docs/deployment.md).')
    parser.add_argument('--config-file', action='append', default=[], metavar='FILE',
                        help='A novalite.conf file given to every daemon after its own '
                             '(repeatable; its options win), e.g. to try soft delete.')
    args = parser.parse_args(argv)
    args.compute = args.compute or ['hostA', 'hostB']
    for path in args.config_file:
        if not os.path.isfile(path):
            parser.error('--config-file %s: no such file' % path)
    return _up(args) if args.action == 'up' else _down(args)


if __name__ == '__main__':
    sys.exit(main())
