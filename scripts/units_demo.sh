#!/usr/bin/env bash
# Set everything up (scripts/setup_env.sh) and run the units and payload demo end to end on the
# bundled arm: a simulated driver that reports and takes efforts in a drive unit (a scale per
# joint nobody is told) -> excite -> record the excitation with the hand empty and with a 2 kg
# calibration weight -> identify --effort-scale estimate --load -> record with an unknown
# payload -> payload -> gravity compensation in the driver's units with the estimated payload.
# Prints the scales and the payload against the truth and writes units_output/drift.png.
# Arguments go to scripts/units_demo.py (e.g. --seed 5 --duration 30).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${RBD_VENV:-$repo/.venv}"
bash "$repo/scripts/setup_env.sh"
cd "$repo"
exec "$venv/bin/python" scripts/units_demo.py --out "$repo/units_output" "$@"
