"""Fixtures of the API unit tests: a real SQLite API database, clean policy, a test app."""
from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import webob

from novalite import objects, policy
from novalite.conf import CONF
from novalite.db import engine
from novalite.db.api import models

objects.register_all()


@pytest.fixture(autouse=True)
def _clean_policy() -> Iterator[None]:
    policy.reset()
    yield
    policy.reset()


@pytest.fixture
def api_db(tmp_path: Any) -> Iterator[str]:
    """A fresh SQLite API database with every table, as ``[api_database] connection``."""
    url = 'sqlite:///%s' % (tmp_path / 'api.db')
    CONF.set_override('connection', url, group='api_database')
    models.Base.metadata.create_all(engine.get_engine(url))
    yield url
    engine.dispose_all()
    CONF.clear_override('connection', group='api_database')


@pytest.fixture
def noauth2() -> Iterator[None]:
    CONF.set_override('auth_strategy', 'noauth2', group='api')
    yield
    CONF.clear_override('auth_strategy', group='api')


def make_flavor(flavorid: str = '1', name: str = 'm1.tiny', **kwargs: Any) -> Any:
    values = dict(memory_mb=512, vcpus=1, root_gb=1, ephemeral_gb=0, swap=0,
                  rxtx_factor=1.0, is_public=True, disabled=False, description=None,
                  extra_specs={}, projects=[])
    values.update(kwargs)
    flavor = objects.Flavor(context=None, flavorid=flavorid, name=name, **values)
    flavor.create()
    return flavor


def call(app: Any, method: str, path: str, body: Any = None, token: str | None = 'demo:demo',
         version: str | None = None, headers: dict | None = None) -> webob.Response:
    """Send one request to ``app``; ``body`` may be a dict (JSON) or raw bytes."""
    all_headers = {'X-Auth-Token': token} if token else {}
    if version:
        all_headers['OpenStack-API-Version'] = 'compute %s' % version
    all_headers.update(headers or {})
    req = webob.Request.blank(path, method=method, headers=all_headers)
    if body is not None:
        req.body = body if isinstance(body, bytes) else json.dumps(body).encode()
        req.content_type = 'application/json'
    return req.get_response(app)
