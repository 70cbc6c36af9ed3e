"""Tests of novalite.wsgi.osapi_compute, run in a child process: it parses the global CONF."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

_PROBE = textwrap.dedent('''
    import json, sys, webob
    from novalite.wsgi import osapi_compute
    from novalite.conf import CONF
    req = webob.Request.blank('/v2.1/flavors', headers={'X-Auth-Token': 'admin:admin'})
    resp = req.get_response(osapi_compute.application)
    print(json.dumps({'status': resp.status_int, 'strategy': CONF.api.auth_strategy,
                      'body': resp.json}))
''')


def _run(tmp_path, args=(), env_files=None):
    conf = tmp_path / 'novalite.conf'
    conf.write_text('[api]\nauth_strategy = noauth2\n[api_database]\nconnection = '
                    'sqlite:///%s\n[DEFAULT]\ntransport_url = fake:/\n' % (tmp_path / 'api.db'))
    env = dict(os.environ)
    env.pop('NOVALITE_CONFIG_FILES', None)
    if env_files:
        env['NOVALITE_CONFIG_FILES'] = env_files.replace('CONF', str(conf))
    argv = [a.replace('CONF', str(conf)) for a in args]
    setup = ('from novalite.db import engine; from novalite.db.api import models; '
             "models.Base.metadata.create_all(engine.get_engine('sqlite:///%s'))"
             % (tmp_path / 'api.db'))
    subprocess.run([sys.executable, '-c', setup], check=True, env=env)
    out = subprocess.run([sys.executable, '-c', _PROBE, *argv], check=True, env=env,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_config_file_from_argv(tmp_path):
    # Other arguments belong to the WSGI server and must be ignored.
    result = _run(tmp_path, args=['--workers', '2', '--config-file', 'CONF'])
    assert result == {'status': 200, 'strategy': 'noauth2', 'body': {'flavors': []}}


def test_config_file_from_environment(tmp_path):
    result = _run(tmp_path, env_files='CONF;')
    assert result['status'] == 200
    assert result['strategy'] == 'noauth2'
