"""The websocket side of the console proxies: websockify's handler that checks a console
token and the browser's Origin, then relays bytes between the websocket and the guest's
console port on its compute host.

websockify serves each connection in a process of its own (forked from the daemon), so
what a connection does (redeem the token, call the compute host, time the session) lives
and dies with that process.
"""
from __future__ import annotations

import datetime
import os
import re
import socket
import threading
from http import HTTPStatus, cookies
from typing import NoReturn, Protocol
from urllib import parse

import oslo_messaging as messaging
from oslo_log import log as logging
from oslo_utils import netutils, timeutils
from websockify import websocketproxy as ws_proxy
from websockify import websockifyserver

from novalite import concurrency, exception, executor, objects, rpc
from novalite.compute import rpcapi as compute_rpcapi
from novalite.conf import CONF
from novalite.console import auth
from novalite.context import get_admin_context

LOG = logging.getLogger(__name__)

# Websocket close codes (RFC 6455): the client is refused (1008, policy violation), or the
# proxy cannot reach the console (1011, unexpected condition), or the session ends (1000).
CLOSE_REFUSED = 1008
CLOSE_UNREACHABLE = 1011
CLOSE_NORMAL = 1000
# A close frame's reason is at most 123 bytes.
_REASON_BYTES = 123
# The compute host's answer to ``CONNECT path`` (a console behind an access path).
_CONNECT_ANSWER_BYTES = 4096
_TOKEN_IN_PATH = re.compile(r'(token(?:=|%3D))[^&\s\'"%;]+', re.IGNORECASE)


