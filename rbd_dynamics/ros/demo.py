"""
The demo: the bundled arm in MuJoCo, driven by the rbd_dynamics node, over real ROS 2 topics.

    python -m rbd_dynamics.ros.demo [--seconds 10] [--out demo_output]
        [--description robot.urdf.xacro [name:=value ...]]

With ``--description`` the robot is another URDF or xacro file (xacro's ``name:=value``
arguments follow): it starts at zero and swings each revolute joint by 0.1 rad; the wrist sensor
is used where the description has an ``ft_frame`` link.

Three processes, started as a launch file would start them: the simulated driver
(``rbd_dynamics_sim``, lockstep at 1 kHz, wrist F/T sensor), the trajectory publisher (0.5 Hz
swings of every arm joint, starting at rest) and the dynamics node (computed torque: feedforward
with PD gains, on the simulated clock, the wrist sensor compensated for the gripper). This
process watches the topics, then prints tracking errors, torque ranges and the node's compute
time, and writes a plot. ``launch/demo.launch.py`` starts the same three on a ROS install.
"""

import argparse
import os
import sys
import time

import numpy as np

from . import processes
from .demo_setup import (AMPLITUDE, JOINTS, node_parameters, Q0, SENSOR_FRAME, sim_parameters,
                         swing, swing_parameters)

NS = '/demo'


class Robot:
    """
    The robot the demo drives.

    What the demo runs: the URDF text, joints, start and swing of each joint, and whether
    it has the wrist sensor frame.
    """

    def __init__(self, urdf, joints, center, amplitude, sensor, prismatic=()):
        self.urdf = urdf
        self.joints = list(joints)
        self.center = list(center)
        self.amplitude = list(amplitude)
        self.sensor = sensor
        self.prismatic = set(prismatic)  # joints whose unit is m (and N), not rad (N m)


def _robot(description, xacro_args):
    """Return the bundled arm, or the robot of a description file."""
    import rbd_dynamics as rbd
    from rbd_dynamics.parsers.files import read_description_file
    from ..resources import demo_urdf_path
    if description is None:
        with open(demo_urdf_path()) as stream:
            text = stream.read()
        model = rbd.Model.from_urdf(text, compiled=False)
        return Robot(text, JOINTS, Q0, AMPLITUDE, True, _prismatic(model))
    text = read_description_file(description, xacro_args or None)
    text = text.decode('utf-8') if isinstance(text, bytes) else text
    model = rbd.Model.from_urdf(text, compiled=False)
    swing = [0.1 if jtype in ('revolute', 'continuous') else 0.0 for jtype in model.joint_types]
    return Robot(text, model.joint_names, [0.0] * model.nv, swing,
                 SENSOR_FRAME in model.link_names, _prismatic(model))


def _prismatic(model):
    return [n for n, kind in zip(model.joint_names, model.joint_types) if kind == 'prismatic']


def _start(executable, params, remaps=(), log=None):
    ros_args = [arg for remap in remaps for arg in ('-r', remap)]
    return processes.RosProcess(processes.command(*executable), params, NS,
                                ros_args=ros_args, stdout=log)


def stamp(msg):
    """Return the header stamp of a message [s]."""
    return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec


def run_until_stamp(executor, peer, states, seconds, procs, timeout):
    """
    Spin ``executor`` until the last of ``states`` is stamped ``seconds`` or later; then stop.

    Or until one of ``procs`` ended, or ``timeout`` [s] of wall time passed. Then, whatever
    happened, the processes are stopped, ``peer`` is removed and destroyed and rclpy shut
    down. Returns the wall time spent spinning [s].
    """
    import rclpy
    start = time.monotonic()
    try:
        while time.monotonic() - start < timeout:
            executor.spin_once(timeout_sec=0.05)
            if states and stamp(states[-1]) >= seconds:
                break
            if not all(p.alive() for p in procs):
                break
        return time.monotonic() - start
    finally:
        for proc in procs:
            proc.stop()
        executor.remove_node(peer)
        peer.destroy_node()
        rclpy.try_shutdown()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--seconds', type=float, default=10.0, help='simulated time')
    parser.add_argument('--out', default='demo_output', help='folder for the plot and data')
    parser.add_argument('--description', help='a URDF or xacro file instead of the bundled arm; '
                        'xacro arguments as name:=value')
    from rbd_dynamics import UrdfError
    from rbd_dynamics.parsers.files import split_xacro_args
    try:
        rest, xacro_args = split_xacro_args(sys.argv[1:])
    except UrdfError as exc:
        parser.error(str(exc))
    args = parser.parse_args(rest)
    try:
        robot = _robot(args.description, xacro_args)
    except (OSError, UrdfError) as exc:
        sys.exit('demo: cannot load %s: %s' % (args.description, exc))
    os.environ.setdefault('ROS_DOMAIN_ID', str(1 + os.getpid() % 100))
    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')

    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import JointState

    os.makedirs(args.out, exist_ok=True)
    log = open(os.path.join(args.out, 'processes.log'), 'w')

    rclpy.init()
    peer = rclpy.create_node('demo_observer', namespace=NS)
    states, feedforward, diagnostics = [], [], []
    peer.create_subscription(JointState, 'joint_states', states.append, 1000)
    peer.create_subscription(JointState, 'rbd_dynamics/feedforward', feedforward.append, 1000)
    peer.create_subscription(DiagnosticArray, '/diagnostics', diagnostics.append, 100)
    executor = SingleThreadedExecutor()
    executor.add_node(peer)

    print('demo: MuJoCo arm <-> rbd_dynamics node, %g s of simulated time at 1 kHz (lockstep)'
          % args.seconds, flush=True)
    sim = dict(sim_parameters(robot.joints, robot.center), wait_for_subscribers=2,
               robot_description=robot.urdf, wrench_frame=SENSOR_FRAME if robot.sensor else '')
    procs = [
        _start(processes.SIM, sim, log=log),
        _start(processes.TRAJECTORY,
               swing_parameters(robot.joints, robot.center, robot.amplitude), log=log),
        _start(processes.NODE, node_parameters(robot.urdf, robot.joints, robot.sensor),
               remaps=['~/effort_commands:=%s/effort_commands' % NS,
                       '~/desired_state:=%s/desired_state' % NS,
                       'joint_states:=%s/joint_states_forwarded' % NS], log=log),
    ]

    try:
        wall = run_until_stamp(executor, peer, states, args.seconds, procs,
                               60.0 + 10 * args.seconds)
    finally:
        log.close()
    if not states or stamp(states[-1]) < args.seconds:
        sys.exit('demo: the loop stopped early; see %s' % os.path.join(args.out, 'processes.log'))
    summarize(robot, states, feedforward, diagnostics, stamp, args, wall)


