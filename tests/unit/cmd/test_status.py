"""novalite-status upgrade check, from an empty deployment to a ready one."""
from __future__ import annotations

import json

import pytest

from novalite import objects
from novalite.cmd import status_checks
from novalite.db import migration
from novalite.objects import service as service_obj
from tests.fixtures import databases
from tests.fixtures.placement import PlacementServer
from tests.fixtures.wsgi_server import WSGIServer
from tests.unit.cmd.deployment import Deployment
from tests.unit.cmd.test_manage_libvirt import _module_cloud, cloud  # noqa: F401


def _version_app(status: str, document: dict):
    """A WSGI app answering every request with ``status`` and ``document``."""
    def app(environ, start_response):
        start_response(status, [('Content-Type', 'application/json')])
        return [json.dumps(document).encode()]
    return app


@pytest.fixture
def fake_placement():
    """``fake_placement(max_version, status='200 OK')``: the URL of a server answering
    Placement's version document."""
    servers = []

    def serve(max_version: str, status: str = '200 OK') -> str:
        document = {'versions': [{'id': 'v1.0', 'min_version': '1.0',
                                  'max_version': max_version, 'status': 'CURRENT'}]}
        servers.append(WSGIServer(_version_app(status, document)).start())
        return servers[-1].url
    yield serve
    for server in servers:
        server.stop()


def _configure(dep: Deployment, placement: str | None = None,
               service_user_token: bool | None = None, extra: str = '') -> None:
    """Add sections to the deployment's config file (a later value wins)."""
    text = ''
    if placement is not None:
        text += ('[placement]\nauth_type = admin_token\ntoken = admin\nendpoint = %s\n'
                 % placement)
    if service_user_token is not None:
        text += '[service_user]\nsend_service_user_token = %s\n' % service_user_token
    with open(dep.config_file, 'a') as f:
        f.write(text + extra)


@pytest.fixture
def dep(tmp_path, capsys, fake_placement):
    """A deployment whose Placement answers and whose services send service tokens: the
    checks of the databases decide its result."""
    objects.register_all()
    gen = databases.database_factory('sqlite', tmp_path)
    deployment = Deployment(next(gen), tmp_path, capsys)
    _configure(deployment, placement=fake_placement('1.39'), service_user_token=True)
    yield deployment
    gen.close()


@pytest.fixture
def ready(dep):
    """``dep`` set up: schemas at head, cell0 and cell1 mapped."""
    for argv in (('api_db', 'sync'), ('db', 'sync'), ('cell_v2', 'simple_cell_setup')):
        assert dep.manage(*argv)[0] == 0, argv
    return dep


def _check(dep: Deployment) -> tuple[int, dict[str, tuple[int, str | None]]]:
    rc, out = dep.status('upgrade', 'check', '--json')
    checks = json.loads(out)['checks']
    return rc, {c['check']: (c['result'], c['details']) for c in checks}


def test_upgrade_check_follows_the_setup(dep):
    rc, checks = _check(dep)
    assert rc == 2
    assert 'api_db sync' in checks['Cells v2'][1]
    assert checks['API DB/cell DB at head'][0] == 2

    assert dep.manage('api_db', 'sync')[0] == 0
    assert dep.manage('cell_v2', 'map_cell0')[0] == 0
    rc, checks = _check(dep)
    assert rc == 2
    assert 'at least two cell mappings' in checks['Cells v2'][1]
    details = checks['API DB/cell DB at head'][1]
    assert 'The database of cell' in details and 'run "novalite-manage db sync"' in details

    assert dep.manage('db', 'sync')[0] == 0
    assert dep.manage('cell_v2', 'create_cell', '--name', 'cell1')[0] == 0
    rc, checks = _check(dep)
    assert rc == 0
    assert checks['Cells v2'] == (0, 'No host mappings or compute nodes were found. Remember '
                                     'to run command "novalite-manage cell_v2 discover_hosts" '
                                     'when new compute hosts are deployed.')
    assert checks['API DB/cell DB at head'] == (0, None)

    dep.add_compute_node('compute1')
    rc, checks = _check(dep)
    assert rc == 2
    assert '1 in cell' in checks['Cells v2'][1] and 'discover_hosts' in checks['Cells v2'][1]

    assert dep.manage('cell_v2', 'discover_hosts')[0] == 0
    rc, checks = _check(dep)
    assert rc == 0
    assert checks['Cells v2'] == (0, None)


