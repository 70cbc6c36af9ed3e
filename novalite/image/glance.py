"""A small Glance v2 client: image metadata, and image data streamed to a file.

Built from the ``[glance]`` keystoneauth options. Glance decides what the caller may see,
so a call on behalf of a user carries the user's own token (the context's: keystone-
middleware's plugin in the API, rebuilt from the token and catalog after RPC), as Nova's
does; the service user of ``[glance] auth_type`` calls only for an administrator's
context that has no token (periodic and start-up work), and a user's context without a
token goes with no credentials at all rather than the service user's, which would show
it every project's images.

For a keystone-less Glance, set ``[glance] endpoint_override`` and leave ``auth_type``
unset: requests then also carry the caller's project and roles as the
``X-Identity-Status``/``X-Project-Id``/``X-Roles`` headers that Glance's ``context``
middleware reads (the all-in-one's Glance reads the noauth2 token instead, when there
is one: ``novalite.allinone.glance_noauth``).

Reads are tried again ``[glance] num_retries`` times when Glance cannot be reached and
again as many when it answers 5xx, by keystoneauth (``connect_retries``,
``status_code_retries``); a download whose data broke off half-way starts again as many
times (``novalite.transient``). Writes are never tried again: they are not idempotent.
"""
from __future__ import annotations

import functools
import hashlib
import os
import re
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Callable
from typing import IO, Any, Protocol

import requests
from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading as ks_loading
from keystoneauth1 import plugin as ks_plugin
from keystoneauth1 import session as ks_session
from oslo_log import log as logging

from novalite import exception, metrics, transient
from novalite.conf import CONF
from novalite.context import RequestContext

LOG = logging.getLogger(__name__)

_SESSION: ks_session.Session | None = None
_SERVICE_AUTH: ks_plugin.BaseAuthPlugin | None = None
_LOCK = threading.Lock()
_CONNECT_ERRORS = (ks_exc.ConnectFailure, ks_exc.ConnectTimeout, ks_exc.DiscoveryFailure,
                   ks_exc.EndpointNotFound)
# A download whose data stopped coming: the connection broke in the middle of it.
_BROKEN_OFF = (requests.ConnectionError, requests.exceptions.ChunkedEncodingError)
# Seconds between two tries of a read, unless [glance] connect_retry_delay or
# status_code_retry_delay say otherwise.
RETRY_DELAY = 0.2
_SERVER_ERRORS = list(range(500, 600))
# A catalog's Glance URL may name the API version; the paths here start with it.
_VERSION_SUFFIX = re.compile(r'/v\d+(\.\d+)?/?$')


def _session() -> ks_session.Session:
    """The session of the ``[glance]`` options (TLS, timeouts), without credentials:
    each request brings its own."""
    global _SESSION, _SERVICE_AUTH
    if _SESSION is None:
        with _LOCK:
            if _SESSION is None:
                _SERVICE_AUTH = ks_loading.load_auth_from_conf_options(CONF, 'glance') \
                    if CONF.glance.auth_type else None
                _SESSION = ks_loading.load_session_from_conf_options(CONF, 'glance')
    return _SESSION


def _service_auth() -> ks_plugin.BaseAuthPlugin | None:
    """The service user of ``[glance] auth_type`` (None without one)."""
    _session()
    return _SERVICE_AUTH


def _auth(context: RequestContext | None) -> ks_plugin.BaseAuthPlugin | None:
    """Whose credentials a call on behalf of ``context`` carries (see the module
    docstring); None: none."""
    if context is not None and getattr(context, 'auth_token', None):
        return context.get_auth_plugin()
    if context is None or context.is_admin:
        return _service_auth()
    return None


def _endpoint(auth: ks_plugin.BaseAuthPlugin | None) -> str:
    """Glance's root URL: ``[glance] endpoint_override``, else the ``image`` entry of
    the catalog of ``auth`` (the caller's, or the service user's).

    :raises EndpointNotFound:
    """
    if CONF.glance.endpoint_override:
        return CONF.glance.endpoint_override.rstrip('/')
    if auth is None:
        raise ks_exc.EndpointNotFound('[glance] endpoint_override is not set and there '
                                      'is no catalog to find the image service in')
    url = _session().get_endpoint(auth, service_type=CONF.glance.service_type,
                                  interface=CONF.glance.valid_interfaces,
                                  region_name=CONF.glance.region_name)
    if not url:
        raise ks_exc.EndpointNotFound('no image service in the catalog')
    return _VERSION_SUFFIX.sub('', url.rstrip('/'))


def reset() -> None:
    """Forget the cached session and service user (after the options changed, in tests)."""
    global _SESSION, _SERVICE_AUTH
    _SESSION = _SERVICE_AUTH = None


