"""Console tokens as the proxies use them: a token redeemed once, from any cell.

The tokens themselves are ``objects.ConsoleAuthToken`` rows in the cell database of their
server (authorized by the server's compute host); a proxy serves every cell, so it looks
for a token in each.
"""
from __future__ import annotations

import copy
import dataclasses
import datetime

from oslo_log import log as logging

from novalite import context as nl_context
from novalite import exception, objects
from novalite.context import RequestContext

LOG = logging.getLogger(__name__)

# Seconds a proxy waits for the cells' answers before it refuses a token.
CELL_TIMEOUT = 30


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

    The token is looked for in every cell but cell0 (which has no hosts) at once; the
    cell that holds it deletes it as it reads it. A token whose server is gone (a
    delete that could not clean its tokens yet) is refused too.

    :raises InvalidToken: unknown, expired or already used
    """
    admin = context.elevated()
    cells = {cell.uuid: cell for cell in objects.CellMappingList.get_all(admin)
             if not cell.is_cell0}
    results = nl_context.scatter_gather_cells(
        admin, list(cells.values()), CELL_TIMEOUT, objects.ConsoleAuthToken.redeem, token)
    for cell_uuid, result in results.items():
        if not isinstance(result, objects.ConsoleAuthToken):
            if not isinstance(result, exception.InvalidToken):
                LOG.warning('Cell %s could not look for a console token: %s', cell_uuid,
                            result)
            continue
        cctxt = copy.copy(admin)
        nl_context.set_target_cell(cctxt, cells[cell_uuid])
        if not _server_exists(cctxt, result.instance_uuid):
            break
        return ConnectInfo(instance_uuid=result.instance_uuid,
                           console_type=result.console_type, host=result.host,
                           port=result.port,
                           internal_access_path=result.internal_access_path,
                           expires=datetime.datetime.fromtimestamp(result.expires,
                                                                   datetime.UTC),
                           context=cctxt)
    raise exception.InvalidToken(token='***')


def _server_exists(cctxt: RequestContext, instance_uuid: str) -> bool:
    try:
        objects.Instance.get_by_uuid(cctxt, instance_uuid)
    except exception.InstanceNotFound:
        return False
    return True
