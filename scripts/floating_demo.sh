#!/usr/bin/env bash
# Set everything up (scripts/setup_env.sh) and run the floating-base demo: a Unitree G1 (from
# example-robot-data) standing in MuJoCo on its own feet, its arms raised and its torso leaned
# under joint PD, first alone, then with the node's gravity compensation (feet as contacts,
# then feet's force/torque sensors). Prints the arms' tracking error and the torso's lean error
# of each run and writes floating_output/floating_base.png.
# Arguments go to scripts/floating_demo.py (e.g. --seconds 4, or --feedforward: the node's
# feedforward from the measured base acceleration instead, which runs away on a standing robot).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${RBD_VENV:-$repo/.venv}"
bash "$repo/scripts/setup_env.sh"
cd "$repo"
exec "$venv/bin/python" scripts/floating_demo.py --out "$repo/floating_output" "$@"
