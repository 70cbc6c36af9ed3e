"""The functional tests' stack: novalite's all-in-one stack with a Glance test double.

``novalite.allinone.stack.Stack`` (the stack novalite-all runs) with the double in
place of the real Glance, two compute hosts, and helpers to drive the REST API and
read Placement with ``requests``.
"""
from __future__ import annotations

import time
from typing import Any

import requests

from novalite.allinone import stack
from tests.fixtures.glance import GlanceDouble

ADMIN = {'X-Auth-Token': 'admin:admin'}

# Quicker heartbeats and no retries against the double, so failures show at once.
TEST_SETTINGS: stack.Settings = {
    (None, 'report_interval'): 1,
    (None, 'rpc_response_timeout_scheduler'): 30,
    ('glance', 'num_retries'): 0,
}


class Stack(stack.Stack):
    """Start with ``start()``, stop with ``stop()``; ``api`` is the API's base URL and
    ``image`` the one image the Glance double holds."""

    def __init__(self, tmp_dir: str, compute_hosts: tuple[str, ...] = ('host1', 'host2'),
                 overrides: stack.Settings | None = None) -> None:
        self.glance = GlanceDouble()
        super().__init__(tmp_dir, self.glance.server.url, compute_hosts=compute_hosts,
                         overrides={**TEST_SETTINGS, **(overrides or {})})
        self.image: dict = {}

    def start(self) -> Stack:
        self.image = self.glance.add_image('cirros-tiny')
        self.glance.start()
        super().start()
        return self

    def stop(self) -> None:
        super().stop()
        self.glance.stop()

    # -- helpers for tests -------------------------------------------------------------

    def request(self, method: str, path: str, token: str = 'admin:admin',
                version: str | None = None, **kwargs: Any) -> requests.Response:
        headers = {'X-Auth-Token': token}
        if version:
            headers['OpenStack-API-Version'] = 'compute %s' % version
        headers.update(kwargs.pop('headers', {}))
        return requests.request(method, self.api + path, headers=headers, timeout=30,
                                **kwargs)

    def placement_get(self, path: str) -> dict:
        resp = requests.get(self.placement.url + path, timeout=10,
                            headers={'X-Auth-Token': 'admin',
                                     'OpenStack-API-Version': 'placement 1.39'})
        resp.raise_for_status()
        return resp.json()

    def wait_for_status(self, server_id: str, statuses: tuple[str, ...],
                        timeout: float = 20.0, **kwargs: Any) -> dict:
        deadline = time.monotonic() + timeout
        server: dict = {}
        while time.monotonic() < deadline:
            resp = self.request('GET', '/servers/%s' % server_id, **kwargs)
            if resp.status_code == 404 and 'DELETED' in statuses:
                return {}
            resp.raise_for_status()
            server = resp.json()['server']
            if server['status'] in statuses:
                return server
            time.sleep(0.05)
        raise AssertionError('server %s still %s after %ss (wanted %s)'
                             % (server_id, server.get('status'), timeout, statuses))

    def force_down(self, host: str, down: bool) -> None:
        """Mark the compute service of ``host`` forced down (or up again), as an
        operator does before evacuating its servers (2.53)."""
        services = self.request('GET', '/os-services?host=%s&binary=novalite-compute' % host,
                                version='2.53').json()['services']
        resp = self.request('PUT', '/os-services/%s' % services[0]['id'], version='2.53',
                            json={'forced_down': down})
        assert resp.status_code == 200, resp.text

    def wait_for_deleted(self, server_id: str, timeout: float = 20.0, **kwargs: Any) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.request('GET', '/servers/%s' % server_id, **kwargs).status_code == 404:
                return
            time.sleep(0.05)
        raise AssertionError('server %s not gone after %ss' % (server_id, timeout))
