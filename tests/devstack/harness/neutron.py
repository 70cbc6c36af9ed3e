"""The real Neutron (ML2/OVN) for the devstack-style stack: ``novalite.allinone.neutron``
with a database of its own on MariaDB, made at each start and dropped with the stack.

The stack puts the ``NetworkRecord`` in ``stack.json``, so ``teardown`` (from this process
or from ``python -m tests.devstack.harness down``) removes the processes, namespaces, devices and
the database.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from novalite.allinone import neutron, ovn
from novalite.allinone.neutron import SERVICE_PLUGINS, KeystoneAuth, default_venv, short_prefix
from novalite.allinone.ovn import NetworkRecord
from tests.devstack.harness import backends

__all__ = ['BACKEND', 'KeystoneAuth', 'NeutronEnvironment', 'default_venv', 'leftovers',
           'short_prefix', 'teardown']

# Neutron's own database is on MariaDB whatever the stack's backend.
BACKEND = 'mysql'


class NeutronEnvironment(neutron.NeutronOnOvn):
    """``NeutronOnOvn`` named after a stack, with a fresh database ``<name>_neutron``.

    :param name: names the database (``<name>_neutron``) and, hashed, the namespaces
        and devices (``short_prefix``)
    :param on_record: called with a copy of the ``NetworkRecord`` each time it grows
        (the stack puts it in ``stack.json``)

    The other parameters are ``NeutronOnOvn``'s.
    """

    def __init__(self, state_dir: str, hosts: Sequence[str], nova_url: str, name: str,
                 venv: str | None = None,
                 on_record: Callable[[NetworkRecord], None] | None = None,
                 port: int | None = None,
                 service_plugins: Sequence[str] = SERVICE_PLUGINS,
                 keystone: KeystoneAuth | None = None) -> None:
        super().__init__(state_dir, hosts, nova_url, short_prefix(name), venv=venv,
                         on_record=on_record, port=port, service_plugins=service_plugins,
                         keystone=keystone)
        self.database = '%s_neutron' % name

    def _database_url(self) -> str:
        # Recorded first: teardown drops it even if this start dies right after.
        self.ledger.database(self.database)
        return backends.create_database(BACKEND, self.database)

    def stop(self) -> list[str]:
        """Stop everything, delete the namespaces and devices, drop the database;
        returns the errors met (``leftovers()`` says what is still there)."""
        errors = super().stop()
        return errors + _drop_database(self.record)

    def leftovers(self) -> list[str]:
        return leftovers(self.record)


def teardown(record: NetworkRecord) -> list[str]:
    """Remove what ``record`` lists (from any process); returns the errors met."""
    return ovn.teardown(record) + _drop_database(record)


def _drop_database(record: NetworkRecord) -> list[str]:
    if not record['database']:
        return []
    try:
        backends.drop_database(BACKEND, record['database'])
    except Exception as exc:
        return ['dropping database %s: %r' % (record['database'], exc)]
    return []


def leftovers(record: NetworkRecord) -> list[str]:
    """Processes, namespaces, devices and the database of ``record`` still there."""
    left = ovn.leftovers(record)
    if record['database'] and record['database'] in backends.list_databases(
            BACKEND, record['database']):
        left.append('database %s' % record['database'])
    return left
