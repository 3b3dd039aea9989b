#!/usr/bin/env python3
"""
Library figures against Pinocchio, measured side by side in one run.

    python benchmarks/bench_library.py [--quick] [--out benchmarks/results/library.json]
    python benchmarks/bench_library.py --baseline DIR [--quick]
    python benchmarks/bench_library.py --quick --only mass_matrix --only jacobian

``--only WORD`` (repeatable) times only the single-state rows whose name contains a ``WORD``
(the batches and the model build are left out), e.g. the equations of motion's rows.

``--baseline DIR`` times this package against another copy of it instead of Pinocchio: ``DIR``
holds an ``rbd_dynamics`` package (e.g. ``git archive <commit> rbd_dynamics | tar -x -C DIR``),
imported beside this one as ``rbd_dynamics_baseline``; the ratios are this / that.

For each case the two functions are timed in short alternating blocks on the same state, so a
change of machine load falls on both alike. Each pair of neighbouring blocks gives one ratio;
the table prints the median time per call of each (10th-90th percentile of the blocks) and the
median of the paired ratios with its 10th-90th percentile spread; the verdict is on that
median. Needs ``pin`` and ``example-robot-data`` (test dependencies). Benchmarks are not
tests: nothing asserts a time.
"""

import argparse
import json
import os
import platform
import sys
import time
import timeit
import warnings

import numpy as np

import rbd_dynamics as rbd
from rbd_dynamics import compiled
from rbd_dynamics.dynamics import rnea_reference

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), 'test'))

try:
    import pinocchio as pin
    from support.robots import PinocchioPair, robots_directory
except ImportError as exc:  # pragma: no cover
    sys.exit('bench_library needs pin and example-robot-data (pip install pin '
             'example-robot-data): %s' % exc)

ARM = 'panda_description/urdf/panda.urdf'
TREE = 'talos_data/robots/talos_reduced.urdf'
BIG = 'tiago_description/robots/tiago_dual.urdf'
#: The robots of the single-state rows, as a user calls the functions (the batches: the first
#: arm and the first humanoid only).
ROBOTS = (('7-DoF arm (panda)', ARM), ('7-DoF arm (xarm7)', 'xarm_description/urdf/xarm7.urdf'),
          ('6-DoF arm (ur5)', 'ur_description/urdf/ur5_robot.urdf'),
          ('32-DoF humanoid (talos_reduced)', TREE),
          ('29-DoF humanoid (g1)', 'g1_description/urdf/g1_29dof_rev_1_0.urdf'))
BATCHES = (ARM, TREE)


def deepest_link(model):
    """Return the link with the most joints between it and the root (a tool, a foot)."""
    def depth(link):
        body, count = model.link_body[link], 0
        while body >= 0:
            body, count = model.parent[body], count + 1
        return count
    return max(model.link_names, key=depth)


def per_call(fn, number, blocks):
    """Seconds per call of each block."""
    return [t / number for t in timeit.repeat(fn, number=number, repeat=blocks)]


def side_by_side(ours, ref, number, blocks):
    """Alternate blocks of ``ours`` and ``ref``: their per-call times [s]."""
    a, b = [], []
    for _ in range(blocks):
        a += per_call(ours, number, 1)
        b += per_call(ref, number, 1)
    return np.array(a), np.array(b)


def stats(values):
    return {'median': float(np.median(values)), 'p10': float(np.percentile(values, 10)),
            'p90': float(np.percentile(values, 90))}


