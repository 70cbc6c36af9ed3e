"""The files the stack writes: each daemon's novalite.conf and the clients' clouds.yaml."""
from __future__ import annotations

from typing import Any

import yaml

from novalite.allinone import cloud as allinone_cloud
from tests.devstack.harness.keystone import USERS

Sections = dict[str, dict[str, Any]]


def merge(*layers: Sections | None) -> Sections:
    """Later layers win, option by option."""
    merged: Sections = {}
    for layer in layers:
        for section, options in (layer or {}).items():
            merged.setdefault(section, {}).update(options)
    return merged


def render(sections: Sections) -> str:
    out = []
    for section in sorted(sections, key=lambda s: (s != 'DEFAULT', s)):
        out.append('[%s]' % section)
        for key, value in sections[section].items():
            if isinstance(value, bool):
                value = str(value).lower()
            elif isinstance(value, (list, tuple)):
                value = ','.join(str(v) for v in value)
            out.append('%s = %s' % (key, value))
        out.append('')
    return '\n'.join(out)


def write_conf(path: str, sections: Sections) -> None:
    with open(path, 'w') as conf:
        conf.write(render(sections))


def base_conf(transport_url: str, api_db: str, cell_db: str, api_port: int,
              placement_url: str, glance_url: str) -> Sections:
    """What every daemon of the stack shares."""
    return {
        'DEFAULT': {
            'transport_url': transport_url,
            'debug': True,
            # Heartbeats every 2 s, so a killed compute is seen down within 10 s.
            'report_interval': 2,
            'service_down_time': 10,
            'periodic_interval': 5,
        },
        'api': {'auth_strategy': 'noauth2', 'osapi_compute_listen': '127.0.0.1',
                'osapi_compute_listen_port': api_port},
        'api_database': {'connection': api_db},
        'database': {'connection': cell_db},
        'placement': {'auth_type': 'admin_token', 'token': 'admin',
                      'endpoint': placement_url},
        'glance': {'endpoint_override': glance_url},
        # Lost builds are buried rather than left in BUILD (options of the conductor's
        # and the compute's build watchdogs; an older tree just ignores them).
        'conductor': {'build_request_timeout': 20},
        'compute': {'build_timeout': 30},
        'scheduler': {'discover_hosts_in_cells_interval': -1},
    }


def console_conf(novnc_port: int, serial_port: int) -> Sections:
    """The console proxies' ports (novalite-novncproxy and novalite-serialproxy on
    127.0.0.1) and the URLs the computes put in console URLs, which name them."""
    return {
        'vnc': {'novncproxy_host': '127.0.0.1', 'novncproxy_port': novnc_port,
                'novncproxy_base_url': 'http://127.0.0.1:%d/vnc_lite.html' % novnc_port},
        'serial_console': {'serialproxy_host': '127.0.0.1', 'serialproxy_port': serial_port,
                           'base_url': 'ws://127.0.0.1:%d/' % serial_port},
    }


def clouds_yaml(path: str, api_url: str, glance_url: str, placement_url: str,
                network_url: str | None = None, volume_url: str | None = None) -> None:
    """A cloud named ``novalite`` reached with the noauth2 token ``admin:admin``; with
    ``network_url``, Neutron (noauth: it ignores the token) too; with ``volume_url``,
    Cinder (noauth: the token ``admin:admin`` makes the admin of project ``admin``)."""
    cloud = {
        'auth_type': 'admin_token',
        'auth': {'endpoint': api_url, 'token': 'admin:admin'},
        'compute_endpoint_override': api_url + '/v2.1',
        'image_endpoint_override': glance_url,
        'placement_endpoint_override': placement_url,
        # openstackclient reads an identity version document even with admin_token; the
        # compute root serves one.
        'identity_endpoint_override': api_url,
        'identity_api_version': '3',
        'region_name': 'RegionOne',
    }
    if network_url:
        cloud['network_endpoint_override'] = network_url
    if volume_url:
        cloud.update(allinone_cloud.volume_endpoints(volume_url))
    cloud.update(allinone_cloud.disabled_services(
        allinone_cloud.SERVED + (('network',) if network_url else ())
        + (allinone_cloud.VOLUME_SERVICES if volume_url else ()),
        runner='this novalite stack'))
    with open(path, 'w') as out:
        yaml.safe_dump({'clouds': {'novalite': cloud}}, out, default_flow_style=False)


def keystone_clouds_yaml(path: str, auth_url: str, glance_url: str, placement_url: str,
                         users: dict[str, tuple[str, str, str]] | None = None) -> None:
    """A password cloud per Keystone user: ``novalite`` (admin) and ``novalite-<user>``.

    The Compute API is found in Keystone's catalog; Glance and Placement run without
    Keystone, so they are given as overrides.
    """
    clouds = {}
    for user, (password, project, _role) in (users or USERS).items():
        clouds['novalite' if user == 'admin' else 'novalite-' + user] = {
            'auth_type': 'password',
            'auth': {'auth_url': auth_url, 'username': user, 'password': password,
                     'project_name': project, 'user_domain_name': 'Default',
                     'project_domain_name': 'Default'},
            'identity_api_version': '3',
            'image_endpoint_override': glance_url,
            'placement_endpoint_override': placement_url,
            'region_name': 'RegionOne',
        }
    with open(path, 'w') as out:
        yaml.safe_dump({'clouds': clouds}, out, default_flow_style=False)
