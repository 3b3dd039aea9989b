"""
The task-space demo: the demo arm's hand led round a circle, then pushed.

    python scripts/task_demo.py [--out task_output] [--plot task_output/task_space.png]
        [--periods 2] [--in-process]

The simulated driver runs the bundled arm in MuJoCo (the exact model: the arm is its
description, without drive) and the node drives it with ``command_output: task``, every piece
its own process over real ROS 2 topics, in lockstep at 1 kHz. The controlled link is the hand's
tool centre point.

The demo forwards the joint states to the node and its commands to the driver; before the
driver runs, it waits for the node to answer with the task-space law (the first run on a
machine compiles its kernels, for tens of seconds). The hand is held where it starts for
0.2 s, then:

1. Operational space, ``task.nullspace_stiffness`` 50 N m/rad: the hand follows a circle of
   10 cm at 0.2 Hz in a plane tilted by 30°, its orientation held; the desired pose and twist
   of each joint state reach the node on ``~/desired_pose`` and ``~/desired_twist`` before the
   state does. The same circle runs once more without the null-space stiffness: the hand
   tracks as well, but nothing holds the arm's posture in the null space of the hand.
2. Impedance, no desired pose (the node holds the hand where it starts), with a null-space
   stiffness toward the start's posture: a constant force pushes the hand; it settles at
   ``K⁻¹ F``, the posture term (projected) taking none of the push.

Prints the tracking error (RMS and largest, after the circle's speed has risen), the
stiffness per axis (the push over the displacement, against ``K``) and the posture error in the
null space of the hand, and writes the plot (matplotlib, if installed). ``--in-process`` runs
the same scene with the library's law (:func:`rbd_dynamics.control.task.task_torques`) against
MuJoCo in this process, without ROS.
"""

import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
NS = '/task_demo'
PUSH_SECONDS = 3.0  # of the impedance push; the displacement is read over its last 0.25 s


def over_topics(label, node, sim, seconds, stream, log):
    """Run the node and the simulated driver for ``seconds``: ``(t, q)`` in ``JOINTS`` order."""
    from support.sim import Loop
    from support.task_space import SETTLE
    try:
        run = Loop('%s_%s' % (NS, label), node, dict(sim, wrench_frame=''),
                   stream=stream or {}, settle=SETTLE)
    except AssertionError as exc:  # the processes did not start, or the node did not settle
        log.write('--- %s\n%s\n' % (label, exc))
        sys.exit('task_demo: the %s run did not start; see %s' % (label, log.name))
    try:
        t, q = run.run_until(seconds, timeout=120.0 + 20.0 * seconds)
    finally:
        log.write('--- %s\n%s\n' % (label, run.logs()))
        codes = run.close()
    if not len(t) or t[-1] < seconds or any(codes):
        sys.exit('task_demo: the %s run stopped early (exit codes %s); see %s'
                 % (label, codes, log.name))
    return t, q


def in_process(urdf, model, node, sim, seconds, circle):
    """Run the library's law on the same scene in this process: ``(t, q)``."""
    from support.task_space import Circle, InProcess
    law = {'mode': node['task.mode'], 'stiffness': node['task.stiffness'],
           'damping': node.get('task.damping'),
           'nullspace_stiffness': node.get('task.nullspace_stiffness', 0.0)}
    start = Circle(model)  # the pose the node holds without a desired pose

    def desired(t):
        if circle is None:
            return start.start, start.quaternion, None
        position, velocity = circle.at(t)
        return position, circle.quaternion, np.concatenate([velocity, np.zeros(3)])

    push = np.asarray(sim['push_force']) if 'push_link' in sim else None
    t, q, _ = InProcess(urdf, model).run(seconds, desired, push=push,
                                         push_start=sim.get('push_start', 0.0), **law)
    return t, q


