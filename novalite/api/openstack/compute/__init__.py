"""The controllers, schemas, views and route table of the Compute API v2.1."""
