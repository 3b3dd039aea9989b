#!/usr/bin/env bash
# Set everything up (scripts/setup_env.sh) and run the whole test suite against the installed
# package. Extra arguments go to pytest, e.g. `bash scripts/test.sh -k pinocchio`.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${RBD_VENV:-$repo/.venv}"
bash "$repo/scripts/setup_env.sh"
cd "$repo"
# The pytest script (not `python -m pytest`) keeps the source tree off sys.path, so the tests
# exercise the installed package, as a user's environment would.
"$venv/bin/flake8" .
exec "$venv/bin/pytest" test "$@"