def _send(context: RequestContext, method: str, path: str, headers: dict[str, str],
          retries: int = 0, **kwargs: Any) -> requests.Response:
    """One request to Glance on behalf of ``context``; any status is returned.

    :param retries: how many times keystoneauth tries again a request that could not
        connect, and (separately) one answered 5xx; the last answer is returned.
    :raises: keystoneauth's connection and endpoint errors
    """
    auth = _auth(context)
    url = _endpoint(auth) + path
    started = time.monotonic()
    try:
        resp = _session().request(
            url, method, auth=auth, authenticated=auth is not None,
            raise_exc=False, headers=headers,
            connect_retries=retries, status_code_retries=retries,
            retriable_status_codes=_SERVER_ERRORS,
            connect_retry_delay=CONF.glance.connect_retry_delay or RETRY_DELAY,
            status_code_retry_delay=CONF.glance.status_code_retry_delay or RETRY_DELAY,
            **kwargs)
    except Exception:
        metrics.observe_http('glance', method, None, time.monotonic() - started)
        raise
    # A streamed download's time is its answer's headers', not its data's.
    metrics.observe_http('glance', method, resp.status_code, time.monotonic() - started)
    return resp


def _unreachable(exc: Exception) -> exception.GlanceConnectionFailed:
    return exception.GlanceConnectionFailed(
        server=CONF.glance.endpoint_override or 'image service', reason=str(exc))


class _Digest(Protocol):
    """What hashlib's hash objects offer that a download uses."""

    def update(self, data: bytes, /) -> None: ...

    def hexdigest(self) -> str: ...


