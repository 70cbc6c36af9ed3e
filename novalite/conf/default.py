"""Options of the [DEFAULT] group that belong to no daemon in particular."""
from __future__ import annotations

import socket

from oslo_config import cfg

opts = [
    cfg.StrOpt('host', default=socket.gethostname(), sample_default='<current hostname>',
               help='Name of this node. Compute services register under it, and RPC '
                    'messages for this host use it as the server part of the topic.'),
    cfg.StrOpt('my_ip', default='127.0.0.1',
               help='IP address of this host, used in service records and URLs.'),
    cfg.StrOpt('state_path', default='/var/lib/novalite',
               help='Top-level directory for state the services keep on disk.'),
    cfg.StrOpt('concurrency_backend', default='threading', choices=['threading', 'eventlet'],
               help='How the daemons run concurrent work: native threads (the default, '
                    'as in Nova 34) or eventlet green threads (deprecated upstream).'),
    cfg.IntOpt('default_thread_pool_size', default=64, min=1,
               help='Threads of a process for the work its RPC endpoints hand off so the '
                    'message does not hold an RPC worker (a compute host\'s builds, power '
                    'actions, resizes, snapshots...). Work beyond this many at once waits '
                    'for a thread, in order of arrival. A graceful stop waits for the work '
                    'started and queued, at most graceful_shutdown_timeout seconds.'),
    cfg.IntOpt('cell_worker_thread_pool_size', default=32, min=1,
               help='Threads of a process for the per-cell database calls of a request '
                    'that reads every cell (server lists, scheduling, quota counts): one '
                    'call per cell and request. A call that has not started when its '
                    'request stops waiting for the cells is cancelled; a cell database '
                    'that hangs holds one thread per request until it answers.'),
    cfg.IntOpt('report_interval', default=10, min=1,
               help='Seconds between two service heartbeats written into the services '
                    'table.'),
    cfg.IntOpt('service_down_time', default=60, min=1,
               help='Seconds since the last heartbeat after which a service is down. Must '
                    'be larger than report_interval.'),
    cfg.IntOpt('periodic_interval', default=60, min=1,
               help='Seconds between runs of a service manager\'s periodic tasks.'),
    cfg.IntOpt('rpc_response_timeout_scheduler', default=60, min=1,
               help='Seconds the conductor waits for select_destinations to answer.'),
    cfg.BoolOpt('log_boot_hops', default=False,
                help='Log one INFO line per hop of each boot (API, conductor, scheduler, '
                     'compute) with the wall-clock time, for bench/boot_hops.py to break '
                     'a boot down. Costs nothing when off.'),
    cfg.StrOpt('default_availability_zone', default='nova',
               help='Availability zone of compute hosts that are in no aggregate with '
                    'an availability_zone key.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts)


def list_opts() -> dict:
    return {'DEFAULT': opts}
