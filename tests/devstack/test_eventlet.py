"""The whole stack with ``[DEFAULT] concurrency_backend = eventlet`` in every daemon."""
from __future__ import annotations

import glob
import os

# The same scenarios as on the default (threading) stack, collected again here.
from tests.devstack.test_client_openstack import (  # noqa: F401
    test_compute_service_list,
    test_server_create_list_show_delete,
)
from tests.devstack.test_client_sdk import conn, test_server_create_list_get_delete  # noqa: F401
from tests.devstack.test_faults import STACK as FAULTS_STACK  # noqa: F401

STACK = {'conf': dict(FAULTS_STACK['conf'], DEFAULT={'concurrency_backend': 'eventlet'},
                      api={'osapi_compute_workers': 2})}


def test_every_daemon_runs_on_eventlet(stack):
    logs = sorted(glob.glob(os.path.join(stack.log_dir, '*.log')))
    daemons = [os.path.basename(p) for p in logs if not p.endswith('placement.log')]
    assert len(daemons) == 3 + len(stack.computes), daemons
    for path in logs:
        if path.endswith('placement.log'):
            continue
        with open(path) as log:
            text = log.read()
        # oslo.service names its backend in the launcher's log lines.
        assert 'oslo_service.backend._eventlet' in text, path
        assert 'oslo_service.backend._threading' not in text, path
    # The standalone API serves with two worker processes under its launcher.
    api = stack.daemon('api')
    children = open('/proc/%d/task/%d/children' % (api.pid, api.pid)).read().split()
    assert len(children) == 2, children
