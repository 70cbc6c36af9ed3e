"""The real OpenStack Placement as an HTTP process: gunicorn serving its WSGI module."""
from __future__ import annotations

import os
import subprocess
import time

import requests

from tests.devstack.harness import process

HEADERS = {'x-auth-token': 'admin', 'OpenStack-API-Version': 'placement latest'}

# Placement's MySQL/MariaDB sessions at READ COMMITTED, through oslo.db's
# ``connection_parameters`` (PyMySQL runs ``init_command`` on every new connection).
# Under the server's default, REPEATABLE READ, Placement's allocation write deletes the
# consumer's old allocations first, even for a new consumer, and that DELETE takes a gap
# lock on ``allocations_consumer_id_idx``: concurrent claims then deadlock on their
# INSERTs, and oslo.db retries each loser after a one-second sleep. READ COMMITTED takes
# no such gap locks; it is the isolation Placement already runs with on PostgreSQL,
# whose default it is. Its correctness rests on generation checks, not on snapshots.
ISOLATIONS = {
    'default': None,
    'read-committed': 'init_command=SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED',
}


class PlacementProcess:
    """Placement on ``127.0.0.1:port`` (noauth2) with its database at ``db_url``.

    Stopping and starting again keeps the port, so the daemons' ``[placement] endpoint``
    stays right across an outage.
    """

    def __init__(self, state_dir: str, db_url: str, port: int, bin_dir: str,
                 log_file: str, workers: int = 1, threads: int = 8,
                 isolation: str = 'default') -> None:
        """:param isolation: a key of ``ISOLATIONS``: the MySQL/MariaDB server's own
            default, or READ COMMITTED for Placement's sessions (ignored on PostgreSQL,
            whose default is READ COMMITTED already)."""
        if isolation not in ISOLATIONS:
            raise ValueError('isolation must be one of %s' % ', '.join(ISOLATIONS))
        self.isolation = isolation
        self.conf_dir = os.path.join(state_dir, 'placement')
        self.db_url = db_url
        self.port = port
        self.bin_dir = bin_dir
        self.url = 'http://127.0.0.1:%d' % port
        os.makedirs(self.conf_dir, exist_ok=True)
        self.conf_file = os.path.join(self.conf_dir, 'placement.conf')
        env = process.child_env(OS_PLACEMENT_CONFIG_DIR=self.conf_dir)
        self.process = process.Process('placement', [
            os.path.join(bin_dir, 'gunicorn'), '--no-control-socket',
            '-b', '127.0.0.1:%d' % port, '-w', str(workers), '--threads', str(threads),
            '--timeout', '120',
            # The pid file puts the state folder on the command line, where pgrep finds it.
            '--pid', os.path.join(self.conf_dir, 'gunicorn.pid'),
            'placement.wsgi.api:application'], log_file, env)

    def setup(self) -> None:
        """Write placement.conf and create the schema."""
        self.write_conf()
        subprocess.run([os.path.join(self.bin_dir, 'placement-manage'), '--config-file',
                        self.conf_file, 'db', 'sync'], check=True, capture_output=True,
                       env=process.child_env())

    def write_conf(self) -> None:
        with open(self.conf_file, 'w') as conf:
            conf.write('[DEFAULT]\ndebug = false\n[api]\nauth_strategy = noauth2\n'
                       '[placement_database]\nconnection = %s\n' % self.db_url)
            parameters = ISOLATIONS[self.isolation]
            if parameters and self.db_url.startswith('mysql'):
                conf.write('connection_parameters = %s\n' % parameters)

    def start(self, timeout: float = 60.0) -> str:
        """Start gunicorn; return the URL once Placement answers."""
        self.process.start()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.process.running():
                raise RuntimeError('Placement exited: %s' % self.process.tail())
            try:
                # A loaded machine may take seconds for the first (app-loading) answer.
                requests.get(self.url + '/', timeout=10)
                return self.url
            except requests.RequestException:
                time.sleep(0.1)
        raise RuntimeError('Placement did not answer on %s within %ss' % (self.url, timeout))

    def stop(self) -> None:
        self.process.stop()

    def get(self, path: str) -> requests.Response:
        return requests.get(self.url + path, headers=HEADERS, timeout=30)
