"""A TCP gate in front of the stack's database server: a database outage on demand.

With ``Stack(db_gate=True)`` every daemon of the stack (the Compute API, the conductor, the
scheduler, ``novalite-manage`` and Placement) reaches MariaDB or PostgreSQL through this
process instead of directly: it listens on a port of 127.0.0.1 of its own and relays each
connection to the server. The harness closes and opens it with signals:

- ``SIGUSR1`` closes it: the listening socket goes, so a new connection is refused
  (``ECONNREFUSED``, what a client of a stopped server or of a host whose database port
  is closed sees), and every relayed connection is reset (what the daemons' pooled
  connections see when the server restarts or kills them). This is the outage the
  issue names "the database refusing connections".
- ``SIGUSR2`` opens it again on the same port: new connections reach the server.

The gate is a test double of the network between the daemons and the server; nothing of
it is in the daemons, which keep their ordinary database URLs (only the port differs).
The tests' own queries (``Stack.query``) go to the server directly, so they can look at
the databases during an outage.

Run: ``python -m tests.devstack.harness.dbgate --state-file FILE PORT UPSTREAM_HOST
UPSTREAM_PORT``. ``FILE`` holds ``open`` or ``closed`` once each change is in effect;
SIGTERM or SIGINT stops the gate.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import signal
import socket
from collections.abc import Sequence

from tests.devstack.harness.forward import relay

OPEN = 'open'
CLOSED = 'closed'


class Gate:
    """The listening socket (while open) and the relayed connections."""

    def __init__(self, port: int, upstream: tuple[str, int], state_file: str) -> None:
        self.port = port
        self.upstream = upstream
        self.state_file = state_file
        self.server: asyncio.Server | None = None
        # Both ends of every relayed connection, to reset them when the gate closes.
        self.writers: set[asyncio.StreamWriter] = set()

    def _write_state(self, state: str) -> None:
        tmp = self.state_file + '.tmp'
        with open(tmp, 'w') as out:
            out.write('%s %d\n' % (state, os.getpid()))
        os.replace(tmp, self.state_file)

    async def open(self) -> None:
        if self.server is None:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            # The port was closed a moment ago: its old connections may be in TIME_WAIT.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(('127.0.0.1', self.port))
            sock.listen(256)
            sock.setblocking(False)
            self.server = await asyncio.start_server(self._connection, sock=sock)
        self._write_state(OPEN)

    async def close(self) -> None:
        if self.server is not None:
            server, self.server = self.server, None
            server.close()
        for writer in list(self.writers):
            # An RST, not a FIN: the client's next read or write fails at once, as when
            # the server went away; a polite close would look like a server's idle timeout.
            writer.transport.abort()
        self.writers.clear()
        self._write_state(CLOSED)

    async def _connection(self, reader: asyncio.StreamReader,
                          writer: asyncio.StreamWriter) -> None:
        if self.server is None:  # accepted just before the gate closed
            writer.transport.abort()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        except OSError:
            writer.transport.abort()
            return
        pair = (writer, up_writer)
        self.writers.update(pair)
        try:
            await asyncio.gather(relay(reader, up_writer, writer),
                                 relay(up_reader, writer, up_writer))
        finally:
            for each in pair:
                self.writers.discard(each)
                each.close()


async def serve(gate: Gate, stop: asyncio.Event | None = None) -> None:
    """Open the gate, then follow the signals until SIGTERM or SIGINT (or ``stop``)."""
    loop = asyncio.get_running_loop()
    if stop is None:
        stop = asyncio.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
    # Signals are handled in order, one change at a time.
    changes: asyncio.Queue[str] = asyncio.Queue()
    loop.add_signal_handler(signal.SIGUSR1, changes.put_nowait, CLOSED)
    loop.add_signal_handler(signal.SIGUSR2, changes.put_nowait, OPEN)
    await gate.open()

    async def follow() -> None:
        while True:
            change = await changes.get()
            await (gate.close() if change == CLOSED else gate.open())
    follower = asyncio.ensure_future(follow())
    await stop.wait()
    follower.cancel()
    await gate.close()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog='python -m tests.devstack.harness.dbgate',
                                     description=__doc__.split('\n', 1)[0])
    parser.add_argument('--state-file', required=True,
                        help='holds "open" or "closed" (and this process id) once in effect')
    parser.add_argument('port', type=int, help='the port of 127.0.0.1 to listen on')
    parser.add_argument('upstream_host', help="the database server's address")
    parser.add_argument('upstream_port', type=int, help="the database server's port")
    args = parser.parse_args(argv)
    asyncio.run(serve(Gate(args.port, (args.upstream_host, args.upstream_port),
                           args.state_file)))


if __name__ == '__main__':
    main()
