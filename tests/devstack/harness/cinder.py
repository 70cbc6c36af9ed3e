"""The real Cinder on a one-node Ceph for the devstack-style stack:
``novalite.allinone.cinder`` with a database ``<name>_cinder`` on MariaDB and a RabbitMQ
vhost ``<name>_cinder`` of its own, made at each start and removed with the stack.

The stack puts the ``VolumeRecord`` in ``stack.json``, so ``teardown`` (from this process
or from ``python -m tests.devstack.harness down``) stops Cinder and Ceph, deletes the
cluster's folder, drops the database and deletes the vhost.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest

from novalite.allinone import cinder
from novalite.allinone.cinder import VolumeRecord
from novalite.allinone.neutron import KeystoneAuth, short_prefix
from tests.devstack.harness import backends

__all__ = ['BACKEND', 'VOLUME_STACK', 'CinderEnvironment', 'KeystoneAuth', 'leftovers',
           'require_volumes', 'teardown']

# Cinder's own database is on MariaDB whatever the stack's backend.
BACKEND = 'mysql'
# The ``Stack`` keyword arguments of the shared volume stack (``volume_stack``).
VOLUME_STACK = {'auth': 'keystone', 'volumes': True}


def require_volumes() -> None:
    """Skip (fail under ``CI``) without Ceph's packages or ``.venv-cinder``."""
    reason = cinder.missing()
    if reason:
        msg = '%s: the volume tests cannot run here' % reason
        if os.environ.get('CI'):
            pytest.fail(msg)
        pytest.skip(msg)


class CinderEnvironment(cinder.CinderOnCeph):
    """``CinderOnCeph`` named after a stack, with a fresh database and vhost.

    :param name: names the database and vhost (``<name>_cinder``) and, hashed, the
        Cinder host (``short_prefix``)

    The other parameters are ``CinderOnCeph``'s.
    """

    def __init__(self, state_dir: str, name: str,
                 on_record: Callable[[VolumeRecord], None] | None = None,
                 keystone: KeystoneAuth | None = None, venv: str | None = None) -> None:
        super().__init__(state_dir, short_prefix(name), venv=venv, on_record=on_record,
                         keystone=keystone)
        self.database = self.vhost = '%s_cinder' % name

    def launch(self) -> None:
        """The database and vhost, then ``start()``, on a thread of its own
        (``wait_started()`` collects it)."""
        pool = ThreadPoolExecutor(1, thread_name_prefix='cinder-start')
        self._started = pool.submit(self._make_and_start)
        pool.shutdown(wait=False)

    def _make_and_start(self) -> str:
        # Recorded first: teardown removes them even if this start dies right after.
        self.record_shared(self.database, self.vhost)
        db_url = backends.create_database(BACKEND, self.database)
        transport_url = backends.create_vhost(self.vhost)
        return self.start(db_url, transport_url)

    def stop(self, remove: bool = True) -> list[str]:
        """Stop Cinder and Ceph, delete the cluster's folder, drop the database, delete
        the vhost; returns the errors met (``leftovers()`` says what is still there)."""
        return super().stop(remove) + _drop_shared(self.record)

    def leftovers(self, removed: bool = True) -> list[str]:
        return leftovers(self.record)


def teardown(record: VolumeRecord) -> list[str]:
    """Remove what ``record`` lists (from any process); returns the errors met."""
    return cinder.teardown(record) + _drop_shared(record)


def _drop_shared(record: VolumeRecord) -> list[str]:
    errors = []
    if record['database']:
        try:
            backends.drop_database(BACKEND, record['database'])
        except Exception as exc:
            errors.append('dropping database %s: %r' % (record['database'], exc))
    if record['vhost']:
        try:
            backends.delete_vhost(record['vhost'])
        except Exception as exc:
            errors.append('deleting vhost %s: %r' % (record['vhost'], exc))
    return errors


def leftovers(record: VolumeRecord) -> list[str]:
    """Cinder's processes, the Ceph cluster (daemons, folder), database and vhost of
    ``record`` still there."""
    left = cinder.leftovers(record)
    if record['database'] and record['database'] in backends.list_databases(
            BACKEND, record['database']):
        left.append('database %s' % record['database'])
    if record['vhost'] and record['vhost'] in backends.list_vhosts(record['vhost']):
        left.append('vhost %s' % record['vhost'])
    return left
