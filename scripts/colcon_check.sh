#!/usr/bin/env bash
# Build and test the package the way a ROS 2 workspace does: colcon build, the install space,
# the installed node started once, colcon test. Uses the ROS 2 environment of
# scripts/setup_env.sh (RBD_VENV, default <repo>/.venv); colcon itself goes into a venv of its
# own (RBD_COLCON_VENV, default <repo>/.venv-colcon) that sees the ROS environment's packages
# through a .pth file. The workspace is a temporary directory holding a copy of the checkout's
# tracked and untracked (not ignored) files, so no virtual environment is under its base paths.
# RBD_SETUP_ONLY=1: only make the colcon venv (its interpreter is the ROS environment's base
# interpreter, which must exist), then stop.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${RBD_VENV:-$repo/.venv}"
colcon_venv="${RBD_COLCON_VENV:-$repo/.venv-colcon}"

if [ ! -x "$colcon_venv/bin/colcon" ]; then
  echo "[colcon] installing colcon into $colcon_venv"
  "$venv/bin/python" -c 'import sys; print(sys._base_executable)' >/dev/null
  "$("$venv/bin/python" -c 'import sys; print(sys._base_executable)')" -m venv "$colcon_venv"
  "$colcon_venv/bin/python" -m pip install -q --disable-pip-version-check \
    colcon-common-extensions colcon-ros
fi
if [ "${RBD_SETUP_ONLY:-0}" = 1 ]; then exit 0; fi
bash "$repo/scripts/setup_env.sh" >/dev/null
# colcon builds and tests with its own interpreter: let it see rclpy, pytest and the rest.
ros_site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
colcon_site="$("$colcon_venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
echo "$ros_site" > "$colcon_site/rbd_ros_environment.pth"
# The ROS 2 wheels find their shared libraries through the LD_LIBRARY_PATH their environment's
# interpreter sets up for itself; colcon's interpreter needs the same.
LD_LIBRARY_PATH="$("$venv/bin/python" -c 'import os; print(os.environ.get("LD_LIBRARY_PATH", ""))')"
export LD_LIBRARY_PATH

ws="$(mktemp -d /tmp/rbd_colcon_ws.XXXXXX)"
node_pid=""
cleanup() {
  if [ -n "$node_pid" ]; then kill -INT "$node_pid" 2>/dev/null || true; fi
  rm -rf "$ws"
}
trap cleanup EXIT
mkdir -p "$ws/src/rbd_dynamics"
(cd "$repo" && git ls-files -z --cached --others --exclude-standard \
  | xargs -0 cp --parents -t "$ws/src/rbd_dynamics")

cd "$ws"
export PATH="$colcon_venv/bin:$PATH"
echo "[colcon] colcon build in $ws"
colcon build --event-handlers console_direct- >"$ws/build.log" 2>&1 || {
  cat "$ws/build.log"; echo "[colcon] colcon build failed"; exit 1; }

prefix="$ws/install/rbd_dynamics"
for path in lib/rbd_dynamics/rbd_dynamics_node lib/rbd_dynamics/rbd_dynamics_sim \
    lib/rbd_dynamics/rbd_dynamics_trajectory share/rbd_dynamics/package.xml \
    share/rbd_dynamics/launch/rbd_dynamics.launch.py share/rbd_dynamics/config/rbd_dynamics.yaml \
    share/rbd_dynamics/urdf/demo_arm.urdf share/ament_index/resource_index/packages/rbd_dynamics; do
  if [ ! -e "$prefix/$path" ]; then echo "[colcon] missing from the install space: $path"; exit 1; fi
done
echo "[colcon] install space complete"

# The installed node, on the install space only (not the ROS environment's copy of the package).
install_site="$(cd "$prefix" && ls -d lib/python3*/site-packages)"
# The kernels of the install space and of the source copy (which colcon test's own process
# imports, from its working directory) are the ROS environment's where numba would build the
# same code (the same sources, numba, NumPy and Python): loaded, not compiled again by the
# first process of each kind, which took the tests below some 100 s of a core. Where anything
# differs, nothing is shared and they compile.
for copy in "$prefix/$install_site" "$ws/src/rbd_dynamics"; do
  "$venv/bin/python" "$repo/scripts/share_numba_cache.py" "$venv/bin/python" "$copy"
done
params="$ws/params.yaml"
"$venv/bin/python" - "$prefix/share/rbd_dynamics/urdf/demo_arm.urdf" "$params" <<'EOF'
import json, sys
text = open(sys.argv[1]).read()
with open(sys.argv[2], 'w') as out:
    out.write('/**:\n  ros__parameters:\n    robot_description: %s\n' % json.dumps(text))
EOF
log="$ws/node.log"
ROS_DOMAIN_ID=$(( 100 + $$ % 100 )) ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST \
  PYTHONPATH="$prefix/$install_site" AMENT_PREFIX_PATH="$prefix:${AMENT_PREFIX_PATH:-}" \
  PYTHONUNBUFFERED=1 "$venv/bin/python" "$prefix/lib/rbd_dynamics/rbd_dynamics_node" \
  --ros-args --params-file "$params" >"$log" 2>&1 &
node_pid=$!
for _ in $(seq 1 120); do
  if grep -qE "model '?demo_arm'?" "$log"; then break; fi
  if ! kill -0 "$node_pid" 2>/dev/null; then break; fi
  sleep 0.5
done
grep -qE "model '?demo_arm'?" "$log" || { cat "$log"; echo "[colcon] the installed node built no model"; exit 1; }
grep -q "$prefix" <(PYTHONPATH="$prefix/$install_site" "$venv/bin/python" -c \
  'import rbd_dynamics; print(rbd_dynamics.__file__)') || { echo "[colcon] not the installed copy"; exit 1; }
kill -INT "$node_pid"
rc=0; wait "$node_pid" || rc=$?
node_pid=""
if [ "$rc" != 0 ]; then cat "$log"; echo "[colcon] the installed node exited with $rc"; exit 1; fi
echo "[colcon] installed node: model built, clean exit on SIGINT"

# The package checks, the description readers and the tests whose processes import the package
# from where a new process finds it (in a workspace: the install space, not the copy the test
# process imported), which is where colcon's layout differs. The whole suite already ran in the
# ROS environment, the linters (flake8, pep257, copyright) on the same files with the same
# configuration, on Jazzy and on Kilted; RBD_COLCON_TESTS="" runs all of it here too, a pytest
# -k expression a subset.
selection="${RBD_COLCON_TESTS-package_xml or xacro or leniency or urdf_parser_py or command_line or test_compiled_batch or test_compiled_warm_up or test_precompile}"
echo "[colcon] colcon test${selection:+ (pytest -k '$selection')}"
# colcon's interpreter reaches the ROS environment's packages through a .pth line, which does
# not make it read that environment's own .pth files (Pinocchio's cmeel prefix): test modules
# needing those skip here, so the skip rule of CI=true (test/conftest.py) stays with the suite.
if [ -n "$selection" ]; then
  env -u CI colcon test --event-handlers console_direct- --pytest-args -k "$selection" \
    >"$ws/test.log" 2>&1 || true
else
  env -u CI colcon test --event-handlers console_direct- >"$ws/test.log" 2>&1 || true
fi
colcon test-result --verbose || { tail -50 "$ws/test.log"; exit 1; }
