"""Which database errors mean "the database is unavailable now", not "this request is wrong".

A database that refuses connections (MariaDB's "Too many connections", a restart, a
network cut), a pool with no free connection within ``pool_timeout``, or SQLite still
locked after its busy timeout: the same request succeeds a little later. The API answers
these with 503 and ``Retry-After`` (see ``novalite.api.openstack.faults``) instead of a
500 that names a library exception.
"""
from __future__ import annotations

import re
import sys

# MySQL/MariaDB error codes of a refused, lost or exhausted connection: 1040 too many
# connections, 1203/1226 a user's connection limit, 1047/1053 server not ready or
# shutting down, 1927 connection killed, 2002/2003 cannot connect, 2006/2013 server gone
# or connection lost during a query.
_MYSQL_CODES = frozenset({1040, 1047, 1053, 1203, 1226, 1927, 2002, 2003, 2006, 2013})
# PostgreSQL and SQLite say it in words only.
_MESSAGES = re.compile(
    r'too many clients|remaining connection slots are reserved|could not connect to server|'
    r'connection refused|the database system is (?:starting up|shutting down|in recovery)|'
    r'terminating connection|server closed the connection|'
    r'database is locked|unable to open database file', re.IGNORECASE)


def _one_is_unavailable(exc: BaseException) -> bool:
    oslo_db_exc = sys.modules.get('oslo_db.exception')
    if oslo_db_exc is not None:
        if isinstance(exc, (oslo_db_exc.DBConnectionError, oslo_db_exc.DBDeadlock)):
            return True
    sa_exc = sys.modules.get('sqlalchemy.exc')
    if sa_exc is None:
        return False
    if isinstance(exc, sa_exc.TimeoutError):
        return True  # the pool had no free connection within pool_timeout
    if isinstance(exc, sa_exc.DBAPIError):
        if exc.connection_invalidated:
            return True
        if isinstance(exc, sa_exc.OperationalError):
            args = getattr(exc.orig, 'args', ())
            if args and isinstance(args[0], int) and args[0] in _MYSQL_CODES:
                return True
            return bool(_MESSAGES.search(str(exc.orig)))
    return False


def is_unavailable(exc: BaseException) -> bool:
    """Whether ``exc`` (or an exception it was raised from) says the database is
    unreachable, out of connections or busy, so that the same request may succeed later.

    oslo.db wraps some of these (``DBConnectionError``, ``DBDeadlock``, ``DBError`` around
    the driver's error) and lets others through as SQLAlchemy's; both are recognised.
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if _one_is_unavailable(current):
            return True
        inner = getattr(current, 'inner_exception', None)  # oslo.db's DBError
        if isinstance(inner, BaseException) and _one_is_unavailable(inner):
            return True
        current = current.__cause__ or current.__context__
    return False
