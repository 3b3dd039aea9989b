#!/usr/bin/env bash
# Set everything up (scripts/setup_env.sh) and run the task-space demo on the bundled arm: the
# simulated driver and the node (command_output: task) over real topics; the hand follows a
# 10 cm circle at 0.2 Hz in operational space, with and without the null-space stiffness, then
# a static push shows the impedance's stiffness. Prints the tracking error, the stiffness per
# axis and the posture error, and writes task_output/task_space.png.
# Arguments go to scripts/task_demo.py (e.g. --periods 4, or --in-process: the library's law in
# one process, without ROS).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${RBD_VENV:-$repo/.venv}"
bash "$repo/scripts/setup_env.sh"
cd "$repo"
exec "$venv/bin/python" scripts/task_demo.py --out "$repo/task_output" "$@"
