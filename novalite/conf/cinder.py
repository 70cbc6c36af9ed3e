"""Options of the [cinder] group: how to reach the Block Storage service (Cinder v3)."""
from __future__ import annotations

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

cinder_group = cfg.OptGroup('cinder', title='Block Storage service (Cinder) options',
                            help='How novalite reaches Cinder for volumes, snapshots and '
                                 'volume attachments.')

opts = [
    cfg.StrOpt('catalog_info', default='volumev3::publicURL', regex=r'^[\w-]+:\w*:.*$',
               help='Where to find Cinder in the service catalog, as '
                    '``<service_type>:<service_name>:<interface>``; the service name may be '
                    'empty (it rarely matters). Only used with Keystone (``auth_type`` set) '
                    'and no ``endpoint_template``. Cinder v3 only.'),
    cfg.StrOpt('endpoint_template',
               help='Cinder\'s v3 URL, bypassing the catalog, e.g. '
                    '``http://cinder:8776/v3/%(project_id)s`` (the caller\'s project is '
                    'substituted) or ``http://cinder:8776/v3`` for a Cinder that takes no '
                    'project in its paths. Without ``auth_type`` this is a keystone-less '
                    'Cinder (``auth_strategy = noauth``): each call then carries the '
                    'caller\'s ``user:project`` as its token.'),
    cfg.StrOpt('os_region_name',
               help='The region whose Cinder endpoint the catalog lookup picks.'),
    cfg.IntOpt('http_retries', default=3, min=0,
               help='Retries of a Cinder request that failed to connect (refused, reset, '
                    'timed out). 0 tries once; 3 tries four times in all.'),
    cfg.BoolOpt('cross_az_attach', default=True,
                help='Whether a server may attach a volume of another availability zone. '
                     'False: the volume\'s zone (Cinder\'s) must be the server\'s zone '
                     '(novalite\'s), and a volume made for a server (boot from an image '
                     'or a snapshot onto a volume) is created in the server\'s zone, which '
                     'must then exist in Cinder too.'),
    cfg.BoolOpt('debug', default=False,
                help='Log every Cinder request and its answer at DEBUG, whatever the '
                     'rest of novalite logs.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_group(cinder_group)
    conf.register_opts(opts, group=cinder_group)
    ks_loading.register_session_conf_options(conf, cinder_group.name)
    ks_loading.register_auth_conf_options(conf, cinder_group.name)


def list_opts() -> dict:
    return {cinder_group: (opts + ks_loading.get_session_conf_options()
                           + ks_loading.get_auth_common_conf_options()
                           + ks_loading.get_auth_plugin_conf_options('password'))}
