"""The shipped configuration sample is what oslo-config-generator makes of the options."""
from __future__ import annotations

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
ETC = ROOT / 'etc' / 'novalite'


def test_the_sample_lists_every_option_as_registered(tmp_path):
    # In a process of its own: options' defaults are module state, and tests in this
    # process may have changed some.
    out = tmp_path / 'novalite.conf.sample'
    subprocess.run([sys.executable, '-m', 'oslo_config.generator', '--config-file',
                    str(ETC / 'novalite-config-generator.conf'), '--output-file', str(out)],
                   cwd=ROOT, check=True, capture_output=True)
    assert out.read_text() == (ETC / 'novalite.conf.sample').read_text(), (
        'etc/novalite/novalite.conf.sample is stale: run .venv/bin/oslo-config-generator '
        '--config-file etc/novalite/novalite-config-generator.conf')


def test_the_sample_has_the_api_size_limit_and_cors():
    text = (ETC / 'novalite.conf.sample').read_text()
    assert '[oslo_middleware]' in text and '#max_request_body_size = 114688' in text
    assert '[cors]' in text
