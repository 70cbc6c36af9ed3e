"""Neutron's security groups in Nova's shape: the groups and rules of the os-security-groups
proxy, as Nova's ``nova/network/security_group_api.py``.

Nova's model of a rule is ingress only, with ``from_port``/``to_port`` (an ICMP type and
code, or a port range; -1 for any) and a source that is either a CIDR or a group. A group
is ``{id, name, description, project_id, rules}``; its rules are Nova rules (Neutron's
egress rules are not shown). Every call is made with the caller's client
(``novalite.network.client.Client(context)``), so Neutron decides what the caller sees.
"""
from __future__ import annotations

import ipaddress
import urllib.parse
from collections.abc import Iterator, Sequence
from typing import Any, TypedDict

from oslo_log import log as logging
from oslo_utils import uuidutils

from novalite import exception
from novalite.network import client as neutron_client

LOG = logging.getLogger(__name__)

# Ids per Neutron query: 64 uuids keep the URL under the 4 KiB request line of the
# common WSGI servers (Nova's 150 assumes 8 KiB).
MAX_SEARCH_IDS = 64

Neutron = neutron_client.Client
Group = dict[str, Any]


class Rule(TypedDict):
    """One ingress rule as Nova sees it."""

    id: str
    parent_group_id: str
    protocol: str | None
    from_port: int | None
    to_port: int | None
    group_id: str | None
    cidr: str | None


class NovaGroup(TypedDict):
    id: str
    name: str
    description: str
    project_id: str
    rules: list[Rule]


def chunks(ids: Sequence[str], size: int = MAX_SEARCH_IDS) -> Iterator[list[str]]:
    """``ids`` in lists short enough for one query string."""
    for start in range(0, len(ids), size):
        yield list(ids[start:start + size])


def validate_id(value: str | None) -> str:
    if not value or not uuidutils.is_uuid_like(value):
        raise exception.Invalid(message='Security group id should be uuid')
    return value


def parse_cidr(cidr: str | None) -> str:
    """A CIDR as given (URL-quoted or not); any IPv4 address when none is given."""
    if not cidr:
        return '0.0.0.0/0'
    value = urllib.parse.unquote(cidr)
    try:
        ipaddress.ip_network(value, strict=False)
    except ValueError as exc:
        raise exception.InvalidCidr(cidr=cidr) from exc
    if '/' not in value:
        raise exception.InvalidCidr(cidr=cidr)
    return value


def _port(value: Any, protocol: str) -> int:
    try:
        return int(value)
    except (TypeError, ValueError) as exc:
        reason = ('Type and Code must be integers for ICMP protocol type'
                  if protocol == 'ICMP' else 'To and From ports must be integers')
        raise exception.InvalidInput(reason=reason) from exc


def new_ingress_rule(ip_protocol: str | None, from_port: Any, to_port: Any,
                     group_id: str | None = None, cidr: str | None = None
                     ) -> dict[str, Any] | None:
    """The Nova rule of a create request, checked as Nova checks it; None when a CIDR
    rule lacks its protocol or ports (Nova: "Not enough parameters")."""
    values: dict[str, Any] = {}
    protocol = str(ip_protocol).upper() if ip_protocol else ''
    if group_id:
        values['group_id'] = group_id
        # A rule from a group opens every port of its protocol unless told otherwise.
        if from_port is None and to_port is None:
            if protocol == 'ICMP':
                from_port = to_port = -1
            elif protocol in ('TCP', 'UDP'):
                from_port, to_port = 1, 65535
    elif cidr:
        values['cidr'] = cidr
    if not (ip_protocol and from_port is not None and to_port is not None):
        return None if cidr and not group_id else values
    low, high = _port(from_port, protocol), _port(to_port, protocol)
    if protocol not in ('TCP', 'UDP', 'ICMP'):
        raise exception.InvalidIpProtocol(protocol=ip_protocol)
    if protocol in ('TCP', 'UDP'):
        if low > high:
            raise exception.InvalidPortRange(from_port=low, to_port=high,
                                             msg='Former value cannot be greater than the '
                                                 'later')
        if low < 1 or high > 65535:
            raise exception.InvalidPortRange(from_port=low, to_port=high,
                                             msg='Valid %s ports should be between 1-65535'
                                                 % protocol)
    elif not (-1 <= low <= 255 and -1 <= high <= 255):
        raise exception.InvalidPortRange(from_port=low, to_port=high,
                                         msg='For ICMP, the type:code must be valid')
    values.update(protocol=str(ip_protocol), from_port=low, to_port=high)
    return values