def plot(path, circle, circles, push, model):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    from support.task_space import hand_positions, IMPEDANCE_STIFFNESS, PUSH, PUSH_START, \
        RAMP, SCENE_START
    fig, axes = plt.subplots(2, 2, figsize=(11, 8))
    _, t, q, error, _ = circles['held']
    hand = hand_positions(model, q) - circle.center
    desired = circle.at(t)[0] - circle.center
    # the error is far too small to see at the circle's scale: drawn 100 times as large
    shown = desired + 100.0 * (hand - desired)
    ax = axes[0, 0]
    ax.plot(1e3 * desired @ circle.u, 1e3 * desired @ circle.w, 'k--', lw=1, label='desired')
    ax.plot(1e3 * shown @ circle.u, 1e3 * shown @ circle.w, lw=1,
            label='hand, its error × 100')
    ax.set_aspect('equal')
    ax.set_xlabel("in the circle's plane, along u [mm]")
    ax.set_ylabel('along w [mm]')
    ax.set_title("the hand's path in the circle's plane (tilted by 30°)")
    ax.legend(loc='center')
    ax = axes[0, 1]
    error_mm = 1e3 * np.linalg.norm(error, axis=1)
    ax.plot(t, error_mm, lw=1, label='|position error|')
    ax.axvline(SCENE_START, color='grey', lw=0.8, ls=':', label='the circle starts')
    ax.axvline(SCENE_START + RAMP, color='grey', lw=0.8, ls='-.',
               label='its speed has risen')
    ax.set_xlabel('simulated time [s]')
    ax.set_ylabel('|position error| [mm]')
    ax.set_title("tracking, operational space (the test's bound: 2 mm RMS)")
    ax.set_ylim(0.0, 1.5 * error_mm.max())
    ax.legend(loc='upper right')
    ax = axes[1, 0]
    for stiffness, t, _, _, drift in circles.values():
        ax.plot(t, drift, lw=1, label='task.nullspace_stiffness %g N m/rad' % stiffness)
    ax.set_xlabel('simulated time [s]')
    ax.set_ylabel('posture error in the null space [rad]')
    ax.set_title('the posture, while the hand goes round')
    ax.set_ylim(0.0, 1.45 * max(drift.max() for *_, drift in circles.values()))
    ax.legend(loc='upper left')
    ax = axes[1, 1]
    t, displacement = push
    expected = PUSH / IMPEDANCE_STIFFNESS[:3]
    for k, axis in enumerate('xyz'):
        line, = ax.plot(t, 1e3 * displacement[:, k], lw=1, label=axis)
        ax.axhline(1e3 * expected[k], color=line.get_color(), lw=0.8, ls='--')
    ax.set_xlabel('simulated time [s]')
    ax.axvline(PUSH_START, color='grey', lw=0.8, ls=':', label='the push starts')
    ax.set_ylabel('hand displacement [mm]')
    ax.set_title('impedance: a push of [%s] N (dashed: K⁻¹F)'
                 % ', '.join('%g' % f for f in PUSH))
    ax.legend(loc='center right', bbox_to_anchor=(1.0, 0.35))  # (the band no curve crosses)
    for ax in axes.flat:
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--out', default='task_output',
                        help="folder for the processes' log and the plot")
    parser.add_argument('--plot', default=None,
                        help='the plot to write (default: task_space.png in --out)')
    parser.add_argument('--periods', type=float, default=2.0,
                        help='circles measured after the speed has risen')
    parser.add_argument('--in-process', action='store_true',
                        help="the library's law in this process, without ROS")
    args = parser.parse_args()
    os.environ.setdefault('ROS_DOMAIN_ID', str(1 + os.getpid() % 100))
    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    sys.path.insert(0, os.path.join(REPO, 'test'))
    import rbd_dynamics as rbd
    from rbd_dynamics.resources import demo_urdf_path
    from rbd_dynamics.spatial import rotation_vector
    from support.task_space import Circle, circle_stream, FREQUENCY, hand_positions, \
        IMPEDANCE, IMPEDANCE_STIFFNESS, LINK, nullspace_error, OPERATIONAL_SPACE, \
        PUSH, PUSH_START, RAMP, SCENE_START, tracking_figures
    from support.sim import JOINTS, Q0
    with open(demo_urdf_path()) as stream:
        urdf = stream.read()
    model = rbd.Model.from_urdf(urdf)
    if model.joint_names != tuple(JOINTS):
        sys.exit("task_demo: the demo arm's joints are %s, expected %s"
                 % (model.joint_names, JOINTS))
    circle = Circle(model)
    risen = SCENE_START + RAMP
    end = risen + args.periods / FREQUENCY
    os.makedirs(args.out, exist_ok=True)
    if args.plot is None:
        args.plot = os.path.join(args.out, 'task_space.png')
    where = 'in this process' if args.in_process else 'over topics'
    with open(os.path.join(args.out, 'processes.log'), 'w') as log:
        def run(label, node, sim, seconds, follow):
            if args.in_process:
                return in_process(urdf, model, node, sim, seconds, circle if follow else None)
            return over_topics(label, node, sim, seconds,
                               circle_stream(circle) if follow else None, log)

        circles = {}
        for label, node in (('held', OPERATIONAL_SPACE),
                            ('free', dict(OPERATIONAL_SPACE,
                                          **{'task.nullspace_stiffness': 0.0}))):
            print('operational space, %s: the circle for %g s of simulated time, '
                  'task.nullspace_stiffness %g ...'
                  % (where, end, node['task.nullspace_stiffness']), flush=True)
            t, q = run('circle_' + label, node, {}, end, True)
            error = circle.at(t)[0] - hand_positions(model, q)
            circles[label] = (node['task.nullspace_stiffness'], t, q, error,
                              nullspace_error(model, q, Q0))
        pushed = {'push_link': LINK, 'push_force': PUSH.tolist(), 'push_start': PUSH_START,
                  'push_duration': 100.0}
        print('impedance, %s: a push of %s N on the hand from t = %g s ...'
              % (where, PUSH.tolist(), PUSH_START), flush=True)
        t, q = run('push', IMPEDANCE, pushed, PUSH_START + PUSH_SECONDS, False)
        displacement = hand_positions(model, q) - hand_positions(model, q[:1])
        push = (t, displacement)
        start = rbd.link_pose(model, q[0], LINK)[:3, :3]
        turned = max(np.linalg.norm(rotation_vector(T[:3, :3] @ start.T)) for T in
                     rbd.link_pose(model, q[t >= PUSH_START + PUSH_SECONDS - 0.25], LINK))

    print('\ncircle of %g mm at %g Hz, operational space, exact model, K = %s'
          % (1e3 * circle.radius, FREQUENCY, OPERATIONAL_SPACE['task.stiffness'][:3]))
    for stiffness, t, q, error, drift in circles.values():
        rms, largest = tracking_figures(t, error, risen, end)
        print('  nullspace_stiffness %-4g tracking error %.3f mm RMS, %.3f mm at most in the '
              '%g s after the rise (%.3f mm at most while the speed rises); posture error in the '
              'null space %.4f rad at most, %.4f rad at the end'
              % (stiffness, 1e3 * rms, 1e3 * largest, end - risen,
                 1e3 * np.linalg.norm(error[t < risen], axis=1).max(), drift.max(), drift[-1]))
    settled = displacement[push[0] >= PUSH_START + PUSH_SECONDS - 0.25].mean(axis=0)
    expected = PUSH / IMPEDANCE_STIFFNESS[:3]
    print('impedance: push %s N, K %s N/m' % (PUSH.tolist(), IMPEDANCE_STIFFNESS[:3].tolist()))
    print('  %-5s %12s %12s %10s %14s' % ('axis', 'K^-1 F [mm]', 'moved [mm]', 'ratio',
                                          'F/moved [N/m]'))
    for k, axis in enumerate('xyz'):
        print('  %-5s %12.3f %12.3f %10.4f %14.1f'
              % (axis, 1e3 * expected[k], 1e3 * settled[k], settled[k] / expected[k],
                 PUSH[k] / settled[k]))
    print('  off K^-1 F by %.2f %% (of |K^-1 F|); turned by %.3f mrad at most (K^-1 F: 0), '
          'task.nullspace_stiffness %g'
          % (100 * np.linalg.norm(settled - expected) / np.linalg.norm(expected), 1e3 * turned,
             IMPEDANCE['task.nullspace_stiffness']))
    try:
        plot(args.plot, circle, circles, push, model)
        print('plot: %s' % args.plot)
    except ImportError:
        print('matplotlib is not installed: no plot')


if __name__ == '__main__':
    main()
