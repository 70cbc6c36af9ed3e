"""Revisions of the API database schema."""