class API:
    """The image operations compute needs."""

    def _headers(self, context: RequestContext) -> dict[str, str]:
        """Accept, and keystone-less the caller's identity (the token, if any, comes
        from the auth plugin of :func:`_auth`)."""
        headers = {'Accept': 'application/json'}
        if CONF.glance.auth_type:
            return headers
        headers['X-Identity-Status'] = 'Confirmed'
        if context.project_id:
            headers['X-Project-Id'] = context.project_id
        if context.user_id:
            headers['X-User-Id'] = context.user_id
        headers['X-Roles'] = ','.join(context.roles or [])
        return headers

    def get(self, context: RequestContext, image_id: str) -> dict[str, Any]:
        """The image's metadata as Glance v2 returns it.

        :raises ImageNotFound: no such image, or not visible to the caller.
        :raises GlanceConnectionFailed: Glance could not be reached.
        """
        resp = self._request(context, image_id, '/v2/images/%s' % image_id)
        return resp.json()

    def download(self, context: RequestContext, image_id: str, dst_path: str,
                 image: dict[str, Any] | None = None) -> None:
        """Stream the image's data into ``dst_path``, which appears only once complete
        and verified (written to a temporary file beside it, then renamed).

        :param image: the image's metadata if the caller has it already; its ``size``
            and hash (``os_hash_algo``/``os_hash_value``, else the MD5 ``checksum``)
            are checked against the data.
        :raises ImageNotFound: no such image, or not visible to the caller.
        :raises ImageServiceError: no data, or data that does not match the metadata.
        :raises GlanceConnectionFailed: Glance could not be reached.
        """
        image = image if image is not None else self.get(context, image_id)
        try:
            transient.call('Download of image %s' % image_id,
                           functools.partial(self._download_once, context, image_id,
                                             image, dst_path),
                           max_retries=CONF.glance.num_retries,
                           retryable=lambda exc: isinstance(exc, _BROKEN_OFF))
        except _BROKEN_OFF as exc:
            raise _unreachable(exc) from exc

    def _download_once(self, context: RequestContext, image_id: str, image: dict[str, Any],
                       dst_path: str) -> None:
        directory = os.path.dirname(os.path.abspath(dst_path))
        fd, tmp_path = tempfile.mkstemp(prefix='.%s.' % os.path.basename(dst_path),
                                        suffix='.part', dir=directory)
        try:
            with os.fdopen(fd, 'wb') as dst:
                size, digests = self._stream(context, image_id, image, dst.write)
                dst.flush()
                os.fsync(dst.fileno())
            _verify(image_id, image, size, digests)
            os.replace(tmp_path, dst_path)
        finally:
            if os.path.exists(tmp_path):
                os.unlink(tmp_path)

    def _stream(self, context: RequestContext, image_id: str, image: dict[str, Any],
                write: Callable[[bytes], object]) -> tuple[int, dict[str, _Digest]]:
        digests: dict[str, _Digest] = {'md5': hashlib.md5(usedforsecurity=False)}
        if image.get('os_hash_algo') and image.get('os_hash_value'):
            digests[image['os_hash_algo']] = hashlib.new(image['os_hash_algo'])
        resp = self._request(context, image_id, '/v2/images/%s/file' % image_id, stream=True)
        try:
            if resp.status_code == 204:
                raise exception.ImageServiceError(
                    reason='image %s has no data' % image_id)
            size = 0
            for chunk in resp.iter_content(chunk_size=256 * 1024):
                write(chunk)
                size += len(chunk)
                for digest in digests.values():
                    digest.update(chunk)
        finally:
            resp.close()
        return size, digests

    def _request(self, context: RequestContext, image_id: str, path: str,
                 stream: bool = False, bad_request_ok: bool = False) -> requests.Response:
        """GET ``path`` (see the module docstring for its retries); returns the 200/204
        response.

        :param bad_request_ok: a 400 raises ``_BadRequest`` with Glance's message.
        """
        headers = self._headers(context)
        if stream:
            headers['Accept'] = 'application/octet-stream'
        try:
            resp = _send(context, 'GET', path, headers, retries=CONF.glance.num_retries,
                         stream=stream)
        except _CONNECT_ERRORS as exc:
            raise _unreachable(exc) from exc
        if resp.status_code in (200, 204):
            return resp
        resp.close()
        if resp.status_code == 400 and bad_request_ok:
            raise _BadRequest(_glance_message(resp))
        if resp.status_code in (403, 404):
            raise exception.ImageNotFound(image_id=image_id)
        raise exception.ImageServiceError(
            reason='GET %s answered %s' % (path, resp.status_code))

    # -- writing (snapshots, shelve, backups) ------------------------------------------

    def create(self, context: RequestContext, image_meta: dict[str, Any]) -> dict[str, Any]:
        """Create an image record (status ``queued``, no data yet).

        :param image_meta: Glance v2 fields (name, disk_format, container_format,
            visibility, min_ram, min_disk...) and string properties, all top-level.
        :returns: the image as Glance answers it.
        """
        resp = self._write(context, 'post', '/v2/images', json=image_meta,
                           expected=(201,))
        return resp.json()

    def upload(self, context: RequestContext, image_id: str, path: str) -> None:
        """Upload the file at ``path`` as the image's data; Glance makes it active."""
        with open(path, 'rb') as data:
            self._write(context, 'put', '/v2/images/%s/file' % image_id, data=data,
                        content_type='application/octet-stream', expected=(204,),
                        image_id=image_id)

    def update(self, context: RequestContext, image_id: str, changes: dict[str, Any]
               ) -> dict[str, Any]:
        """Set (or, for a None value, remove) top-level fields and properties."""
        image = self.get(context, image_id)
        ops = []
        for key, value in changes.items():
            if value is None:
                if key in image:
                    ops.append({'op': 'remove', 'path': '/%s' % key})
            else:
                ops.append({'op': 'replace' if key in image else 'add',
                            'path': '/%s' % key, 'value': value})
        resp = self._write(context, 'patch', '/v2/images/%s' % image_id, json=ops,
                           content_type='application/openstack-images-v2.1-json-patch',
                           expected=(200,), image_id=image_id)
        return resp.json()

    def replace_properties(self, context: RequestContext, image: dict[str, Any],
                           properties: dict[str, str], current: dict[str, Any]
                           ) -> dict[str, Any]:
        """Make ``properties`` the custom properties of ``image`` (as Glance showed
        it; ``current`` its custom properties): the others are removed.

        :returns: the image as Glance answers.
        :raises ImageNotAuthorized, ImageNotFound, ImageBadRequest:
        """
        ops: list[dict[str, Any]] = [
            {'op': 'remove', 'path': '/' + _pointer(key)}
            for key in current if key not in properties]
        ops += [{'op': 'replace' if key in image else 'add', 'path': '/' + _pointer(key),
                 'value': value} for key, value in properties.items()
                if image.get(key) != value]
        if not ops:
            return image
        resp = self._write(context, 'patch', '/v2/images/%s' % image['id'], json=ops,
                           content_type='application/openstack-images-v2.1-json-patch',
                           expected=(200,), image_id=image['id'])
        return resp.json()

    def delete(self, context: RequestContext, image_id: str) -> None:
        """:raises ImageNotFound: it is gone already (or not the caller's)."""
        self._write(context, 'delete', '/v2/images/%s' % image_id, expected=(204,),
                    image_id=image_id)

    def get_all(self, context: RequestContext, filters: dict[str, str] | None = None,
                sort: str | None = None) -> list[dict[str, Any]]:
        """Images matching ``filters`` (Glance query parameters), all pages."""
        query = dict(filters or {})
        if sort:
            query['sort'] = sort
        path = '/v2/images?' + urllib.parse.urlencode(query)
        images: list[dict[str, Any]] = []
        while path:
            body = self._request(context, '', path).json()
            images.extend(body.get('images', []))
            path = body.get('next')
        return images

    def list_images(self, context: RequestContext, filters: dict[str, str],
                    limit: int | None = None, marker: str | None = None,
                    page_size: int | None = None) -> list[dict[str, Any]]:
        """The images the caller sees that match ``filters`` (Glance v2 query
        parameters), after ``marker``: at most ``limit`` of them, all without one,
        read in pages of ``page_size`` (Glance caps a page at its ``api_limit_max``).

        :raises Invalid: Glance refused the query (a malformed filter, an unknown
            marker).
        """
        query = dict(filters)
        if marker:
            query['marker'] = marker
        if page_size or limit:
            query['limit'] = str(page_size or limit)
        images: list[dict[str, Any]] = []
        path: str | None = '/v2/images?' + urllib.parse.urlencode(query)
        while path and (limit is None or len(images) < limit):
            resp = self._get_listing(context, path)
            body = resp.json()
            images.extend(body.get('images', []))
            path = body.get('next')
        return images if limit is None else images[:limit]

    def _get_listing(self, context: RequestContext, path: str) -> requests.Response:
        try:
            return self._request(context, '', path, bad_request_ok=True)
        except _BadRequest as exc:
            raise exception.Invalid(reason=exc.message) from None

    def image_url(self, image_id: str) -> str:
        """The image's URL in Glance (the ``Location`` of createImage before 2.45)."""
        try:
            endpoint = _endpoint(_service_auth())
        except _CONNECT_ERRORS:
            endpoint = ''
        return '%s/images/%s' % (endpoint, image_id)

    def _write(self, context: RequestContext, method: str, path: str,
               expected: tuple[int, ...], json: Any = None, data: IO[bytes] | None = None,
               content_type: str | None = None, image_id: str | None = None
               ) -> requests.Response:
        """One write to Glance (never retried: it is not idempotent)."""
        headers = self._headers(context)
        if content_type:
            headers['Content-Type'] = content_type
        try:
            resp = _send(context, method.upper(), path, headers, json=json, data=data)
        except _CONNECT_ERRORS as exc:
            raise _unreachable(exc) from exc
        if resp.status_code in expected:
            return resp
        if image_id:
            _raise_for_image(resp, image_id, method)
        raise exception.ImageServiceError(
            reason='%s %s answered %s: %s' % (method.upper(), path.split('?')[0],
                                             resp.status_code, resp.text[:200]))


