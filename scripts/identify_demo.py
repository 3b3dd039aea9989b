"""
The identification demo: from a wrong description to one that predicts the simulated arm.

    python scripts/identify_demo.py [--out identify_output] [--seed 3] [--duration 20]
        [--seconds 10]

The simulated driver runs the bundled arm as it "really" is: every link's mass off by 15 to
30 %, every centre of mass moved by 1 to 2 cm, viscous and Coulomb friction the description
does not know (hard friction: a joint at rest sticks). The node and the tools get the bundled
description. The steps are the user's:

1. ``python -m rbd_dynamics excite`` designs an excitation from the demo's start pose;
2. ``rbd_dynamics_send`` plays it through the simulated JointTrajectoryController while a
   recorder (``ros2 bag record /joint_states`` in a real setup; here the test helpers' small
   recorder) writes the joint states with the efforts the driver applies to a rosbag2;
3. ``python -m rbd_dynamics identify`` turns the bag into ``identified.urdf`` and
   ``drive.yaml``;
4. computed torque (the node: feedforward with PD gains, drive compensation along the desired
   velocity) tracks the demo's 0.5 Hz swings, once with the description and its drive, once
   with the identified description and ``drive.yaml``; the tracking RMS of both is printed
   and plotted.

Every process is started the way a launch file starts it, over real ROS 2 topics; the
simulation runs in lockstep at 1 kHz (free running at 1 kHz while the excitation plays).
"""

import argparse
import os
import shutil
import subprocess
import sys

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, 'test'))

NS = '/identify_demo'


def jtc_gains(model, q0):
    """Return the trajectory controller's gains: :func:`support.true_arm.pd_gains`, integral."""
    from support.true_arm import pd_gains
    kp, kd = pd_gains(model, q0)
    return {'controller': 'joint_trajectory', 'jtc.p': kp.tolist(), 'jtc.d': kd.tolist(),
            'jtc.i': (2.0 * kp).tolist(), 'jtc.i_clamp': 50.0}


def run(command, log, what):
    """Run a command line, its output to the terminal and ``log``; stop the demo on failure."""
    print('$ %s' % ' '.join(command), flush=True)
    proc = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(proc.stdout, end='', flush=True)
    log.write(proc.stdout)
    if proc.returncode != 0:
        sys.exit('identify_demo: %s failed (exit %d)' % (what, proc.returncode))


