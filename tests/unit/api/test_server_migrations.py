"""Tests of aborting (DELETE) and force completing a server's live migration, and of
the progress counters in its view, through the app on real SQLite cell databases; and
of what os-migrateLive's compute API hands the conductor."""
from __future__ import annotations

import datetime
from typing import Any

import pytest

from novalite import context as nl_context
from novalite import exception, objects, policy
from novalite.api.openstack import loader
from novalite.compute import api as compute_api
from novalite.compute import rpcapi as compute_rpcapi
from novalite.conductor import rpcapi as conductor_rpcapi
from tests.unit.api.cloud import ADMIN, Cloud
from tests.unit.api.conftest import call

T0 = datetime.datetime(2024, 5, 1, 12, 0, 0, tzinfo=datetime.UTC)


class RecordingComputeRPC:
    """The compute RPC client of the API: what would be cast to the source host."""

    casts: list[tuple[str, str, Any]] = []

    def live_migration_abort(self, context: Any, instance: Any, migration_id: int) -> None:
        self.casts.append(('live_migration_abort', instance.uuid, migration_id))

    def live_migration_force_complete(self, context: Any, instance: Any) -> None:
        self.casts.append(('live_migration_force_complete', instance.uuid, None))


@pytest.fixture
def casts(monkeypatch):
    RecordingComputeRPC.casts = []
    monkeypatch.setattr(compute_rpcapi, 'ComputeAPI', RecordingComputeRPC)
    return RecordingComputeRPC.casts


@pytest.fixture
def cloud(api_db, tmp_path):
    return Cloud(tmp_path)


@pytest.fixture
def app(api_db, noauth2, casts):
    return loader.load_app()


def _set(cloud: Cloud, uuid: str, **values: Any) -> None:
    with nl_context.target_cell(cloud.context, cloud.cells['cell1']) as cctxt:
        instance = objects.Instance.get_by_uuid(cctxt, uuid)
        for name, value in values.items():
            setattr(instance, name, value)
        instance.save()


def _migration(cloud: Cloud, server: str, status: str = 'running',
               migration_type: str = 'live-migration', **values: Any) -> objects.Migration:
    fields = dict(source_compute='cmp1', source_node='cmp1.local', dest_compute='cmp2',
                  dest_node='cmp2.local', dest_host=None, status=status,
                  migration_type=migration_type, instance_uuid=server,
                  old_instance_type_id=1, new_instance_type_id=1, hidden=False,
                  user_id='demo', project_id='demo', created_at=T0, updated_at=T0)
    fields.update(values)
    with nl_context.target_cell(cloud.context, cloud.cells['cell1']) as cctxt:
        migration = objects.Migration(cctxt, **fields)
        migration.create()
    return migration


@pytest.fixture
def server(cloud):
    """A server live-migrating from cmp1."""
    uuid = cloud.add_instance('cmp1')
    _set(cloud, uuid, task_state='migrating')
    return uuid


def _abort(app, server, migration_id, version='2.24', token=ADMIN):
    return call(app, 'DELETE', '/v2.1/servers/%s/migrations/%s' % (server, migration_id),
                token=token, version=version)


def _force(app, server, migration_id, version='2.22', token=ADMIN, body=None):
    return call(app, 'POST', '/v2.1/servers/%s/migrations/%s/action' % (server, migration_id),
                body={'force_complete': None} if body is None else body, token=token,
                version=version)


def _actions(app, server):
    resp = call(app, 'GET', '/v2.1/servers/%s/os-instance-actions' % server, token=ADMIN)
    return [a['action'] for a in resp.json['instanceActions']]


def _message(resp) -> str:
    return next(iter(resp.json.values()))['message']


