"""One in-process stack per test module (starting it takes about a second)."""
from __future__ import annotations

import pytest

from tests.functional.stack import Stack


@pytest.fixture(scope='module')
def stack(tmp_path_factory):
    stack = Stack(str(tmp_path_factory.mktemp('stack')))
    stack.start()
    try:
        yield stack
    finally:
        stack.stop()
