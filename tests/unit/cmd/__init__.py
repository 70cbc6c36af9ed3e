"""Tests of the command-line tools (novalite-manage, novalite-status)."""
