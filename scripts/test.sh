#!/usr/bin/env bash
# Set everything up (scripts/setup_env.sh) and run the whole test suite against the installed
# package, on two pytest-xdist workers. Extra arguments go to pytest, e.g.
# `bash scripts/test.sh -k pinocchio`.
#
#   RBD_TESTS="paths"       what to run (default: test, the whole suite)
#   RBD_TEST_WORKERS=N      pytest-xdist workers (default 2; 0 runs in this process)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${RBD_VENV:-$repo/.venv}"
bash "$repo/scripts/setup_env.sh"
cd "$repo"
# The pytest script (not `python -m pytest`) keeps the source tree off sys.path, so the tests
# exercise the installed package, as a user's environment would.
"$venv/bin/flake8" .
# numba's on-disk cache, filled once before the workers start (each would compile otherwise);
# no test waits on a compilation for its figures, this only saves the workers the time
(cd /tmp && "$venv/bin/python" -m rbd_dynamics precompile)
read -r -a tests <<<"${RBD_TESTS:-test}"
exec "$venv/bin/pytest" -n "${RBD_TEST_WORKERS:-2}" "${tests[@]}" "$@"
