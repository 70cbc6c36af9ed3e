"""What a new all-in-one cloud holds: its flavors, its image, and the clouds.yaml to reach it."""
from __future__ import annotations

import os
from typing import Any

import os_service_types
import yaml

from novalite import context as nl_context
from novalite import exception, objects

CLOUD_NAME = 'novalite'
IMAGE_NAME = 'cirros-tiny'
# A tiny raw disk: enough for Glance to store and for the fake driver to "boot".
IMAGE_DATA = b'\0' * 4096
# devstack's sizes and ids: (name, flavorid, memory MiB, vCPUs, root disk GiB).
FLAVORS = (
    ('m1.nano', '42', 128, 1, 1),
    ('m1.tiny', '1', 512, 1, 1),
)


def ensure_flavors() -> list[str]:
    """Create the flavors of ``FLAVORS`` that do not exist yet; return the created names.

    A flavor the user deleted comes back on the next start; one the user replaced by
    another of the same name or id is left alone.
    """
    ctx = nl_context.get_admin_context()
    created = []
    for name, flavorid, memory_mb, vcpus, root_gb in FLAVORS:
        flavor = objects.Flavor(ctx, name=name, flavorid=flavorid, memory_mb=memory_mb,
                                vcpus=vcpus, root_gb=root_gb, ephemeral_gb=0, swap=0,
                                is_public=True)
        try:
            flavor.create()
        except (exception.FlavorExists, exception.FlavorIdExists):
            continue
        created.append(name)
    return created


# The services a cloud of novalite answers for (the network when Neutron runs, the
# volumes when Cinder does).
SERVED = ('compute', 'image', 'placement', 'identity')
VOLUME_SERVICES = ('block-storage',)


def disabled_services(served: tuple[str, ...], runner: str = 'novalite-all'
                      ) -> dict[str, Any]:
    """clouds.yaml keys that turn off every official service type not in ``served``.

    The admin_token plugin answers one endpoint for any service: without these, a
    client looking for, say, Cinder would call the compute API and read its 404. This
    way openstacksdk and openstackclient say the service is not there, and why.
    """
    keys: dict[str, Any] = {}
    for service in os_service_types.ServiceTypes().services:
        service_type = service['service_type']
        if service_type in served:
            continue
        key = service_type.replace('-', '_')
        keys['has_' + key] = False
        keys[key + '_disabled_reason'] = '%s runs no %s service (%s)' % (
            runner, service_type, service.get('project', 'none'))
    return keys


def volume_endpoints(volume_url: str) -> dict[str, Any]:
    """clouds.yaml keys that send volume calls to the Cinder at ``volume_url`` (its
    root), which runs with noauth: no project id in its URLs, and the admin token
    ``admin:admin`` makes the caller the admin of project ``admin``.

    The root, not ``/v3``: keystoneauth reads the version document there without a
    token, which Cinder's root serves (its ``/v3`` answers a tokenless request with an
    empty 204), and takes the v3 URL from it.
    """
    return {'block_storage_endpoint_override': volume_url + '/',
            'block_storage_api_version': '3', 'volume_api_version': '3'}


def clouds_config(compute_url: str, image_url: str, placement_url: str,
                  network_url: str | None = None,
                  volume_url: str | None = None) -> dict[str, Any]:
    """The ``clouds.yaml`` content: cloud ``novalite``, admin token, endpoint overrides;
    with ``network_url``, Neutron's too (it runs with noauth and ignores the token);
    with ``volume_url``, Cinder's (``volume_endpoints``); every other service type
    turned off.

    openstackclient insists on an identity endpoint even with ``admin_token``; any URL
    that serves a version document will do, and the compute endpoint does.
    """
    cloud = {
        'auth_type': 'admin_token',
        'auth': {'endpoint': compute_url, 'token': 'admin:admin'},
        'compute_endpoint_override': compute_url,
        'image_endpoint_override': image_url,
        'placement_endpoint_override': placement_url,
        'identity_endpoint_override': compute_url,
        'identity_api_version': '3',
    }
    if network_url:
        cloud['network_endpoint_override'] = network_url
    if volume_url:
        cloud.update(volume_endpoints(volume_url))
    cloud.update(disabled_services(SERVED + (('network',) if network_url else ())
                                   + (VOLUME_SERVICES if volume_url else ())))
    return {'clouds': {CLOUD_NAME: cloud}}


def write_clouds_yaml(path: str, config: dict[str, Any]) -> None:
    """Write ``config`` to ``path`` at once (a client never reads half a file)."""
    tmp = path + '.tmp'
    with open(tmp, 'w') as out:
        out.write('# Written by novalite-all at each start (ports may change).\n')
        yaml.safe_dump(config, out, default_flow_style=False, sort_keys=False)
    os.replace(tmp, path)
