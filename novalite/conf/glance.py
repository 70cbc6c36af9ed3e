"""Options of the [glance] group: how to reach the Image service (Glance v2)."""
from __future__ import annotations

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

glance_group = cfg.OptGroup('glance', title='Image service options')

opts = [
    cfg.IntOpt('num_retries', default=3, min=0,
               help='Retries of a failed Glance request (connection errors, 5xx).'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_group(glance_group)
    conf.register_opts(opts, group=glance_group)
    ks_loading.register_session_conf_options(conf, glance_group.name)
    ks_loading.register_auth_conf_options(conf, glance_group.name)
    ks_loading.register_adapter_conf_options(conf, glance_group.name, include_deprecated=False)
    conf.set_default('service_type', 'image', group=glance_group.name)
    conf.set_default('valid_interfaces', ['internal', 'public'], group=glance_group.name)


def list_opts() -> dict:
    return {glance_group: (opts + ks_loading.get_session_conf_options()
                           + ks_loading.get_auth_common_conf_options()
                           + ks_loading.get_adapter_conf_options(include_deprecated=False))}
