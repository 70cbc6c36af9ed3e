"""The work behind ``novalite-manage cell_v2``: cell and host mappings in the API database.

Each function prints what an operator needs to read and returns the command's exit code,
with Nova's meaning of each code.
"""
from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib import parse

import oslo_messaging as messaging
import prettytable
from oslo_db import exception as db_exc
from oslo_utils import uuidutils
from sqlalchemy import exc as sa_exc
from sqlalchemy import func, select
from sqlalchemy.engine import make_url

from novalite import context as nl_context
from novalite import exception, objects, rpc
from novalite.cmd import cell_v2_instances
from novalite.conf import CONF
from novalite.db import engine, migration
from novalite.db.api import models as api_models

if TYPE_CHECKING:
    from novalite.context import RequestContext

CELL0_NAME = 'cell0'
CELL1_NAME = 'cell1'
CELL0_TRANSPORT_URL = 'none:///'


def configured_transport_url() -> str | None:
    """``[DEFAULT] transport_url``, registered here if no transport was built yet."""
    # oslo.messaging registers its options when it first parses a URL (or builds a
    # transport); parsing the configured one is its public way to do so.
    try:
        messaging.TransportURL.parse(CONF)
    except messaging.InvalidTransportURL:
        pass
    return CONF.transport_url


def init_bus() -> None:
    """Set up the default transport, which aiming a context at a cell may need.

    No message is sent. A bad or empty URL is left for create_cell to report: the
    other commands only need the bus for cells whose URL is ``none:///``.
    """
    if configured_transport_url():
        try:
            rpc.init(CONF)
        except messaging.InvalidTransportURL:
            pass


def _validate_transport_url(url: str | None) -> str | None:
    url = url or configured_transport_url()
    if not url:
        print('Must specify --transport-url if [DEFAULT]/transport_url is not set in the '
              'configuration file.')
        return None
    try:
        messaging.TransportURL.parse(CONF, url)
    except (messaging.InvalidTransportURL, ValueError) as exc:
        print('Invalid transport URL: %s' % exc)
        return None
    return url


def mask_password(url: str) -> str:
    """``url`` with the password part of its network location replaced by ``****``."""
    parsed = parse.urlparse(url)
    if '@' not in parsed.netloc:
        return url
    netloc = re.sub(r':[^:@]*@', ':****@', parsed.netloc)
    return parse.urlunparse(parsed._replace(netloc=netloc))


def cell0_default_connection() -> str | None:
    """``[database] connection`` with ``_cell0`` appended to the database name.

    A SQLite file keeps its extension: ``nova.sqlite`` becomes ``nova_cell0.sqlite``.
    """
    if not CONF.database.connection:
        return None
    url = make_url(CONF.database.connection)
    name = url.database
    if not name or name == ':memory:':
        return None
    if url.get_backend_name() == 'sqlite':
        root, ext = os.path.splitext(name)
        name = root + '_cell0' + ext
    else:
        name += '_cell0'
    return url.set(database=name).render_as_string(hide_password=False)


def map_cell0(database_connection: str | None = None) -> int:
    ctxt = nl_context.get_admin_context()
    try:
        objects.CellMapping.get_by_uuid(ctxt, objects.CellMapping.CELL0_UUID)
        print('Cell0 is already setup')
        return 0
    except exception.CellMappingNotFound:
        pass
    connection = database_connection or cell0_default_connection()
    if not connection:
        print('Cannot derive the cell0 database from [database] connection: specify '
              '--database_connection.')
        return 1
    objects.CellMapping(ctxt, uuid=objects.CellMapping.CELL0_UUID, name=CELL0_NAME,
                        transport_url=CELL0_TRANSPORT_URL,
                        database_connection=connection).create()
    return 0


def _same_cell(ctxt: RequestContext, transport_url: str,
               database_connection: str) -> objects.CellMapping | None:
    for cell in objects.CellMappingList.get_all(ctxt):
        if cell.transport_url == transport_url and \
                cell.database_connection == database_connection:
            return cell
    return None