# -- Neutron → Nova -------------------------------------------------------------------------

def project_of(resource: dict[str, Any]) -> str:
    return resource.get('project_id') or resource.get('tenant_id') or ''


def to_nova_rule(rule: dict[str, Any]) -> Rule:
    protocol = rule.get('protocol')
    low, high = rule.get('port_range_min'), rule.get('port_range_max')
    if protocol and low is None and high is None:
        low, high = (1, 65535) if str(protocol).upper() in ('TCP', 'UDP') else (-1, -1)
    return Rule(id=rule['id'], parent_group_id=rule['security_group_id'], protocol=protocol,
                from_port=low, to_port=high, group_id=rule.get('remote_group_id'),
                cidr=parse_cidr(rule.get('remote_ip_prefix')))


def to_nova_group(group: dict[str, Any]) -> NovaGroup:
    return NovaGroup(id=group['id'], name=group.get('name') or '',
                     description=group.get('description') or '',
                     project_id=project_of(group),
                     rules=[to_nova_rule(r) for r in group.get('security_group_rules', [])
                            if r.get('direction') == 'ingress'])


# -- groups ---------------------------------------------------------------------------------

def get(neutron: Neutron, group_id: str) -> NovaGroup:
    try:
        return to_nova_group(neutron.get('/security-groups/%s' % group_id)['security_group'])
    except neutron_client.NeutronNotFound as exc:
        raise exception.SecurityGroupNotFound(security_group_id=group_id) from exc


def list_groups(neutron: Neutron, project_id: str | None, all_projects: bool = False,
                ids: Sequence[str] = ()) -> list[NovaGroup]:
    """The project's groups (every project's, for ``all_projects``), or those ``ids``."""
    found: list[dict[str, Any]] = []
    if ids:
        for chunk in chunks(ids):
            found += neutron.get('/security-groups', id=chunk)['security_groups']
    else:
        params = {} if all_projects or not project_id else {'project_id': project_id}
        found = neutron.get('/security-groups', **params)['security_groups']
    return [to_nova_group(g) for g in found]


def names_of(neutron: Neutron, groups: Sequence[NovaGroup]) -> dict[str, Group | None]:
    """``{name, tenant_id}`` of every group the rules of ``groups`` name as their source
    (None for a group gone meanwhile): the groups in hand, the others in one query."""
    known: dict[str, Group | None] = {
        g['id']: {'name': g['name'], 'tenant_id': g['project_id']} for g in groups}
    missing = sorted({r['group_id'] for g in groups for r in g['rules']
                      if r['group_id'] and r['group_id'] not in known})
    for chunk in chunks(missing):
        for found in neutron.get('/security-groups', id=chunk,
                                 fields=['id', 'name', 'project_id'])['security_groups']:
            known[found['id']] = {'name': found.get('name') or '',
                                  'tenant_id': project_of(found)}
    known.update({group_id: None for group_id in missing if group_id not in known})
    return known


def create(neutron: Neutron, project_id: str | None, name: str,
           description: str) -> NovaGroup:
    body: dict[str, Any] = {'name': name, 'description': description}
    if project_id:
        # Keystone-less Neutron acts as admin: the owner is named, not implied.
        body['project_id'] = project_id
    try:
        return to_nova_group(neutron.post('/security-groups',
                                          {'security_group': body})['security_group'])
    except neutron_client.NeutronConflict as exc:
        raise exception.SecurityGroupLimitExceeded(message=exc.detail) from exc
    except neutron_client.NeutronError as exc:
        if exc.status == 400:
            raise exception.Invalid(message=exc.detail) from exc
        raise


