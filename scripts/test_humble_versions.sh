#!/usr/bin/env bash
# The library tests on Ubuntu 22.04's (ROS 2 Humble's) versions: Python 3.10, NumPy 1.21.5,
# numba 0.55.2. No ROS here (Humble has no wheels in the Python registry), so only the layers
# without ROS run (RBD_HUMBLE_TESTS, default test/library test/compiled test/control
# test/analysis test/world test/identification); what their modules miss here skips, and
# RBD_ALLOWED_MISSING tells test/conftest.py which missing test dependencies are expected in
# this run. Pinocchio has no build for NumPy 1.21, so the
# cross-check against it skips too. numba's cache is filled once before the two pytest-xdist
# workers start, so they load the compiled kernels rather than each compile them.
#
#   RBD_HUMBLE_VENV=path   the environment (default: <repo>/.venv-humble)
#   RBD_PYTHON310=path     the Python 3.10 to build it from
#   RBD_HUMBLE_TESTS=paths what to run (RBD_HUMBLE_TESTS=test: the whole suite)
#   RBD_SETUP_ONLY=1       build the environment and install the package, run nothing
# Extra arguments go to pytest. Exits 0 with a notice when no Python 3.10 exists.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${RBD_HUMBLE_VENV:-$repo/.venv-humble}"

python=""
# (a pyenv shim is found on PATH but refuses to run when 3.10 is not a selected version: run
# each candidate to know)
for cand in "${RBD_PYTHON310:-}" python3.10 "$HOME"/.pyenv/versions/3.10*/bin/python3.10; do
  if [ -n "$cand" ] && "$cand" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 10))' \
      >/dev/null 2>&1; then
    python="$cand"; break
  fi
done
if [ -z "$python" ]; then
  echo "[humble] no python3.10 here: the run on Humble's versions is skipped"
  exit 0
fi

if [ ! -x "$venv/bin/python" ]; then
  echo "[humble] creating $venv with $python"
  "$python" -m venv "$venv"
fi
stamp="$venv/.rbd_setup_humble"
if [ ! -f "$stamp" ] || [ "$0" -nt "$stamp" ] || [ "$repo/setup.py" -nt "$stamp" ]; then
  pip_q=(-q --disable-pip-version-check)
  "$venv/bin/python" -m pip install "${pip_q[@]}" numpy==1.21.5 numba==0.55.2 llvmlite==0.38.1 \
    pytest pytest-xdist hypothesis example-robot-data xacro urdfdom-py
  touch "$stamp"
fi
source_hash="$(cd "$repo" && find rbd_dynamics resource urdf launch config setup.py setup.cfg \
  package.xml -type f ! -name '*.pyc' ! -path '*/__pycache__/*' -print0 2>/dev/null \
  | sort -z | xargs -0 sha1sum | sha1sum | cut -d' ' -f1)"
if [ "$(cat "$venv/.rbd_installed_source" 2>/dev/null)" != "$source_hash" ]; then
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps --force-reinstall \
    "$repo" >/dev/null
  echo "$source_hash" > "$venv/.rbd_installed_source"
fi
"$venv/bin/python" -c 'import numpy, numba, sys
print("[humble] Python %d.%d.%d, NumPy %s, numba %s" % (sys.version_info[:3]
      + (numpy.__version__, numba.__version__)))'

if [ "${RBD_SETUP_ONLY:-0}" = 1 ]; then
  exit 0
fi
cd "$repo"
export RBD_ALLOWED_MISSING="rclpy,std_msgs,sensor_msgs,geometry_msgs,trajectory_msgs,diagnostic_msgs,std_srvs,nav_msgs,pinocchio,pin,mujoco,matplotlib,psutil,rosbags,yaml,scipy,cvxpy,ament_flake8,ament_pep257"
# numba's on-disk cache, filled once before the workers start (each would compile otherwise)
(cd /tmp && "$venv/bin/python" -m rbd_dynamics precompile)
read -r -a tests <<<"${RBD_HUMBLE_TESTS:-test/library test/compiled test/control test/analysis test/world test/identification}"
exec "$venv/bin/pytest" -n "${RBD_TEST_WORKERS:-2}" "${tests[@]}" "$@"
