"""The console proxy's request parsing: where the token is, the Origin check, the
compute host's CONNECT answer."""
from __future__ import annotations

import socket
import threading

import pytest

from novalite.conf import CONF
from novalite.console import websocketproxy as wsp


@pytest.mark.parametrize('path, cookie, token', [
    ('/?token=abc', None, 'abc'),
    ('/websockify?token=abc&x=1', None, 'abc'),
    # noVNC's page passes the URL's path parameter on as the websocket's path.
    ('/?path=%3Ftoken%3Dabc', None, 'abc'),
    ('/?path=websockify%3Ftoken%3Dabc', None, 'abc'),
    ('/', 'token=abc', 'abc'),
    ('/', 'a=1; token=abc; b=2', 'abc'),
    # A malformed cookie does not hide the token cookie beside it.
    ('/', 'bad"cookie; token=abc', 'abc'),
    ('/?token=abc', 'token=other', 'abc'),
    ('/', None, ''),
    ('/?path=vnc', 'a=1', ''),
])
def test_token_from_request(path: str, cookie: str | None, token: str) -> None:
    assert wsp.token_from_request(path, cookie) == token


def test_check_origin() -> None:
    wsp.check_origin(None, 'proxy:6080', None, 'novnc')  # not a browser
    wsp.check_origin('http://proxy:8080', 'proxy:6080', None, 'novnc')
    wsp.check_origin('http://[::1]:6080', '[::1]:6080', None, 'novnc')
    for origin, reason in (('http://other', 'does not match this host'),
                           ('https://proxy', 'protocol does not match'),
                           ('proxy', 'not valid')):
        with pytest.raises(wsp.ConsoleRefused, match=reason):
            wsp.check_origin(origin, 'proxy:6080', None, 'novnc')


def test_allowed_origins_and_wss_base_url() -> None:
    CONF.set_override('allowed_origins', ['horizon'], group='console')
    CONF.set_override('base_url', 'wss://proxy:6083/', group='serial_console')
    try:
        wsp.check_origin('https://horizon', 'proxy:6083', None, 'serial')
        wsp.check_origin('wss://proxy', 'proxy:6083', None, 'serial')
        with pytest.raises(wsp.ConsoleRefused, match='protocol'):
            wsp.check_origin('http://horizon', 'proxy:6083', None, 'serial')
    finally:
        CONF.clear_override('allowed_origins', group='console')
        CONF.clear_override('base_url', group='serial_console')


def test_token_is_hidden_in_logged_paths() -> None:
    line = "GET /?token=s3cret&x=1 and /?path=%3Ftoken%3Ds3cret 'token=s3cret'"
    hidden = wsp._TOKEN_IN_PATH.sub(r'\1***', line)
    assert 's3cret' not in hidden
    assert hidden.count('***') == 3


def test_long_reasons_fit_a_close_frame() -> None:
    assert len(wsp._shorten('é' * 100).encode()) <= 123
    assert wsp._shorten('short') == 'short'


def _gateway(answer: bytes) -> tuple[socket.socket, socket.socket]:
    ours, theirs = socket.socketpair()
    theirs.sendall(answer)
    return ours, theirs


def test_connect_answer_is_read_off_and_console_bytes_stay() -> None:
    ours, theirs = _gateway(b'HTTP/1.1 200 OK\r\nX: y\r\n\r\nRFB 003.008\n')
    with ours, theirs:
        wsp._open_access_path(ours, '/console/1')
        assert theirs.recv(100) == b'CONNECT /console/1 HTTP/1.1\r\n\r\n'
        assert ours.recv(100) == b'RFB 003.008\n'


def test_connect_answer_in_pieces() -> None:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        theirs.sendall(b'HTTP/1.1 200 OK\r\n')

        def rest() -> None:
            theirs.sendall(b'\r\nhello')
        timer = threading.Timer(0.2, rest)
        timer.start()
        wsp._open_access_path(ours, '/p')
        timer.join()
        assert ours.recv(100) == b'hello'


@pytest.mark.parametrize('answer', [b'HTTP/1.1 403 Forbidden\r\n\r\n', b'HTTP/1.1 200'])
def test_connect_refused_or_closed(answer: bytes) -> None:
    ours, theirs = _gateway(answer)
    with ours, theirs:
        theirs.shutdown(socket.SHUT_WR)
        with pytest.raises(wsp.ConsoleRefused):
            wsp._open_access_path(ours, '/p')


def test_the_tokens_access_url_decides_the_scheme() -> None:
    # A URL given as https (the option changed since, or another proxy behind TLS).
    wsp.check_origin('https://proxy', 'proxy:6080', None, 'novnc',
                     'https://proxy:6080/vnc_auto.html')
    with pytest.raises(wsp.ConsoleRefused, match='protocol'):
        wsp.check_origin('http://proxy', 'proxy:6080', None, 'novnc',
                         'https://proxy:6080/vnc_auto.html')
    wsp.check_origin('http://proxy', 'proxy:6082', None, 'spice-html5',
                     'http://proxy:6082/spice_auto.html')