def record_excitation(args, urdf, sim_params, model, log, name='excitation_bag'):
    """Play ``excitation.yaml`` through the simulated controller into bag ``name``; its path."""
    import rclpy
    from rbd_dynamics.ros import processes
    from rbd_dynamics.ros.demo_setup import JOINTS, Q0
    from rclpy.executors import SingleThreadedExecutor
    from support.recorder import JointStateRecorder

    bag = os.path.join(args.out, name)
    shutil.rmtree(bag, ignore_errors=True)
    sim = dict(sim_params, **jtc_gains(model, Q0), lockstep=True, rate=1000.0,
               initial_positions=list(Q0), joints=JOINTS, robot_description=urdf,
               wrench_frame='')
    rclpy.init()
    peer = rclpy.create_node('identify_demo_recorder', namespace=NS)
    recorder = JointStateRecorder(peer, 'joint_states', depth=20000)
    executor = SingleThreadedExecutor()
    executor.add_node(peer)
    procs = [processes.RosProcess(processes.command(*processes.SIM), sim, NS, stdout=log)]
    send = subprocess.Popen(processes.command(*processes.SEND)
                            + [os.path.join(args.out, 'excitation.yaml'), '--topic',
                               NS + '/joint_trajectory', '--joint-states', NS + '/joint_states',
                               '--delay', '0.5', '--timeout', '60',
                               '--ros-args', '-p', 'use_sim_time:=true'],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print('$ rbd_dynamics_send %s --topic %s/joint_trajectory --joint-states %s/joint_states '
          '--delay 0.5 --ros-args -p use_sim_time:=true   (recording %s/joint_states)'
          % (os.path.join(args.out, 'excitation.yaml'), NS, NS, NS), flush=True)
    try:
        while send.poll() is None:
            executor.spin_once(timeout_sec=0.05)
            if not procs[0].alive():
                break
        for _ in range(20):  # the states still in flight
            executor.spin_once(timeout_sec=0.01)
    finally:
        if send.poll() is None:
            send.terminate()
        output = send.communicate()[0]
        print(output, end='')
        log.write(output)
        for proc in procs:
            proc.stop()
        executor.remove_node(peer)
        count = recorder.write(bag)
        peer.destroy_node()
        rclpy.try_shutdown()
    if send.returncode != 0:
        sys.exit('identify_demo: sending the excitation failed; see %s/processes.log' % args.out)
    print('recorded %d joint states to %s' % (count, bag), flush=True)
    return bag


def track(args, label, node_urdf, drive, sim_params, urdf, log):
    """Run computed torque on the swings with one description and drive: ``(t, error)``."""
    import rclpy
    from rbd_dynamics.ros import processes
    from rbd_dynamics.ros.demo import run_until_stamp, stamp
    from rbd_dynamics.ros.demo_setup import (AMPLITUDE, JOINTS, node_parameters, Q0,
                                             sim_parameters, swing, swing_parameters)
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import JointState

    ns = '%s_%s' % (NS, label)
    sim = dict(sim_parameters(JOINTS, Q0), **sim_params, wait_for_subscribers=2,
               robot_description=urdf, wrench_frame='')
    node = dict(node_parameters(node_urdf, JOINTS, sensor=False), **drive)
    # Coulomb friction compensated along the desired velocity: a joint at rest sticks, and the
    # measured velocity would give it no friction torque to start with
    node.update({'drive.compensate': True, 'drive.velocity': 'desired'})
    remaps = ['~/effort_commands:=%s/effort_commands' % ns, '~/desired_state:=%s/desired_state'
              % ns, 'joint_states:=%s/joint_states_forwarded' % ns]
    rclpy.init()
    peer = rclpy.create_node('identify_demo_observer', namespace=ns)
    states = []
    peer.create_subscription(JointState, 'joint_states', states.append, 1000)
    executor = SingleThreadedExecutor()
    executor.add_node(peer)
    procs = [processes.RosProcess(processes.command(*processes.SIM), sim, ns, stdout=log),
             processes.RosProcess(processes.command(*processes.TRAJECTORY),
                                  swing_parameters(JOINTS, Q0, AMPLITUDE), ns, stdout=log),
             processes.RosProcess(processes.command(*processes.NODE), node, ns,
                                  ros_args=[a for r in remaps for a in ('-r', r)], stdout=log)]

    run_until_stamp(executor, peer, states, args.seconds, procs, 120.0 + 20 * args.seconds)
    if not states or stamp(states[-1]) < args.seconds:
        sys.exit('identify_demo: the %s loop stopped early; see %s/processes.log'
                 % (label, args.out))
    index = [list(states[0].name).index(n) for n in JOINTS]
    t = np.array([stamp(m) for m in states])
    q = np.array([np.asarray(m.position)[index] for m in states])
    return t, q - swing(t, Q0, AMPLITUDE).position


def read_drive(path):
    """Return the node's ``drive.*`` parameters from a ``drive.yaml``."""
    from support.identification import read_parameters_file
    return {k: v for k, v in read_parameters_file(path).items() if k.startswith('drive.')}


def plot(path, runs, joints):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(2, 1, figsize=(10, 7), sharex=True, sharey=True)
    for ax, (label, (t, error)) in zip(axes, runs.items()):
        for j, name in enumerate(joints[:7]):
            ax.plot(t, 1e3 * error[:, j], label=name, linewidth=0.8)
        rms = 1e3 * np.sqrt(np.mean(error[:, :7] ** 2))
        ax.set_title('computed torque with the %s description and drive: RMS %.3g mrad'
                     % (label, rms))
        ax.set_ylabel('tracking error [mrad]')
        ax.grid(alpha=0.3)
    axes[0].legend(ncol=7, fontsize=8)
    axes[1].set_xlabel('simulated time [s]')
    fig.suptitle('0.5 Hz swings of the simulated arm, which is not its description')
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--out', default='identify_output', help='folder for every output')
    parser.add_argument('--seed', type=int, default=3, help='of the true arm')
    parser.add_argument('--duration', type=float, default=20.0, help='excitation length [s]')
    parser.add_argument('--seconds', type=float, default=10.0,
                        help='simulated time of each tracking run [s]')
    args = parser.parse_args()
    os.environ.setdefault('ROS_DOMAIN_ID', str(1 + os.getpid() % 100))
    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    import rbd_dynamics as rbd
    from rbd_dynamics.resources import demo_urdf_path
    from rbd_dynamics.ros.demo_setup import JOINTS, Q0
    from support.true_arm import true_arm
    os.makedirs(args.out, exist_ok=True)
    with open(demo_urdf_path()) as stream:
        urdf = stream.read()
    sim_params, _ = true_arm(urdf, args.seed)
    model = rbd.Model.from_urdf(urdf, compiled=False)
    py = sys.executable
    with open(os.path.join(args.out, 'processes.log'), 'w') as log:
        print('identify_demo: the simulated arm is not its description (seed %d): masses x %s'
              % (args.seed, ' '.join('%.2f' % s for s in sim_params['true_arm.mass_scale'])))
        print('  viscous %s N m s/rad, Coulomb %s N m (the description: viscous 0.5, no '
              'Coulomb)' % (' '.join('%.2f' % v for v in sim_params['drive.viscous'][:7]),
                            ' '.join('%.2f' % v for v in sim_params['drive.coulomb'][:7])),
              flush=True)
        run([py, '-m', 'rbd_dynamics', 'excite', demo_urdf_path(), '--duration',
             '%g' % args.duration, '--start'] + ['%g' % v for v in Q0] + ['--out', args.out],
            log, 'excite')
        bag = record_excitation(args, urdf, sim_params, model, log)
        identified = os.path.join(args.out, 'identified')
        run([py, '-m', 'rbd_dynamics', 'identify', demo_urdf_path(), bag, '--topic',
             NS + '/joint_states', '--out', identified], log, 'identify')
        with open(os.path.join(identified, 'identified.urdf')) as stream:
            identified_urdf = stream.read()
        runs = {}
        for label, node_urdf, drive in (
                ('nominal', urdf, {}),
                ('identified', identified_urdf,
                 read_drive(os.path.join(identified, 'drive.yaml')))):
            print('tracking the swings for %g s with the %s model ...' % (args.seconds, label),
                  flush=True)
            runs[label] = track(args, label, node_urdf, drive, sim_params, urdf, log)
    rms = {label: np.sqrt(np.mean(error[:, :7] ** 2, axis=0))
           for label, (_, error) in runs.items()}
    print('%-10s %16s %16s %8s' % ('joint', 'nominal [mrad]', 'identified [mrad]', 'ratio'))
    for j, name in enumerate(JOINTS[:7]):
        print('%-10s %16.3f %16.3f %8.1f'
              % (name, 1e3 * rms['nominal'][j], 1e3 * rms['identified'][j],
                 rms['nominal'][j] / rms['identified'][j]))
    total = {label: np.sqrt(np.mean(values ** 2)) for label, values in rms.items()}
    print('%-10s %16.3f %16.3f %8.1f'
          % ('all', 1e3 * total['nominal'], 1e3 * total['identified'],
             total['nominal'] / total['identified']))
    np.savez(os.path.join(args.out, 'tracking.npz'),
             **{'%s_%s' % (label, k): v for label, run_ in runs.items()
                for k, v in zip(('t', 'error'), run_)})
    try:
        path = os.path.join(args.out, 'tracking.png')
        plot(path, runs, JOINTS)
        print('plots: %s and %s' % (path, os.path.join(identified, 'identification.png')))
    except ImportError:
        print('matplotlib is not installed: no plot')


if __name__ == '__main__':
    main()
