"""The real Glance (v2 API, file store) as a child process, for novalite-all and tests.

Glance keeps its configuration in a process-global object, so it runs in a process of
its own: gunicorn serving ``glance.wsgi.api:application`` from Glance's own virtualenv
(``tools/setup.sh`` makes ``.venv-glance`` beside ``.venv``).

Who the caller is, Glance's own default policies then decide on (the administrator sees
every image, a project its own and the public ones):

- keystone-less (``novalite-all``, the noauth2 stacks): the paste flavor ``noauth2``,
  whose filter (``glance_noauth``) reads the caller from the token ``user:project`` as
  novalite's noauth2 API does, then Glance's ``context`` middleware;
- with Keystone (``authtoken`` given): the flavor ``keystone``, keystonemiddleware's
  auth_token validating every token.
"""
from __future__ import annotations

import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import requests

from novalite.allinone import glance_noauth

ENV_VAR = 'NOVALITE_GLANCE_VENV'
# The token the harness uploads its images with, keystone-less: the administrator's.
ADMIN_TOKEN = 'admin:admin'
# Glance's paste pipelines without its ``unauthenticated-context`` (everyone an
# administrator). The filter module is copied into the configuration folder, which
# gunicorn puts on Glance's path.
_PASTE = """[composite:glance-api-noauth2]
paste.composite_factory = glance.api:root_app_factory
/: api
/healthcheck: healthcheck

[composite:glance-api-keystone]
paste.composite_factory = glance.api:root_app_factory
/: api
/healthcheck: healthcheck

[composite:api]
paste.composite_factory = glance.api:pipeline_factory
noauth2 = cors http_proxy_to_wsgi versionnegotiation noauth2 context rootapp
keystone = cors http_proxy_to_wsgi versionnegotiation authtoken context rootapp

[composite:rootapp]
paste.composite_factory = glance.api:root_app_factory
/: apiversions
/v2: apiv2app

[app:apiversions]
paste.app_factory = glance.api.versions:create_resource

[app:apiv2app]
paste.app_factory = glance.api.v2.router:API.factory

[app:healthcheck]
paste.app_factory = oslo_middleware:Healthcheck.app_factory

[filter:versionnegotiation]
paste.filter_factory = glance.api.middleware.version_negotiation:VersionNegotiationFilter.factory

[filter:context]
paste.filter_factory = glance.api.middleware.context:ContextMiddleware.factory

[filter:noauth2]
paste.filter_factory = glance_noauth:filter_factory

[filter:authtoken]
paste.filter_factory = keystonemiddleware.auth_token:filter_factory
delay_auth_decision = true

[filter:cors]
paste.filter_factory = oslo_middleware.cors:filter_factory
oslo_config_project = glance
oslo_config_program = glance-api

[filter:http_proxy_to_wsgi]
paste.filter_factory = oslo_middleware:HTTPProxyToWSGI.factory
"""


def default_venv() -> str:
    """``$NOVALITE_GLANCE_VENV``, else ``.venv-glance`` beside this interpreter's venv."""
    return os.environ.get(ENV_VAR) or os.path.join(os.path.dirname(sys.prefix),
                                                   '.venv-glance')


try:
    # Resolved here, in the parent: the child between fork and exec must not import.
    _PRCTL: Callable[..., int] | None = ctypes.CDLL(None, use_errno=True).prctl
except (OSError, AttributeError):
    _PRCTL = None
_PR_SET_PDEATHSIG = 1


def _terminate_with_parent() -> None:
    """In the child before exec: SIGTERM when the parent dies, even by SIGKILL (Linux),
    so that a killed novalite-all or test run leaves no Glance behind. Linux ties this to
    the forking THREAD, hence ``launch()`` from a long-lived thread."""
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, signal.SIGTERM)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


