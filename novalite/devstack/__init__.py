"""A devstack-style novalite on one machine: separate daemons, RabbitMQ, real Placement."""
from __future__ import annotations

from novalite.devstack.stack import Stack
from novalite.devstack.teardown import down_from_record

__all__ = ['Stack', 'down_from_record']