class TestAbort:
    def test_a_running_migration_is_cast_to_the_source_and_recorded(
            self, app, cloud, server, casts):
        migration = _migration(cloud, server)
        resp = _abort(app, server, migration.id)
        assert resp.status_int == 202
        assert resp.body == b''
        assert casts == [('live_migration_abort', server, migration.id)]
        assert _actions(app, server) == ['live_migration_cancel']

    @pytest.mark.parametrize('status', ['queued', 'preparing'])
    def test_a_queued_one_only_from_2_65(self, app, cloud, server, casts, status):
        migration = _migration(cloud, server, status=status)
        refused = _abort(app, server, migration.id, version='2.64')
        assert refused.status_int == 400
        assert _message(refused) == (
            'Migration %s state of instance %s is %s. Cannot abort live migration while '
            'the migration is in this state.' % (migration.id, server, status))
        assert casts == []
        assert _abort(app, server, migration.id, version='2.65').status_int == 202
        assert casts == [('live_migration_abort', server, migration.id)]

    @pytest.mark.parametrize('status', ['accepted', 'post-migrating', 'completed', 'error'])
    def test_other_statuses_are_refused(self, app, cloud, server, casts, status):
        migration = _migration(cloud, server, status=status)
        assert _abort(app, server, migration.id, version='latest').status_int == 400
        assert casts == []
        assert _actions(app, server) == []

    def test_a_migration_of_another_server_or_none_is_not_found(self, app, cloud, server,
                                                                 casts):
        other = _migration(cloud, cloud.add_instance('cmp1'))
        resp = _abort(app, server, other.id)
        assert resp.status_int == 404
        assert _message(resp) == 'Migration %s not found for instance %s' % (other.id,
                                                                              server)
        assert _abort(app, server, 424242).status_int == 404
        assert _abort(app, server, 'abc').status_int == 404
        assert _abort(app, '1' * 32, other.id).status_int == 404
        assert casts == []

    def test_a_server_that_is_not_migrating_is_a_conflict(self, app, cloud, server, casts):
        migration = _migration(cloud, server)
        _set(cloud, server, task_state=None)
        resp = _abort(app, server, migration.id)
        assert resp.status_int == 409
        assert _message(resp) == (
            "Cannot 'abort live migration' instance %s while it is in task_state None"
            % server)
        assert casts == []

    def test_microversion_and_policy(self, app, cloud, server, casts):
        migration = _migration(cloud, server)
        assert _abort(app, server, migration.id, version='2.23').status_int == 404
        assert _abort(app, server, migration.id, token='demo:demo').status_int == 403
        assert casts == []


class TestForceComplete:
    def test_a_running_migration_is_cast_to_the_source_and_recorded(
            self, app, cloud, server, casts):
        migration = _migration(cloud, server)
        resp = _force(app, server, migration.id)
        assert resp.status_int == 202
        assert resp.body == b''
        assert casts == [('live_migration_force_complete', server, None)]
        assert _actions(app, server) == ['live_migration_force_complete']

    @pytest.mark.parametrize('status', ['queued', 'preparing', 'completed'])
    def test_only_a_running_migration(self, app, cloud, server, casts, status):
        migration = _migration(cloud, server, status=status)
        resp = _force(app, server, migration.id, version='latest')
        assert resp.status_int == 400
        assert _message(resp) == (
            'Migration %s state of instance %s is %s. Cannot force complete while the '
            'migration is in this state.' % (migration.id, server, status))
        assert casts == []

    def test_an_unknown_migration_is_a_bad_request(self, app, cloud, server, casts):
        other = _migration(cloud, cloud.add_instance('cmp1'))
        resp = _force(app, server, other.id)
        assert resp.status_int == 400
        assert _message(resp) == 'Migration %s not found for instance %s' % (other.id,
                                                                              server)
        assert _force(app, server, 'abc').status_int == 400
        assert casts == []

    @pytest.mark.parametrize('values, state', [
        ({'vm_state': 'paused'}, 'vm_state paused'),
        ({'task_state': None}, 'task_state None'),
    ])
    def test_an_active_migrating_server_only(self, app, cloud, server, casts, values,
                                             state):
        migration = _migration(cloud, server)
        _set(cloud, server, **values)
        resp = _force(app, server, migration.id)
        assert resp.status_int == 409
        assert _message(resp) == (
            "Cannot 'force_complete' instance %s while it is in %s" % (server, state))
        assert casts == []

    def test_body_microversion_and_policy(self, app, cloud, server, casts):
        migration = _migration(cloud, server)
        assert _force(app, server, migration.id, version='2.21').status_int == 404
        assert _force(app, server, migration.id, body={'force_complete': {}}).status_int \
            == 400
        unknown = _force(app, server, migration.id, body={'pause': None})
        assert unknown.status_int == 400
        assert _message(unknown) == 'There is no such action: pause'
        assert _force(app, server, migration.id, token='demo:demo').status_int == 403
        assert casts == []


