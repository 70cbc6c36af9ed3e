"""The real OpenStack Keystone as an HTTP process, for stacks with ``auth = keystone``.

Keystone pins versions of shared libraries that differ from novalite's, so it lives in a
virtualenv of its own (``tools/setup.sh`` makes ``.venv-keystone`` beside ``.venv``) and
runs as gunicorn serving ``keystone.wsgi.api:application``: SQLite, fernet tokens, cheap
password hashing (the tests log in often). ``setup()`` bootstraps it and makes the
projects, users and role assignments the tests use (``USERS``).
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import Any

import requests

from tests.devstack.harness import process

ENV_VAR = 'NOVALITE_KEYSTONE_VENV'
ADMIN_PASSWORD = 'devstack-admin'
REGION = 'RegionOne'
SERVICE_PROJECT = 'service'
# name: (password, project, role). ``admin`` is Keystone's bootstrap user; ``nova`` is
# the service user the API's auth_token middleware validates tokens with, and the one
# novalite's daemons call Neutron and Cinder as and Neutron and Cinder post their events
# as; ``neutron`` and ``cinder`` are Neutron's and Cinder's own (their auth_token
# middleware).
USERS: dict[str, tuple[str, str, str]] = {
    'admin': (ADMIN_PASSWORD, 'admin', 'admin'),
    'nova': ('nova-secret', SERVICE_PROJECT, 'admin'),
    'neutron': ('neutron-secret', SERVICE_PROJECT, 'admin'),
    'cinder': ('cinder-secret', SERVICE_PROJECT, 'admin'),
    'alice': ('alice-secret', 'alpha', 'member'),
    'bob': ('bob-secret', 'beta', 'member'),
    'rita': ('rita-secret', 'alpha', 'reader'),
    'mara': ('mara-secret', 'alpha', 'member'),
}
# Roles beyond ``USERS``' one, in the same project. The service users also get the
# ``service`` role, as Nova's deployments give them: Neutron's default policies let only
# it write some port fields (``binding:profile``), and novalite's policy takes it for
# ``os-server-external-events``; Cinder lets a caller whose service token has it delete
# an attachment without asking the compute API first (``[service_user]``).
# ``mara`` is alpha's project manager too (Nova 34's manager role: moves, migrations).
EXTRA_ROLES: dict[str, tuple[str, ...]] = {'nova': ('service',), 'neutron': ('service',),
                                           'cinder': ('service',), 'mara': ('manager',)}
# The WSGI module gunicorn serves: Keystone parses sys.argv (gunicorn's) at import.
_WSGI_SHIM = ('"""Keystone\'s WSGI application, with gunicorn\'s arguments hidden from it."""\n'
              'import sys\n\nsys.argv = sys.argv[:1]\n'
              'from keystone.wsgi.api import application  # noqa: E402,F401\n')


def default_venv() -> str:
    """``$NOVALITE_KEYSTONE_VENV``, else ``.venv-keystone`` beside this interpreter's venv."""
    return os.environ.get(ENV_VAR) or os.path.join(os.path.dirname(sys.prefix),
                                                   '.venv-keystone')


