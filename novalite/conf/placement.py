"""Options of the [placement] group: how to reach the Placement service.

These are keystoneauth1's session, auth and adapter options, as in Nova. For a
keystone-less Placement (its ``auth_strategy = noauth2``) use keystoneauth1's
admin_token plugin: ``auth_type = admin_token``, ``token = admin``,
``endpoint = http://host:port``.
"""
from __future__ import annotations

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

placement_group = cfg.OptGroup('placement', title='Placement service options')

DEFAULT_SERVICE_TYPE = 'placement'


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_group(placement_group)
    ks_loading.register_session_conf_options(conf, placement_group.name)
    ks_loading.register_auth_conf_options(conf, placement_group.name)
    ks_loading.register_adapter_conf_options(conf, placement_group.name,
                                             include_deprecated=False)
    conf.set_default('service_type', DEFAULT_SERVICE_TYPE, group=placement_group.name)
    conf.set_default('valid_interfaces', ['internal', 'public'], group=placement_group.name)


def list_opts() -> dict:
    return {placement_group: (
        ks_loading.get_session_conf_options()
        + ks_loading.get_auth_common_conf_options()
        + ks_loading.get_adapter_conf_options(include_deprecated=False))}