def summarize(robot, states, feedforward, diagnostics, stamp, args, wall):
    joints = robot.joints
    names = list(states[0].name)
    index = [names.index(n) for n in joints]
    t = np.array([stamp(m) for m in states])
    q = np.array([np.asarray(m.position)[index] for m in states])
    q_d = swing(t, robot.center, robot.amplitude).position
    error = q - q_d
    ff_t = np.array([stamp(m) for m in feedforward])
    tau = np.array([m.effort for m in feedforward])
    print('%d control cycles in %.1f s of wall time (%.0f Hz lockstep)'
          % (len(t), wall, len(t) / wall))
    header = ('joint', 'RMS err', 'max err', '', 'torque range', '')
    print('%-18s %12s %12s %-5s %22s %s' % header)
    for j, name in enumerate(joints):
        linear = name in robot.prismatic
        print('%-18s %12.3f %12.3f %-5s %10.2f .. %8.2f %s'
              % (name, 1e3 * np.sqrt(np.mean(error[:, j] ** 2)), 1e3 * np.abs(error[:, j]).max(),
                 'mm' if linear else 'mrad', tau[:, j].min(), tau[:, j].max(),
                 'N' if linear else 'N m'))
    compute = []
    for msg in diagnostics:
        for status in msg.status:
            if status.name.startswith(NS + '/'):
                values = {v.key: v.value for v in status.values}
                if 'compute time mean [us]' in values:
                    compute.append((float(values['compute time mean [us]']),
                                    float(values['compute time max [us]'])))
    if compute:
        print('node compute time per joint state: mean %.0f us, max %.0f us (diagnostics)'
              % (np.mean([c[0] for c in compute]), max(c[1] for c in compute)))
    np.savez(os.path.join(args.out, 'demo.npz'), t=t, q=q, q_d=q_d, ff_t=ff_t, tau=tau)
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:
        print('matplotlib is not installed: no plot (data in %s)' % args.out)
        return
    fig, axes = plt.subplots(3, 1, figsize=(11, 10), sharex=True)
    for j in np.flatnonzero(robot.amplitude):
        line, = axes[0].plot(t, q[:, j], label=joints[j])
        axes[0].plot(t, q_d[:, j], '--', color=line.get_color(), linewidth=0.8)
        axes[1].plot(t, 1e3 * error[:, j], label=joints[j])
        axes[2].plot(ff_t, tau[:, j], label=joints[j])
    units = ' or '.join(sorted({'m' if joints[j] in robot.prismatic else 'rad'
                                for j in np.flatnonzero(robot.amplitude)}))
    axes[0].set_ylabel('position [%s]\n(dashed: desired)' % units)
    axes[1].set_ylabel('tracking error [m%s]' % units.replace(' or ', ' or m'))
    axes[2].set_ylabel('feedforward torque [N m]' if units == 'rad' else 'feedforward [N m or N]')
    axes[2].set_xlabel('simulated time [s]')
    # beside the plots, where it hides no curve
    axes[0].legend(fontsize=8, loc='upper left', bbox_to_anchor=(1.01, 1.0))
    fig.suptitle('rbd_dynamics computed-torque control in MuJoCo')
    fig.tight_layout()
    path = os.path.join(args.out, 'demo.png')
    fig.savefig(path, dpi=100)
    print('plot written to %s' % path)


if __name__ == '__main__':
    main()
