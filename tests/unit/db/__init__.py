"""Tests of novalite.db."""
