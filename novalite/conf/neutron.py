"""Options of the [neutron] group (how to reach the Networking service) and the
VIF-plugging options of [DEFAULT]."""
from __future__ import annotations

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

neutron_group = cfg.OptGroup('neutron', title='Networking service (Neutron) options')

opts = [
    cfg.BoolOpt('enabled', default=True,
                help='Whether servers get ports from Neutron. With no Neutron endpoint '
                     'configured (no ``endpoint_override`` and no ``auth_type``) this has '
                     'no effect: servers then boot with no network, and a request for a '
                     'specific network is refused. Set it to false to boot every server '
                     'with no network even where Neutron is configured.'),
    cfg.StrOpt('default_floating_pool', default='public',
               help='The external network that the pre-2.36 floating IP proxy allocates '
                    'from when the request names no pool.'),
    cfg.IntOpt('http_retries', default=3, min=0,
               help='Retries of a Neutron request that failed to connect (each waits '
                    'longer than the last).'),
    cfg.IntOpt('port_audit_interval', default=300,
               help='Seconds between two runs of the compute host\'s port audit, which '
                    'releases the ports still bound to the host for servers deleted '
                    '(or failed to build) while Neutron could not be reached. 0 or a '
                    'negative value turns the audit off.'),
    cfg.StrOpt('ovs_bridge', default='br-int',
               help='The integration bridge VIFs are plugged into when Neutron does not '
                    'name one in the port binding.'),
]

default_opts = [
    cfg.IntOpt('vif_plugging_timeout', default=300, min=0,
               help='Seconds a compute host waits for Neutron to report a plugged VIF '
                    '(the ``network-vif-plugged`` event) before it gives up on the '
                    'operation. 0 does not wait at all.'),
    cfg.BoolOpt('vif_plugging_is_fatal', default=True,
                help='Whether a VIF-plugging timeout fails the build (true) or the '
                     'instance goes ACTIVE without the event (false).'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_group(neutron_group)
    conf.register_opts(opts, group=neutron_group)
    conf.register_opts(default_opts)
    ks_loading.register_session_conf_options(conf, neutron_group.name)
    ks_loading.register_auth_conf_options(conf, neutron_group.name)
    ks_loading.register_adapter_conf_options(conf, neutron_group.name,
                                             include_deprecated=False)
    conf.set_default('service_type', 'network', group=neutron_group.name)
    conf.set_default('valid_interfaces', ['internal', 'public'], group=neutron_group.name)


def list_opts() -> dict:
    return {neutron_group: (opts + ks_loading.get_session_conf_options()
                            + ks_loading.get_auth_common_conf_options()
                            + ks_loading.get_adapter_conf_options(include_deprecated=False)),
            'DEFAULT': default_opts}
