"""``novalite-manage cell_v2``: cell and host mappings (the work is in
``novalite.cmd.cell_v2``)."""
from __future__ import annotations

from novalite.cmd import cell_v2
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
