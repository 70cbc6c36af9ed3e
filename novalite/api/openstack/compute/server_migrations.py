"""A server's in-progress live migrations: GET /servers/{server_id}/migrations[/{id}]
(2.23), DELETE .../migrations/{id} to abort one (2.24; queued ones too from 2.65) and
POST .../migrations/{id}/action {"force_complete": null} to end one now (2.22)."""
from __future__ import annotations

import webob.exc

from novalite import exception
from novalite.api import validation
from novalite.api.openstack import api_version_request as avr
from novalite.api.openstack import common, wsgi
from novalite.api.openstack.compute.schemas import empty_query, empty_query_v2102
from novalite.api.openstack.compute.schemas import server_migrations as schema
from novalite.api.openstack.compute.views import migrations as view
from novalite.api.validation import validators
from novalite.objects import migration as migration_obj
from novalite.policies import server_migrations as sm_policies

LIVE = 'live-migration'
_FORCE_COMPLETE = validators.SchemaValidator(schema.force_complete)


def _conflict(exc: exception.InstanceInvalidState, action: str,
              server_id: str) -> webob.exc.HTTPConflict:
    """Nova's wording of a 409 for a server in the wrong state."""
    return webob.exc.HTTPConflict(
        explanation="Cannot '%s' instance %s while it is in %s %s"
        % (action, server_id, exc.kwargs['attr'], exc.kwargs['state']))


def _migration_id(id: str) -> int:
    """:raises MigrationNotFound: ``id`` is no migration id (not an integer, or past
    the 64 bits of the column: no row can have it), before any state is looked at"""
    try:
        number = int(id)
    except ValueError as exc:
        raise exception.MigrationNotFound(migration_id=id) from exc
    if not -2 ** 63 <= number < 2 ** 63:
        raise exception.MigrationNotFound(migration_id=id)
    return number


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

    @wsgi.api_version('2.24')
    @wsgi.response(202)
    @validation.no_body
    def delete(self, req: wsgi.Request, server_id: str, id: str) -> None:
        """Abort a live migration: the source cancels it and the server stays there."""
        context = req.context
        instance = common.get_instance(self.compute_api, context, server_id)
        context.can(sm_policies.BASE % 'delete', {'project_id': instance.project_id})
        try:
            self.compute_api.live_migrate_abort(
                context, instance, _migration_id(id),
                support_abort_in_queue=avr.is_supported(req, '2.65'))
        except exception.InstanceInvalidState as exc:
            raise _conflict(exc, 'abort live migration', server_id) from exc
        except exception.MigrationNotFound as exc:
            raise webob.exc.HTTPNotFound(
                explanation=exception.MigrationNotFoundForInstance(
                    migration_id=id, instance_id=server_id).format_message()) from exc

    @wsgi.response(202)
    @validation.schema(schema.action)
    def action(self, req: wsgi.Request, server_id: str, id: str, body: dict) -> None:
        """POST .../migrations/{id}/action: the one action is ``force_complete``."""
        key = next(iter(body))
        if key != 'force_complete':
            raise webob.exc.HTTPBadRequest(explanation='There is no such action: %s' % key)
        return self._force_complete(req, server_id, id, body)

    @wsgi.api_version('2.22')
    def _force_complete(self, req: wsgi.Request, server_id: str, id: str,
                        body: dict) -> None:
        _FORCE_COMPLETE.validate(body)
        context = req.context
        instance = common.get_instance(self.compute_api, context, server_id)
        context.can(sm_policies.BASE % 'force_complete', {'project_id': instance.project_id})
        try:
            self.compute_api.live_migrate_force_complete(context, instance,
                                                         _migration_id(id))
        except exception.InstanceInvalidState as exc:
            raise _conflict(exc, 'force_complete', server_id) from exc
        except exception.MigrationNotFound as exc:
            # Nova answers 400 here, where the abort answers 404.
            raise webob.exc.HTTPBadRequest(
                explanation=exception.MigrationNotFoundForInstance(
                    migration_id=id, instance_id=server_id).format_message()) from exc