def test_upgrade_check_reports_a_cell_database_behind(dep):
    assert dep.manage('api_db', 'sync')[0] == 0
    assert dep.manage('db', 'sync')[0] == 0
    assert dep.manage('cell_v2', 'simple_cell_setup')[0] == 0
    assert dep.status('upgrade', 'check')[0] == 0

    migration.db_sync('main', version='base', url=dep.cell0_url)

    rc, checks = _check(dep)
    assert rc == 2
    assert checks['Cells v2'][0] == 0
    assert 'The database of cell 00000000-0000-0000-0000-000000000000(cell0) is at ' \
           'revision None' in checks['API DB/cell DB at head'][1]
    # The human-readable table, too.
    rc, out = dep.status('upgrade', 'check')
    assert rc == 2 and 'Result: Failure' in out


# -- Placement API ---------------------------------------------------------------------

def test_placement_check_with_the_real_placement(dep, tmp_path):
    with PlacementServer(str(tmp_path)) as server:
        _configure(dep, placement=server.url)
        rc, checks = _check(dep)
    assert checks['Placement API'] == (0, None)


@pytest.mark.parametrize('status, version, details', [
    ('200 OK', '1.38', 'Placement API version 1.39 needed, you have 1.38.'),
    ('401 Unauthorized', '1.39', 'Placement service credentials do not work.'),
    ('404 Not Found', '1.39', 'Placement API does not seem to be running.'),
])
def test_placement_check_failures(dep, fake_placement, status, version, details):
    _configure(dep, placement=fake_placement(version, status))
    rc, checks = _check(dep)
    assert rc == 2
    assert checks['Placement API'] == (2, details)


def test_placement_check_unreachable_or_unconfigured(dep, fake_placement):
    server_url = fake_placement('1.39')
    _configure(dep, placement=server_url.rsplit(':', 1)[0] + ':1')
    rc, checks = _check(dep)
    assert checks['Placement API'][0] == 2
    assert checks['Placement API'][1].startswith('Placement API cannot be reached: ')

    _configure(dep, extra='[placement]\nauth_type =\nendpoint =\n')
    rc, checks = _check(dep)
    assert checks['Placement API'] == (2, 'No credentials specified for placement API in '
                                          'the configuration ([placement] auth_type).')


def test_the_placement_version_needed_is_the_report_clients():
    from novalite.scheduler.client import report
    assert status_checks.MIN_PLACEMENT_MICROVERSION == report.PLACEMENT_VERSION


# -- Cinder API ------------------------------------------------------------------------

@pytest.fixture
def fake_cinder():
    servers = []

    def serve(version: str | None) -> str:
        versions = [{'id': 'v3.0', 'status': 'CURRENT', 'min_version': '3.0',
                     'version': version}] if version else [{'id': 'v2.0', 'version': ''}]
        servers.append(WSGIServer(_version_app('300 Multiple Choices',
                                               {'versions': versions})).start())
        return servers[-1].url + '/v3'
    yield serve
    for server in servers:
        server.stop()


def test_cinder_check(ready, fake_cinder):
    dep = ready
    rc, checks = _check(dep)
    assert checks['Cinder API'] == (0, None)  # not configured: nothing to check

    _configure(dep, extra='[cinder]\nendpoint_template = %s\n' % fake_cinder('3.70'))
    assert _check(dep)[1]['Cinder API'] == (0, None)

    for version in ('3.27', None):
        _configure(dep, extra='[cinder]\nendpoint_template = %s\n' % fake_cinder(version))
        rc, checks = _check(dep)
        assert rc == 2
        assert checks['Cinder API'] == (2, 'Cinder API 3.44 or greater is required. '
                                           'Deploy at least Cinder 12.0.0 (Queens).')

    _configure(dep, extra='[cinder]\nendpoint_template = http://127.0.0.1:1/v3\n'
                          'http_retries = 0\n')
    rc, checks = _check(dep)
    assert rc == 1
    assert checks['Cinder API'][0] == 1
    assert checks['Cinder API'][1].startswith('Unable to determine Cinder API version due '
                                              'to error: ')


# -- Policy file -----------------------------------------------------------------------

