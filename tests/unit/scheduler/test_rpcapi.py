"""select_destinations over the bus (fake:// transport) into a real SchedulerManager."""
from __future__ import annotations

import uuid

import oslo_messaging as messaging
import pytest

from novalite import exception, objects, rpc
from novalite.scheduler import manager, rpcapi


@pytest.fixture
def server(cloud):
    endpoint = manager.SchedulerManager(reportclient=cloud.reportclient)
    rpc_server = rpc.get_server(messaging.Target(topic=rpcapi.RPC_TOPIC, server='sched1'),
                                [endpoint])
    rpc_server.start()
    try:
        yield rpc_server
    finally:
        rpc_server.stop()
        rpc_server.wait()


def _spec(memory_mb):
    flavor = objects.Flavor(id=1, flavorid='f1', name='f1', memory_mb=memory_mb, vcpus=1,
                            root_gb=1, ephemeral_gb=0, swap=0, extra_specs={})
    return objects.RequestSpec(instance_uuid=str(uuid.uuid4()), flavor=flavor,
                               num_instances=1, project_id='p1', user_id='u1',
                               availability_zone=None)


def test_select_destinations_returns_selections_over_rpc(cloud, server):
    node = cloud.add_host('h1')
    cloud.add_host('h2', memory_mb=4096)

    [selections] = rpcapi.SchedulerAPI().select_destinations(
        cloud.context, _spec(512), [str(uuid.uuid4())], return_objects=True,
        return_alternates=True)

    assert all(isinstance(s, objects.Selection) for s in selections)
    assert [(s.service_host, s.compute_node_uuid) for s in selections][0] == ('h1', node)
    assert len(selections) == 2


def test_no_valid_host_crosses_rpc_with_its_reason(cloud, server):
    cloud.add_host('h1')

    with pytest.raises(exception.NoValidHost, match='enough MEMORY_MB: requested 999999'):
        rpcapi.SchedulerAPI().select_destinations(cloud.context, _spec(999999),
                                                  [str(uuid.uuid4())])
