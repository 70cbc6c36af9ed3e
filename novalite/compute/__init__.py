"""The compute service: API-side orchestration (api.py) and the host agent (manager.py)."""
