"""Middleware that names each API request (request id) and logs how it went."""
from __future__ import annotations

import time
from typing import Any

import webob.dec
from oslo_log import log as logging
from oslo_middleware import request_id

from novalite.api.openstack import Middleware

LOG = logging.getLogger(__name__)


class ComputeRequestId(request_id.RequestId):
    """oslo.middleware's request id, also returned as ``X-Compute-Request-Id`` as in Nova."""

    compat_headers = ['x-compute-request-id']


class RequestLog(Middleware):
    """One INFO line per request: who, what, status, size, microversion and time."""

    @webob.dec.wsgify
    def __call__(self, req: webob.Request) -> Any:
        start = time.monotonic()
        resp = req.get_response(self.application)
        LOG.info('%(remote)s "%(method)s %(uri)s" status: %(status)s len: %(len)s '
                 'microversion: %(microversion)s time: %(time).7f',
                 {'remote': req.remote_addr or '-', 'method': req.method,
                  'uri': req.path_qs, 'status': resp.status_int,
                  'len': resp.content_length or 0,
                  'microversion': resp.headers.get('X-OpenStack-Nova-API-Version', '-'),
                  'time': time.monotonic() - start})
        return resp