def create_cell(name: str | None = None, transport_url: str | None = None,
                database_connection: str | None = None, verbose: bool = False,
                disabled: bool = False) -> int:
    transport_url = _validate_transport_url(transport_url)
    if not transport_url:
        return 2
    connection = database_connection or CONF.database.connection
    if not connection:
        print('Must specify --database_connection if [database]/connection is not set in '
              'the configuration file.')
        return 3
    ctxt = nl_context.get_admin_context()
    existing = _same_cell(ctxt, transport_url, connection)
    if existing is not None:
        print('The specified transport_url and/or database_connection combination already '
              'exists for another cell with uuid %s.' % existing.uuid)
        return 4
    cell = objects.CellMapping(ctxt, uuid=uuidutils.generate_uuid(), name=name,
                               transport_url=transport_url, database_connection=connection,
                               disabled=disabled)
    cell.create()
    if verbose:
        print(cell.uuid)
    return 0


def list_cells(verbose: bool = False) -> int:
    cells = objects.CellMappingList.get_all(nl_context.get_admin_context())
    table = prettytable.PrettyTable(['Name', 'UUID', 'Transport URL', 'Database Connection',
                                     'Disabled'])
    for cell in sorted(cells, key=lambda c: c.name or ''):
        urls: tuple[str, ...] = (cell.transport_url, cell.database_connection)
        if not verbose:
            urls = tuple(mask_password(u) for u in urls)
        table.add_row([cell.name, cell.uuid, *urls, cell.disabled])
    print(table)
    return 0


def _map_nodes(ctxt: RequestContext, cell: objects.CellMapping,
               status: Callable[[str], None]) -> list[objects.HostMapping]:
    """Host mappings for the computes of ``cell`` not yet mapped; marks the nodes mapped."""
    created = []
    with nl_context.target_cell(ctxt, cell) as cctxt:
        for node in objects.ComputeNodeList.get_all_by_not_mapped(cctxt, 1):
            status("Checking host mapping for compute host '%s': %s" % (node.host, node.uuid))
            if node.host is None:
                continue  # no host to map it by
            try:
                mapping = objects.HostMapping.get_by_host(ctxt, node.host)
            except exception.HostMappingNotFound:
                status("Creating host mapping for compute host '%s': %s"
                       % (node.host, node.uuid))
                mapping = objects.HostMapping(ctxt, host=node.host, cell_mapping=cell)
                mapping.create()
                created.append(mapping)
            # Another node of an already mapped host: done too, unless that host is
            # mapped to another cell, which an operator must sort out.
            if mapping.cell_mapping.uuid == cell.uuid:
                node.mapped = 1
                node.save()
        status('Found %d unmapped computes in cell: %s' % (len(created), cell.uuid))
    return created


def discover_hosts(cell_uuid: str | None = None, verbose: bool = False,
                   strict: bool = False) -> int:
    status: Callable[[str], None] = print if verbose else (lambda msg: None)
    ctxt = nl_context.get_admin_context()
    if cell_uuid:
        cells = [objects.CellMapping.get_by_uuid(ctxt, cell_uuid)]
    else:
        cells = list(objects.CellMappingList.get_all(ctxt))
        status('Found %d cell mappings.' % len(cells))
    created = []
    try:
        for cell in cells:
            if cell.is_cell0:
                status('Skipping cell0 since it does not contain hosts.')
                continue
            status("Getting computes from cell '%s': %s" % (cell.name, cell.uuid)
                   if cell.name else 'Getting computes from cell: %s' % cell.uuid)
            created.extend(_map_nodes(ctxt, cell, status))
    except db_exc.DBDuplicateEntry as exc:
        print('ERROR: Duplicate host mapping was encountered. Run discover_hosts once '
              'after all compute hosts are deployed, not in parallel. Error: %s' % exc)
        return 2
    if strict:
        return 0 if created else 1
    return 0


def simple_cell_setup(transport_url: str | None = None) -> int:
    """cell0 mapped and migrated, cell1 for ``[database] connection``, its hosts and
    instances mapped."""
    transport_url = _validate_transport_url(transport_url)
    if not transport_url:
        return 1
    if not CONF.database.connection:
        print('[database]/connection must be set to set up cell1.')
        return 1
    if migration.db_version('main') is None:
        # Discovering hosts reads the cell database: fail before mapping anything.
        print('The cell database has no schema: run "novalite-manage db sync" first.')
        return 1
    if map_cell0() != 0:
        return 1
    ctxt = nl_context.get_admin_context()
    cell0 = objects.CellMapping.get_by_uuid(ctxt, objects.CellMapping.CELL0_UUID)
    migration.db_sync('main', url=cell0.database_connection)
    cell1 = next((c for c in objects.CellMappingList.get_all(ctxt) if not c.is_cell0 and
                  c.database_connection == CONF.database.connection), None)
    if cell1 is None:
        cell1 = objects.CellMapping(ctxt, uuid=uuidutils.generate_uuid(), name=CELL1_NAME,
                                    transport_url=transport_url,
                                    database_connection=CONF.database.connection)
        cell1.create()
    print('Cell %s: %s' % (cell1.name, cell1.uuid))
    rc = discover_hosts(cell_uuid=cell1.uuid)
    # The servers of a deployment from before cells, as Nova's simple_cell_setup.
    cell_v2_instances.map_instances(cell1.uuid)
    return rc


