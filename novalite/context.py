"""The request context, and how a context is aimed at one cell's database and bus."""
from __future__ import annotations

import contextlib
import copy
import datetime
from collections.abc import Callable, Iterator
from concurrent import futures
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from keystoneauth1 import plugin as ks_plugin
from keystoneauth1 import session as ks_session
from keystoneauth1.access import service_catalog as ks_service_catalog
from oslo_context import context as oslo_context
from oslo_log import log as logging

if TYPE_CHECKING:
    from novalite.objects.cell_mapping import CellMapping

LOG = logging.getLogger(__name__)

P = ParamSpec('P')
R = TypeVar('R')

CELL0_UUID = '00000000-0000-0000-0000-000000000000'

# Marks a cell that raised or timed out in scatter_gather_cells.
did_not_respond_sentinel = object()
raised_exception_sentinel = object()
# The services a daemon calls on the caller's behalf: the part of the caller's catalog a
# context keeps (and carries over RPC), as Nova keeps only what it uses.
CATALOG_SERVICE_TYPES = ('image', 'network', 'placement', 'volumev3', 'block-storage')


class _ContextAuthPlugin(ks_plugin.BaseAuthPlugin):
    """The caller's token and catalog as a keystoneauth plugin: how a daemon that got the
    context over RPC calls another service as the caller (the API has the plugin of
    auth_token middleware itself, which does not cross RPC)."""

    def __init__(self, auth_token: str | None, catalog: list[dict[str, Any]]) -> None:
        super().__init__()
        self.auth_token = auth_token
        self.service_catalog = ks_service_catalog.ServiceCatalogV2(catalog)

    def get_token(self, session: ks_session.Session, **kwargs: Any) -> str | None:
        return self.auth_token

    def get_endpoint(self, session: ks_session.Session, service_type: str | None = None,
                     interface: str | list[str] | None = None, region_name: str | None = None,
                     service_name: str | None = None, **kwargs: Any) -> str | None:
        return self.service_catalog.url_for(service_type=service_type,
                                            service_name=service_name,
                                            interface=interface, region_name=region_name)


class RequestContext(oslo_context.RequestContext):
    """Who is asking, for which project, and (once targeted) in which cell.

    ``db_connection`` and ``mq_connection`` are set by :func:`target_cell` only; they
    never cross RPC, because the receiving service knows its own cell.
    """

    def __init__(self, user_id: str | None = None, project_id: str | None = None,
                 is_admin: bool | None = None, read_deleted: str = 'no',
                 remote_address: str | None = None, timestamp: datetime.datetime | None = None,
                 quota_class: str | None = None,
                 service_catalog: list[dict[str, Any]] | None = None,
                 user_auth_plugin: ks_plugin.BaseAuthPlugin | None = None,
                 **kwargs: Any) -> None:
        kwargs.setdefault('user_id', user_id)
        kwargs.setdefault('project_id', project_id)
        super().__init__(is_admin=bool(is_admin), **kwargs)
        if is_admin is None:
            self.is_admin = 'admin' in [r.lower() for r in self.roles]
        self.read_deleted = read_deleted
        self.remote_address = remote_address
        self.timestamp = timestamp
        self.quota_class = quota_class
        self.service_catalog = [s for s in service_catalog or []
                                if s.get('type') in CATALOG_SERVICE_TYPES]
        # auth_token middleware's plugin of the caller's token, in the API only.
        self.user_auth_plugin = user_auth_plugin
        self.db_connection: str | None = None
        self.mq_connection: Any = None
        self.cell_uuid: str | None = None

    def to_dict(self) -> dict:
        values = super().to_dict()
        values.update(user_id=self.user_id, project_id=self.project_id,
                      read_deleted=self.read_deleted, remote_address=self.remote_address,
                      quota_class=self.quota_class, service_catalog=self.service_catalog)
        return values

    @classmethod
    def from_dict(cls, values: dict[str, Any], **kwargs: Any) -> RequestContext:
        kwargs.update(
            user_id=values.get('user_id'), project_id=values.get('project_id'),
            read_deleted=values.get('read_deleted', 'no'),
            remote_address=values.get('remote_address'),
            quota_class=values.get('quota_class'),
            service_catalog=values.get('service_catalog'))
        return super().from_dict(values, **kwargs)

    def get_auth_plugin(self) -> ks_plugin.BaseAuthPlugin:
        """The caller's credentials for calls to other services on its behalf."""
        if self.user_auth_plugin is not None:
            return self.user_auth_plugin
        return _ContextAuthPlugin(self.auth_token, self.service_catalog)

    def elevated(self, read_deleted: str | None = None) -> RequestContext:
        """A copy with admin rights, for internal work done on the caller's behalf."""
        ctx = copy.copy(self)
        ctx.roles = list(self.roles)
        ctx.is_admin = True
        if 'admin' not in ctx.roles:
            ctx.roles.append('admin')
        if read_deleted is not None:
            ctx.read_deleted = read_deleted
        return ctx

    def can(self, action: str, target: dict | None = None, fatal: bool = True) -> bool:
        """Check the policy rule ``action`` for this context."""
        from novalite import policy
        if target is None:
            target = {'project_id': self.project_id, 'user_id': self.user_id}
        return policy.authorize(self, action, target, fatal=fatal)