def _pointer(key: str) -> str:
    """``key`` as one step of a JSON pointer (RFC 6901)."""
    return key.replace('~', '~0').replace('/', '~1')


class _BadRequest(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _glance_message(resp: requests.Response) -> str:
    """The explanation of a Glance error response (a JSON fault, else its text)."""
    try:
        body = resp.json()
    except ValueError:
        return resp.text.strip()[:500]
    if isinstance(body, dict):
        message = body.get('message') or (body.get('error') or {}).get('message')
        if message:
            return str(message).strip()[:500]
    return resp.text.strip()[:500]


def _raise_for_image(resp: requests.Response, image_id: str, method: str) -> None:
    """The exception of a refused write to one image, as Nova translates Glance's."""
    if resp.status_code == 404:
        raise exception.ImageNotFound(image_id=image_id)
    if resp.status_code in (401, 403):
        raise exception.ImageNotAuthorized(image_id=image_id)
    if resp.status_code == 400:
        raise exception.ImageBadRequest(image_id=image_id, response=_glance_message(resp))
    if resp.status_code == 409 and method == 'delete':
        raise exception.ImageDeleteConflict(reason=_glance_message(resp))
    if resp.status_code == 413:
        raise exception.ImageQuotaExceeded(image_id=image_id)


def _verify(image_id: str, image: dict[str, Any], size: int,
            digests: dict[str, _Digest]) -> None:
    """Refuse data whose size or hash differs from what Glance recorded."""
    expected_size = image.get('size')
    if expected_size is not None and int(expected_size) != size:
        raise exception.ImageServiceError(
            reason='image %s: got %d bytes, Glance says %s' % (image_id, size, expected_size))
    algo = image.get('os_hash_algo')
    if algo and image.get('os_hash_value'):
        expected, actual = image['os_hash_value'], digests[algo].hexdigest()
    elif image.get('checksum'):
        algo, expected, actual = 'md5', image['checksum'], digests['md5'].hexdigest()
    else:
        return
    if expected != actual:
        raise exception.ImageServiceError(
            reason='image %s: %s of the data is %s, Glance says %s'
            % (image_id, algo, actual, expected))
