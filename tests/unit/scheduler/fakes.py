"""Hand-built HostStates, aggregates, groups and request specs for filter/weigher tests."""
from __future__ import annotations

import uuid

from oslo_utils import timeutils

from novalite import objects
from novalite.scheduler.host_manager import HostState

objects.register_all()


def service(disabled: bool = False) -> objects.Service:
    return objects.Service(host='h', binary='novalite-compute', disabled=disabled,
                           forced_down=False, disabled_reason=None,
                           last_seen_up=timeutils.utcnow(with_timezone=True))


def aggregate(name: str = 'agg', **metadata: str) -> objects.Aggregate:
    return objects.Aggregate(name=name, uuid=str(uuid.uuid4()), hosts=[], metadata=metadata)


def host(name: str = 'h1', instances: tuple = (), aggregates: tuple = (),
         **attrs) -> HostState:
    """A HostState with an up, enabled service; ``attrs`` set any other attribute."""
    state = HostState(name, name, 'cell1')
    state.service = service()
    state.instances = set(instances)
    state.num_instances = len(state.instances)
    state.update_from_aggregates(list(aggregates))
    for key, value in attrs.items():
        setattr(state, key, value)
    return state


def group(policy: str, members: tuple = (), hosts: tuple = (),
          rules: dict | None = None) -> objects.InstanceGroup:
    return objects.InstanceGroup(uuid=str(uuid.uuid4()), name='g', policy=policy,
                                 members=list(members), hosts=list(hosts), rules=rules or {})


def spec(extra_specs: dict | None = None, image_properties: dict | None = None,
         hints: dict | None = None, instance_group: objects.InstanceGroup | None = None,
         availability_zone: str | None = None,
         instance_uuid: str | None = None) -> objects.RequestSpec:
    flavor = objects.Flavor(id=1, flavorid='f1', name='f1', memory_mb=512, vcpus=1,
                            root_gb=1, ephemeral_gb=0, swap=0,
                            extra_specs=extra_specs or {})
    req = objects.RequestSpec(instance_uuid=instance_uuid or str(uuid.uuid4()),
                              flavor=flavor, availability_zone=availability_zone,
                              scheduler_hints={k: v if isinstance(v, list) else [v]
                                               for k, v in (hints or {}).items()},
                              instance_group=instance_group)
    if image_properties is not None:
        req.image = objects.ImageMeta(properties=image_properties)
    return req


def order(names: list[str], hosts: list[HostState],
          req: objects.RequestSpec | None = None) -> list:
    """Run the named weighers over ``hosts``: the weighed hosts, best first."""
    from novalite.scheduler import weights
    return weights.HostWeightHandler(names).get_weighed_objects(hosts, req or spec())