def get_admin_context(read_deleted: str = 'no') -> RequestContext:
    return RequestContext(user_id=None, project_id=None, is_admin=True, roles=['admin'],
                          read_deleted=read_deleted, overwrite=False)


def get_context() -> RequestContext:
    """A context with no user, for service start-up work."""
    return RequestContext(user_id=None, project_id=None, is_admin=False, overwrite=False)


def set_target_cell(context: RequestContext, cell_mapping: CellMapping) -> None:
    """Aim ``context`` at the database and message bus of ``cell_mapping``."""
    from novalite import rpc
    context.db_connection = cell_mapping.database_connection
    context.mq_connection = rpc.get_cell_transport(cell_mapping.transport_url)
    context.cell_uuid = cell_mapping.uuid


@contextlib.contextmanager
def target_cell(context: RequestContext, cell_mapping: CellMapping) -> Iterator[RequestContext]:
    """Yield a copy of ``context`` aimed at one cell; the original is left untouched."""
    cctxt = copy.copy(context)
    set_target_cell(cctxt, cell_mapping)
    yield cctxt


def scatter_gather_cells(context: RequestContext, cell_mappings: list[CellMapping],
                         timeout: float | None, fn: Callable[Concatenate[RequestContext, P], R],
                         *args: P.args, **kwargs: P.kwargs) -> dict[str, Any]:
    """Run ``fn(cell_context, ...)`` in every cell at once; return {cell_uuid: result}.

    A cell that raised maps to its exception; one that did not answer in ``timeout``
    seconds maps to ``did_not_respond_sentinel``, and the answer comes then, with what
    the other cells answered: a hung cell database holds up neither server lists nor
    scheduling. Its call goes on in the background (a thread cannot be stopped); a call
    still queued for a thread of the cells pool is cancelled.

    One cell and no ``timeout``: the call runs on this thread.
    """
    if len(cell_mappings) == 1 and timeout is None:
        cell = cell_mappings[0]
        with target_cell(context, cell) as cctxt:
            try:
                return {cell.uuid: fn(cctxt, *args, **kwargs)}
            except Exception as exc:
                LOG.exception('Error gathering result from cell %s', cell.uuid)
                return {cell.uuid: exc}
    from novalite import executor
    pending: dict[futures.Future[R], str] = {}
    for cell in cell_mappings:
        cctxt = copy.copy(context)
        set_target_cell(cctxt, cell)
        pending[executor.submit_to_cell(fn, cctxt, *args, **kwargs)] = cell.uuid
    done, not_done = futures.wait(pending, timeout=timeout)
    results: dict[str, Any] = {}
    for fut in done:
        try:
            results[pending[fut]] = fut.result()
        except Exception as exc:
            LOG.exception('Error gathering result from cell %s', pending[fut])
            results[pending[fut]] = exc
    for fut in not_done:
        fut.cancel()
        LOG.warning('Timed out waiting for response from cell %s', pending[fut])
        results[pending[fut]] = did_not_respond_sentinel
    return results