def list_hosts(cell_uuid: str | None = None) -> int:
    ctxt = nl_context.get_admin_context()
    cell_id = None
    if cell_uuid:
        try:
            cell_id = objects.CellMapping.get_by_uuid(ctxt, cell_uuid).id
        except exception.CellMappingNotFound:
            print('Cell with uuid %s was not found.' % cell_uuid)
            return 1
    table = prettytable.PrettyTable(['Cell Name', 'Cell UUID', 'Hostname'])
    mappings = objects.HostMappingList.get_all(ctxt, cell_id=cell_id)
    for mapping in sorted(mappings, key=lambda m: (m.cell_mapping.name or '', m.host)):
        table.add_row([mapping.cell_mapping.name, mapping.cell_mapping.uuid, mapping.host])
    print(table)
    return 0


def _instance_mapping_count(cell_id: int) -> int:
    with engine.api_reader() as session:
        return session.scalar(select(func.count()).select_from(api_models.InstanceMapping)
                              .filter_by(cell_id=cell_id)) or 0


def delete_cell(cell_uuid: str, force: bool = False) -> int:
    """Delete an empty cell mapping; ``force`` also unmaps its hosts first."""
    ctxt = nl_context.get_admin_context()
    try:
        cell = objects.CellMapping.get_by_uuid(ctxt, cell_uuid)
    except exception.CellMappingNotFound:
        print('Cell with uuid %s was not found.' % cell_uuid)
        return 1
    hosts = objects.HostMappingList.get_all(ctxt, cell_id=cell.id)
    if hosts and not force:
        print('There are existing hosts mapped to cell with uuid %s.' % cell_uuid)
        return 2
    if _instance_mapping_count(cell.id):
        print('There are existing instances mapped to cell with uuid %s.' % cell_uuid)
        return 3
    if hosts:
        # Unmapped nodes are found again by a later discover_hosts, should the cell return.
        with nl_context.target_cell(ctxt, cell) as cctxt:
            for node in objects.ComputeNodeList.get_all(cctxt):
                node.mapped = 0
                node.save()
        for host in hosts:
            host.destroy()
    cell.destroy()
    return 0


def _cell_of_this_config(ctxt: RequestContext, host_cell_uuid: str | None
                         ) -> objects.CellMapping | None:
    """The cell the configuration's hosts belong to: that of an already mapped host, else
    one mapped to ``[database] connection`` (made by create_cell, say)."""
    if host_cell_uuid is not None:
        return objects.CellMapping.get_by_uuid(ctxt, host_cell_uuid)
    return next((c for c in objects.CellMappingList.get_all(ctxt) if not c.is_cell0 and
                 c.database_connection == CONF.database.connection), None)


def map_cell_and_hosts(transport_url: str | None = None, name: str | None = None,
                       verbose: bool = False) -> int:
    """A cell mapping for this configuration's cell database and bus, and host mappings
    for its computes. Exit 1: no valid transport URL; otherwise 0, mapped or not."""
    transport_url = _validate_transport_url(transport_url)
    if not transport_url:
        return 1
    if not CONF.database.connection:
        print('[database]/connection must be set to map its cell.')
        return 1
    ctxt = nl_context.get_admin_context()
    nodes = objects.ComputeNodeList.get_all(ctxt)
    if not nodes:
        print('No hosts found to map to cell, exiting.')
        return 0
    missing: dict[str, list[objects.ComputeNode]] = {}
    host_cell_uuid = None
    for node in nodes:
        if node.host is None:
            continue  # no host to map it by
        try:
            mapping = objects.HostMapping.get_by_host(ctxt, node.host)
        except exception.HostMappingNotFound:
            missing.setdefault(node.host, []).append(node)
            continue
        if verbose:
            print('Host %s is already mapped to cell %s' % (mapping.host,
                                                           mapping.cell_mapping.uuid))
        host_cell_uuid = mapping.cell_mapping.uuid
    if not missing:
        print('All hosts are already mapped to cell(s).')
        return 0
    cell = _cell_of_this_config(ctxt, host_cell_uuid)
    if cell is None:
        cell = objects.CellMapping(ctxt, uuid=uuidutils.generate_uuid(), name=name,
                                   transport_url=transport_url,
                                   database_connection=CONF.database.connection)
        cell.create()
    for host, host_nodes in sorted(missing.items()):
        objects.HostMapping(ctxt, host=host, cell_mapping=cell).create()
        for node in host_nodes:
            # Mapped, so that discover_hosts does not look at them again.
            node.mapped = 1
            node.save()
    if verbose:
        print(cell.uuid)
    return 0


