"""Prometheus metrics of a daemon (``[metrics] enabled``; off by default).

The call sites only use the functions below; each is a no-op while metrics are off.
"""
from __future__ import annotations


def observe_http(service: str, method: str, status: int | None, seconds: float) -> None:
    """One HTTP call to another service (``placement``, ``glance``...): its latency, and
    an error when ``status`` is None (no answer) or 5xx."""


def start_exporter(binary: str) -> None:
    """Serve ``/metrics`` on ``[metrics] port`` when metrics are enabled (once per
    process; ``binary`` labels the daemon)."""