class GlanceProcess:
    """Glance on ``127.0.0.1:port`` with its database and images under ``state_dir``.

    :param authtoken: the ``[keystone_authtoken]`` options of a Glance behind Keystone;
        without them, keystone-less (noauth2 tokens)
    """

    def __init__(self, state_dir: str, port: int | None = None,
                 venv: str | None = None, authtoken: dict[str, Any] | None = None) -> None:
        self.state_dir = os.path.abspath(state_dir)
        self.authtoken = authtoken
        self.port = port or free_port()
        self.venv = venv or default_venv()
        self.url = 'http://127.0.0.1:%d' % self.port
        self.process: subprocess.Popen | None = None
        self.conf_dir = os.path.join(self.state_dir, 'etc')

    def _write_config(self) -> None:
        for sub in ('etc', 'images', 'staging', 'tasks'):
            os.makedirs(os.path.join(self.state_dir, sub), exist_ok=True)
        with open(os.path.join(self.conf_dir, 'glance-api.conf'), 'w') as conf:
            conf.write('\n'.join([
                '[DEFAULT]', 'enabled_backends = fs:file',
                'log_file = %s' % os.path.join(self.state_dir, 'glance-api.log'),
                '[database]', 'connection = sqlite:///%s'
                % os.path.join(self.state_dir, 'glance.sqlite'),
                '[glance_store]', 'default_backend = fs',
                '[fs]', 'filesystem_store_datadir = %s' % os.path.join(self.state_dir, 'images'),
                '[os_glance_staging_store]', 'filesystem_store_datadir = %s'
                % os.path.join(self.state_dir, 'staging'),
                '[os_glance_tasks_store]', 'filesystem_store_datadir = %s'
                % os.path.join(self.state_dir, 'tasks'),
                '[paste_deploy]', 'flavor = %s' % ('keystone' if self.authtoken else 'noauth2'),
                '[oslo_policy]', 'policy_file = %s' % os.path.join(self.conf_dir, 'policy.yaml'),
                *self._authtoken_lines(), '']))
        # Glance's defaults: a state folder of an older novalite may hold "everyone is
        # an administrator" here.
        with open(os.path.join(self.conf_dir, 'policy.yaml'), 'w') as policy:
            policy.write('{}\n')
        # Glance looks for its paste file next to its config.
        with open(os.path.join(self.conf_dir, 'glance-api-paste.ini'), 'w') as paste:
            paste.write(_PASTE)
        shutil.copy(glance_noauth.__file__, os.path.join(self.conf_dir, 'glance_noauth.py'))

    def _authtoken_lines(self) -> list[str]:
        if not self.authtoken:
            return []
        return ['[keystone_authtoken]', *('%s = %s' % item for item in self.authtoken.items())]

    def _bin(self, name: str) -> str:
        path = os.path.join(self.venv, 'bin', name)
        if not os.path.exists(path):
            raise RuntimeError('%s not found: run tools/setup.sh (it installs Glance in %s)'
                               % (path, self.venv))
        return path

    def start(self, timeout: float = 60.0) -> str:
        """Start gunicorn, sync the schema once, return the URL when Glance answers."""
        self.launch()
        return self.wait_ready(timeout)

    def launch(self) -> None:
        """Fork gunicorn and return at once. Call it from a thread that lives as long as
        Glance should: the child is told to stop when the thread that forked it ends."""
        self._write_config()
        env = dict(os.environ, OS_GLANCE_CONFIG_DIR=self.conf_dir)
        needs_sync = not os.path.exists(os.path.join(self.state_dir, 'glance.sqlite'))
        log = open(os.path.join(self.state_dir, 'gunicorn.log'), 'ab')
        self.process = subprocess.Popen(
            [self._bin('gunicorn'), '--no-control-socket', '-b', '127.0.0.1:%d' % self.port,
             '-w', '1', '--threads', '4', '--timeout', '120', '--pythonpath', self.conf_dir,
             'glance.wsgi.api:application'],
            env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            preexec_fn=_terminate_with_parent)
        log.close()
        self._needs_sync = needs_sync

    def wait_ready(self, timeout: float = 60.0) -> str:
        """Sync the schema if new (while Glance imports), then wait until it answers."""
        assert self.process is not None, 'launch() first'
        env = dict(os.environ, OS_GLANCE_CONFIG_DIR=self.conf_dir)
        if self._needs_sync:
            # Glance opens its database per request, so its imports overlap the sync.
            subprocess.run([self._bin('glance-manage'), '--config-dir', self.conf_dir,
                            'db_sync'], env=env, check=True, capture_output=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError('Glance exited with %s; see %s/gunicorn.log'
                                   % (self.process.returncode, self.state_dir))
            try:
                requests.get(self.url + '/v2/images', timeout=2)
                return self.url
            except requests.RequestException:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError('Glance did not answer on %s within %ss' % (self.url, timeout))

    def create_image(self, name: str, data: bytes, disk_format: str = 'raw',
                     container_format: str = 'bare', visibility: str = 'public',
                     token: str = ADMIN_TOKEN) -> str:
        """Register and upload an image as the administrator; return its id (an existing
        one of that name is reused).

        :param token: the administrator's: ``admin:admin`` keystone-less, else a Keystone
            token of an admin
        """
        auth = {'X-Auth-Token': token}
        found = requests.get(self.url + '/v2/images', params={'name': name}, timeout=30,
                             headers=auth)
        found.raise_for_status()
        for image in found.json()['images']:
            if image['status'] == 'active':
                return image['id']
        resp = requests.post(self.url + '/v2/images', timeout=30, headers=auth, json={
            'name': name, 'disk_format': disk_format, 'container_format': container_format,
            'visibility': visibility})
        resp.raise_for_status()
        image_id = resp.json()['id']
        upload = requests.put(self.url + '/v2/images/%s/file' % image_id, data=data,
                              timeout=60,
                              headers={**auth, 'Content-Type': 'application/octet-stream'})
        upload.raise_for_status()
        return image_id

    def stop(self, timeout: float = 10.0) -> None:
        """Stop gunicorn and its workers (the whole process group)."""
        if self.process is None or self.process.poll() is not None:
            self.process = None
            return
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        except ProcessLookupError:
            pass
        self.process = None
