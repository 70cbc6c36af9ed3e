"""Views of security groups: Nova's group and rule bodies, and the ``security_groups`` of
the server views (the groups of each server's ports, for a whole list at once)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from oslo_log import log as logging
from oslo_serialization import jsonutils

from novalite import exception
from novalite.api.openstack import wsgi
from novalite.network import client as neutron_client
from novalite.network import model, server_security_groups
from novalite.network import security_group_api as sg_api

LOG = logging.getLogger(__name__)

# A group named by a rule as its source, as ``{name, tenant_id}``; None when it is gone.
Sources = dict[str, sg_api.Group | None]


class ServerLike(Protocol):
    """What the server views' groups need of an instance."""

    uuid: str


def rule(nova_rule: sg_api.Rule, sources: Sources) -> dict[str, Any] | None:
    """The API body of a rule; None for a rule whose source group is gone."""
    body: dict[str, Any] = {
        'id': nova_rule['id'], 'parent_group_id': nova_rule['parent_group_id'],
        'ip_protocol': nova_rule['protocol'], 'from_port': nova_rule['from_port'],
        'to_port': nova_rule['to_port'], 'group': {}, 'ip_range': {}}
    if nova_rule['group_id']:
        source = sources.get(nova_rule['group_id'])
        if source is None:
            return None
        body['group'] = dict(source)
    else:
        body['ip_range'] = {'cidr': nova_rule['cidr']}
    return body


def group(nova_group: sg_api.NovaGroup, sources: Sources) -> dict[str, Any]:
    rules = (rule(r, sources) for r in nova_group['rules'])
    return {'id': nova_group['id'], 'name': nova_group['name'],
            'description': nova_group['description'],
            'tenant_id': nova_group['project_id'],
            'rules': [r for r in rules if r is not None]}


def groups(nova_groups: Sequence[sg_api.NovaGroup], sources: Sources
           ) -> list[dict[str, Any]]:
    """The bodies of ``nova_groups``, by project then name (as Nova sorts them)."""
    return sorted((group(g, sources) for g in nova_groups),
                  key=lambda g: (g['tenant_id'], g['name']))


# -- the server views ---------------------------------------------------------------------

def for_servers(req: wsgi.Request, instances: Sequence[ServerLike]
                ) -> dict[str, list[dict[str, Any]]]:
    """``[{'name': ...}]`` of each listed server's ports, by server uuid.

    From each server's network info cache, which keeps its ports' groups: no Neutron
    call (Nova makes two per GET, so every status poll of a booting server cost Neutron
    as much as a port). Only servers whose cache predates that (its VIFs without their
    groups) are asked of Neutron, in two queries for all of them. None for build
    requests (no cell row, so no ports yet) or without Neutron. A Neutron that cannot
    answer leaves those servers' groups out rather than fail the list.
    """
    found: dict[str, list[dict[str, Any]]] = {}
    ask: list[str] = []
    for instance in instances:
        if getattr(instance, '_obj_id', None) is None:
            continue
        cache = getattr(instance, '_obj_info_cache', None)
        names = model.security_group_names(cache.network_info) if cache is not None \
            else None
        if names is None:
            ask.append(instance.uuid)
        elif names:
            found[instance.uuid] = names
    if not ask or not neutron_client.configured():
        return found
    try:
        found.update(server_security_groups.bindings(neutron_client.Client(req.context),
                                                     ask))
    except (exception.NeutronConnectionFailed, neutron_client.NeutronError) as exc:
        LOG.warning('Security groups of %d servers left out: %s', len(ask), exc)
    return found


def requested(req: wsgi.Request) -> list[dict[str, Any]]:
    """The groups a server create asked for (Neutron has no port of it yet), as Nova
    answers them: as given, or the project's ``default``."""
    try:
        server = jsonutils.loads(req.body).get('server') or {}
    except (ValueError, AttributeError):
        server = {}
    return server.get('security_groups', [{'name': 'default'}])
