#!/usr/bin/env python3
"""
Start-up figures: the first answer of a fresh process, and the cost of precompiling.

    python benchmarks/bench_start.py [--runs 3] [--humble PYTHON] [--out FILE]

For each interpreter (this one, and with ``--humble`` the Python of an environment with
Humble's versions, NumPy 1.21 and numba 0.55), in a fresh numba cache directory
(``NUMBA_CACHE_DIR``), so that "cold" means what a new machine, container or venv sees:

- the command line's first answer, ``python -m rbd_dynamics demo_arm.urdf --q ...``, from an
  empty cache and again after ``precompile``, against Pinocchio's one-shot script (load the
  same URDF, print the gravity torques) measured in the same run, in alternating order;
- ``python -m rbd_dynamics precompile`` from an empty cache;
- where rclpy is importable, the node's description -> first torque and -> compiled path in
  use with the precompiled cache (``bench_node.py startup``).

Every figure is a wall-clock time of whole processes, as a user meets it. Results go to stdout
and, as JSON, to ``--out`` (default benchmarks/results/start.json). Benchmarks are not tests:
nothing here asserts a time.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, 'results')

#: Targets: the command line within this factor of Pinocchio's one-shot time from an empty
#: cache; precompile within these seconds; the node's compiled path within this many seconds of
#: the description after precompile.
CLI_FACTOR = 2.0
PRECOMPILE_S = {'jazzy': 20.0, 'humble': 90.0}
NODE_COMPILED_S = 2.0

PINOCCHIO_SCRIPT = """
import sys
import numpy as np
import pinocchio as pin
model = pin.buildModelFromUrdf(sys.argv[1])
data = model.createData()
q = np.zeros(model.nq)
print(pin.computeGeneralizedGravity(model, data, q))
"""


def timed(cmd, env=None):
    """Run ``cmd``; its wall time [s] (a failure stops the benchmark with its output)."""
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    spent = time.perf_counter() - start
    if done.returncode:
        sys.exit('%s failed (%d):\n%s%s' % (' '.join(cmd), done.returncode, done.stdout,
                                            done.stderr))
    return spent


def demo_urdf(python):
    return subprocess.run([python, '-c', 'from rbd_dynamics.resources import demo_urdf_path; '
                           'print(demo_urdf_path())'], capture_output=True, text=True,
                          check=True).stdout.strip()


def versions(python):
    script = ('import sys, numpy, numba; print("Python %d.%d.%d, NumPy %s, numba %s" % '
              '(sys.version_info[:3] + (numpy.__version__, numba.__version__)))')
    return subprocess.run([python, '-c', script], capture_output=True, text=True,
                          check=True).stdout.strip()


def has_module(python, name):
    return subprocess.run([python, '-c', 'import %s' % name], capture_output=True).returncode == 0


def median(values):
    values = sorted(values)
    n = len(values)
    return float('nan') if not n else (values[n // 2] if n % 2
                                       else 0.5 * (values[n // 2 - 1] + values[n // 2]))


def measure(python, label, runs, pinocchio_python):
    """Measure one interpreter; return its figures for the JSON report."""
    urdf = demo_urdf(python)
    cli = [python, '-m', 'rbd_dynamics', urdf, '--q'] + ['0.1'] * 8
    pinocchio = [pinocchio_python, '-c', PINOCCHIO_SCRIPT, urdf] if pinocchio_python else None
    out = {'python': python, 'versions': versions(python), 'cli_cold_s': [], 'cli_warm_s': [],
           'pinocchio_s': [], 'precompile_s': []}
    print('%s: %s' % (label, out['versions']), flush=True)
    for run in range(runs):
        cache = tempfile.mkdtemp(prefix='rbd_bench_cache_')
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        try:
            # alternate the order, so that a change of machine load falls on both alike
            if pinocchio and run % 2:
                out['pinocchio_s'].append(timed(pinocchio))
            out['cli_cold_s'].append(timed(cli, env))
            if pinocchio and not run % 2:
                out['pinocchio_s'].append(timed(pinocchio))
            out['precompile_s'].append(timed([python, '-m', 'rbd_dynamics', 'precompile'], env))
            out['cli_warm_s'].append(timed(cli, env))
        finally:
            shutil.rmtree(cache, ignore_errors=True)
        print('  run %d: command line %.3f s cold, %.3f s warm; Pinocchio %s; precompile %.1f s'
              % (run, out['cli_cold_s'][-1], out['cli_warm_s'][-1],
                 '%.3f s' % out['pinocchio_s'][-1] if out['pinocchio_s'] else 'not measured',
                 out['precompile_s'][-1]), flush=True)
    if out['pinocchio_s']:
        ratios = [c / p for c, p in zip(out['cli_cold_s'], out['pinocchio_s'])]
        out['cli_ratio'] = median(ratios)
        print("  command line, empty cache: %.2fx Pinocchio's one-shot (target <= %gx)"
              % (out['cli_ratio'], CLI_FACTOR))
    print('  precompile: median %.1f s (target <= %g s)'
          % (median(out['precompile_s']), PRECOMPILE_S[label]))
    return out


def node_after_precompile(python, runs):
    """Run ``bench_node.py startup`` with a precompiled cache; return its JSON report."""
    cache = tempfile.mkdtemp(prefix='rbd_bench_cache_')
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    report = os.path.join(cache, 'node.json')
    try:
        timed([python, '-m', 'rbd_dynamics', 'precompile'], env)
        subprocess.run([python, os.path.join(HERE, 'bench_node.py'), 'startup', '--warm-only',
                        '--runs', str(runs), '--out', report], env=env, check=True)
        with open(report) as stream:
            return json.load(stream)
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--runs', type=int, default=3)
    parser.add_argument('--humble', default=None, help='the Python of an environment '
                        'with the versions of Humble (NumPy 1.21, numba 0.55)')
    parser.add_argument('--out', default=os.path.join(RESULTS, 'start.json'))
    args = parser.parse_args()
    pinocchio = sys.executable if has_module(sys.executable, 'pinocchio') else None
    report = {'jazzy': measure(sys.executable, 'jazzy', args.runs, pinocchio)}
    if args.humble:
        report['humble'] = measure(args.humble, 'humble', args.runs, pinocchio)
    if has_module(sys.executable, 'rclpy'):
        node = node_after_precompile(sys.executable, args.runs)
        compiled = [v for v in node.get('compiled_path_warm_s', []) if v is not None]
        report['node_first_torque_s'] = node.get('startup_warm_s', [])
        report['node_compiled_s'] = node.get('compiled_path_warm_s', [])
        print('node after precompile: compiled path in use %s s after the description '
              '(target <= %g s)' % (', '.join('%.2f' % v for v in compiled) or 'never',
                                    NODE_COMPILED_S))
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, 'w') as stream:
        json.dump(report, stream, indent=1)
    print('results: %s' % args.out)


if __name__ == '__main__':
    main()
