#!/usr/bin/env bash
# Set everything up (scripts/setup_env.sh) and run the identification demo end to end on the
# bundled arm, simulated as it "really" is (masses off by up to 30 %, centres of mass moved by
# up to 2 cm, friction the description does not know): excite -> play the excitation through
# the simulated JointTrajectoryController -> record the joint states -> identify -> computed
# torque on the 0.5 Hz swings with the description and with the identified model. Prints the
# tracking RMS of both and writes identify_output/tracking.png and
# identify_output/identified/identification.png. Arguments go to scripts/identify_demo.py
# (e.g. --seed 5 --duration 30).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${RBD_VENV:-$repo/.venv}"
bash "$repo/scripts/setup_env.sh"
cd "$repo"
exec "$venv/bin/python" scripts/identify_demo.py --out "$repo/identify_output" "$@"
