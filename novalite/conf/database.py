"""Options of [database] (the cell database) and [api_database] (the API database)."""
from __future__ import annotations

from oslo_config import cfg
from oslo_db import options as oslo_db_options

api_db_group = cfg.OptGroup('api_database', title='API database options',
                            help='The API database: cell and host mappings, build requests, '
                                 'request specs, flavors, key pairs, quotas.')

api_db_opts = [
    cfg.StrOpt('connection', secret=True,
               help='SQLAlchemy URL of the API database, e.g. '
                    'mysql+pymysql://nova:secret@127.0.0.1/nova_api.'),
    cfg.BoolOpt('sqlite_synchronous', default=True,
                help='If False, SQLite does not wait for data to reach the disk.'),
    cfg.IntOpt('max_pool_size', min=0,
               help='Connections to the API database each process (every API, conductor '
                    'and scheduler worker) keeps open. Unset: [database] max_pool_size. '
                    'A process opens at most max_pool_size + max_overflow connections; '
                    'multiply by the number of workers to compare with the database '
                    'server\'s connection limit (docs/deployment.md, "Database '
                    'connections").'),
    cfg.IntOpt('max_overflow', min=0,
               help='Connections to the API database a process may open above '
                    'max_pool_size while that many threads use it at once; they close '
                    'when returned. Unset: [database] max_overflow.'),
    cfg.IntOpt('pool_timeout', min=1,
               help='Seconds a thread waits for a free connection of the pool when '
                    'max_pool_size + max_overflow are in use; the API then answers 503 '
                    'with Retry-After. Unset: [database] pool_timeout, else 30.'),
    cfg.IntOpt('connection_recycle_time', default=3600,
               help='Seconds after which a pooled connection is replaced.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    oslo_db_options.set_defaults(conf)
    conf.register_group(api_db_group)
    conf.register_opts(api_db_opts, group=api_db_group)


def list_opts() -> dict:
    return {api_db_group: api_db_opts, 'database': oslo_db_options.database_opts}
