"""Options of the [conductor] group."""
from __future__ import annotations

from oslo_config import cfg

conductor_group = cfg.OptGroup('conductor', title='Conductor options')

opts = [
    cfg.IntOpt('workers', min=1, help='Number of conductor worker processes.'),
    cfg.IntOpt('build_request_timeout', default=300, min=0,
               help='Seconds after which a server still waiting to be scheduled (no '
                    'conductor took it, or the conductor that took it stopped renewing '
                    'its hold), or created in a cell but never handed to a compute host, '
                    'is considered lost (a message the bus dropped, a conductor killed) '
                    'and built again, up to [scheduler] max_attempts builds in all; after '
                    'that it is put in ERROR with a fault. Must be longer than a '
                    'scheduling round trip (rpc_response_timeout_scheduler). 0 disables '
                    'the check.'),
    cfg.IntOpt('build_retry_timeout', default=300, min=0,
               help='Seconds a build keeps retrying, with a growing pause between tries '
                    '(1 s more each time, at most 10 s), what a short outage breaks: the '
                    'scheduler not answering (killed, or its message lost), Placement '
                    'unreachable, the database refusing connections, the message bus '
                    'failing a cast. After that the build ends in ERROR with a fault '
                    'saying what failed. 0 retries nothing.'),
    cfg.IntOpt('lost_build_check_interval', default=30, min=1,
               help='Seconds between two checks for lost builds.'),
    cfg.IntOpt('allocation_heal_interval', default=300, min=0,
               help='Seconds between two runs of the allocation healing task, which '
                    'compares Placement with the servers and migrations of every cell: '
                    'allocations whose consumer is neither a live server nor a migration '
                    'in progress (orphans), allocations a finished migration still holds '
                    '(leftovers), and settled servers on a host that hold none (missing). '
                    'Each finding is logged as a WARNING. 0 disables the task. With '
                    'several conductors each runs it; their repairs are conditioned on '
                    'Placement consumer generations, so they do not conflict.'),
    cfg.StrOpt('allocation_heal_action', default='repair', choices=(
                   ('repair', 'fix each finding: delete orphans and leftovers, create '
                              'missing allocations from the server\'s flavor'),
                   ('report', 'only log the findings; change nothing')),
               help='What the allocation healing task does with what it finds.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_group(conductor_group)
    conf.register_opts(opts, group=conductor_group)


def list_opts() -> dict:
    return {conductor_group: opts}
