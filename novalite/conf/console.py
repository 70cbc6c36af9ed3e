"""Options of the consoles: ``[vnc]``, ``[serial_console]``, ``[consoleauth]``,
``[console]`` and the proxies' ``[DEFAULT]`` web options, named and defaulted as Nova's."""
from __future__ import annotations

from oslo_config import cfg, types

vnc_group = cfg.OptGroup('vnc', title='VNC consoles',
                         help='The guests\' VNC servers and the noVNC proxy in front of them.')
serial_group = cfg.OptGroup('serial_console', title='Serial consoles',
                            help='The guests\' serial ports on TCP and the websocket proxy '
                                 'in front of them.')
consoleauth_group = cfg.OptGroup('consoleauth', title='Console tokens')
console_group = cfg.OptGroup('console', title='Console proxies')

vnc_opts = [
    cfg.BoolOpt('enabled', default=True,
                help='Give guests a VNC server (graphics in the domain) and let users open '
                     'it through the noVNC proxy.'),
    cfg.HostAddressOpt('server_listen', default='127.0.0.1',
                       help='The address the guests\' VNC servers listen on, on the '
                            'compute host.'),
    cfg.HostAddressOpt('server_proxyclient_address', default='127.0.0.1',
                       help='The compute host\'s address the noVNC proxy connects to.'),
    cfg.URIOpt('novncproxy_base_url', default='http://127.0.0.1:6080/vnc_lite.html',
               help='The noVNC page a console URL points at; the token is added to its '
                    'query (``?path=%3Ftoken%3D...``). ``vnc_lite.html`` connects by '
                    'itself, as devstack sets it (Nova\'s default ``vnc_auto.html`` is '
                    'a link to ``vnc.html`` in noVNC 1.3, which waits for a click).'),
    cfg.HostAddressOpt('novncproxy_host', default='0.0.0.0',
                       help='The address novalite-novncproxy listens on.'),
    cfg.PortOpt('novncproxy_port', default=6080,
                help='The port novalite-novncproxy listens on.'),
    cfg.ListOpt('auth_schemes', item_type=types.String(choices=(('none', 'no auth'),)),
                default=['none'],
                help='The VNC authentication schemes the proxy offers the compute host '
                     '(only ``none``: the token is the access check).'),
]

serial_opts = [
    cfg.BoolOpt('enabled', default=False,
                help='Give guests serial ports on TCP and let users open them through the '
                     'serial proxy.'),
    cfg.StrOpt('port_range', default='10000:20000',
               regex=r'^\d+:\d+$',
               help='The TCP ports (``min:max``) a compute host gives guests\' serial '
                    'ports.'),
    cfg.URIOpt('base_url', default='ws://127.0.0.1:6083/',
               help='The websocket URL a serial console URL starts with.'),
    cfg.HostAddressOpt('proxyclient_address', default='127.0.0.1',
                       help='The compute host\'s address the serial proxy connects to; the '
                            'serial ports listen on it.'),
    cfg.HostAddressOpt('serialproxy_host', default='0.0.0.0',
                       help='The address novalite-serialproxy listens on.'),
    cfg.PortOpt('serialproxy_port', default=6083,
                help='The port novalite-serialproxy listens on.'),
]

consoleauth_opts = [
    cfg.IntOpt('token_ttl', default=600, min=0,
               help='How many seconds a console token stays valid.'),
    cfg.BoolOpt('enforce_session_timeout', default=False,
                help='Close a console connection when its token\'s time runs out.'),
]

console_opts = [
    cfg.ListOpt('allowed_origins', default=[],
                help='Origins (host names) allowed to open a console websocket besides the '
                     'proxy\'s own host.'),
    cfg.StrOpt('ssl_ciphers', help='OpenSSL cipher list the proxies offer (TLS only).'),
    cfg.StrOpt('ssl_minimum_version', default='default',
               choices=('default', 'tlsv1_1', 'tlsv1_2', 'tlsv1_3'),
               help='The oldest TLS version the proxies accept.'),
]

web_opts = [
    cfg.BoolOpt('ssl_only', default=False, help='The proxies refuse plain connections.'),
    cfg.BoolOpt('source_is_ipv6', default=False, help='The proxies listen on IPv6.'),
    cfg.StrOpt('cert', default='self.pem', help='The proxies\' TLS certificate file.'),
    cfg.StrOpt('key', help='The proxies\' TLS key file (when not in ``cert``).'),
    cfg.StrOpt('web', default='/usr/share/novnc',
               help='The directory of the web client the noVNC proxy serves (Debian\'s '
                    '``novnc`` package).'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    for group, opts in ((vnc_group, vnc_opts), (serial_group, serial_opts),
                        (consoleauth_group, consoleauth_opts), (console_group, console_opts)):
        conf.register_group(group)
        conf.register_opts(opts, group=group)
    conf.register_opts(web_opts)


def list_opts() -> dict:
    return {vnc_group: vnc_opts, serial_group: serial_opts,
            consoleauth_group: consoleauth_opts, console_group: console_opts,
            'DEFAULT': web_opts}
