"""WSGI entry points for running the API under an external WSGI server."""
