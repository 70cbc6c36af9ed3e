"""GET /servers/{server_id}/migrations[/{id}] (2.23): a server's in-progress live
migrations, for administrators."""
from __future__ import annotations

import webob.exc

from novalite import exception
from novalite.api import validation
from novalite.api.openstack import common, wsgi
from novalite.api.openstack.compute.schemas import empty_query, empty_query_v2102
from novalite.api.openstack.compute.views import migrations as view
from novalite.objects import migration as migration_obj
from novalite.policies import server_migrations as sm_policies

LIVE = 'live-migration'


class ServerMigrationsController(common.ComputeAPIUser, wsgi.Controller):

    @wsgi.api_version('2.23')
    @validation.query_schema(empty_query, '2.1', '2.101')
    @validation.query_schema(empty_query_v2102, '2.102')
    def index(self, req: wsgi.Request, server_id: str) -> dict:
        context = req.context
        instance = common.get_instance(self.compute_api, context, server_id)
        target = {'project_id': instance.project_id}
        context.can(sm_policies.BASE % 'index', target)
        with_hosts = context.can(sm_policies.BASE % 'index:host', target, fatal=False)
        migrations = self.compute_api.get_migrations_in_progress_by_instance(
            context, server_id, LIVE)
        shown = [view.ViewBuilder.server_migration(req, m) for m in migrations]
        return {'migrations': shown if with_hosts else [view.hide_hosts(m) for m in shown]}

    @wsgi.api_version('2.23')
    @validation.query_schema(empty_query, '2.1', '2.101')
    @validation.query_schema(empty_query_v2102, '2.102')
    def show(self, req: wsgi.Request, server_id: str, id: str) -> dict:
        context = req.context
        instance = common.get_instance(self.compute_api, context, server_id)
        context.can(sm_policies.BASE % 'show', {'project_id': instance.project_id})
        not_found = webob.exc.HTTPNotFound(
            explanation='In-progress live migration %s is not found for server %s.'
                        % (id, server_id))
        try:
            migration = self.compute_api.get_migration_by_id_and_instance(
                context, int(id), server_id)
        except (ValueError, exception.MigrationNotFound) as exc:
            raise not_found from exc
        if migration.migration_type != LIVE:
            raise webob.exc.HTTPNotFound(
                explanation='Migration %s for server %s is not live-migration.'
                            % (id, server_id))
        if migration.status not in migration_obj.LIVE_IN_PROGRESS:
            raise webob.exc.HTTPNotFound(
                explanation='Live migration %s for server %s is not in progress.'
                            % (id, server_id))
        return {'migration': view.ViewBuilder.server_migration(req, migration)}
