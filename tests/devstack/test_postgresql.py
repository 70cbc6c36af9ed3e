"""The stack on PostgreSQL: API, cell0, cell1 and Placement databases there."""
from __future__ import annotations

# The client scenarios of the MariaDB stack, collected again against this one.
from tests.devstack.test_client_openstack import (  # noqa: F401
    test_compute_service_list,
    test_flavor_create_list_show_delete,
    test_server_create_list_show_delete,
)
from tests.devstack.test_client_sdk import (  # noqa: F401
    conn,
    test_flavor_create_list_get_delete,
    test_server_create_list_get_delete,
)

STACK = {'backend': 'postgresql'}


def test_databases_are_on_postgresql(stack):
    for label, url in stack.db_urls.items():
        assert url.startswith('postgresql'), (label, url)
    # Each cell mapping points at its PostgreSQL database.
    cells = {r.name: r.database_connection for r in stack.query(
        'api', 'SELECT name, database_connection FROM cell_mappings')}
    assert cells == {'cell0': stack.db_urls['cell1_cell0'], 'cell1': stack.db_urls['cell1']}
