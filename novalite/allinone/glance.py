"""The real Glance (v2 API, file store) as a child process, for novalite-all and tests.

Glance keeps its configuration in a process-global object, so it runs in a process of
its own: gunicorn serving ``glance.wsgi.api:application`` from Glance's own virtualenv
(``tools/setup.sh`` makes ``.venv-glance`` beside ``.venv``). Requests pass unchecked
(an empty paste flavor and ``context_is_admin: "@"``): for a keystone-less test cloud
on loopback only.
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

import requests

ENV_VAR = 'NOVALITE_GLANCE_VENV'


def default_venv() -> str:
    """``$NOVALITE_GLANCE_VENV``, else ``.venv-glance`` beside this interpreter's venv."""
    return os.environ.get(ENV_VAR) or os.path.join(os.path.dirname(sys.prefix),
                                                   '.venv-glance')


try:
    # Resolved here, in the parent: the child between fork and exec must not import.
    _PRCTL = ctypes.CDLL(None, use_errno=True).prctl
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
    """Glance on ``127.0.0.1:port`` with its database and images under ``state_dir``."""

    def __init__(self, state_dir: str, port: int | None = None,
                 venv: str | None = None) -> None:
        self.state_dir = os.path.abspath(state_dir)
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
                '[paste_deploy]', 'flavor =',
                '[oslo_policy]', 'policy_file = %s' % os.path.join(self.conf_dir, 'policy.yaml'),
                '']))
        with open(os.path.join(self.conf_dir, 'policy.yaml'), 'w') as policy:
            policy.write('"context_is_admin": "@"\n')
        # Glance looks for its paste file next to its config; the package ships one.
        shutil.copy(os.path.join(self.venv, 'etc', 'glance', 'glance-api-paste.ini'),
                    self.conf_dir)

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
             '-w', '1', '--threads', '4', '--timeout', '120', 'glance.wsgi.api:application'],
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
                     container_format: str = 'bare', visibility: str = 'public') -> str:
        """Register and upload an image; return its id (an existing one of that name is
        reused)."""
        found = requests.get(self.url + '/v2/images', params={'name': name}, timeout=30)
        found.raise_for_status()
        for image in found.json()['images']:
            if image['status'] == 'active':
                return image['id']
        resp = requests.post(self.url + '/v2/images', timeout=30, json={
            'name': name, 'disk_format': disk_format, 'container_format': container_format,
            'visibility': visibility})
        resp.raise_for_status()
        image_id = resp.json()['id']
        upload = requests.put(self.url + '/v2/images/%s/file' % image_id, data=data,
                              timeout=60,
                              headers={'Content-Type': 'application/octet-stream'})
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