def row(report, name, ours, ref, target, unit=1e-6, label='us'):
    """Print and record one comparison; ``ours`` and ``ref`` are paired block times."""
    s_ours, s_ref, s_ratio = stats(ours), stats(ref), stats(ours / ref)
    ratio = s_ratio['median']
    ok = ratio <= target
    print('%-46s %8.2f [%6.2f-%6.2f] %s  vs %8.2f [%6.2f-%6.2f]  ratio %5.2fx [%4.2f-%4.2f]'
          '  target <= %.2fx  %s'
          % (name, s_ours['median'] / unit, s_ours['p10'] / unit, s_ours['p90'] / unit, label,
             s_ref['median'] / unit, s_ref['p10'] / unit, s_ref['p90'] / unit, ratio,
             s_ratio['p10'], s_ratio['p90'], target, 'PASS' if ok else 'FAIL'), flush=True)
    report[name] = {'ours': s_ours, 'reference': s_ref, 'ratio': ratio,
                    'ratio_spread': s_ratio, 'blocks': len(ours), 'target': target, 'pass': ok}


#: ``--only`` words: the single-state rows to time (all when empty).
ONLY = []


def wanted(name):
    """Tell whether the single-state row ``name`` is to be timed."""
    return not ONLY or any(word in name for word in ONLY)


