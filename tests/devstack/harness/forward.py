"""TCP ports of the root namespace's 127.0.0.1, forwarded into a network namespace.

A compute host whose OVN chassis lives in a network namespace of its own (every host but
the first, ``tests.devstack.harness.ovn``) can run its novalite-compute inside that namespace
(``Stack(netns_computes=True)``): then the taps os-vif makes, and the QEMU processes of a
libvirtd started there, are beside that host's ``br-int``, as on a machine of its own.
But the stack's services (RabbitMQ, the databases, Placement, Glance, Neutron) listen on
the root namespace's 127.0.0.1, which a namespace does not see. This process listens on
127.0.0.1 *in the namespace*, at the same ports, and relays each connection to the same
port of 127.0.0.1 in the namespace it runs in (the root one): a socket stays in the
namespace it was made in, so one process holds both ends. The compute's configuration
stays that of any other host.

Run as root: ``python -m tests.devstack.harness.forward --ready-file FILE NETNS PORT...``. It
writes ``FILE`` once every port listens, and stops on SIGTERM or SIGINT.
"""
from __future__ import annotations

import argparse
import asyncio
import ctypes
import functools
import os
import signal
import socket
from collections.abc import Sequence

_CLONE_NEWNET = 0x40000000
NETNS_DIR = '/run/netns'
CHUNK = 1 << 16


def _setns(fd: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, _CLONE_NEWNET) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, 'setns: %s' % os.strerror(errno))


def listen_in(netns: str, ports: Sequence[int]) -> dict[int, socket.socket]:
    """Listening sockets on 127.0.0.1 of namespace ``netns``, by port.

    The calling thread joins the namespace for the ``socket()`` calls only.
    """
    sockets: dict[int, socket.socket] = {}
    with open('/proc/thread-self/ns/net') as home, \
            open(os.path.join(NETNS_DIR, netns)) as there:
        _setns(there.fileno())
        try:
            for port in ports:
                sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.bind(('127.0.0.1', port))
                sock.listen(128)
                sock.setblocking(False)
                sockets[port] = sock
        finally:
            _setns(home.fileno())
    return sockets


async def relay(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 other: asyncio.StreamWriter) -> None:
    """Copy ``reader`` to ``writer`` until EOF (passed on as a half-close); on an error
    drop both connections."""
    try:
        while data := await reader.read(CHUNK):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except OSError:
        writer.transport.abort()
        other.transport.abort()


async def _connection(port: int, reader: asyncio.StreamReader,
                      writer: asyncio.StreamWriter) -> None:
    try:
        up_reader, up_writer = await asyncio.open_connection('127.0.0.1', port)
    except OSError:
        # Refused upstream: the client sees its connection closed at once.
        writer.transport.abort()
        return
    await asyncio.gather(relay(reader, up_writer, writer),
                         relay(up_reader, writer, up_writer))
    for each in (writer, up_writer):
        each.close()


async def serve(sockets: dict[int, socket.socket], ready_file: str,
                stop: asyncio.Event | None = None) -> None:
    """Relay each connection accepted on ``sockets[port]`` to 127.0.0.1:``port`` until
    ``stop`` is set (by default: until SIGTERM or SIGINT)."""
    servers = [await asyncio.start_server(functools.partial(_connection, port), sock=sock)
               for port, sock in sockets.items()]
    if stop is None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
    with open(ready_file, 'w') as ready:
        ready.write('%d\n' % os.getpid())
    await stop.wait()
    for server in servers:
        server.close()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog='python -m tests.devstack.harness.forward',
                                     description=__doc__.split('\n', 1)[0])
    parser.add_argument('--ready-file', required=True,
                        help='written (with this process id) once every port listens')
    parser.add_argument('netns', help='the network namespace (a name under /run/netns)')
    parser.add_argument('ports', nargs='+', type=int, help='TCP ports of 127.0.0.1')
    args = parser.parse_args(argv)
    asyncio.run(serve(listen_in(args.netns, args.ports), args.ready_file))


if __name__ == '__main__':
    main()
