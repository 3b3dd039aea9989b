#!/usr/bin/env bash
# Set everything up (scripts/setup_env.sh) and run the whole test suite against the installed
# package, on two pytest-xdist workers. Extra arguments go to pytest, e.g.
# `bash scripts/test.sh -k pinocchio`.
#
#   RBD_TESTS="paths"       what to run (default: test, the whole suite)
#   RBD_TEST_WORKERS=N      pytest-xdist workers (default 2; 0 runs in this process, the
#                           closed loops too)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${RBD_VENV:-$repo/.venv}"
bash "$repo/scripts/setup_env.sh"
cd "$repo"
# The pytest script (not `python -m pytest`) keeps the source tree off sys.path, so the tests
# exercise the installed package, as a user's environment would. flake8 and pep257 are tests of
# the suite (test/test_flake8.py, test/test_pep257.py), with the configuration a ROS install uses.
# numba's on-disk cache, filled once before the workers start (each would compile otherwise);
# no test waits on a compilation for its figures, this only saves the workers the time
# (in CI the cache starts empty: a kernel precompile's two processes both left to the parent,
# which it reports "not side by side", fails the run here; test_precompile.py checks the same
# on a warm cache only)
precompile_err="$(mktemp)"
(cd /tmp && "$venv/bin/python" -m rbd_dynamics precompile) 2>"$precompile_err" || {
  cat "$precompile_err" >&2; rm -f "$precompile_err"; exit 1; }
cat "$precompile_err" >&2
if grep -q 'not side by side' "$precompile_err"; then
  rm -f "$precompile_err"
  echo "[test] precompile compiled kernels outside its share-out (see above)" >&2
  exit 1
fi
rm -f "$precompile_err"
read -r -a tests <<<"${RBD_TESTS:-test}"
workers="${RBD_TEST_WORKERS:-2}"
# The closed loops (test/loops) run one at a time, in a pytest of their own, beside the rest of
# the tests, which run on the workers at a lower priority (nice 10). A loop is a chain of
# processes in lockstep: it is bound by how soon each one gets a core when its message
# arrives, not by the cores. Two loops at once took as long as one after the other, with a
# third more CPU; beside the rest, the priority keeps the chain moving and the other tests
# take the cores it leaves. With the whole suite, the loops' session then runs the
# excitation's world tests and the identification tests (CPU-bound, about 40 and 25 s of
# a core, no processes): the rest of the suite took 400 s of CI's Jazzy stage, the loops
# 300-330 s beside it; with the collision tests moved, 335-338 s against 290-291 s.
after_loops=(test/identification/test_excite_world.py test/identification/test_identify.py)
loops=()
rest=()
for path in "${tests[@]}"; do
  case "${path%/}" in
    test) rest+=(test --ignore=test/loops)
          for late in "${after_loops[@]}"; do rest+=(--ignore="$late"); done
          loops+=(test/loops "${after_loops[@]}") ;;
    test/loops | test/loops/*) loops+=("$path") ;;
    *) rest+=("$path") ;;
  esac
done
if [ "$workers" -lt 1 ] || [ "${#loops[@]}" = 0 ] || [ "${#rest[@]}" = 0 ]; then
  exec "$venv/bin/pytest" -n "$workers" "${tests[@]}" "$@"
fi
# each session its own DDS domains (test/conftest.py): the rest's workers from $first on, the
# loops' next
first=$((1 + $$ % 100))
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
RBD_TEST_DOMAIN=$((first + workers)) "$venv/bin/pytest" -n 1 "${loops[@]}" "$@" > "$log" 2>&1 &
loops_pid=$!
rest_rc=0
RBD_TEST_DOMAIN=$first nice -n 10 "$venv/bin/pytest" -n "$workers" "${rest[@]}" "$@" \
  || rest_rc=$?
loops_rc=0
wait "$loops_pid" || loops_rc=$?
echo "=== the closed loops (${loops[*]}), run beside the tests above:"
cat "$log"
# pytest's 5 (nothing collected) only where neither part ran a test
if [ "$rest_rc" = 5 ] && [ "$loops_rc" = 5 ]; then exit 5; fi
for rc in "$rest_rc" "$loops_rc"; do
  if [ "$rc" != 0 ] && [ "$rc" != 5 ]; then exit "$rc"; fi
done
exit 0
