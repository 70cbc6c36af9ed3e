"""Console tokens as the proxies use them: a token redeemed once, from any cell.

The tokens themselves are ``objects.ConsoleAuthToken`` rows in the cell database of their
server (authorized by the server's compute host); a proxy serves every cell, so it looks
for a token in each.
"""
from __future__ import annotations

import dataclasses
import datetime

from novalite.context import RequestContext


@dataclasses.dataclass(frozen=True)
class ConnectInfo:
    """What a redeemed token lets a proxy connect to."""
    instance_uuid: str
    console_type: str  # 'novnc', 'serial'...
    host: str          # the compute host's address for the proxy
    port: int
    internal_access_path: str | None
    expires: datetime.datetime
    context: RequestContext  # an admin context targeted at the server's cell


def redeem(context: RequestContext, token: str) -> ConnectInfo:
    """The connection info of ``token``, which can then not be used again.

    :raises InvalidToken: unknown, expired or already used
    """
    raise NotImplementedError('console tokens')
