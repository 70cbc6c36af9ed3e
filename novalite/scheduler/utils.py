"""Helpers of the scheduler: what a RequestSpec asks of Placement, its server group,
and failure texts."""
from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from novalite import objects
    from novalite.context import RequestContext

# Flavor extra specs that shape the Placement request, as in Nova.
_RESOURCES_PREFIX = 'resources:'
_TRAIT_PREFIX = 'trait:'
# Which filter or weigher enforces each server group policy.
_POLICY_ENFORCERS = {
    'affinity': 'ServerGroupAffinityFilter',
    'anti-affinity': 'ServerGroupAntiAffinityFilter',
    'soft-affinity': 'ServerGroupSoftAffinityWeigher',
    'soft-anti-affinity': 'ServerGroupSoftAntiAffinityWeigher',
}
# What a forbidden trait means, for failure texts.
_TRAIT_MEANINGS = {'COMPUTE_STATUS_DISABLED': 'compute service disabled'}


@dataclasses.dataclass
class ResourceRequest:
    """One unnumbered request group for ``GET /allocation_candidates``."""

    resources: dict[str, int]
    required_traits: set[str] = dataclasses.field(default_factory=set)
    forbidden_traits: set[str] = dataclasses.field(default_factory=set)
    member_of: list[str] = dataclasses.field(default_factory=list)


def resources_from_flavor(flavor: objects.Flavor, is_bfv: bool = False) -> dict[str, int]:
    """VCPU, MEMORY_MB and DISK_GB of a flavor, with ``resources:CLASS=N`` overrides.

    Swap counts towards DISK_GB, rounded up to whole GiB. A volume-backed server
    (``is_bfv``) takes no root disk from the host, as in Nova. An override of 0 removes
    the class from the request.
    """
    resources = {
        'VCPU': flavor.vcpus,
        'MEMORY_MB': flavor.memory_mb,
        'DISK_GB': (0 if is_bfv else flavor.root_gb) + flavor.ephemeral_gb
        + math.ceil(flavor.swap / 1024),
    }
    extra_specs = flavor.extra_specs if flavor.obj_attr_is_set('extra_specs') else {}
    for key, value in (extra_specs or {}).items():
        if not key.startswith(_RESOURCES_PREFIX):
            continue
        rc = key[len(_RESOURCES_PREFIX):]
        try:
            amount = int(value)
        except ValueError:
            continue
        resources[rc] = amount
    return {rc: n for rc, n in resources.items() if n > 0}


def resources_from_request_spec(spec: objects.RequestSpec) -> ResourceRequest:
    """The Placement request for one instance of ``spec``.

    ``trait:NAME=required`` and ``trait:NAME=forbidden`` extra specs become required
    and forbidden traits.
    """
    flavor = spec.flavor
    is_bfv = bool(spec.is_bfv) if spec.obj_attr_is_set('is_bfv') else False
    request = ResourceRequest(resources=resources_from_flavor(flavor, is_bfv))
    extra_specs = flavor.extra_specs if flavor.obj_attr_is_set('extra_specs') else {}
    for key, value in (extra_specs or {}).items():
        if key.startswith(_TRAIT_PREFIX):
            name = key[len(_TRAIT_PREFIX):]
            if value == 'required':
                request.required_traits.add(name)
            elif value == 'forbidden':
                request.forbidden_traits.add(name)
    return request


def _free(record: dict, used: int) -> int:
    capacity = (record['total'] - record.get('reserved', 0)) * record.get('allocation_ratio', 1.0)
    return int(capacity) - used


