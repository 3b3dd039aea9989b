"""
The units and payload demo: a driver that speaks current, and a payload nobody typed in.

    python scripts/units_demo.py [--out units_output] [--seed 3] [--duration 20]
        [--seconds 3]

The simulated driver runs the bundled arm as it "really" is (the identification demo's true
arm: masses, centres of mass and friction the description does not know) and speaks a drive
unit: it reports and takes efforts divided by a scale per joint (:data:`SCALE`, one motor
turning against its joint's axis), which nobody tells the tools. The steps are the user's:

1. ``python -m rbd_dynamics excite --hold left_finger_joint=0.02`` designs an excitation of the
   arm (the gripper's finger stays closed);
2. it is played through the simulated JointTrajectoryController and recorded twice: with the
   hand empty, and holding a 2 kg calibration weight;
3. ``python -m rbd_dynamics identify --effort-scale estimate --load gripper_base:2 ...``
   estimates the scales with the arm's parameters and the drive;
4. the excitation is played once more with an unknown payload in the hand, and
   ``python -m rbd_dynamics payload`` estimates it on top of the identified description and
   ``drive.yaml``;
5. the node publishes gravity compensation (``command_output: gravity_compensation``) in the
   driver's units with ``description.yaml`` and ``payload.yaml``, and the arm, payload in hand,
   stays where it is; told nothing of the payload, the node lets it sag.

Every process is started the way a launch file starts it, over real ROS 2 topics. Prints the
scales and the payload against the truth and the drift of both gravity-compensation runs, and
writes ``units_output/drift.png``.
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from identify_demo import NS as RECORDING_NS, record_excitation, run  # noqa: E402, I100

NS = '/units_demo'
#: The driver's scale per joint: joint torque [N m] (finger: force [N]) per unit of effort.
SCALE = [12.0, 15.0, -9.5, 7.0, 3.0, 2.5, 1.5, 40.0]
LINK = 'gripper_base'
FINGER = 'left_finger_joint'
#: The calibration weight: (mass [kg], centre of mass in the link frame [m], inertia).
CALIBRATION = (2.0, [0.05, 0.04, 0.1], [0.004, 0.0, 0.0, 0.004, 0.0, 0.002])
#: The payload the demo does not tell anyone.
UNKNOWN = (1.3, [0.03, -0.02, 0.09], [0.003, 0.0005, 0.0, 0.004, 0.0, 0.002])


def payload_parameters(payload):
    """Return the simulated driver's ``payload.*`` for ``(mass, com, inertia)`` on the hand."""
    mass, com, inertia = payload
    return {'payload.link': LINK, 'payload.mass': mass, 'payload.com': com,
            'payload.inertia': inertia, 'payload.attach_time': 0.0}


def hold(args, label, node, sim_params, log):
    """Run gravity compensation for ``args.seconds``: ``(t, q - q(0))`` of the arm joints."""
    import rclpy
    from rbd_dynamics.ros import processes
    from rbd_dynamics.ros.demo import run_until_stamp, stamp
    from rbd_dynamics.ros.demo_setup import JOINTS, Q0, sim_parameters
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import JointState

    ns = '%s_%s' % (NS, label)
    sim = dict(sim_parameters(JOINTS, Q0), **sim_params)
    node = dict(node, use_sim_time=True, joints=JOINTS)
    rclpy.init()
    peer = rclpy.create_node('units_demo_observer', namespace=ns)
    states = []
    peer.create_subscription(JointState, 'joint_states', states.append, 1000)
    executor = SingleThreadedExecutor()
    executor.add_node(peer)
    procs = [processes.RosProcess(processes.command(*processes.SIM), sim, ns, stdout=log),
             processes.RosProcess(processes.command(*processes.NODE), node, ns,
                                  ros_args=['-r', '~/effort_commands:=%s/effort_commands' % ns],
                                  stdout=log)]
    run_until_stamp(executor, peer, states, args.seconds, procs, 120.0 + 20 * args.seconds)
    if not states or stamp(states[-1]) < args.seconds:
        sys.exit('units_demo: the %s run stopped early; see %s/processes.log' % (label, args.out))
    index = [list(states[0].name).index(n) for n in JOINTS[:-1]]
    t = np.array([stamp(m) for m in states])
    q = np.array([np.asarray(m.position)[index] for m in states])
    return t, q - np.asarray(Q0[:-1])


