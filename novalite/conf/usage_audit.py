"""Options of the compute's periodic instance usage audit ([DEFAULT], as in Nova)."""
from __future__ import annotations

from oslo_config import cfg

default_opts = [
    cfg.BoolOpt('instance_usage_audit', default=False,
                help='Whether each compute host audits the usage of its instances once '
                     'per audit period: it records the run in the task log that '
                     'GET /os-instance_usage_audit_log reports, and sends an '
                     'instance.exists notification for each instance that existed in '
                     'the period.'),
    cfg.StrOpt('instance_usage_audit_period', default='month',
               regex='^(hour|month|day|year)(@([0-9]+))?$',
               help='The audit period: hour, day, month or year, optionally with an '
                    'offset after "@" (minutes past the hour, hours past midnight UTC, '
                    'day of the month, month of the year): "month@15" audits monthly '
                    'periods that start on the 15th. The API reports the period that '
                    'ended last.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(default_opts)


def list_opts() -> dict:
    return {'DEFAULT': default_opts}
