"""Options of the [wsgi] group: how novalite's own HTTP servers treat client connections.

They apply to every server novalite runs itself: the standalone ``novalite-api`` (both
concurrency backends) and the all-in-one's API and in-process Placement. Behind uWSGI,
gunicorn or mod_wsgi those servers' own settings apply instead.
"""
from __future__ import annotations

from oslo_config import cfg

wsgi_group = cfg.OptGroup(
    'wsgi', title='WSGI server options',
    help='Timeouts and connection reuse of the HTTP servers novalite runs itself.')

opts = [
    cfg.IntOpt('client_socket_timeout', default=900, min=0,
               help='Seconds any single read from (or write to) a client connection may '
                    'wait, as Nova\'s option of this name. A client that sends nothing '
                    'for this long, in the middle of a request body for instance (a body '
                    'shorter than its Content-Length on a connection left open), is '
                    'dropped and its worker freed. 0 waits forever.'),
    cfg.IntOpt('client_header_timeout', default=60, min=0,
               help='Seconds a client has, in total, to send the request line and all '
                    'header lines of a request, counted from its connection (first '
                    'request) or from the request\'s first byte (later requests on a '
                    'kept connection). It bounds clients that trickle a request head a '
                    'byte at a time ("slowloris"), which client_socket_timeout alone '
                    'does not, since each byte restarts that wait. 0: only '
                    'client_socket_timeout applies. The threading backend\'s server '
                    'applies it; eventlet\'s applies client_socket_timeout per read.'),
    cfg.BoolOpt('keep_alive', default=True,
                help='Keep a client connection open for its next request (HTTP/1.1 '
                     'persistent connections), as Nova\'s option of this name. False '
                     'closes every connection after one response.'),
    cfg.IntOpt('keep_alive_timeout', default=60, min=0,
               help='Seconds a kept connection may stay idle between two requests '
                    'before the server closes it. 0: only client_socket_timeout bounds '
                    'the wait.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_group(wsgi_group)
    conf.register_opts(opts, group=wsgi_group)


def list_opts() -> dict:
    return {wsgi_group: opts}
