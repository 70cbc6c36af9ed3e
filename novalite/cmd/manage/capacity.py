"""``novalite-manage capacity``: how many more servers of a flavor fit, and where."""
from __future__ import annotations

import json

import prettytable

from novalite import context as nl_context
from novalite import exception
from novalite.cmd.manage.common import args
from novalite.scheduler import capacity
from novalite.scheduler.client import report

# Exit codes.
OK = 0
SHORT = 1
NOT_FOUND = 2
UNREACHABLE = 3


class CapacityCommands:
    """How many more servers of a flavor fit, on which hosts, and what limits each."""

    direct = True

    @args('--flavor', metavar='FLAVOR', required=True, help='Flavor name or id')
    @args('--count', metavar='N', type=int,
          help='Also say whether N more servers fit (exit 1 when they do not)')
    @args('--aggregate', metavar='AGGREGATE',
          help='Only the hosts of this aggregate (name, id or uuid)')
    @args('--zone', metavar='ZONE', help='The servers\' availability zone')
    @args('--format', metavar='FORMAT', dest='output_format', choices=('table', 'json'),
          default='table', help='table (default) or json')
    def __call__(self, flavor: str, count: int | None = None, aggregate: str | None = None,
                 zone: str | None = None, output_format: str = 'table') -> int:
        """How many more servers of a flavor fit, on which hosts, and what limits each.

        Read-only: Placement's inventories and usages, then the scheduler's filters.
        Exit 0: done (and the N of --count fit), 1: N do not fit, 2: flavor, aggregate
        or zone not found, 3: Placement (or every cell database) unreachable or failing.
        """
        if count is not None and count < 0:
            print('--count must be 0 or more.')
            return NOT_FOUND
        ctxt = nl_context.get_admin_context()
        try:
            flavor_obj = capacity.find_flavor(ctxt, flavor)
            aggregate_obj = (capacity.find_aggregate(ctxt, aggregate)
                             if aggregate is not None else None)
        except (exception.FlavorNotFound, exception.AggregateNotFound) as exc:
            print(exc.format_message())
            return NOT_FOUND
        if zone is not None and zone not in capacity.known_zones(ctxt):
            print('Availability zone %s could not be found.' % zone)
            return NOT_FOUND
        try:
            answer = capacity.CapacityCalculator(report.SchedulerReportClient()).calculate(
                ctxt, flavor_obj, zone, aggregate_obj)
        except (exception.ResourceProviderError, exception.CellUnavailable) as exc:
            print(exc.format_message())
            return UNREACHABLE
        fits = None if count is None else answer.total >= count
        if output_format == 'json':
            print(json.dumps(_as_json(answer, count, fits), indent=2))
        else:
            _print_table(answer, count, fits)
        return SHORT if fits is False else OK


def _as_json(answer: capacity.Capacity, count: int | None, fits: bool | None
             ) -> dict[str, object]:
    return {'flavor': answer.flavor, 'total': answer.total,
            'hosts': [h.as_dict() for h in answer.hosts],
            'count_requested': count, 'fits_requested': fits}


def _print_table(answer: capacity.Capacity, count: int | None, fits: bool | None) -> None:
    table = prettytable.PrettyTable(['Host', 'Node', 'Zone', 'Fits', 'Limited by'])
    table.align = 'l'
    table.align['Fits'] = 'r'
    for host in answer.hosts:
        table.add_row([host.host, host.node, host.zone or '', host.fits, host.limited_by])
    print(table)
    print('%d more servers of flavor %s fit.' % (answer.total, answer.flavor))
    if count is None:
        return
    if fits:
        print('%d requested: they fit.' % count)
    else:
        print('%d requested: they do not fit, %d short.' % (count, count - answer.total))
