"""Finding api-paste.ini and loading the API application from it."""
from __future__ import annotations

import gc
import os
import sys
from typing import TYPE_CHECKING

from oslo_log import log as logging
from paste import deploy

from novalite.conf import CONF

if TYPE_CHECKING:
    from _typeshed.wsgi import WSGIApplication

LOG = logging.getLogger(__name__)

_REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))


def find_paste_config() -> str:
    """The path of the paste file ``[api] api_paste_config`` names.

    An absolute path is used as is; a relative one is looked for next to the config
    files, then at the top of the source tree, then in ``<sys.prefix>/etc/novalite``.

    :raises RuntimeError: the file is nowhere to be found
    """
    name = CONF.api.api_paste_config
    if os.path.isabs(name):
        candidates = [name]
    else:
        # config_file/config_dir exist only once CONF has parsed its arguments.
        files = getattr(CONF, 'config_file', None) if 'config_file' in CONF else None
        config_dir = getattr(CONF, 'config_dir', None) if 'config_dir' in CONF else None
        config_dirs = [os.path.dirname(os.path.abspath(f)) for f in files or []]
        config_dirs += [config_dir] if config_dir else []
        candidates = [os.path.join(d, name) for d in config_dirs]
        candidates += [os.path.join(_REPO_ROOT, name),
                       os.path.join(sys.prefix, 'etc', 'novalite', name)]
    for path in candidates:
        if os.path.isfile(path):
            return os.path.abspath(path)
    raise RuntimeError('Unable to find the paste config %s (looked at: %s)'
                       % (name, ', '.join(candidates)))


def freeze_loaded_objects() -> None:
    """Collect garbage, then exclude every object alive now from future collections.

    What imports and the app's loading created (some 200,000 objects) lives as long as
    the process; without this, each full collection scans all of it again (about 8 ms
    per 100-server list at the collector's usual pace). Called once the app is loaded,
    before an API server forks its workers: their collections then start clean, and
    the pages of the frozen objects stay shared with the parent (the collector no
    longer writes to their headers).
    """
    gc.collect()
    gc.freeze()


def load_app(name: str = 'osapi_compute') -> WSGIApplication:
    """The WSGI application ``name`` of the paste file: the whole API by default."""
    path = find_paste_config()
    LOG.debug('Loading app %s from %s', name, path)
    return deploy.loadapp('config:%s' % path, name=name)