def plot(path, runs):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for label, (t, drift) in runs.items():
        ax.semilogy(t, np.maximum(np.abs(drift).max(axis=1), 1e-9), label=label)
    ax.set_xlabel('simulated time [s]')
    ax.set_ylabel('largest joint drift [rad]')
    ax.set_title("gravity compensation in the driver's units, an unknown %g kg in the hand"
                 % UNKNOWN[0])
    ax.grid(alpha=0.3, which='both')
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--out', default='units_output', help='folder for every output')
    parser.add_argument('--seed', type=int, default=3, help='of the true arm')
    parser.add_argument('--duration', type=float, default=20.0, help='excitation length [s]')
    parser.add_argument('--seconds', type=float, default=3.0,
                        help='simulated time of each gravity-compensation run [s]')
    args = parser.parse_args()
    os.environ.setdefault('ROS_DOMAIN_ID', str(1 + os.getpid() % 100))
    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    import rbd_dynamics as rbd
    from rbd_dynamics.resources import demo_urdf_path
    from rbd_dynamics.ros.demo_setup import JOINTS, Q0
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), 'test'))
    from support.identification import read_parameters_file
    from support.true_arm import true_arm
    os.makedirs(args.out, exist_ok=True)
    with open(demo_urdf_path()) as stream:
        urdf = stream.read()
    true_params, _ = true_arm(urdf, args.seed)
    sim_params = dict(true_params, wrench_frame='', **{'drive.effort_scale': SCALE})
    model = rbd.Model.from_urdf(urdf, compiled=False)
    py = sys.executable
    finger = '%s=%g' % (FINGER, Q0[-1])
    with open(os.path.join(args.out, 'processes.log'), 'w') as log:
        print('units_demo: the simulated driver speaks a drive unit, scales %s (nobody is told)'
              % ' '.join('%g' % s for s in SCALE), flush=True)
        run([py, '-m', 'rbd_dynamics', 'excite', demo_urdf_path(), '--duration',
             '%g' % args.duration, '--hold', finger, '--start'] + ['%g' % v for v in Q0]
            + ['--out', args.out], log, 'excite')
        bags = {}
        for name, payload in (('empty', None), ('calibration', CALIBRATION),
                              ('unknown', UNKNOWN)):
            params = dict(sim_params, **payload_parameters(payload)) if payload else sim_params
            print('playing the excitation with %s ...' % (
                'the hand empty' if payload is None else 'the %s payload in the hand' % name),
                flush=True)
            bags[name] = record_excitation(args, urdf, params, model, log, name + '_bag')
        identified = os.path.join(args.out, 'identified')
        run([py, '-m', 'rbd_dynamics', 'identify', demo_urdf_path(), bags['empty'],
             '--topic', RECORDING_NS + '/joint_states', '--effort-scale',
             'estimate', '--load', '%s:%g' % (LINK, CALIBRATION[0]), bags['calibration'],
             '--hold', finger, '--out', identified], log, 'identify')
        run([py, '-m', 'rbd_dynamics', 'payload', os.path.join(identified, 'identified.urdf'),
             bags['unknown'], '--topic', RECORDING_NS + '/joint_states',
             '--link', LINK, '--params-file', os.path.join(identified, 'drive.yaml'),
             '--hold', finger, '--out', args.out], log, 'payload')
        described = read_parameters_file(os.path.join(identified, 'description.yaml'))
        # the finger's scale is not estimated (it was held): its driver's, given by hand
        described['drive.effort_scale'] = described['drive.effort_scale'][:-1] + [SCALE[-1]]
        described['command_output'] = 'gravity_compensation'
        estimated = read_parameters_file(os.path.join(args.out, 'payload.yaml'))
        runs = {}
        sim = dict(sim_params, **payload_parameters(UNKNOWN))
        for label, node in (('with payload.yaml', dict(described, **estimated)),
                            ('told nothing of the payload', described)):
            print('gravity compensation for %g s, %s ...' % (args.seconds, label), flush=True)
            runs[label] = hold(args, label.split()[0], node, sim, log)
    scale = np.array(described['drive.effort_scale'][:-1])
    print('%-10s %12s %12s %8s' % ('joint', 'true scale', 'estimated', 'error'))
    for j, name in enumerate(JOINTS[:-1]):
        error = 100 * (scale[j] / SCALE[j] - 1)
        print('%-10s %12g %12.5g %7.2f%%' % (name, SCALE[j], scale[j], error))
    com = np.array(estimated['payload.com'])
    print('payload: mass %.4g kg (true %g, %.2f %%), centre of mass [%s] m (true [%s], off by '
          '%.2f mm)' % (estimated['payload.mass'], UNKNOWN[0],
                        100 * (estimated['payload.mass'] / UNKNOWN[0] - 1),
                        ', '.join('%.4f' % c for c in com),
                        ', '.join('%g' % c for c in UNKNOWN[1]),
                        1e3 * np.linalg.norm(com - UNKNOWN[1])))
    for label, (t, drift) in runs.items():
        print('gravity compensation %s: largest drift %.3g rad in %g s'
              % (label, np.abs(drift).max(), t[-1]))
    try:
        path = os.path.join(args.out, 'drift.png')
        plot(path, runs)
        print('plot: %s' % path)
    except ImportError:
        print('matplotlib is not installed: no plot')


if __name__ == '__main__':
    main()