class ConsoleRefused(Exception):
    """The connection is refused for ``reason`` (said to the client and logged)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _Socket(Protocol):
    def sendall(self, data: bytes, /) -> None: ...

    def recv(self, size: int, flags: int = ..., /) -> bytes: ...


def token_from_request(path: str, cookie_header: str | None) -> str:
    """The console token of a websocket request, where noVNC and Nova's clients put it:
    ``?token=T``, the ``path`` noVNC's page passes on (``?path=%3Ftoken%3DT``), else the
    ``token`` cookie. Empty when there is none.
    """
    query = parse.parse_qs(parse.urlsplit(path).query)
    token = query.get('token', [''])[-1]
    if not token and query.get('path'):
        inner = parse.urlsplit(query['path'][-1])
        token = parse.parse_qs(inner.query).get('token', [''])[-1]
    if not token and cookie_header:
        token = _token_cookie(cookie_header)
    return token.strip()


def _token_cookie(header: str) -> str:
    token = ''
    # One part at a time: one malformed cookie must not hide the others.
    for part in header.split(';'):
        jar: cookies.SimpleCookie = cookies.SimpleCookie()
        try:
            jar.load(part.strip())
        except cookies.CookieError:
            LOG.warning('Found a malformed cookie')  # its content may be a secret
            continue
        if 'token' in jar:
            token = jar['token'].value
    return token


def _expected_schemes(console_type: str, access_url_base: str | None) -> set[str]:
    """The Origin schemes a console's page may have: the scheme of the URL the API gave
    for it (the token's, else today's option for its type), ws/wss counting as
    http/https."""
    base_urls = {'novnc': CONF.vnc.novncproxy_base_url,
                 'serial': CONF.serial_console.base_url}
    if access_url_base:
        base_urls[console_type] = access_url_base
    if console_type not in base_urls:
        raise ConsoleRefused('No access URL for %s consoles: cannot validate the protocol'
                             % console_type)
    scheme = parse.urlsplit(base_urls[console_type]).scheme
    return {scheme, {'ws': 'http', 'wss': 'https'}.get(scheme, scheme)}


def check_origin(origin_url: str | None, host_header: str | None,
                 forwarded_proto: str | None, console_type: str,
                 access_url_base: str | None = None) -> None:
    """Refuse a browser page of another site: the Origin's host must be this proxy's
    (the Host header) or one of ``[console] allowed_origins``, and its scheme the one of
    the console's URL. No Origin is a client that is not a browser: accepted, as Nova.

    :raises ConsoleRefused: the reason
    """
    if origin_url is None:
        return
    origin = parse.urlsplit(origin_url)
    # Behind a TLS-terminating proxy (haproxy...), the page's scheme is the forwarded one.
    scheme = forwarded_proto or origin.scheme
    if not origin.hostname or not scheme:
        raise ConsoleRefused('Origin header not valid.')
    allowed = set(CONF.console.allowed_origins)
    if host_header:
        allowed.add(netutils.parse_host_port(host_header)[0])
    if origin.hostname not in allowed:
        raise ConsoleRefused('Origin header does not match this host.')
    if scheme not in _expected_schemes(console_type, access_url_base):
        raise ConsoleRefused('Origin header protocol does not match this host.')


def _seconds_left(expires: datetime.datetime) -> float:
    now = timeutils.utcnow(with_timezone=expires.tzinfo is not None)
    return (expires - now).total_seconds()


class NovaliteProxyRequestHandler(ws_proxy.ProxyRequestHandler):
    """One connection to a console proxy: a web page of noVNC (when the proxy serves
    ``web``) or a websocket to a console."""

    def log_message(self, format: str, *args: object) -> None:
        # websockify logs request paths: a token in them is a key to a console.
        super().log_message('%s', _TOKEN_IN_PATH.sub(r'\1***', format % args))

    def new_websocket_client(self) -> None:
        """Authorize the websocket, connect to the console, relay until either side
        closes (or the token's time ends, with ``[consoleauth] enforce_session_timeout``)."""
        if getattr(self.server, 'forks', False) and concurrency.choose() == 'eventlet':
            # A fresh hub in the forked process: not the parent's epoll.
            import eventlet.hubs
            eventlet.hubs.use_hub()
        try:
            info = self._authorize()
        except ConsoleRefused as exc:
            self._refuse(exc.reason)
        except exception.NovaliteException as exc:
            self._refuse(exc.format_message())
        except messaging.MessagingTimeout:
            LOG.warning('Console connection from %s: the compute host did not answer '
                        'whether the port is the console\'s', self.client_address[0])
            raise self.CClose(CLOSE_UNREACHABLE,
                              'The compute host of this console did not answer.') from None
        except Exception:
            # A database or bus that fails: the proxy's problem, not the client's.
            LOG.exception('Console connection from %s: the token could not be checked',
                          self.client_address[0])
            raise self.CClose(CLOSE_UNREACHABLE, 'The console token could not be checked.') \
                from None
        target = self._connect(info)
        try:
            self._proxy(target, info)
        finally:
            self._close_target(target)

    def _refuse(self, reason: str) -> NoReturn:
        LOG.info('Console connection from %s refused: %s', self.client_address[0], reason)
        raise self.CClose(CLOSE_REFUSED, _shorten(reason))

    def _authorize(self) -> auth.ConnectInfo:
        token = token_from_request(self.path, self.headers.get('Cookie'))
        if not token:
            raise exception.InvalidToken(token='***')
        info = auth.redeem(get_admin_context(), token)
        check_origin(self.headers.get('Origin'), self.headers.get('Host'),
                     self.headers.get('X-Forwarded-Proto'), info.console_type,
                     getattr(info, 'access_url_base', None))
        self._check_console_port(info)
        return info

    def _check_console_port(self, info: auth.ConnectInfo) -> None:
        """Ask the server's compute host whether the token's port is still the guest's
        console (a guest moved or restarted may have another)."""
        try:
            instance = objects.Instance.get_by_uuid(info.context, info.instance_uuid)
        except exception.InstanceNotFound:
            raise ConsoleRefused('The server of this console no longer exists.') from None
        if not compute_rpcapi.ComputeAPI().validate_console_port(
                info.context, instance, info.port, info.console_type):
            raise ConsoleRefused('The console is no longer at the port of this token.')

    def _connect(self, info: auth.ConnectInfo) -> socket.socket:
        LOG.info('Console of server %s (%s): connecting to %s:%s', info.instance_uuid,
                 info.console_type, info.host, info.port)
        try:
            target: socket.socket = websockifyserver.WebSockifyServer.socket(
                info.host, info.port, connect=True)
            target.setsockopt(socket.SOL_TCP, socket.TCP_NODELAY, 1)
        except OSError as exc:
            LOG.warning('Console of server %s: cannot connect to %s:%s: %s',
                        info.instance_uuid, info.host, info.port, exc)
            raise self.CClose(CLOSE_UNREACHABLE, 'Failed to connect to the console.') from None
        if info.internal_access_path:
            try:
                _open_access_path(target, info.internal_access_path)
            except (OSError, ConsoleRefused) as exc:
                self._close_target(target)
                LOG.warning('Console of server %s: %s refused its access path: %s',
                            info.instance_uuid, info.host, exc)
                raise self.CClose(CLOSE_UNREACHABLE, 'Failed to connect to the console.') \
                    from None
        return target

    def _proxy(self, target: socket.socket, info: auth.ConnectInfo) -> None:
        self.request.setsockopt(socket.SOL_TCP, socket.TCP_NODELAY, 1)
        ended = threading.Event()
        expired = threading.Event()
        if CONF.consoleauth.enforce_session_timeout:
            left = max(_seconds_left(info.expires), 0.0)
            LOG.info('Console of server %s: the session ends in %d seconds',
                     info.instance_uuid, left)
            executor.start_thread('console-session-timeout', _end_session_after, left,
                                  target, ended, expired)
        try:
            self.do_proxy(target)
        except self.CClose:
            if expired.is_set():
                raise self.CClose(CLOSE_NORMAL, 'The console session has expired.') from None
            raise
        finally:
            ended.set()

    @staticmethod
    def _close_target(target: socket.socket) -> None:
        try:
            target.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        target.close()

    def translate_path(self, path: str) -> str:
        # The in-process server serves its web directory without changing the process's
        # working directory (the forking one changes to it, as websockify does).
        web = getattr(self.server, 'web_dir', None)
        if web:
            self.directory = web
        return str(super().translate_path(path))

    def send_head(self) -> object:
        # Browsers read "Location: //host/..." as another site: a directory redirect of a
        # path starting with // would be an open redirect (as Nova, bugs.python.org 32084).
        if os.path.isdir(self.translate_path(self.path)):
            if (not parse.urlsplit(self.path).path.endswith('/')
                    and self.path.startswith('//')):
                self.send_error(HTTPStatus.BAD_REQUEST, 'URI must not start with //')
                return None
        return super().send_head()


def _end_session_after(seconds: float, target: socket.socket, ended: threading.Event,
                       expired: threading.Event) -> None:
    """Unless the relay ended first, end it after ``seconds``: the target reads as
    closed, and websockify's relay closes the websocket."""
    if ended.wait(seconds):
        return
    expired.set()
    try:
        target.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def _open_access_path(target: _Socket, path: str) -> None:
    """Ask the compute host's console gateway for ``path`` (``CONNECT``) and read its
    answer off the socket, leaving the console's own bytes after it.

    :raises ConsoleRefused: the gateway did not answer 200
    """
    target.sendall(('CONNECT %s HTTP/1.1\r\n\r\n' % path).encode())
    # A byte at a time: the console's first bytes may follow the answer at once, and
    # they are the client's (the answer is a few dozen bytes).
    head = b''
    while not head.endswith(b'\r\n\r\n'):
        if len(head) >= _CONNECT_ANSWER_BYTES:
            raise ConsoleRefused('no end to the answer to CONNECT')
        byte = target.recv(1)
        if not byte:
            raise ConsoleRefused('closed before answering CONNECT')
        head += byte
    status = head.split(b'\r\n', 1)[0]
    if status.split(b' ')[1:2] != [b'200']:
        raise ConsoleRefused('CONNECT answered %r' % status)


def _shorten(reason: str) -> str:
    data = reason.encode()
    if len(data) <= _REASON_BYTES:
        return reason
    return data[:_REASON_BYTES].decode(errors='ignore')


class NovaliteWebSocketProxy(ws_proxy.WebSocketProxy):
    """websockify's server with novalite's handler and TLS minimum, logging as novalite.

    :param binary: the daemon's name, for its log
    """

    # Each connection in a process of its own (websockify's way).
    forks = True

    def __init__(self, *, binary: str = 'novalite-proxy',
                 ssl_minimum_version: str = 'default', **kwargs: object) -> None:
        self.binary = binary
        self.listening = False
        # 'default' leaves the TLS versions to the system's policy, as Nova (websockify's
        # own 'default' would allow old ones).
        if ssl_minimum_version != 'default':
            kwargs['ssl_options'] = ws_proxy.select_ssl_version(ssl_minimum_version)
        kwargs.setdefault('RequestHandlerClass', NovaliteProxyRequestHandler)
        super().__init__(**kwargs)

    def started(self) -> None:
        self.listening = True
        LOG.info('%s listening on %s:%s', self.binary, self.listen_host, self.listen_port)

    @staticmethod
    def get_logger() -> logging.BaseLoggerAdapter:
        return LOG

    def top_new_client(self, startsock: socket.socket, address: tuple) -> None:
        try:
            super().top_new_client(startsock, address)
        finally:
            if not self.run_once:
                # The connection's own process ends here: its AMQP connections say
                # goodbye to the broker instead of vanishing.
                rpc.cleanup()


class InProcessProxy(ws_proxy.LibProxyServer):
    """The proxy as threads of a process that runs the other services too (an all-in-one
    process over the in-memory ``fake://`` bus, which a forked connection would not
    reach): a thread per connection, ``serve_forever`` and ``shutdown`` as any
    ``socketserver`` server. No TLS (the all-in-one serves plain HTTP).

    :param web: the web client's directory, or None for websockets only
    """

    daemon_threads = True
    allow_reuse_address = True
    forks = False

    def __init__(self, binary: str, host: str, port: int, web: str | None) -> None:
        # No web for websockify: it would change the whole process's directory to it.
        super().__init__(RequestHandlerClass=NovaliteProxyRequestHandler,
                         listen_host=host, listen_port=port)
        self.binary = binary
        self.web_dir = web
        self.only_upgrade = not web
        self.file_only = True
        self.logger = LOG
        LOG.info('%s listening on %s:%s', binary, *self.server_address[:2])

