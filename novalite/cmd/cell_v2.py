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
from sqlalchemy import func, select
from sqlalchemy.engine import make_url

from novalite import context as nl_context
from novalite import exception, objects, rpc
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
    """cell0 mapped and migrated, cell1 for ``[database] connection``, hosts mapped."""
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
    return discover_hosts(cell_uuid=cell1.uuid)


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