def explain_no_candidates(request: ResourceRequest, providers: dict[str, dict]) -> str:
    """Why Placement returned no allocation candidate for ``request``.

    :param providers: ``SchedulerReportClient.get_provider_usages_and_inventories()``.
    :returns: a sentence for the NoValidHost reason.
    """
    if not providers:
        return ('Placement has no resource providers: no compute service has reported '
                'its resources yet.')
    checked = len(providers)
    suitable = set(providers)
    for rc, amount in sorted(request.resources.items()):
        free = {uuid: _free(p['inventories'][rc], p['usages'].get(rc, 0))
                for uuid, p in providers.items() if rc in p['inventories']}
        if not free:
            return ('Placement found no resource provider with %s inventory (%d providers '
                    'checked).' % (rc, checked))
        most = max(free.values())
        if most < amount:
            return ('Placement found no resource provider with enough %s: requested %d, '
                    'the most free on any provider is %d (%d providers checked).'
                    % (rc, amount, most, checked))
        max_unit = max(p['inventories'][rc].get('max_unit', amount)
                       for uuid, p in providers.items() if uuid in free)
        if max_unit < amount:
            return ('Placement found no resource provider allowing %d %s in one allocation: '
                    'the largest max_unit is %d (%d providers checked).'
                    % (amount, rc, max_unit, checked))
        suitable &= {uuid for uuid, n in free.items() if n >= amount}
    if not suitable:
        return ('Placement found no single resource provider with enough of all of %s, '
                'though each is available somewhere (%d providers checked).'
                % (', '.join('%s:%d' % item for item in sorted(request.resources.items())),
                   checked))
    with_traits = {uuid for uuid in suitable if 'traits' in providers[uuid]}
    if with_traits:
        forbidden = {uuid: sorted(request.forbidden_traits & set(providers[uuid]['traits']))
                     for uuid in with_traits}
        missing = {uuid: sorted(request.required_traits - set(providers[uuid]['traits']))
                   for uuid in with_traits}
        if all(forbidden[u] or missing[u] for u in with_traits):
            reasons = sorted({_has(t) for u in with_traits for t in forbidden[u]}
                             | {'lacks %s' % t for u in with_traits for t in missing[u]})
            return ('Placement found %d resource providers with enough resources, but each '
                    'was excluded by traits (%s).' % (len(with_traits), ', '.join(reasons)))
    return ('Placement returned no allocation candidates for %s (%d providers checked).'
            % (', '.join('%s:%d' % item for item in sorted(request.resources.items())),
               checked))


def _has(trait: str) -> str:
    meaning = _TRAIT_MEANINGS.get(trait)
    return 'has %s: %s' % (trait, meaning) if meaning else 'has %s' % trait


def setup_instance_group(context: RequestContext, spec: objects.RequestSpec,
                         enabled: list[str]) -> objects.InstanceGroup | None:
    """Give ``spec`` its server group with fresh members and hosts, or leave it without.

    The group is the spec's ``instance_group`` or, for specs made before that was set,
    the one the ``group`` scheduler hint names. Members and hosts are re-read: the copy a
    spec carries was made when the server was requested.

    :param enabled: the names of the filters and weighers in use.
    :returns: the group, or None.
    :raises NoValidHost: when the group does not exist or its policy is enforced by a
        filter or weigher that is not enabled (Nova refuses these too).
    """
    from novalite import exception, objects
    group = spec.instance_group if spec.obj_attr_is_set('instance_group') else None
    group_uuid = group.uuid if group is not None else spec.get_scheduler_hint('group')
    if not group_uuid:
        return None
    try:
        group = objects.InstanceGroup.get_by_uuid(context, group_uuid)
    except exception.InstanceGroupNotFound as exc:
        raise exception.NoValidHost(reason=exc.format_message()) from exc
    enforcer = _POLICY_ENFORCERS.get(group.policy or '')
    if enforcer is not None and enforcer not in enabled:
        raise exception.NoValidHost(reason=(
            'Server group %s has the %s policy, which needs %s; it is not enabled in '
            '[filter_scheduler].' % (group.uuid, group.policy, enforcer)))
    group.hosts = group.get_hosts()
    group.obj_reset_changes(['hosts'])
    spec.instance_group = group
    return group
