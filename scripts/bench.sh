#!/usr/bin/env bash
# Set everything up (scripts/setup_env.sh) and run the benchmarks: the library against
# Pinocchio, the node against a bare rclpy relay (latency, drops, start-up), a soak, the
# offline bag tool against the bag reader alone, identify on a 10-minute recording and the
# excitation design; then print every target with its figure and verdict
# (benchmarks/summary.py), and write that table into docs/performance.md.
#
#   bash scripts/bench.sh           about 25 minutes (the soak alone takes 10)
#   bash scripts/bench.sh --quick   about 6 minutes: shorter blocks, a 2-minute soak, a
#                                   10-minute recording
#
# Results (JSON) go to benchmarks/results/. Benchmarks are not tests: run them on a quiet
# machine; every figure is a ratio against a reference measured in the same run.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${RBD_VENV:-$repo/.venv}"
bash "$repo/scripts/setup_env.sh"
cd "$repo"
quick=()
bag=(--duration 3600)
[ "${1:-}" = "--quick" ] && quick=(--quick) && bag=(--duration 600)
# DDS traffic stays on this machine, in a domain of its own
export ROS_DOMAIN_ID="${ROS_DOMAIN_ID:-$((1 + $$ % 100))}"
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
py="$venv/bin/python"
"$py" benchmarks/bench_library.py "${quick[@]}"
"$py" benchmarks/bench_node.py all "${quick[@]}"
"$py" benchmarks/bench_node.py soak "${quick[@]}"
"$py" benchmarks/bench_bag.py "${bag[@]}" --out benchmarks/results/bag.json
# identify on 10 minutes at 1 kHz (600,000 states), end to end
"$py" benchmarks/bench_identify.py --duration 600 --out benchmarks/results/identify.json
# excite on the 7-DoF demo arm, end to end
"$py" benchmarks/bench_excite.py --out benchmarks/results/excite.json
# start-up: this environment, and Humble's versions where scripts/test_humble_versions.sh
# built them
humble=()
[ -x "$repo/.venv-humble/bin/python" ] && humble=(--humble "$repo/.venv-humble/bin/python")
"$py" benchmarks/bench_start.py "${humble[@]}" $([ ${#quick[@]} = 0 ] || echo --runs 1)
exec "$py" benchmarks/summary.py --write-docs
