"""A devstack-style novalite on one machine: separate daemons, RabbitMQ, real Placement."""
from __future__ import annotations

from tests.devstack.harness.stack import Stack
from tests.devstack.harness.teardown import down_from_record

__all__ = ['Stack', 'down_from_record']
