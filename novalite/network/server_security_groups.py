"""A server's security groups: those of its ports (``device_id`` = the server), read for
many servers in two queries, and a group added to or removed from every port, as Nova's
``security_group_api.add_to_instance``/``remove_from_instance``.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from oslo_log import log as logging
from oslo_utils import uuidutils

from novalite import exception
from novalite.network import client as neutron_client
from novalite.network import security_group_api as sg_api

LOG = logging.getLogger(__name__)

Neutron = neutron_client.Client


def _ports_and_groups(neutron: Neutron, server_ids: Sequence[str], detailed: bool
                      ) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """The servers' ports and the groups they name: one query for the ports of all the
    servers, one for their groups (more only past ``MAX_SEARCH_IDS`` ids), none for the
    groups when no server has a port."""
    ports: list[dict[str, Any]] = []
    for chunk in sg_api.chunks(list(server_ids)):
        ports += neutron.get('/ports', device_id=chunk,
                             fields=['id', 'device_id', 'security_groups'])['ports']
    group_ids = list(dict.fromkeys(g for p in ports for g in p.get('security_groups') or []))
    groups: dict[str, dict[str, Any]] = {}
    fields = {} if detailed else {'fields': ['id', 'name']}
    for chunk in sg_api.chunks(group_ids):
        for group in neutron.get('/security-groups', id=chunk,
                                 **fields)['security_groups']:
            groups[group['id']] = group
    return ports, groups


def bindings(neutron: Neutron, server_ids: Sequence[str]) -> dict[str, list[dict[str, str]]]:
    """``{'name': ...}`` of the groups of each server's ports, by server id, in port
    order (a group on two ports is named twice, as Nova shows it)."""
    ports, groups = _ports_and_groups(neutron, server_ids, detailed=False)
    found: dict[str, list[dict[str, str]]] = {}
    for port in ports:
        for group_id in port.get('security_groups') or []:
            # A group the caller may not see is left out, as Nova does.
            group = groups.get(group_id)
            if group is not None:
                found.setdefault(port['device_id'], []).append(
                    {'name': group.get('name') or group['id']})
    return found


def port_groups(neutron: Neutron, server_id: str) -> dict[str, list[dict[str, str]]]:
    """The ``{'id', 'name'}`` of the groups of each of the server's ports, by port id
    (what the server's network info cache keeps)."""
    ports, groups = _ports_and_groups(neutron, [server_id], detailed=False)
    return {p['id']: [{'id': g, 'name': groups.get(g, {}).get('name') or g}
                      for g in p.get('security_groups') or []] for p in ports}


def groups_of(neutron: Neutron, server_id: str) -> list[sg_api.NovaGroup]:
    """The Nova groups (with their rules) of the server's ports, one per port using it."""
    ports, groups = _ports_and_groups(neutron, [server_id], detailed=True)
    return [sg_api.to_nova_group(groups[g]) for p in ports
            for g in p.get('security_groups') or [] if g in groups]


def not_found(name: str, project_id: str | None) -> exception.SecurityGroupNotFound:
    return exception.SecurityGroupNotFound(
        message='Security group %s is not found for project %s' % (name, project_id))


def find_id(neutron: Neutron, project_id: str | None, name_or_id: str) -> str:
    """The id of the group ``name_or_id``: by id, else by name among the project's
    groups, else among every group the caller sees (keystone-less, Neutron owns them
    all itself).

    :raises SecurityGroupNotFound: no group has that name or id.
    :raises NoUniqueMatch: several groups have that name.
    """
    if uuidutils.is_uuid_like(name_or_id):
        by_id = neutron.get('/security-groups', id=name_or_id, fields='id')
        if by_id['security_groups']:
            return by_id['security_groups'][0]['id']
    named = neutron.get('/security-groups', name=name_or_id,
                        fields=['id', 'project_id'])['security_groups']
    matches = [g for g in named if sg_api.project_of(g) == project_id] or named
    if not matches:
        raise not_found(name_or_id, project_id)
    if len(matches) > 1:
        raise exception.NoUniqueMatch(
            message="Multiple security_group matches found for name '%s', use an ID to be "
                    "more specific." % name_or_id)
    return matches[0]['id']


def _ports(neutron: Neutron, server_id: str) -> list[dict[str, Any]]:
    ports = neutron.get('/ports', device_id=server_id)['ports']
    if not ports:
        raise exception.SecurityGroupNotFound(
            message='instance_id %s could not be found as device id on any ports'
            % server_id)
    return ports


def _can_have_groups(port: dict[str, Any]) -> bool:
    """Port security on, and an address (or one to come) for the rules to apply to."""
    if port.get('fixed_ips') or port.get('ip_allocation') == 'deferred':
        return bool(port.get('port_security_enabled', True))
    return False


def _set_groups(neutron: Neutron, port: dict[str, Any], group_ids: list[str]) -> None:
    try:
        neutron.put('/ports/%s' % port['id'], {'port': {'security_groups': group_ids}})
    except neutron_client.NeutronError as exc:
        if exc.status == 400:
            raise exception.SecurityGroupCannotBeApplied(message=exc.detail) from exc
        raise


def add_to_server(neutron: Neutron, project_id: str | None, server_id: str,
                  name: str) -> None:
    """Add the group ``name`` (or id) to every port of the server.

    :raises SecurityGroupNotFound: no such group, or the server has no port (404).
    :raises NoUniqueMatch: the name is ambiguous (409).
    :raises SecurityGroupCannotBeApplied: a port has port security off or no address,
        or Neutron refused the change (400).
    """
    group_id = find_id(neutron, project_id, name)
    ports = _ports(neutron, server_id)
    refused = [p['id'] for p in ports if not _can_have_groups(p)]
    if refused:
        LOG.warning('Cannot add security group %s to %s: port %s does not meet the '
                    'security requirements', name, server_id, ', '.join(refused))
        raise exception.SecurityGroupCannotBeApplied()
    for port in ports:
        LOG.info('Adding security group %s to port %s', group_id, port['id'])
        _set_groups(neutron, port, list(port.get('security_groups') or []) + [group_id])


def remove_from_server(neutron: Neutron, project_id: str | None, server_id: str,
                       name: str) -> None:
    """Remove the group from every port of the server that has it.

    :raises SecurityGroupNotFound: no such group, no port, or no port has it (404).
    :raises NoUniqueMatch: the name is ambiguous (409).
    """
    group_id = find_id(neutron, project_id, name)
    removed = False
    for port in _ports(neutron, server_id):
        groups = list(port.get('security_groups') or [])
        if group_id not in groups:
            continue
        groups.remove(group_id)
        LOG.info('Removing security group %s from port %s', group_id, port['id'])
        _set_groups(neutron, port, groups)
        removed = True
    if not removed:
        raise exception.SecurityGroupNotFound(
            message='Security group %s not associated with the instance %s'
            % (name, server_id))
