"""A small Glance v2 client: look up image metadata (download comes with libvirt).

Built from the ``[glance]`` keystoneauth options. For a keystone-less Glance, set
``[glance] endpoint_override`` and leave ``auth_type`` unset: requests then carry the
caller's project and roles as the ``X-Project-Id``/``X-Roles`` headers that Glance's
unauthenticated ``context`` middleware reads.
"""
from __future__ import annotations

import threading
from typing import Any

from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading as ks_loading
from oslo_log import log as logging

from novalite import exception
from novalite.conf import CONF

LOG = logging.getLogger(__name__)

_ADAPTER = None
_LOCK = threading.Lock()


def _adapter():
    global _ADAPTER
    if _ADAPTER is None:
        with _LOCK:
            if _ADAPTER is None:
                auth = ks_loading.load_auth_from_conf_options(CONF, 'glance') \
                    if CONF.glance.auth_type else None
                session = ks_loading.load_session_from_conf_options(CONF, 'glance', auth=auth)
                _ADAPTER = ks_loading.load_adapter_from_conf_options(
                    CONF, 'glance', session=session, auth=auth,
                    min_version='2.0', max_version='2.latest')
    return _ADAPTER


def reset() -> None:
    """Forget the cached adapter (after the options changed, in tests)."""
    global _ADAPTER
    _ADAPTER = None


class API:
    """The image operations compute needs."""

    def _headers(self, context: Any) -> dict[str, str]:
        headers = {'Accept': 'application/json'}
        if CONF.glance.auth_type:
            return headers
        if getattr(context, 'auth_token', None):
            headers['X-Auth-Token'] = context.auth_token
        headers['X-Identity-Status'] = 'Confirmed'
        if context.project_id:
            headers['X-Project-Id'] = context.project_id
        if context.user_id:
            headers['X-User-Id'] = context.user_id
        headers['X-Roles'] = ','.join(context.roles or [])
        return headers

    def get(self, context: Any, image_id: str) -> dict[str, Any]:
        """The image's metadata as Glance v2 returns it.

        :raises ImageNotFound: no such image, or not visible to the caller.
        :raises GlanceConnectionFailed: Glance could not be reached.
        """
        attempts = CONF.glance.num_retries + 1
        for attempt in range(attempts):
            try:
                resp = _adapter().get('/v2/images/%s' % image_id,
                                      headers=self._headers(context), raise_exc=False)
            except (ks_exc.ConnectFailure, ks_exc.ConnectTimeout, ks_exc.DiscoveryFailure,
                    ks_exc.EndpointNotFound) as exc:
                if attempt + 1 < attempts:
                    continue
                raise exception.GlanceConnectionFailed(
                    server=CONF.glance.endpoint_override or 'image service',
                    reason=str(exc)) from exc
            if resp.status_code == 200:
                return resp.json()
            if resp.status_code in (403, 404):
                raise exception.ImageNotFound(image_id=image_id)
            if resp.status_code >= 500 and attempt + 1 < attempts:
                continue
            raise exception.ImageServiceError(
                reason='GET /v2/images/%s answered %s' % (image_id, resp.status_code))
        raise AssertionError('unreachable')
