"""The Compute API as a WSGI module: ``novalite.wsgi.osapi_compute:application``.

For uWSGI, gunicorn or mod_wsgi. The server owns ``sys.argv``, so only the
``--config-file``/``--config-dir`` options are taken from it; otherwise the config files
come from ``NOVALITE_CONFIG_FILES`` (separated by ``,`` or ``;``), else the defaults.
"""
from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

from oslo_log import log as logging

import novalite  # noqa: F401  (chooses the concurrency backend first)
from novalite import metrics, objects, reports, rpc
from novalite.api.openstack import loader
from novalite.conf import CONF

if TYPE_CHECKING:
    from _typeshed.wsgi import WSGIApplication

_CONFIG_OPTIONS = ('--config-file', '--config-dir')
BINARY = 'novalite-api'


def _config_args(argv: list[str]) -> list[str]:
    """The config options of ``argv``, as ``--opt value`` pairs."""
    args: list[str] = []
    it = iter(argv)
    for arg in it:
        for option in _CONFIG_OPTIONS:
            if arg == option:
                args += [option, next(it, '')]
            elif arg.startswith(option + '='):
                args += [option, arg.split('=', 1)[1]]
    return args


def init_application(argv: list[str] | None = None,
                     environ: Mapping[str, str] | None = None) -> WSGIApplication:
    """Parse the configuration, set up logging, RPC and objects; load the paste app."""
    argv = sys.argv[1:] if argv is None else argv
    variables: Mapping[str, str] = os.environ if environ is None else environ
    args = _config_args(argv)
    default_files = None
    if not args and variables.get('NOVALITE_CONFIG_FILES'):
        default_files = [f for f in re.split('[,;]', variables['NOVALITE_CONFIG_FILES'])
                         if f.strip()]
    logging.register_options(CONF)
    reports.register_opts(CONF)
    CONF(args, project='novalite', default_config_files=default_files)
    logging.setup(CONF, 'novalite')
    # The server (gunicorn, uWSGI) may own SIGUSR2: [oslo_reports] file_event_handler,
    # when set, is then the only trigger, as oslo.reports advises.
    reports.setup_autorun(BINARY, CONF, signal_too=False)
    metrics.start_exporter(BINARY)
    objects.register_all()
    rpc.init(CONF)
    app: WSGIApplication = loader.load_app('osapi_compute')
    loader.freeze_loaded_objects()
    return app


application = init_application()