def _validated_update(transport_url: str | None, database_connection: str | None
                      ) -> tuple[bool, dict[str, str]]:
    """(valid, the URL fields to set): only what the command line gives changes."""
    values = {}
    if transport_url:
        try:
            messaging.TransportURL.parse(CONF, transport_url)
        except (messaging.InvalidTransportURL, ValueError) as exc:
            print('Invalid transport URL: %s' % exc)
            return False, {}
        values['transport_url'] = transport_url
    if database_connection:
        try:
            make_url(database_connection)
        except (sa_exc.ArgumentError, ValueError) as exc:
            print('Invalid database connection: %s' % exc)
            return False, {}
        values['database_connection'] = database_connection
    return True, values


def update_cell(cell_uuid: str, name: str | None = None, transport_url: str | None = None,
                database_connection: str | None = None, disable: bool = False,
                enable: bool = False) -> int:
    """Exit 1: no such cell, 2: a property cannot be set, 3: another cell has the same
    transport URL and database, 4: --disable with --enable, 5: cell0 enabled/disabled."""
    ctxt = nl_context.get_admin_context()
    try:
        cell = objects.CellMapping.get_by_uuid(ctxt, cell_uuid)
    except exception.CellMappingNotFound:
        print('Cell with uuid %s was not found.' % cell_uuid)
        return 1
    valid, values = _validated_update(transport_url, database_connection)
    if not valid:
        return 2
    if values:
        others = [c for c in objects.CellMappingList.get_all(ctxt) if c.uuid != cell.uuid]
        url = values.get('transport_url', cell.transport_url)
        connection = values.get('database_connection', cell.database_connection)
        same = next((c for c in others if c.transport_url == url and
                     c.database_connection == connection), None)
        if same is not None:
            print('The specified transport_url and/or database_connection combination '
                  'already exists for another cell with uuid %s.' % same.uuid)
            return 3
    if disable and enable:
        print('Cell cannot be disabled and enabled at the same time.')
        return 4
    if (disable or enable) and cell.is_cell0:
        print('Cell0 cannot be disabled.')
        return 5
    if name:
        cell.name = name
    for key, value in values.items():
        setattr(cell, key, value)
    if disable or enable:
        if cell.disabled == disable:
            print('Cell %s is already %s' % (cell_uuid, 'disabled' if disable else 'enabled'))
        cell.disabled = disable
    try:
        cell.save()
    except db_exc.DBError as exc:
        print('Unable to update CellMapping: %s' % exc)
        return 2
    return 0


def delete_host(cell_uuid: str, host: str) -> int:
    """Exit 1: no such cell, 2: host not mapped, 3: mapped to another cell, 4: the host
    has instances. The host's compute nodes are unmapped, for discover_hosts to find."""
    ctxt = nl_context.get_admin_context()
    try:
        cell = objects.CellMapping.get_by_uuid(ctxt, cell_uuid)
    except exception.CellMappingNotFound:
        print('Cell with uuid %s was not found.' % cell_uuid)
        return 1
    try:
        mapping = objects.HostMapping.get_by_host(ctxt, host)
    except exception.HostMappingNotFound:
        print('The host %s was not found.' % host)
        return 2
    if mapping.cell_mapping.uuid != cell.uuid:
        print('The host %s was not found in the cell %s.' % (host, cell_uuid))
        return 3
    with nl_context.target_cell(ctxt, cell) as cctxt:
        if objects.InstanceList.get_by_host(cctxt, host):
            print('There are instances on the host %s.' % host)
            return 4
        for node in objects.ComputeNodeList.get_all_by_host(cctxt, host):
            node.mapped = 0
            node.save()
    mapping.destroy()
    return 0
