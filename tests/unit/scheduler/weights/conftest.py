"""The ``override`` fixture: [filter_scheduler] options set for one test."""
from __future__ import annotations

import pytest

from novalite.conf import CONF


@pytest.fixture
def override():
    names = []

    def set_(name, value):
        CONF.set_override(name, value, group='filter_scheduler')
        names.append(name)

    yield set_
    for name in names:
        CONF.clear_override(name, group='filter_scheduler')