def update(neutron: Neutron, group_id: str, name: str, description: str) -> NovaGroup:
    try:
        return to_nova_group(neutron.put(
            '/security-groups/%s' % group_id,
            {'security_group': {'name': name, 'description': description}}
        )['security_group'])
    except neutron_client.NeutronNotFound as exc:
        raise exception.SecurityGroupNotFound(security_group_id=group_id) from exc
    except neutron_client.NeutronError as exc:
        if exc.status == 400:
            raise exception.Invalid(message=exc.detail) from exc
        raise


def destroy(neutron: Neutron, group_id: str) -> None:
    try:
        neutron.delete('/security-groups/%s' % group_id)
    except neutron_client.NeutronNotFound as exc:
        raise exception.SecurityGroupNotFound(security_group_id=group_id) from exc
    except neutron_client.NeutronConflict as exc:
        # In use by a port: Nova answers 400.
        raise exception.Invalid(message=exc.detail) from exc


# -- rules ----------------------------------------------------------------------------------

def _rule_exists(group: NovaGroup, new_rule: dict[str, Any]) -> bool:
    keys = ('group_id', 'cidr', 'from_port', 'to_port', 'protocol')
    wanted = tuple(new_rule.get(k) for k in keys)
    return any((r['group_id'], r['cidr'], r['from_port'], r['to_port'], r['protocol'])
               == wanted for r in group['rules'])


def _neutron_rule(rule: dict[str, Any]) -> dict[str, Any]:
    cidr = rule.get('cidr')
    body = {'direction': 'ingress', 'protocol': rule.get('protocol'),
            'ethertype': 'IPv6' if cidr and ipaddress.ip_network(
                cidr, strict=False).version == 6 else 'IPv4',
            'remote_ip_prefix': cidr, 'security_group_id': rule['parent_group_id'],
            'remote_group_id': rule.get('group_id')}
    for nova_key, neutron_key in (('from_port', 'port_range_min'),
                                  ('to_port', 'port_range_max')):
        if rule.get(nova_key) not in (None, -1):
            body[neutron_key] = rule[nova_key]
    return body


def create_rule(neutron: Neutron, project_id: str | None, group: NovaGroup,
                new_rule: dict[str, Any]) -> Rule:
    """Add ``new_rule`` (its ``parent_group_id`` set) to ``group``."""
    if _rule_exists(group, new_rule):
        raise exception.Invalid(message='This rule already exists in group %s'
                                % new_rule['parent_group_id'])
    body = _neutron_rule(new_rule)
    if project_id:
        body['project_id'] = project_id
    try:
        created = neutron.post('/security-group-rules', {'security_group_rule': body})
    except neutron_client.NeutronNotFound as exc:
        raise exception.SecurityGroupNotFound(
            security_group_id=new_rule['parent_group_id']) from exc
    except neutron_client.NeutronConflict as exc:
        raise exception.SecurityGroupLimitExceeded(message=exc.detail) from exc
    except neutron_client.NeutronError as exc:
        if exc.status == 400:
            raise exception.Invalid(message=exc.detail) from exc
        raise
    return to_nova_rule(created['security_group_rule'])


def get_rule(neutron: Neutron, rule_id: str) -> Rule:
    try:
        return to_nova_rule(neutron.get('/security-group-rules/%s'
                                        % rule_id)['security_group_rule'])
    except neutron_client.NeutronNotFound as exc:
        raise exception.SecurityGroupNotFoundForRule(rule_id=rule_id) from exc


def delete_rule(neutron: Neutron, rule_id: str) -> None:
    try:
        neutron.delete('/security-group-rules/%s' % rule_id)
    except neutron_client.NeutronNotFound as exc:
        raise exception.SecurityGroupNotFoundForRule(rule_id=rule_id) from exc
