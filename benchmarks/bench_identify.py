#!/usr/bin/env python3
"""
``python -m rbd_dynamics identify`` on a long recording, end to end.

    python benchmarks/bench_identify.py [--duration 600] [--rate 1000]
        [--out benchmarks/results/identify.json]

Writes a recording of the demo arm (8 independent joints: 7 arm joints and a finger; position,
velocity and measured effort) at ``--rate`` Hz for ``--duration`` s into a temporary directory:
a sum of sinusoids per joint, efforts of a "true" arm (every link's mass +-30 %, centre of mass
moved by up to 2 cm) with viscous and Coulomb friction and 1 % noise. Then runs the command as a
user would (a process of its own: imports, kernels from numba's cache, reading, merging,
differentiation, regressor stacking, solving, validation on the last fifth, writing) and
prints its wall time, the share of each stage (from the command's own ``time:`` line) and the
process's peak resident memory. Target: at most 60 s for 10 minutes at 1 kHz (600,000 states).
Benchmarks are not tests: nothing asserts a time.
"""

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

import rbd_dynamics as rbd
from rbd_dynamics.resources import demo_urdf_path

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), 'test'))
TARGET_S = 60.0


def write_recording(path, duration, rate, seed=0):
    """Write the true arm's recording; returns ``(states, seconds to write)``."""
    from support.identification import efforts, joint_limits, Motion, \
        perturbed_description, write_joint_states
    with open(demo_urdf_path()) as stream:
        text = stream.read()
    nominal = rbd.Model.from_urdf(text)
    true = rbd.Model.from_urdf(perturbed_description(text, seed=seed))
    rng = np.random.default_rng(seed)
    viscous, coulomb = rng.uniform(0.2, 2.0, nominal.nv), rng.uniform(0.2, 2.0, nominal.nv)
    motion = Motion(nominal, joint_limits(text), seed=seed)
    start = time.perf_counter()
    t = np.arange(int(round(duration * rate))) / rate
    q, qd, qdd = motion(t)
    tau = efforts(true, q, qd, qdd, viscous, coulomb)
    tau += 0.01 * np.sqrt((tau ** 2).mean(axis=0)) * rng.normal(size=tau.shape)
    write_joint_states(path, nominal.joint_names, t, q, qd, tau)
    return len(t), time.perf_counter() - start


def parse_timing(stdout):
    """``{stage: seconds}`` of the command's ``time: stage 1.2 s, ...`` line."""
    for line in stdout.splitlines():
        if line.startswith('time: '):
            out = {}
            for item in line[len('time: '):].split(', '):
                stage, value, _ = item.rsplit(' ', 2)
                out[stage] = float(value)
            return out
    return {}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--duration', type=float, default=600.0, help='recording length [s]')
    parser.add_argument('--rate', type=float, default=1000.0, help='joint states per second')
    parser.add_argument('--out', default=None, help='JSON file for the figures')
    args = parser.parse_args(argv)
    work = tempfile.mkdtemp(prefix='bench_identify_')
    try:
        bag = os.path.join(work, 'bag')
        count, write_s = write_recording(bag, args.duration, args.rate)
        size = sum(os.path.getsize(os.path.join(bag, f)) for f in os.listdir(bag))
        print('recording: %d joint states (%g s at %g Hz, %.0f MB), written in %.1f s'
              % (count, args.duration, args.rate, size / 1e6, write_s))
        command = [sys.executable, '-m', 'rbd_dynamics', 'identify', demo_urdf_path(), bag,
                   '--out', os.path.join(work, 'out')]
        start = time.perf_counter()
        proc = subprocess.run(command, capture_output=True, text=True)
        wall = time.perf_counter() - start
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if proc.returncode != 0:
        print(proc.stdout + proc.stderr)
        print('the command failed (exit %d)' % proc.returncode)
        return 1
    print(proc.stdout)
    stages = parse_timing(proc.stdout)
    accounted = sum(stages.values())
    stages['start-up (imports, kernels from the cache)'] = max(0.0, wall - accounted)
    print('%-46s %9s %7s' % ('stage', 'wall [s]', 'share'))
    for stage, seconds in stages.items():
        print('%-46s %9.2f %6.1f %%' % (stage, seconds, 100.0 * seconds / wall))
    print('%-46s %9.2f' % ('whole command', wall))
    print('peak resident memory of the command: %.0f MB' % peak_mb)
    print('identify, %d states: %.1f s (target <= %g s): %s'
          % (count, wall, TARGET_S, 'met' if wall <= TARGET_S else 'NOT met'))
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, 'w') as stream:
            json.dump({'machine': platform.platform(), 'cpus': os.cpu_count(),
                       'states': count, 'duration_s': args.duration, 'rate_hz': args.rate,
                       'wall_s': wall, 'stages_s': stages, 'peak_rss_mb': peak_mb,
                       'target_s': TARGET_S}, stream, indent=1)
    return 0


if __name__ == '__main__':
    sys.exit(main())
