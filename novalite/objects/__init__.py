"""Versioned objects: the nouns that cross RPC and hide where each is stored.

Each class registers itself as an attribute of this package (``objects.Instance``),
after ``register_all()`` has imported the modules, as in Nova.
"""


def register_all() -> None:
    # Importing a module registers the objects it defines.
    __import__('novalite.objects.aggregate')
    __import__('novalite.objects.build_request')
    __import__('novalite.objects.cell_mapping')
    __import__('novalite.objects.compute_node')
    __import__('novalite.objects.flavor')
    __import__('novalite.objects.host_mapping')
    __import__('novalite.objects.image_meta')
    __import__('novalite.objects.instance')
    __import__('novalite.objects.instance_action')
    __import__('novalite.objects.instance_fault')
    __import__('novalite.objects.instance_group')
    __import__('novalite.objects.instance_info_cache')
    __import__('novalite.objects.instance_mapping')
    __import__('novalite.objects.keypair')
    __import__('novalite.objects.migration')
    __import__('novalite.objects.request_spec')
    __import__('novalite.objects.selection')
    __import__('novalite.objects.service')
    __import__('novalite.objects.task_log')