def load_baseline(directory):
    """Import the ``rbd_dynamics`` package in ``directory`` as ``rbd_dynamics_baseline``."""
    import importlib.util
    init = os.path.join(os.path.abspath(directory), 'rbd_dynamics', '__init__.py')
    if not os.path.isfile(init):
        sys.exit('no rbd_dynamics package in %s' % directory)
    spec = importlib.util.spec_from_file_location(
        'rbd_dynamics_baseline', init, submodule_search_locations=[os.path.dirname(init)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def against_baseline(base, root, number, blocks, report):
    """Single states and batches of this package against ``base`` (another copy of it)."""
    print('rbd_dynamics here vs the baseline in %s; median [p10-p90] per call'
          % os.path.dirname(os.path.dirname(base.__file__)))
    rng = np.random.default_rng(0)
    for label, rel in (('7-DoF arm (panda)', ARM), ('32-DoF humanoid (talos_reduced)', TREE)):
        path = os.path.join(root, rel)
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            model = rbd.Model.from_urdf_file(path)
            other = base.Model.from_urdf_file(path)
        q, qd, qdd = (rng.uniform(-1, 1, model.nq), rng.normal(size=model.nv),
                      rng.normal(size=model.nv))
        f_ext = {model.link_names[-1]: rng.normal(size=6)}
        for name, ours, theirs in (
                ('rnea', lambda: rbd.rnea(model, q, qd, qdd),
                 lambda: base.rnea(other, q, qd, qdd)),
                ('rnea with a wrench', lambda: rbd.rnea(model, q, qd, qdd, f_ext),
                 lambda: base.rnea(other, q, qd, qdd, f_ext)),
                ('gravity_torques', lambda: rbd.gravity_torques(model, q),
                 lambda: base.gravity_torques(other, q))):
            np.testing.assert_allclose(ours(), theirs(), rtol=0, atol=1e-9)
            row(report, '%s, %s' % (name, label), *side_by_side(ours, theirs, number, blocks),
                1.05)
        for batch in (64, 10000):  # one thread, then ranges on several
            Q = rng.uniform(-1, 1, (batch, model.nq))
            QD, QDD = rng.normal(size=(2, batch, model.nv))
            ours = lambda: rbd.rnea(model, Q, QD, QDD)  # noqa: E731
            theirs = lambda: base.rnea(other, Q, QD, QDD)  # noqa: E731
            np.testing.assert_allclose(ours(), theirs(), rtol=0, atol=1e-9)
            repeat = max(2, 20000 // batch)
            a, b = side_by_side(ours, theirs, repeat, max(5, blocks // 4))
            row(report, 'rnea batch of %d / state, %s' % (batch, label), a / batch, b / batch,
                1.05)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--quick', action='store_true', help='fewer blocks (about a minute)')
    parser.add_argument('--out', default=os.path.join(HERE, 'results', 'library.json'))
    parser.add_argument('--baseline', metavar='DIR',
                        help='compare with the rbd_dynamics package in DIR, not Pinocchio')
    parser.add_argument('--only', action='append', default=[], metavar='WORD',
                        help='time only the single-state rows whose name contains WORD')
    args = parser.parse_args()
    ONLY.extend(args.only)
    root = robots_directory()
    if root is None:
        sys.exit('example-robot-data is not installed')
    blocks = 41 if args.quick else 201
    number = 1000 if args.quick else 2000
    if args.baseline:
        report = {}
        against_baseline(load_baseline(args.baseline), root, number, blocks, report)
        return
    report = {'machine': {'cpus': os.cpu_count(), 'python': sys.version.split()[0],
                          'numpy': np.__version__, 'pinocchio': pin.__version__,
                          'platform': platform.platform(), 'compiled_path': compiled.AVAILABLE},
              'quick': bool(args.quick)}
    print('rbd_dynamics %s (compiled path: %s) vs Pinocchio %s; median [p10-p90] per call'
          % (rbd.__version__, 'numba' if compiled.AVAILABLE else 'off', pin.__version__))
    rng = np.random.default_rng(0)
    for label, rel in ROBOTS:
        pair = PinocchioPair(os.path.join(root, rel), pin)
        model, pm, pd = pair.model, pair.pin_model, pair.pin_data
        q, qd, qdd = pair.random_q(rng), rng.normal(size=model.nv), rng.normal(size=model.nv)
        pq, pv, pa = pair.pin_state(q, qd, qdd)
        if wanted('rnea'):
            row(report, 'rnea, %s' % label,
                *side_by_side(lambda: rbd.rnea(model, q, qd, qdd),
                              lambda: pin.rnea(pm, pd, pq, pv, pa), number, blocks), 1.0)
        if wanted('gravity_torques'):
            row(report, 'gravity_torques, %s' % label,
                *side_by_side(lambda: rbd.gravity_torques(model, q),
                              lambda: pin.computeGeneralizedGravity(pm, pd, pq), number,
                              blocks), 1.0)
        link = deepest_link(model)
        frame = pm.getFrameId(link, pin.BODY)
        for name, ours, ref in (
                ('mass_matrix', lambda: rbd.mass_matrix(model, q),
                 lambda: pin.crba(pm, pd, pq)),
                ('coriolis_matrix', lambda: rbd.coriolis_matrix(model, q, qd),
                 lambda: pin.computeCoriolisMatrix(pm, pd, pq, pv)),
                # as a user calls it: the link by name, the frame by keyword
                ('jacobian of %s' % link, lambda: rbd.jacobian(model, q, link, frame='world'),
                 lambda: pin.computeFrameJacobian(pm, pd, pq, frame, pin.LOCAL_WORLD_ALIGNED)),
                ('jacobian local of %s' % link,
                 lambda: rbd.jacobian(model, q, link, frame='local'),
                 lambda: pin.computeFrameJacobian(pm, pd, pq, frame, pin.LOCAL)),
                ('regressor', lambda: rbd.regressor(model, q, qd, qdd),
                 lambda: pin.computeJointTorqueRegressor(pm, pd, pq, pv, pa)),
                # Pinocchio: forward kinematics, then the frame's placement or acceleration
                ('link_pose of %s' % link, lambda: rbd.link_pose(model, q, link),
                 lambda: (pin.framesForwardKinematics(pm, pd, pq),
                          pd.oMf[frame].homogeneous)),
                ('link_acceleration of %s' % link,
                 lambda: rbd.link_acceleration(model, q, qd, qdd, link),
                 lambda: (pin.forwardKinematics(pm, pd, pq, pv, pa),
                          pin.getFrameClassicalAcceleration(pm, pd, frame,
                                                            pin.LOCAL_WORLD_ALIGNED)))):
            if not wanted(name):
                continue
            ours()  # the equations of motion compile at their first call
            row(report, '%s, %s' % (name.split(' of ')[0], label),
                *side_by_side(ours, ref, number, blocks), 1.0)
        if ONLY or rel not in BATCHES:
            continue
        batch = 2000
        Q = np.array([pair.random_q(rng) for _ in range(batch)])
        QD, QDD = rng.normal(size=(2, batch, model.nv))
        pin_states = [pair.pin_state(Q[k], QD[k], QDD[k]) for k in range(batch)]
        Y = np.empty((batch, model.nv, 10 * model.nb))

        def pin_regressors():
            for a, b, c in pin_states:
                pin.computeJointTorqueRegressor(pm, pd, a, b, c)

        ours, ref = side_by_side(lambda: rbd.regressor(model, Q, QD, QDD, out=Y),
                                 pin_regressors, 1, max(5, blocks // 5))
        row(report, 'regressor batch of 2,000 / state, %s' % label, ours / batch, ref / batch,
            0.5)
        batch = 10000
        states = [pair.random_q(rng) for _ in range(batch)]
        Q = np.array(states)
        QD = rng.normal(size=(batch, model.nv))
        QDD = rng.normal(size=(batch, model.nv))
        pin_states = [pair.pin_state(Q[k], QD[k], QDD[k]) for k in range(batch)]

        def pin_loop():
            for a, b, c in pin_states:
                pin.rnea(pm, pd, a, b, c)

        rbd.rnea(model, Q[:1000], QD[:1000], QDD[:1000])  # start the batch threads
        ours, ref = side_by_side(lambda: rbd.rnea(model, Q, QD, QDD), pin_loop, 1,
                                 max(5, blocks // 10))
        row(report, 'rnea batch of 10,000 / state, %s' % label, ours / batch, ref / batch, 0.5)
        if compiled.AVAILABLE:
            import numba
            threads = numba.get_num_threads()
            numba.set_num_threads(1)
            one = per_call(lambda: rbd.rnea(model, Q, QD, QDD), 1, max(5, blocks // 10))
            numba.set_num_threads(threads)
            print('%-44s %9.2f us  (one thread; the batch above uses %d)'
                  % ('  batch / state on one thread, %s' % label, np.median(one) / batch * 1e6,
                     threads))
            report['batch one thread, %s' % label] = stats(np.array(one) / batch)
        ref_single = per_call(lambda: rnea_reference(model, q[None], qd[None], qdd[None]),
                              max(50, number // 50), 3)
        print('%-44s %9.2f us  (the NumPy reference path, for context)'
              % ('  reference NumPy rnea, %s' % label, np.median(ref_single) * 1e6))
        report['reference numpy rnea, %s' % label] = stats(ref_single)

    if ONLY:
        return
    # model building, ~100-joint robot
    path = os.path.join(root, BIG)
    with open(path, 'rb') as stream:
        text = stream.read()
    times, parse_times = [], []
    for _ in range(5 if args.quick else 11):
        start = time.perf_counter()
        rbd.parse_urdf(text)
        parse_times.append(time.perf_counter() - start)
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', rbd.InertiaWarning)
            start = time.perf_counter()
            model = rbd.Model.from_urdf(text)
            times.append(time.perf_counter() - start)
    build = stats(times)
    ok = build['median'] <= 0.1
    print('%-44s %9.1f ms [%5.1f-%5.1f] (parse only %.1f ms)  target <= 100 ms  %s'
          % ('model build, tiago_dual (%d joints)' % model.nv, build['median'] * 1e3,
             build['p10'] * 1e3, build['p90'] * 1e3, np.median(parse_times) * 1e3,
             'PASS' if ok else 'FAIL'))
    report['model build, tiago_dual'] = {'seconds': build, 'parse_seconds': stats(parse_times),
                                         'joints': model.nv, 'pass': ok}

    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, 'w') as stream:
        json.dump(report, stream, indent=2)
    print('results written to %s' % args.out)


if __name__ == '__main__':
    main()
