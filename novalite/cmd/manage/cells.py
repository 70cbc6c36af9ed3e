"""``novalite-manage cell_v2``: cell and host mappings (the work is in
``novalite.cmd.cell_v2``)."""
from __future__ import annotations

from novalite.cmd import cell_v2, cell_v2_instances
from novalite.cmd.manage.common import args


class CellV2Commands:
    """Cells v2 mappings: cell0, cells and the hosts in them."""

    @args('--database_connection', metavar='URL',
          help='cell0 database; default: [database] connection with "_cell0" appended '
               'to the database name')
    def map_cell0(self, database_connection: str | None = None) -> int:
        """Create the cell0 mapping (idempotent)."""
        return cell_v2.map_cell0(database_connection)

    @args('--name', metavar='NAME', help='Name of the new cell')
    @args('--transport-url', metavar='URL', dest='transport_url',
          help='Message bus of the cell; default: [DEFAULT] transport_url')
    @args('--database_connection', metavar='URL',
          help='Database of the cell; default: [database] connection')
    @args('--verbose', action='store_true', help='Print the uuid of the new cell')
    @args('--disabled', action='store_true', help='Create the cell disabled')
    def create_cell(self, name: str | None = None, transport_url: str | None = None,
                    database_connection: str | None = None, verbose: bool = False,
                    disabled: bool = False) -> int:
        """Create a cell mapping. Exit 2: no transport URL, 3: no database, 4: duplicate."""
        return cell_v2.create_cell(name, transport_url, database_connection, verbose,
                                   disabled)

    @args('--verbose', action='store_true', help='Show passwords in the URLs')
    def list_cells(self, verbose: bool = False) -> int:
        """List the cell mappings."""
        return cell_v2.list_cells(verbose)

    @args('--cell_uuid', metavar='UUID', help='Only this cell')
    @args('--verbose', action='store_true', help='Say what is checked and created')
    @args('--strict', action='store_true', help='Exit 1 when no new host was mapped')
    def discover_hosts(self, cell_uuid: str | None = None, verbose: bool = False,
                       strict: bool = False) -> int:
        """Map the compute hosts of the cells that are not mapped yet."""
        return cell_v2.discover_hosts(cell_uuid, verbose, strict)

    @args('--transport-url', metavar='URL', dest='transport_url',
          help='Message bus of cell1; default: [DEFAULT] transport_url')
    def simple_cell_setup(self, transport_url: str | None = None) -> int:
        """Map and migrate cell0, create cell1 from the configuration, map its hosts."""
        return cell_v2.simple_cell_setup(transport_url)

    @args('--cell_uuid', metavar='UUID', help='Only the hosts of this cell')
    def list_hosts(self, cell_uuid: str | None = None) -> int:
        """List the host mappings."""
        return cell_v2.list_hosts(cell_uuid)

    @args('--cell_uuid', metavar='UUID', required=True, help='The cell to delete')
    @args('--force', action='store_true', help='Also delete the host mappings of the cell')
    def delete_cell(self, cell_uuid: str, force: bool = False) -> int:
        """Delete a cell mapping with no instances (and, unless --force, no hosts)."""
        return cell_v2.delete_cell(cell_uuid, force)

    @args('--cell_uuid', metavar='UUID', required=True,
          help='Unmapped instances will be mapped to the cell with this uuid')
    @args('--max-count', metavar='N', dest='max_count',
          help='Map at most N instances in this run (default: all, in batches of 50); '
               'run again until it exits 0')
    @args('--reset', action='store_true',
          help='Start from the first instance, not where the last run stopped')
    def map_instances(self, cell_uuid: str, max_count: str | None = None,
                      reset: bool = False) -> int:
        """Map a cell's unmapped instances, oldest first. Exit 0: all mapped, 1: more to
        map (run again), 127: bad --max-count, 255: no such cell."""
        return cell_v2_instances.map_instances(cell_uuid, max_count, reset)

    @args('--transport-url', metavar='URL', dest='transport_url',
          help='Message bus of the cell; default: [DEFAULT] transport_url')
    @args('--name', metavar='NAME', help='Name of the cell, if one is created')
    @args('--verbose', action='store_true',
          help='Say which hosts are mapped already and print the uuid of the cell')
    def map_cell_and_hosts(self, transport_url: str | None = None, name: str | None = None,
                           verbose: bool = False) -> int:
        """Map the cell of [database] connection and its compute hosts (idempotent).
        Exit 1: no valid transport URL."""
        return cell_v2.map_cell_and_hosts(transport_url, name, verbose)

    @args('--uuid', metavar='UUID', required=True, help='The instance to verify')
    @args('--quiet', action='store_true', help='Print nothing')
    def verify_instance(self, uuid: str, quiet: bool = False) -> int:
        """Check an instance's mapping. Exit 0: mapped to a cell, 1: not mapped, 2: the
        mapping has no cell, 3: deleted (mapping remains), 4: archived (mapping remains)."""
        return cell_v2_instances.verify_instance(uuid, quiet)

    @args('--cell_uuid', metavar='UUID', required=True, help='The cell to update')
    @args('--name', metavar='NAME', help='Set the name of the cell')
    @args('--transport-url', metavar='URL', dest='transport_url',
          help='Set the message bus of the cell (running services see it after a restart)')
    @args('--database_connection', metavar='URL',
          help='Set the database of the cell (running services see it after a restart)')
    @args('--disable', action='store_true',
          help='Disable the cell: no scheduling to it (schedulers see it on SIGHUP)')
    @args('--enable', action='store_true',
          help='Enable the cell (schedulers see it on SIGHUP)')
    def update_cell(self, cell_uuid: str, name: str | None = None,
                    transport_url: str | None = None, database_connection: str | None = None,
                    disable: bool = False, enable: bool = False) -> int:
        """Change a cell mapping. Exit 1: no such cell, 2: a property cannot be set,
        3: same URLs as another cell, 4: --disable with --enable, 5: cell0 (always on)."""
        return cell_v2.update_cell(cell_uuid, name, transport_url, database_connection,
                                   disable, enable)

    @args('--cell_uuid', metavar='UUID', required=True, help='The cell of the host')
    @args('--host', metavar='HOST', required=True, help='The host to delete')
    def delete_host(self, cell_uuid: str, host: str) -> int:
        """Delete the mapping of a host without instances. Exit 1: no such cell, 2: host
        not mapped, 3: host in another cell, 4: the host has instances."""
        return cell_v2.delete_host(cell_uuid, host)
