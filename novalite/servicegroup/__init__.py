"""Service liveness: whether a service's heartbeats are recent enough to call it up."""
from novalite.servicegroup.api import API

__all__ = ['API']
