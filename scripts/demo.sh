#!/usr/bin/env bash
# Set everything up (scripts/setup_env.sh) and run the main job on the bundled demo arm: the arm
# simulated in MuJoCo, controlled by the rbd_dynamics node (computed torque with PD gains, the
# wrist F/T sensor compensated for the gripper) through real ROS 2 topics for 10 s of simulated
# time; prints tracking errors, torque ranges and the node's compute time, and writes
# demo_output/demo.png. Arguments go to the demo (e.g. --seconds 20).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${RBD_VENV:-$repo/.venv}"
bash "$repo/scripts/setup_env.sh"
cd "$repo"
exec "$venv/bin/python" -m rbd_dynamics.ros.demo --out "$repo/demo_output" "$@"
