#!/usr/bin/env bash
# Set everything up (scripts/setup_env.sh) and run the main job on the bundled demo arm:
# inverse dynamics and gravity compensation at a sample state with a wrench on the wrist sensor.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${RBD_VENV:-$repo/.venv}"
bash "$repo/scripts/setup_env.sh"
exec "$venv/bin/python" -m rbd_dynamics \
  --q 0.3 0.6 -0.2 -1.2 0.1 0.8 0.0 0.02 \
  --qd 0.2 -0.1 0.0 0.3 0.0 -0.2 0.1 0.0 \
  --qdd 1.0 0.5 0.0 -0.5 0.0 0.2 0.0 0.0 \
  --wrench ft_frame 0.0 0.0 -15.0 0.0 0.2 0.0 "$@"
