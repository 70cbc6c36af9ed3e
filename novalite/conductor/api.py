"""What other services call on the conductor (thin wrappers over the RPC clients)."""
from __future__ import annotations

import time
from typing import Any

import oslo_messaging as messaging
from oslo_log import log as logging

from novalite.conductor import rpcapi
from novalite.context import RequestContext
from novalite.image import glance

LOG = logging.getLogger(__name__)

# A ping to a conductor that is not up yet is dropped by the broker (its queue does not
# exist), so the wait for its answer is all lost time: short pings while the services
# start together, then the configured RPC timeout.
EARLY_PING_TIMEOUT = 0.5
EARLY_PING_PERIOD = 30.0


class ComputeTaskAPI(rpcapi.ComputeTaskAPI):
    """Build and move tasks, as the compute API and compute hosts use them."""

    def cache_images(self, context: RequestContext, aggregate: Any, image_ids: list[str],
                     image_api: Any = None) -> None:
        """Check that the caller sees every image before asking the conductor to
        have them pre-cached on the aggregate's hosts.

        :raises ImageNotFound: an image is unknown to Glance (or hidden from the
            caller); nothing is asked of any host
        """
        image_api = image_api or glance.API()
        for image_id in image_ids:
            image_api.get(context, image_id)
        super().cache_images(context, aggregate, image_ids)


class API(rpcapi.ConductorAPI):
    """Object indirection, as compute hosts use it."""

    def wait_until_ready(self, context: Any, early_timeout: float = EARLY_PING_TIMEOUT,
                         early_period: float = EARLY_PING_PERIOD) -> None:
        """Block until a conductor answers a ping, as Nova's compute does at start-up.

        A compute started together with its conductor (systemd starts every unit at
        once) would otherwise send its first object call before the conductor's queue
        exists; the broker drops it and the call waits the whole ``rpc_response_timeout``.

        :param early_timeout: seconds each ping waits during the first ``early_period``
            seconds; after that each waits ``[DEFAULT] rpc_response_timeout``
        """
        started = time.monotonic()
        attempt = 0
        while True:
            attempt += 1
            early = time.monotonic() - started < early_period
            # None: the client's own timeout, [DEFAULT] rpc_response_timeout.
            timeout = early_timeout if early else None
            try:
                self.client.prepare(timeout=timeout).call(context, 'ping', arg='ready')
            except messaging.MessagingTimeout:
                # Quiet while services are starting together; a conductor still
                # missing after that is worth a warning per attempt.
                log = LOG.debug if early else LOG.warning
                log('No conductor answered (attempt %d); is novalite-conductor running?',
                    attempt)
                continue
            if attempt > 1:
                LOG.info('A conductor answered after %d attempts (%.1f s)', attempt,
                         time.monotonic() - started)
            return
