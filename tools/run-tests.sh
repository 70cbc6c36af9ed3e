#!/usr/bin/env bash
# The test suite: lint (ruff), the type checker (mypy over novalite/), unit and functional
# tests, then the devstack-style tests.
# Extra arguments go to pytest. Needs tools/setup.sh first. MariaDB (127.0.0.1:3306, root)
# and PostgreSQL (127.0.0.1:5432, postgres, trust) must be running for the migration and
# devstack tests, RabbitMQ (127.0.0.1:5672, guest, rabbitmqctl on PATH) for the devstack
# tests. NOVALITE_SKIP_DEVSTACK=1 leaves the devstack tests out.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/ruff check novalite tests
.venv/bin/mypy
# A test that hangs fails (with the stacks of its threads) instead of holding the run.
.venv/bin/python -m pytest -q -p no:cacheprovider --timeout=600 tests/unit tests/functional "$@"
if [ -z "${NOVALITE_SKIP_DEVSTACK:-}" ]; then
    .venv/bin/python -m pytest -q -p no:cacheprovider --timeout=1500 --durations=25 tests/devstack "$@"
fi
