"""Options of the [service_user] group: the service token sent beside a user's token."""
from __future__ import annotations

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

SERVICE_USER_GROUP = 'service_user'

service_user_group = cfg.OptGroup(
    SERVICE_USER_GROUP, title='Service token options',
    help='The service user whose token novalite sends (``X-Service-Token``) beside the '
         'user\'s own when it calls another service on the user\'s behalf.')

opts = [
    cfg.BoolOpt('send_service_user_token', default=False,
                help='Send a service token with every call made with a user\'s token. '
                     'The user\'s token may expire while novalite still works for the '
                     'user (a long build, a volume attach); a valid service token makes '
                     'the other service accept the call anyway, and tells it that '
                     'novalite is calling on the user\'s behalf. Cinder needs it to '
                     'delete an attachment without asking novalite whether the server '
                     'still uses the volume.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_group(service_user_group)
    conf.register_opts(opts, group=service_user_group)
    ks_loading.register_session_conf_options(conf, SERVICE_USER_GROUP)
    ks_loading.register_auth_conf_options(conf, SERVICE_USER_GROUP)


def list_opts() -> dict:
    return {service_user_group: (opts + ks_loading.get_session_conf_options()
                                 + ks_loading.get_auth_common_conf_options()
                                 + ks_loading.get_auth_plugin_conf_options('password'))}
