#!/usr/bin/env bash
# The test suite: lint (ruff), then unit and functional tests. Extra arguments go to pytest.
# Needs tools/setup.sh first. MariaDB (127.0.0.1:3306, root) and PostgreSQL
# (127.0.0.1:5432, postgres, trust) must be running for the migration tests.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/ruff check novalite tests
.venv/bin/python -m pytest -q -p no:cacheprovider tests/unit tests/functional "$@"
