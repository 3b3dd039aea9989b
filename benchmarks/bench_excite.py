#!/usr/bin/env python3
"""
``python -m rbd_dynamics excite`` on the 7-DoF demo arm, end to end.

    python benchmarks/bench_excite.py [--duration 20] [--out benchmarks/results/excite.json]

Runs the command as a user would (a process of its own: imports, the kernels from numba's
cache, the design with its default 100 optimiser iterations, the check on the written 10 ms
grid, the YAML) from the demo's start pose, and prints its wall time, the optimiser's own time
and the condition number reached. Target: at most 60 s. Benchmarks are not tests: nothing
asserts a time.
"""

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time

from rbd_dynamics.resources import demo_urdf_path
from rbd_dynamics.ros.demo_setup import Q0

TARGET_S = 60.0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--duration', type=float, default=20.0, help='excitation length [s]')
    parser.add_argument('--out', default=None, help='JSON file for the figures')
    args = parser.parse_args(argv)
    work = tempfile.mkdtemp(prefix='bench_excite_')
    try:
        command = [sys.executable, '-m', 'rbd_dynamics', 'excite', demo_urdf_path(),
                   '--duration', '%g' % args.duration, '--start'] + ['%g' % v for v in Q0] \
            + ['--out', work]
        start = time.perf_counter()
        proc = subprocess.run(command, capture_output=True, text=True)
        wall = time.perf_counter() - start
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if proc.returncode != 0:
        print(proc.stdout + proc.stderr)
        print('the command failed (exit %d)' % proc.returncode)
        return 1
    print(proc.stdout)
    found = re.search(r'condition number ([0-9.e+]+) .*; (\d+) optimiser iterations, '
                      r'([0-9.]+) s\)', proc.stdout)
    condition, iterations, design_s = float(found.group(1)), int(found.group(2)), \
        float(found.group(3))
    print('excite, %g s on the 7-DoF demo arm: %.1f s (design %.1f s, %d iterations, '
          'condition number %.4g; target <= %g s): %s'
          % (args.duration, wall, design_s, iterations, condition, TARGET_S,
             'met' if wall <= TARGET_S else 'NOT met'))
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, 'w') as stream:
            json.dump({'machine': platform.platform(), 'cpus': os.cpu_count(),
                       'duration_s': args.duration, 'wall_s': wall, 'design_s': design_s,
                       'iterations': iterations, 'condition': condition,
                       'target_s': TARGET_S}, stream, indent=1)
    return 0


if __name__ == '__main__':
    sys.exit(main())
