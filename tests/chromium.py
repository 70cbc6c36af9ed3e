"""Headless Chromium (Debian's ``chromium``) driven over its DevTools protocol, for the
tests that open noVNC: the functional proxy test and the devstack console acceptance.

No browser-automation package: Chromium's own debugging endpoint, one page, commands in
turn over a websocket (websocket-client).
"""
from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import struct
import subprocess
import time
import urllib.request
import zlib
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import websocket

NOVNC = '/usr/share/novnc'

# How many pixels of noVNC's canvas are not black: a screen the guest painted.
PAINTED_PIXELS = (
    "(() => { const c = document.querySelector('canvas');"
    " if (!c || !c.width) return 0;"
    " const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
    " let n = 0; for (let i = 0; i < d.length; i += 4)"
    " if (d[i] || d[i + 1] || d[i + 2]) n++; return n; })()")
# vnc_lite.html's status line ("Connected to QEMU (...)", "Disconnected", ...).
NOVNC_STATUS = "document.getElementById('status')?.textContent"


def need(*paths: str) -> None:
    """Skip (fail under ``CI``) unless each program or path exists."""
    missing = [p for p in paths if not (shutil.which(p) or os.path.exists(p))]
    if missing:
        if os.environ.get('CI'):
            pytest.fail('not installed (tools/setup.sh): %s' % missing)
        pytest.skip('not installed: %s' % missing)


class DevTools:
    """Chromium's DevTools protocol over a websocket: one page, commands in turn."""

    def __init__(self, port: int) -> None:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen('http://127.0.0.1:%d/json/list' % port,
                                            timeout=5) as resp:
                    pages = [t for t in json.load(resp) if t['type'] == 'page']
                if pages:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, 'Chromium does not answer'
            time.sleep(0.2)
        self.ws = websocket.create_connection(pages[0]['webSocketDebuggerUrl'], timeout=30,
                                              suppress_origin=True)
        self.next_id = 0

    def call(self, method: str, **params: object) -> dict:
        self.next_id += 1
        self.ws.send(json.dumps({'id': self.next_id, 'method': method, 'params': params}))
        while True:
            answer = json.loads(self.ws.recv())
            if answer.get('id') == self.next_id:
                assert 'error' not in answer, answer
                return answer['result']

    def evaluate(self, expression: str) -> object:
        return self.call('Runtime.evaluate', expression=expression,
                         returnByValue=True)['result'].get('value')

    def screenshot(self) -> bytes:
        """The page as a PNG."""
        return base64.b64decode(self.call('Page.captureScreenshot')['data'])

    def close(self) -> None:
        self.ws.close()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


@contextmanager
def browser(profile_dir: str, log_file: str) -> Iterator[DevTools]:
    """A headless Chromium on about:blank (1024x768), killed on exit; yields its page."""
    need('chromium')
    debug_port = _free_port()
    with open(log_file, 'wb') as log:
        chromium = subprocess.Popen(
            ['chromium', '--headless=new', '--no-sandbox', '--disable-gpu',
             '--remote-debugging-port=%d' % debug_port, '--user-data-dir=%s' % profile_dir,
             '--window-size=1024,768', 'about:blank'],
            stdout=subprocess.DEVNULL, stderr=log)
    try:
        page = DevTools(debug_port)
        try:
            yield page
        finally:
            page.close()
    finally:
        chromium.kill()
        chromium.wait()


def wait_novnc_connected(page: DevTools, timeout: float = 60.0) -> tuple[str, int]:
    """Until noVNC says it is connected and its canvas has painted pixels (or the time
    runs out); returns (status line, painted pixels) as last seen."""
    deadline = time.monotonic() + timeout
    status, painted = '', 0
    while time.monotonic() < deadline:
        status = str(page.evaluate(NOVNC_STATUS) or '')
        count = page.evaluate(PAINTED_PIXELS)
        painted = count if isinstance(count, int) else 0
        if status.startswith('Connected') and painted:
            break
        time.sleep(0.5)
    return status, painted


def png_colours(png: bytes, limit: int = 16) -> int:
    """How many distinct colours a screenshot (an 8-bit RGB or RGBA PNG, as Chromium
    takes them) has, counting up to ``limit``: 1 is a blank screen."""
    assert png.startswith(b'\x89PNG\r\n\x1a\n'), png[:8]
    pos, idat, header = 8, b'', b''
    while pos < len(png):
        length, kind = struct.unpack('>I4s', png[pos:pos + 8])
        body = png[pos + 8:pos + 8 + length]
        if kind == b'IHDR':
            header = body
        elif kind == b'IDAT':
            idat += body
        pos += 12 + length
    width, height, depth, colour_type, _, _, interlace = struct.unpack('>IIBBBBB', header)
    assert depth == 8 and colour_type in (2, 6) and not interlace, header
    pixel = 3 if colour_type == 2 else 4
    stride = width * pixel
    raw = zlib.decompress(idat)
    previous = bytearray(stride)
    colours: set[bytes] = set()
    for row in range(height):
        start = row * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            left = line[i - pixel] if i >= pixel else 0
            up = previous[i]
            upper_left = previous[i - pixel] if i >= pixel else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                guess = left + up - upper_left
                a, b, c = abs(guess - left), abs(guess - up), abs(guess - upper_left)
                line[i] = (line[i] + (left if a <= b and a <= c else up if b <= c
                                      else upper_left)) & 0xFF
        colours.update(bytes(line[i:i + 3]) for i in range(0, stride, pixel))
        if len(colours) >= limit:
            return len(colours)
        previous = line
    return len(colours)
