"""novalite-api of the threading backend as a real process: waitress in two worker
processes on one socket, a SIGHUP reload in place, and a SIGTERM that lets a kept
connection's next request find the server gone rather than half-answered."""
from __future__ import annotations

import http.client
import signal

from tests.unit.cmd.test_daemons import (  # noqa: F401  (fixtures)
    _children,
    _free_port,
    _get,
    _site,
    _terminate,
    _wait_for,
    site,
    vhost,
)


def test_two_waitress_workers_serve_reload_and_stop(site):  # noqa: F811
    port = _free_port()
    api = 'osapi_compute_listen_port = %d\nosapi_compute_workers = 2\n' % port
    conf = site.config('api', api=api)
    proc = site.start('novalite-api', conf)
    base = 'http://127.0.0.1:%d' % port

    def answers() -> bool:
        try:
            return _get(base + '/v2.1')[0] == 200
        except OSError:
            return False
    _wait_for(answers, what='novalite-api')
    # the first worker may answer before the second is forked
    workers = _wait_for(lambda: (lambda c: c if len(c) == 2 else None)(_children(proc.pid)),
                        what='two workers')
    assert isinstance(workers, set) and len(workers) == 2
    kept = http.client.HTTPConnection('127.0.0.1', port, timeout=10)
    for _ in range(4):
        kept.request('GET', '/v2.1/flavors', headers={'X-Auth-Token': 'admin:admin'})
        resp = kept.getresponse()
        assert (resp.status, resp.read()) == (200, b'{"flavors": []}')
        assert resp.getheader('Server') == 'waitress'

    site.config('api', default='debug = true\n', api=api)
    proc.send_signal(signal.SIGHUP)
    _wait_for(lambda: site.log('novalite-api').count('reloaded its configuration') == 2,
              what='both workers reloading')
    assert _children(proc.pid) == workers
    kept.request('GET', '/v2.1/flavors', headers={'X-Auth-Token': 'admin:admin'})
    assert kept.getresponse().read() == b'{"flavors": []}'  # the same connection

    assert _terminate(proc, within=10) < 5  # the idle kept connection did not hold it
    assert 'novalite-api stopped' in site.log('novalite-api')
