#!/usr/bin/env bash
# The library tests on Ubuntu 22.04's (ROS 2 Humble's) versions: Python 3.10, NumPy 1.21.5,
# numba 0.55.2. No ROS here (Humble has no wheels in the Python registry), so the node tests
# skip; RBD_ALLOWED_MISSING tells test/conftest.py which missing test dependencies are expected
# in this run. Pinocchio has no build for NumPy 1.21, so the cross-check against it skips too.
#
#   RBD_HUMBLE_VENV=path   the environment (default: <repo>/.venv-humble)
#   RBD_PYTHON310=path     the Python 3.10 to build it from
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
    pytest hypothesis example-robot-data xacro urdfdom-py
  touch "$stamp"
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps --force-reinstall \
  "$repo" >/dev/null
"$venv/bin/python" -c 'import numpy, numba, sys
print("[humble] Python %d.%d.%d, NumPy %s, numba %s" % (sys.version_info[:3]
      + (numpy.__version__, numba.__version__)))'

cd "$repo"
export RBD_ALLOWED_MISSING="rclpy,std_msgs,sensor_msgs,geometry_msgs,trajectory_msgs,diagnostic_msgs,std_srvs,pinocchio,pin,mujoco,matplotlib,psutil,rosbags,yaml,ament_flake8,ament_pep257"
exec "$venv/bin/pytest" test "$@"
