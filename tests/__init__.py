"""novalite's tests.

Importing novalite first picks the oslo.service backend before any library (such as
oslo.messaging) imports oslo.service and binds the eventlet default.
"""
import novalite  # noqa: F401