def test_policy_file_json_to_yaml(ready, tmp_path):
    dep = ready
    assert _check(dep)[1]['Policy File JSON to YAML Migration'] == (0, None)
    yaml_file = tmp_path / 'policy.yaml'
    yaml_file.write_text('"os_compute_api:servers:index": "rule:admin_api"\n')
    _configure(dep, extra='[oslo_policy]\npolicy_file = %s\n' % yaml_file)
    rc, checks = _check(dep)
    assert (rc, checks['Policy File JSON to YAML Migration']) == (0, (0, None))

    json_file = tmp_path / 'policy.json'
    json_file.write_text('{"os_compute_api:servers:index": "rule:admin_api"}')
    _configure(dep, extra='[oslo_policy]\npolicy_file = %s\n' % json_file)
    rc, checks = _check(dep)
    assert rc == 2
    code, details = checks['Policy File JSON to YAML Migration']
    assert code == 2 and 'oslopolicy-convert-json-to-yaml' in details


# -- Service user token ----------------------------------------------------------------

def test_service_user_token(ready):
    dep = ready
    _configure(dep, service_user_token=False)
    rc, checks = _check(dep)
    assert rc == 2
    code, details = checks['Service User Token Configuration']
    assert code == 2 and 'send_service_user_token = true' in details

    _configure(dep, extra='[api]\nauth_strategy = noauth2\n')
    rc, checks = _check(dep)
    assert rc == 0
    assert checks['Service User Token Configuration'][0] == 0


# -- The checks that read the cells (MariaDB) ------------------------------------------

def _cell_checks(cloud) -> dict[str, tuple[int, str | None]]:  # noqa: F811
    rc, out = cloud.status('upgrade', 'check', '--json')
    return {c['check']: (c['result'], c['details']) for c in json.loads(out)['checks']}


def test_old_computes(cloud):  # noqa: F811
    assert _cell_checks(cloud)['Older than N-1 computes'] == (0, None)
    current = cloud.add_service('host1', version=service_obj.SERVICE_VERSION)
    assert _cell_checks(cloud)['Older than N-1 computes'] == (0, None)
    old = cloud.add_service('host-old', version=0)
    cloud.add_service('old-scheduler', binary='novalite-scheduler', version=0)
    code, details = _cell_checks(cloud)['Older than N-1 computes']
    assert code == 2
    assert 'host-old (version 0, cell' in details and 'host1' not in details
    assert 'scheduler' not in details
    # A deleted compute service is no longer counted.
    cloud.delete_service(old)
    assert _cell_checks(cloud)['Older than N-1 computes'] == (0, None)
    cloud.delete_service(current)


def test_hw_machine_type_unset(cloud):  # noqa: F811
    # Servers of the other tests of the module may be there: record a type for them.
    rc, out = cloud.manage('libvirt', 'list_unset_machine_type')
    for uuid in out.split() if rc == 3 else ():
        assert cloud.manage('libvirt', 'update_machine_type', uuid, 'pc', '--force')[0] == 0
    assert _cell_checks(cloud)['hw_machine_type unset'] == (0, None)

    uuid = cloud.add_server(vm_state='active')
    code, details = _cell_checks(cloud)['hw_machine_type unset']
    assert code == 1
    assert 'novalite-manage libvirt list_unset_machine_type' in details
    rc, out = cloud.status('upgrade', 'check')
    assert 'Result: Warning' in out

    assert cloud.manage('libvirt', 'update_machine_type', uuid, 'q35', '--force')[0] == 0
    assert _cell_checks(cloud)['hw_machine_type unset'] == (0, None)


def test_the_exit_code_is_the_worst_result(cloud, fake_placement):  # noqa: F811
    _configure(cloud, placement=fake_placement('1.39'), service_user_token=True)
    rc, out = cloud.manage('libvirt', 'list_unset_machine_type')
    for uuid in out.split() if rc == 3 else ():
        cloud.manage('libvirt', 'update_machine_type', uuid, 'pc', '--force')
    assert cloud.status('upgrade', 'check')[0] == 0
    cloud.add_server(vm_state='active')
    assert cloud.status('upgrade', 'check')[0] == 1
    _configure(cloud, service_user_token=False)
    assert cloud.status('upgrade', 'check')[0] == 2
