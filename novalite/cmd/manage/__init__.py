"""novalite-manage: the operator's tool, as nova-manage.

``novalite-manage [--config-file F] <category> <action> [arguments]``. Each category is a
class in a module of this package whose public methods are its actions; each action
returns the process's exit code. A category class that sets ``direct = True`` has no
actions: its ``__call__`` takes the arguments (``novalite-manage capacity --flavor F``).
"""
from __future__ import annotations

import argparse
import inspect
import sys
import traceback
from collections.abc import Callable

from oslo_config import cfg

from novalite import objects, rpc
from novalite.cmd import cell_v2
from novalite.cmd.manage import capacity, cells, db, image_property, libvirt, placement
from novalite.conf import CONF

_KWARG_PREFIX = 'action_kwarg_'

CATEGORIES: dict[str, type] = {
    'api_db': db.ApiDbCommands,
    'db': db.DbCommands,
    'cell_v2': cells.CellV2Commands,
    'placement': placement.PlacementCommands,
    'image_property': image_property.ImagePropertyCommands,
    'libvirt': libvirt.LibvirtCommands,
    'capacity': capacity.CapacityCommands,
}


def _actions(command: object) -> list[tuple[str, Callable]]:
    return [(name, fn) for name, fn in inspect.getmembers(command, inspect.ismethod)
            if not name.startswith('_')]


def _add_arguments(parser: argparse.ArgumentParser, fn: Callable) -> None:
    kwarg_names = []
    for names, kwargs in getattr(fn, 'args', []):
        kwargs = dict(kwargs)
        if names[0].startswith('-'):
            dest = kwargs.pop('dest', names[0].lstrip('-').replace('-', '_'))
            kwargs['dest'] = _KWARG_PREFIX + dest
            kwarg_names.append(dest)
        else:
            # A positional's dest is its name: prefix it so it cannot clash.
            kwarg_names.append(names[0])
            names = (_KWARG_PREFIX + names[0],)
        parser.add_argument(*names, **kwargs)
    parser.set_defaults(action_fn=fn, action_kwarg_names=kwarg_names)


def add_command_parsers(subparsers: argparse._SubParsersAction) -> None:
    for category, cls in CATEGORIES.items():
        command = cls()
        if getattr(cls, 'direct', False):
            doc = cls.__call__.__doc__
            parser = subparsers.add_parser(category, help=doc, description=doc)
            _add_arguments(parser, command.__call__)
            continue
        parser = subparsers.add_parser(category, help=cls.__doc__)
        actions = parser.add_subparsers(dest='action', metavar='<action>')
        actions.required = True
        for name, fn in _actions(command):
            action = actions.add_parser(name, help=fn.__doc__, description=fn.__doc__)
            _add_arguments(action, fn)


category_opt = cfg.SubCommandOpt('category', title='Command categories',
                                 handler=add_command_parsers)


def run(category: argparse.Namespace) -> int:
    """Call the action ``category`` names with the arguments it parsed."""
    kwargs = {name: getattr(category, _KWARG_PREFIX + name)
              for name in category.action_kwarg_names}
    return category.action_fn(**kwargs)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        CONF.register_cli_opt(category_opt)
    except cfg.ArgsAlreadyParsedError:
        # Called in a process that parsed CONF already (an in-process stack, tests):
        # start from unparsed, as this function leaves it.
        CONF.clear()
        CONF.register_cli_opt(category_opt)
    try:
        CONF(argv, project='novalite')
        objects.register_all()
        cell_v2.init_bus()
        try:
            return run(CONF.category) or 0
        except Exception:
            # As nova-manage: an error no action expected is printed whole, exit 255.
            print('An error has occurred:\n%s' % traceback.format_exc())
            return 255
        finally:
            rpc.cleanup()
    finally:
        # The process-global CONF is reusable afterwards (tests call main repeatedly).
        CONF.clear()
        CONF.unregister_opt(category_opt)


if __name__ == '__main__':
    sys.exit(main())