class TestProjectManager:
    """Nova 34 lets the project's manager abort and force complete; noauth2 gives no
    manager role, so here a member counts as one."""

    @pytest.fixture(autouse=True)
    def member_is_manager(self):
        policy.reset()
        policy.init(rules={'project_manager_api': 'role:member and project_id:%(project_id)s'})
        yield
        policy.reset()

    def test_own_projects_servers_unless_locked(self, app, cloud, server, casts):
        migration = _migration(cloud, server)
        theirs = cloud.add_instance('cmp1', project_id='other')
        _set(cloud, theirs, task_state='migrating')
        their_migration = _migration(cloud, theirs, project_id='other')
        assert _abort(app, theirs, their_migration.id, token='demo:demo').status_int == 404
        _set(cloud, server, locked=True, locked_by='admin')
        locked = _abort(app, server, migration.id, token='demo:demo')
        assert locked.status_int == 409
        assert _force(app, server, migration.id, token='demo:demo').status_int == 409
        assert casts == []
        assert _abort(app, server, migration.id).status_int == 202
        _set(cloud, server, locked=False)
        assert _force(app, server, migration.id, token='demo:demo').status_int == 202
        assert [c[0] for c in casts] == ['live_migration_abort',
                                         'live_migration_force_complete']


def test_the_view_shows_the_copy_progress(app, cloud, server):
    migration = _migration(cloud, server, memory_total=4096, memory_processed=1024,
                           memory_remaining=3072, disk_total=None, disk_processed=None,
                           disk_remaining=None)
    path = '/v2.1/servers/%s/migrations' % server
    shown = call(app, 'GET', path + '/%s' % migration.id, token=ADMIN,
                 version='2.23').json['migration']
    listed = call(app, 'GET', path, token=ADMIN, version='2.23').json['migrations']
    assert listed == [shown]
    assert {k: v for k, v in shown.items() if k.endswith('_bytes')} == {
        'memory_total_bytes': 4096, 'memory_processed_bytes': 1024,
        'memory_remaining_bytes': 3072, 'disk_total_bytes': None,
        'disk_processed_bytes': None, 'disk_remaining_bytes': None}


class RecordingConductor:
    """The conductor client of the API: the live migrations handed over."""

    calls: list[dict] = []

    def live_migrate_instance(self, context: Any, instance: Any, host: str | None,
                              block_migration: bool | None, migration: Any,
                              async_: bool = True, force: bool = False) -> None:
        self.calls.append(dict(host=host, block_migration=block_migration, force=force,
                               migration=migration.status, async_=async_))


class TestLiveMigrate:
    """os-migrateLive's compute API: which host the conductor gets, and whether forced."""

    @pytest.fixture
    def handed(self, monkeypatch):
        RecordingConductor.calls = []
        monkeypatch.setattr(conductor_rpcapi, 'ComputeTaskAPI', RecordingConductor)
        return RecordingConductor.calls

    @pytest.fixture
    def migrate(self, cloud, handed):
        cloud.add_host('cmp1')
        cloud.add_host('cmp2')
        api = compute_api.API()

        def migrate(host: str | None, force: bool | None = None,
                    block_migration: bool | None = None) -> None:
            server = cloud.add_instance('cmp1')
            instance = api.get(cloud.context, server)
            api.live_migrate(cloud.context, instance, block_migration, host, force=force)
        return migrate

    @pytest.mark.parametrize('host, force, forced', [
        ('cmp2', None, True),    # before 2.30 a named host is taken as it is
        ('cmp2', True, True),    # 2.30 to 2.67, asked for
        ('cmp2', False, False),  # from 2.30 unless asked for: the scheduler checks it
        (None, None, False),
        (None, False, False),
    ])
    def test_a_named_host_is_forced_before_2_30_or_when_asked(self, migrate, handed, host,
                                                              force, forced):
        migrate(host, force)
        assert handed == [dict(host=host, block_migration=None, force=forced,
                               migration='accepted', async_=True)]

    def test_the_servers_own_host_is_the_conductors_to_refuse(self, migrate, handed):
        # As Nova: a pre-check error of the migration (UnableToMigrateToSelf), not a 400.
        migrate('cmp1', block_migration=True)
        assert handed[0]['host'] == 'cmp1' and handed[0]['block_migration'] is True

    def test_an_unknown_host_is_refused_before_anything_is_recorded(self, migrate, handed,
                                                                    cloud):
        with pytest.raises(exception.ComputeHostNotFound):
            migrate('nowhere')
        assert handed == []