class KeystoneProcess:
    """Keystone on ``127.0.0.1:port`` with its files under ``conf_dir``.

    :param conf_dir: keystone.conf, keys, database and the gunicorn pid file; under the
        stack's ``etc/`` so that the leftover check finds a stray process by its path
    """

    def __init__(self, conf_dir: str, port: int, log_file: str,
                 venv: str | None = None) -> None:
        self.conf_dir = os.path.abspath(conf_dir)
        self.port = port
        self.venv = venv or default_venv()
        self.url = 'http://127.0.0.1:%d' % port
        self.auth_url = self.url + '/v3'
        self.conf_file = os.path.join(self.conf_dir, 'keystone.conf')
        os.makedirs(self.conf_dir, exist_ok=True)
        env = process.child_env(OS_KEYSTONE_CONFIG_FILES=self.conf_file)
        self.process = process.Process('keystone', [
            self._bin('gunicorn'), '--no-control-socket', '-b', '127.0.0.1:%d' % port,
            '-w', '1', '--threads', '8', '--timeout', '120',
            '--pid', os.path.join(self.conf_dir, 'gunicorn.pid'),
            '--pythonpath', self.conf_dir, 'keystone_wsgi:application'], log_file, env)
        self._tokens: dict[str, str] = {}

    def _bin(self, name: str) -> str:
        path = os.path.join(self.venv, 'bin', name)
        if not os.path.exists(path):
            raise RuntimeError('%s not found: run tools/setup.sh (it installs Keystone in %s)'
                               % (path, self.venv))
        return path

    # -- set-up --------------------------------------------------------------------------

    def setup(self) -> None:
        """keystone.conf, the schema, the keys and the bootstrap admin (~10 s)."""
        keys = {name: os.path.join(self.conf_dir, name)
                for name in ('fernet-keys', 'receipt-keys', 'credential-keys')}
        with open(self.conf_file, 'w') as conf:
            conf.write('\n'.join([
                '[DEFAULT]', 'debug = false',
                'log_file = %s' % os.path.join(self.conf_dir, 'keystone.log'),
                '[database]', 'connection = sqlite:///%s'
                % os.path.join(self.conf_dir, 'keystone.sqlite'),
                '[token]', 'provider = fernet',
                '[fernet_tokens]', 'key_repository = %s' % keys['fernet-keys'],
                '[fernet_receipts]', 'key_repository = %s' % keys['receipt-keys'],
                '[credential]', 'key_repository = %s' % keys['credential-keys'],
                # bcrypt's cheapest cost: a login takes ms instead of ~0.5 s.
                '[identity]', 'password_hash_rounds = 4', '']))
        with open(os.path.join(self.conf_dir, 'keystone_wsgi.py'), 'w') as shim:
            shim.write(_WSGI_SHIM)
        owner = ('--keystone-user', 'root', '--keystone-group', 'root')
        self._manage('db_sync')
        self._manage('fernet_setup', *owner)
        self._manage('receipt_setup', *owner)
        self._manage('credential_setup', *owner)
        self._manage('bootstrap', '--bootstrap-password', ADMIN_PASSWORD,
                     '--bootstrap-admin-url', self.auth_url + '/',
                     '--bootstrap-public-url', self.auth_url + '/',
                     '--bootstrap-internal-url', self.auth_url + '/',
                     '--bootstrap-region-id', REGION)

    def _manage(self, *args: str) -> None:
        cmd = [self._bin('keystone-manage'), '--config-file', self.conf_file, *args]
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                                env=process.child_env())
        if result.returncode != 0:
            raise RuntimeError('%s failed (%s):\n%s%s' % (' '.join(cmd), result.returncode,
                                                       result.stdout, result.stderr))

    def start(self, timeout: float = 60.0) -> str:
        """Start gunicorn; return the URL once Keystone answers."""
        self.process.start()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.process.running():
                raise RuntimeError('Keystone exited: %s' % self.process.tail())
            try:
                if requests.get(self.auth_url, timeout=10).status_code == 200:
                    return self.url
            except requests.RequestException:
                pass
            time.sleep(0.1)
        raise RuntimeError('Keystone did not answer on %s within %ss' % (self.url, timeout))

    def stop(self) -> None:
        self.process.stop()

    # -- identities ----------------------------------------------------------------------

    def token(self, user: str = 'admin') -> str:
        """A project-scoped token of one of ``USERS`` (cached: they last an hour)."""
        if user not in self._tokens:
            password, project, _role = USERS[user]
            resp = requests.post(self.auth_url + '/auth/tokens', timeout=30, json={
                'auth': {'identity': {'methods': ['password'], 'password': {'user': {
                    'name': user, 'password': password, 'domain': {'id': 'default'}}}},
                    'scope': {'project': {'name': project, 'domain': {'id': 'default'}}}}})
            resp.raise_for_status()
            self._tokens[user] = resp.headers['X-Subject-Token']
        return self._tokens[user]

    def _call(self, method: str, path: str, **kwargs: Any) -> dict:
        resp = requests.request(method, self.auth_url + path, timeout=30,
                                headers={'X-Auth-Token': self.token('admin')}, **kwargs)
        if resp.status_code >= 400:
            raise RuntimeError('Keystone %s %s: %s %s' % (method, path, resp.status_code,
                                                          resp.text))
        return resp.json() if resp.content else {}

    def _id(self, collection: str, name: str) -> str:
        found = self._call('GET', '/%s' % collection, params={'name': name})[collection]
        return found[0]['id']

    def create_identities(self) -> None:
        """The projects, users and role assignments of ``USERS`` and ``EXTRA_ROLES``
        (admin exists; bootstrap made the roles admin, member and reader)."""
        projects = {'admin': self._id('projects', 'admin')}
        for _password, project, _role in USERS.values():
            if project not in projects:
                projects[project] = self._call('POST', '/projects', json={'project': {
                    'name': project, 'domain_id': 'default'}})['project']['id']
        roles = {r['name']: r['id'] for r in self._call('GET', '/roles')['roles']}
        for role in {r for extra in EXTRA_ROLES.values() for r in extra} - set(roles):
            roles[role] = self._call('POST', '/roles', json={'role': {
                'name': role}})['role']['id']
        for name, (password, project, role) in USERS.items():
            if name == 'admin':
                continue
            user_id = self._call('POST', '/users', json={'user': {
                'name': name, 'password': password, 'domain_id': 'default'}})['user']['id']
            for granted in (role, *EXTRA_ROLES.get(name, ())):
                self._call('PUT', '/projects/%s/users/%s/roles/%s'
                           % (projects[project], user_id, roles[granted]))

    def register_service(self, service_type: str, name: str, url: str) -> None:
        """A catalog entry: the service and its public endpoint in ``REGION``."""
        service_id = self._call('POST', '/services', json={'service': {
            'type': service_type, 'name': name}})['service']['id']
        for interface in ('public', 'internal', 'admin'):
            self._call('POST', '/endpoints', json={'endpoint': {
                'service_id': service_id, 'interface': interface, 'url': url,
                'region_id': REGION}})

    def project_id(self, name: str) -> str:
        return self._id('projects', name)

    def password_conf(self, user: str) -> dict[str, Any]:
        """keystoneauth's ``password`` options (a config section) for one of ``USERS``,
        with ``region_name``: where a service finds the others in the catalog."""
        password, project, _role = USERS[user]
        return {'auth_type': 'password', 'auth_url': self.auth_url, 'username': user,
                'password': password, 'project_name': project,
                'user_domain_name': 'Default', 'project_domain_name': 'Default',
                'region_name': REGION}

    def authtoken_conf(self, user: str = 'nova') -> dict[str, Any]:
        """The ``[keystone_authtoken]`` options of a service validating tokens here as
        its service user ``user``."""
        return {'www_authenticate_uri': self.auth_url, **self.password_conf(user),
                'service_token_roles_required': True}
