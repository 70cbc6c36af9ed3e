"""Options of the [wsgi] group: how novalite's own HTTP servers treat client connections.

They apply to every server novalite runs itself: the standalone ``novalite-api`` (both
concurrency backends) and the all-in-one's API and in-process Placement, served by
waitress (``novalite.api.server``) or, with the eventlet backend, by eventlet's server.
Behind uWSGI, gunicorn or mod_wsgi those servers' own settings apply instead.
"""
from __future__ import annotations

from oslo_config import cfg

wsgi_group = cfg.OptGroup(
    'wsgi', title='WSGI server options',
    help='Timeouts, threads and connection reuse of the HTTP servers novalite runs itself.')

opts = [
    cfg.IntOpt('client_socket_timeout', default=900, min=0,
               help='Seconds a client connection may stay silent, as Nova\'s option of '
                    'this name: a client that sends nothing for this long in the middle '
                    'of a request (a body shorter than its Content-Length on a connection '
                    'left open, for instance) is dropped. waitress has one such timer '
                    'per connection, whatever the connection is waiting for, so the '
                    'smallest of this, keep_alive_timeout and client_header_timeout (0s '
                    'left out) applies. 0 waits forever.'),
    cfg.IntOpt('client_header_timeout', default=60, min=0,
               deprecated_for_removal=True,
               deprecated_reason='waitress has no deadline for a whole request head: '
                                 'it bounds a client\'s silences only (see '
                                 'client_socket_timeout). A client that trickles a '
                                 'head a byte at a time holds a connection, never a '
                                 'worker thread, since waitress reads requests on its '
                                 'I/O loop.',
               help='Seconds a client connection may stay silent; the smallest of this, '
                    'client_socket_timeout and keep_alive_timeout (0s left out) applies. '
                    'It bounded the whole request head of novalite\'s former server; '
                    'eventlet\'s server ignores it.'),
    cfg.BoolOpt('keep_alive', default=True,
                help='Keep a client connection open for its next request (HTTP/1.1 '
                     'persistent connections), as Nova\'s option of this name. False '
                     'closes every connection after one response.'),
    cfg.IntOpt('keep_alive_timeout', default=60, min=0,
               help='Seconds a kept connection may stay idle between two requests '
                    'before the server closes it. waitress cannot tell an idle '
                    'connection from one silent inside a request: the smallest of this, '
                    'client_socket_timeout and client_header_timeout (0s left out) '
                    'bounds both. 0: only those two bound the wait.'),
    cfg.IntOpt('threads', default=16, min=1,
               help='Threads that run API requests in each novalite-api worker process '
                    '(and in each of the all-in-one\'s HTTP servers): at most this many '
                    'requests are in the application at once per process; further '
                    'complete requests wait in a queue. Connections, and requests still '
                    'being received, hold no thread. Possible values: 1 or more. The '
                    'eventlet backend ignores it (a green thread per connection).'),
    cfg.IntOpt('connection_limit', default=1000, min=1,
               help='Client connections one server process keeps open at once; when '
                    'reached, new connections wait in the listen backlog until some '
                    'close (a kept connection idles at most keep_alive_timeout). The '
                    'eventlet backend ignores it.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_group(wsgi_group)
    conf.register_opts(opts, group=wsgi_group)


def list_opts() -> dict[cfg.OptGroup, list[cfg.Opt]]:
    return {wsgi_group: opts}
