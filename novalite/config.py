"""Parse the command line and config files, and set up what every daemon needs."""
from __future__ import annotations

from oslo_log import log as logging

from novalite import objects, reports, rpc, version
from novalite.conf import CONF


def parse_args(argv: list[str], init_rpc: bool = True) -> None:
    """Load ``--config-file`` / ``--config-dir``, set up logging, RPC and objects."""
    logging.register_options(CONF)
    # Before parsing, so that ``--config-file`` values of [oslo_reports] are checked.
    reports.register_opts(CONF)
    CONF(argv[1:], project='novalite', version=version.version_string())
    logging.setup(CONF, 'novalite')
    objects.register_all()
    if init_rpc:
        rpc.init(CONF)
