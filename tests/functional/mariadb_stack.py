"""The functional stack on MariaDB: the API, cell0 and cell1 databases are MariaDB
databases (created for the stack, dropped afterwards); Placement keeps its own SQLite.

The operator tools of ``novalite-manage`` are tested on it: ``stack.config_file`` names
the same databases, so ``manage_in(stack, 'db', 'archive_deleted_rows')`` acts on them.
"""
from __future__ import annotations

import pathlib
import subprocess
import sys
from collections.abc import Iterator

import pytest
import requests

from tests.fixtures.databases import DatabaseFactory
from tests.functional.stack import Stack


class MariaDBStack(Stack):
    """The functional ``Stack`` with its novalite databases on MariaDB."""

    def __init__(self, tmp_dir: str, factory: DatabaseFactory, **kwargs: object) -> None:
        self._urls = {name: factory('%s' % name) for name in ('api', 'cell0', 'cell1')}
        super().__init__(tmp_dir, **kwargs)  # type: ignore[arg-type]
        self.config_file = pathlib.Path(tmp_dir) / 'novalite-manage.conf'

    def db_url(self, name: str) -> str:
        return self._urls[name]

    def start(self) -> MariaDBStack:
        super().start()
        # What novalite-manage reads: the same databases and the stack's Placement.
        self.config_file.write_text(
            '[DEFAULT]\ntransport_url = fake://\n'
            '[api_database]\nconnection = %s\n[database]\nconnection = %s\n'
            '[placement]\nauth_type = admin_token\ntoken = admin\nendpoint = %s\n'
            % (self._urls['api'], self._urls['cell1'], self.placement.url))
        return self


def manage_in(stack: MariaDBStack, *argv: str, timeout: float = 120) -> tuple[int, str]:
    """(exit code, standard output and error) of ``novalite-manage ARGV`` run as the
    operator runs it: its own process, on the stack's databases and Placement."""
    proc = subprocess.run(
        [sys.executable, '-m', 'novalite.cmd.manage', '--config-file',
         str(stack.config_file), *argv],
        capture_output=True, text=True, timeout=timeout, check=False)
    return proc.returncode, proc.stdout + proc.stderr


@pytest.fixture(scope='module')
def mariadb_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MariaDBStack]:
    tmp = tmp_path_factory.mktemp('mariadb-stack')
    factory = DatabaseFactory('mysql', str(tmp))
    stack = MariaDBStack(str(tmp), factory)
    try:
        stack.start()
        yield stack
    finally:
        stack.stop()
        factory.cleanup()


# -- helpers of the tests that change Placement behind novalite's back -----------------

PLACEMENT_HEADERS = {'X-Auth-Token': 'admin', 'OpenStack-API-Version': 'placement 1.39'}


def placement(stack: MariaDBStack, method: str, path: str, **kwargs: object
              ) -> requests.Response:
    """A request straight to the stack's Placement, as an operator's hand would make."""
    return requests.request(method, stack.placement.url + path, headers=PLACEMENT_HEADERS,
                            timeout=10, **kwargs)  # type: ignore[arg-type]


def provider_of(stack: MariaDBStack, host: str) -> str:
    """The uuid of the compute node provider of ``host``."""
    return stack.placement_get('/resource_providers?name=%s' % host)[
        'resource_providers'][0]['uuid']


def boot_active(stack: MariaDBStack, flavor_name: str, names: tuple[str, ...],
                version: str) -> list[dict]:
    """Servers of a new 1 vCPU / 128 MiB / 1 GiB flavor, once they are ACTIVE."""
    resp = stack.request('POST', '/flavors', json={'flavor': {
        'name': flavor_name, 'ram': 128, 'vcpus': 1, 'disk': 1}})
    assert resp.status_code == 200, resp.text
    flavor_id = resp.json()['flavor']['id']
    ids = []
    for name in names:
        resp = stack.request('POST', '/servers', version=version, json={'server': {
            'name': name, 'imageRef': stack.image['id'], 'flavorRef': flavor_id,
            'networks': 'none'}})
        assert resp.status_code == 202, resp.text
        ids.append(resp.json()['server']['id'])
    return [stack.wait_for_status(i, ('ACTIVE',), version=version) for i in ids]
