"""What every ``novalite-manage`` category module shares: the ``args`` decorator."""
from __future__ import annotations

from collections.abc import Callable, Sequence

from oslo_log import log as logging

from novalite import exception

LOG = logging.getLogger(__name__)


def args(*names: str, **kwargs: object) -> Callable:
    """Declare one argparse argument of an action (decorators apply bottom-up)."""
    def decorator(fn: Callable) -> Callable:
        fn.__dict__.setdefault('args', []).insert(0, (names, kwargs))
        return fn
    return decorator


# Which exception classes give which exit code: the first that matches wins.
ExitCodes = Sequence[tuple[type[Exception] | tuple[type[Exception], ...], int]]

NOT_FOUND = (exception.InstanceNotFound, exception.InstanceMappingNotFound)


def exit_code(exc: Exception, codes: ExitCodes) -> int:
    """Print why an action stopped and return its exit code: the code of the first class
    of ``codes`` that ``exc`` is, else 1 (unexpected, its trace in the log)."""
    for classes, code in codes:
        if isinstance(exc, classes):
            print(exc)
            return code
    print('Unexpected error, see the novalite-manage log for the full trace: %s' % exc)
    LOG.error('Unexpected error', exc_info=exc)
    return 1
