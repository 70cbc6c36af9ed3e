"""Options of the [api] group: the REST API service."""
from __future__ import annotations

from oslo_config import cfg

api_group = cfg.OptGroup('api', title='Compute API options')

opts = [
    cfg.StrOpt('auth_strategy', default='keystone', choices=['keystone', 'noauth2'],
               help='How API requests are authenticated: keystone (keystonemiddleware '
                    'auth_token) or noauth2 (the token is "user:project", user "admin" '
                    'gets the admin role; for tests and keystone-less clouds only).'),
    cfg.StrOpt('api_paste_config', default='api-paste.ini',
               help='The paste deploy file that defines the API pipeline. Relative paths '
                    'are looked up next to the config files and in the package.'),
    cfg.HostAddressOpt('osapi_compute_listen', default='0.0.0.0',
                       help='Address the standalone API server binds to.'),
    cfg.PortOpt('osapi_compute_listen_port', default=8774,
                help='Port the standalone API server listens on.'),
    cfg.IntOpt('osapi_compute_workers', min=1,
               help='Number of API worker processes. Default: the number of CPUs.'),
    cfg.IntOpt('max_limit', default=1000, min=0,
               help='Most items one collection request returns.'),
    cfg.BoolOpt('instance_list_per_project_cells', default=False,
                help='Only query the cells in which the project has instances.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_group(api_group)
    conf.register_opts(opts, group=api_group)


def list_opts() -> dict:
    return {api_group: opts}
