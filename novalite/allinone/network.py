"""novalite-all's network: the real Neutron (``novalite.allinone.neutron``) whose state
outlives a stop, and the default network ``private`` its servers get addresses from.

What a start made is kept for the next start with the same state folder: Neutron's
database on MariaDB (its name written in the state folder), its schema (not upgraded
again while it is at the installed Neutron's heads), and the OVS and OVN databases'
files. A stop removes every process, namespace and device. What a novalite-all killed
outright left running is removed by the next start with its state folder, found from
the ``NetworkRecord`` kept there while it ran.
"""
from __future__ import annotations

import glob
import json
import os
import threading
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from oslo_utils import uuidutils
from sqlalchemy.engine import make_url

from novalite.allinone import ovn
from novalite.allinone.neutron import NeutronOnOvn, schema_heads, short_prefix
from novalite.allinone.ovn import NetworkRecord

DB_SERVER = 'mysql+pymysql://root@127.0.0.1:3306'
NETWORK = 'private'
SUBNET = 'private-subnet'
CIDR = '10.0.0.0/24'


class AllInOneNeutron(NeutronOnOvn):
    """Neutron for novalite-all, its state kept under ``state_dir`` across restarts.

    :param state_dir: its own folder (novalite-all's state folder's ``neutron/``)
    :param db_server: the MariaDB (or MySQL) server of Neutron's database, as an
        SQLAlchemy URL without a database
    :param hosts: the compute host names; each gets an OVN chassis

    The other parameters are ``NeutronOnOvn``'s.
    """

    def __init__(self, state_dir: str, hosts: Sequence[str], nova_url: str,
                 db_server: str = DB_SERVER, venv: str | None = None,
                 port: int | None = None) -> None:
        state_dir = os.path.abspath(state_dir)
        self.record_file = os.path.join(state_dir, 'record.json')
        self.database_file = os.path.join(state_dir, 'database')
        # The schema heads of the database when the last start was up.
        self.heads_file = os.path.join(state_dir, 'schema-heads')
        self.db_server = db_server
        # What a killed novalite-all of this state folder left, removed by check().
        self.removed: list[str] | None = None
        self._record_lock = threading.Lock()
        os.makedirs(state_dir, exist_ok=True)
        super().__init__(state_dir, hosts, nova_url, short_prefix('novalite-all:' + state_dir),
                         venv=venv, on_record=self._save_record, port=port)

    # -- the record of what runs -----------------------------------------------------------

    def _save_record(self, record: NetworkRecord) -> None:
        with self._record_lock:
            tmp = self.record_file + '.tmp'
            with open(tmp, 'w') as out:
                json.dump(record, out)
            os.replace(tmp, self.record_file)

    def check(self) -> None:
        """``NeutronOnOvn.check``, and what a killed novalite-all of this state folder
        left running removed once this process holds the machine's claim.

        :raises ovn.LeftoverError: another environment runs, or left its devices
        :raises RuntimeError: anything else missing, or the leftovers would not go
        """
        self.check_host()
        self.ovn.hold_claim()
        if self.removed is None:
            self.removed = self._remove_leftovers()
        self.ovn.claim()

    def _remove_leftovers(self) -> list[str]:
        try:
            with open(self.record_file) as f:
                record: NetworkRecord = json.load(f)
        except FileNotFoundError:
            return []
        left = ovn.leftovers(record)
        if left:
            errors = ovn.teardown(record)
            if errors:
                raise RuntimeError('could not remove what an earlier novalite-all of this '
                                   'state folder left running: %s' % '; '.join(errors))
        os.remove(self.record_file)
        return left

    # -- the database ---------------------------------------------------------------------

    def database_name(self) -> str:
        """The name written in the state folder; a new one is written on the first start."""
        try:
            with open(self.database_file) as f:
                return f.read().strip()
        except FileNotFoundError:
            name = 'novalite_all_%s' % uuidutils.generate_uuid(dashed=False)[:12]
            with open(self.database_file, 'w') as f:
                f.write(name + '\n')
            return name

    def _url(self, name: str) -> str:
        url = make_url(self.db_server).set(database=name)
        return url.update_query_dict({'charset': 'utf8mb4'}).render_as_string(
            hide_password=False)

    def _central_files(self) -> list[str]:
        return [os.path.join(self.ovn.central_dir, db) for db in ('ovnnb_db.db',
                                                                   'ovnsb_db.db')]

    def _kept_database(self, heads: set[str]) -> str | None:
        """The database of the last start, if it was at ``heads`` when that start was up
        and the OVN databases are still there."""
        try:
            with open(self.heads_file) as f:
                kept = set(f.read().split())
        except FileNotFoundError:
            return None
        if kept != heads or not os.path.exists(self.database_file) or not all(
                os.path.exists(path) for path in self._central_files()):
            return None
        return self._url(self.database_name())

    def _make_schema(self, started: float) -> None:
        if os.path.exists(self.heads_file):
            os.remove(self.heads_file)
        super()._make_schema(started)

    def start(self, timeout: float = 120.0) -> str:
        url = super().start(timeout)
        with open(self.heads_file, 'w') as f:
            f.write('\n'.join(sorted(schema_heads(self.venv))) + '\n')
        return url

    def _database_url(self) -> str:
        """The database of the earlier starts; a new one with new OVN databases when
        either is missing, since the OVN northbound database mirrors Neutron's, or when
        no start was up since its schema was last touched (a migration cut short may
        have left it half done: MariaDB does not roll back DDL)."""
        name = self.database_name()
        kept = [*self._central_files(), self.heads_file]
        engine = sa.create_engine(self.db_server, isolation_level='AUTOCOMMIT',
                                  poolclass=sa.pool.NullPool)
        try:
            with engine.connect() as conn:
                exists = conn.exec_driver_sql(
                    'SELECT 1 FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = %s',
                    (name,)).first()
                if not exists or not all(os.path.exists(path) for path in kept):
                    conn.exec_driver_sql('DROP DATABASE IF EXISTS `%s`' % name)
                    conn.exec_driver_sql('CREATE DATABASE `%s` CHARACTER SET utf8mb4' % name)
                    for path in [self.heads_file, *glob.glob(os.path.join(
                            self.ovn.central_dir, 'ovn*_db.db'))]:
                        if os.path.exists(path):
                            os.remove(path)
        except sa.exc.OperationalError as exc:
            raise RuntimeError('Neutron\'s database server %s cannot be reached (%s): start '
                               'MariaDB there, or name another with --neutron-db-server'
                               % (self.db_server, exc.orig)) from exc
        finally:
            engine.dispose()
        return self._url(name)

    # -- stop -----------------------------------------------------------------------------

    def stop(self) -> list[str]:
        """``NeutronOnOvn.stop``; the record goes once nothing it lists is left."""
        errors = super().stop()
        if not errors and not self.leftovers() and os.path.exists(self.record_file):
            os.remove(self.record_file)
        return errors


def ensure_default_network(neutron: NeutronOnOvn) -> dict[str, Any]:
    """The shared network ``private`` with an IPv4 subnet ``CIDR``, made if missing (one
    the user deleted comes back on the next start); returns the network."""
    found = neutron.api('GET', '/networks', params={'name': NETWORK})
    found.raise_for_status()
    if found.json()['networks']:
        network = found.json()['networks'][0]
    else:
        made = neutron.api('POST', '/networks', json={'network': {
            'name': NETWORK, 'shared': True}})
        made.raise_for_status()
        network = made.json()['network']
    if not network['subnets']:
        subnet = neutron.api('POST', '/subnets', json={'subnet': {
            'network_id': network['id'], 'name': SUBNET, 'ip_version': 4, 'cidr': CIDR}})
        subnet.raise_for_status()
        network['subnets'] = [subnet.json()['subnet']['id']]
    return network
