"""
``rbd_dynamics_send``: send a planned trajectory file to a JointTrajectoryController.

    ros2 run rbd_dynamics rbd_dynamics_send FILE [--topic TOPIC] [--delay S] [--timeout S]
        [--no-wait] [--ros-args ...]

``FILE`` is a ``trajectory_msgs/JointTrajectory`` saved as YAML (what ``python -m rbd_dynamics
excite`` writes, or ``ros2 topic echo --once`` prints). It is published once, action-less, on
``TOPIC`` (default ``/joint_trajectory_controller/joint_trajectory``, the controller's
``~/joint_trajectory``) with a zero stamp, so the controller starts it on receipt.

It does not make the robot jump: it first reads the robot's positions on ``--joint-states``
(default ``/joint_states``) and refuses, naming each joint's distance, when one is farther than
``--tolerance`` (0.05 rad or m) from the trajectory's first point. ``--approach S`` moves there
first instead: every point is shifted by ``S`` seconds, and the controller interpolates from
where the robot is to the first point over that time. ``--no-check`` skips the check (a robot
whose joint states are not on the topic). Send it to
the node's ``/rbd_dynamics/trajectory`` instead and the node fills in the efforts and forwards
it to the controller (``~/trajectory_with_effort``, remapped to the controller's topic).

The command waits until something subscribes to ``TOPIC`` (at most ``--timeout`` seconds), sends
the trajectory, waits until the subscribers have it, and then (unless ``--no-wait``) until its
duration has passed on the node's clock (``-p use_sim_time:=true`` follows ``/clock``), so a
recording started before it can be stopped when it returns. ``--delay`` shifts every point
later by that much: the controller first moves from where the robot is to the first point
(the start pose of an excitation) over that time.

Exit codes: 0 sent (and played), 1 an unusable file, 2 a command line that does not parse, 3
nothing subscribed to the topic in time, 4 the robot is away from the first point (or its joint
states did not arrive in time).
"""

import argparse
import sys

EXIT_INPUT = 1
EXIT_NO_SUBSCRIBER = 3
EXIT_AWAY = 4
DEFAULT_TOPIC = '/joint_trajectory_controller/joint_trajectory'
DEFAULT_TOLERANCE = 0.05  # rad or m


def _parser():
    parser = argparse.ArgumentParser(prog='rbd_dynamics_send',
                                     description=__doc__.split('\n\n')[2].strip())
    parser.add_argument('file', metavar='FILE', help='JointTrajectory as YAML')
    parser.add_argument('--topic', default=DEFAULT_TOPIC,
                        help='trajectory_msgs/JointTrajectory topic (default: %(default)s)')
    parser.add_argument('--delay', type=float, default=0.0,
                        help='added to every time_from_start [s] (default: %(default)s)')
    parser.add_argument('--timeout', type=float, default=10.0,
                        help='wait this long for a subscriber [s] (default: %(default)s)')
    parser.add_argument('--no-wait', action='store_true',
                        help='return once sent, not after the trajectory has played')
    parser.add_argument('--joint-states', default='/joint_states', metavar='TOPIC',
                        help="the robot's sensor_msgs/JointState topic (default: %(default)s)")
    parser.add_argument('--tolerance', type=float, default=DEFAULT_TOLERANCE,
                        help='largest distance of a joint from the first point [rad or m] '
                             '(default: %(default)s)')
    parser.add_argument('--approach', type=float, default=0.0, metavar='S',
                        help='when the robot is away from the first point, move there over S '
                             'seconds first (default: refuse)')
    parser.add_argument('--no-check', action='store_true',
                        help="do not read the robot's positions before sending")
    return parser


def measured_positions(node, topic, names, timeout):
    """
    Return the robot's positions of joints ``names`` from ``topic``, or ``None`` in time.

    Joint states from several publishers are merged by name: the last position of each joint.
    """
    import time

    import rclpy
    from sensor_msgs.msg import JointState
    seen = {}

    def take(msg):
        for name, value in zip(msg.name, msg.position):
            seen[name] = value

    subscription = node.create_subscription(JointState, topic, take, 10)
    end = time.monotonic() + timeout
    try:
        while not all(name in seen for name in names):
            if time.monotonic() > end:
                return None
            rclpy.spin_once(node, timeout_sec=0.05)
    finally:
        node.destroy_subscription(subscription)
    return [float(seen[name]) for name in names]


def start_distances(msg, positions):
    """Return each joint's ``|measured - first point|`` [rad or m] (``nan`` reads as far)."""
    import math
    first = msg.points[0].positions
    return [abs(q - p) if math.isfinite(q) else math.inf for q, p in zip(positions, first)]


def shifted(msg, seconds):
    """Shift every point of ``msg`` by ``seconds`` (in place); return it."""
    for point in msg.points:
        ns = point.time_from_start.sec * 1000000000 + point.time_from_start.nanosec \
            + int(round(seconds * 1e9))
        point.time_from_start.sec, point.time_from_start.nanosec = divmod(ns, 1000000000)
    return msg


def trajectory_message(planned, delay=0.0):
    """Return the ``JointTrajectory`` of a planned trajectory (:mod:`..analysis.planned`)."""
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    msg = JointTrajectory()
    msg.joint_names = list(planned.joint_names)
    for k, t in enumerate(planned.time):
        point = JointTrajectoryPoint(positions=planned.positions[k].tolist(),
                                     velocities=planned.velocities[k].tolist(),
                                     accelerations=planned.accelerations[k].tolist())
        if planned.effort is not None:
            point.effort = planned.effort[k].tolist()
        ns = int(round((t + delay) * 1e9))
        point.time_from_start.sec, point.time_from_start.nanosec = divmod(ns, 1000000000)
        msg.points.append(point)
    return msg


def send(node, msg, topic, timeout, wait, log=print):
    """
    Publish ``msg`` on ``topic`` once a subscriber listens; the exit code.

    With ``wait``, return after the last point's ``time_from_start`` on ``node``'s clock.
    """
    import time

    import rclpy
    from rclpy.duration import Duration
    from trajectory_msgs.msg import JointTrajectory
    publisher = node.create_publisher(JointTrajectory, topic, 10)
    end = time.monotonic() + timeout
    while publisher.get_subscription_count() == 0:
        if time.monotonic() > end:
            log('error: nothing subscribes to %s (waited %g s)' % (topic, timeout))
            return EXIT_NO_SUBSCRIBER
        rclpy.spin_once(node, timeout_sec=0.05)
    # the clock of a node on simulated time starts once /clock has arrived
    started = node.get_clock().now()
    publisher.publish(msg)
    publisher.wait_for_all_acked(Duration(seconds=5.0))
    last = msg.points[-1].time_from_start
    duration = last.sec + 1e-9 * last.nanosec
    log('sent %d points over %.6g s to %s (%d subscriber(s))'
        % (len(msg.points), duration, topic, publisher.get_subscription_count()))
    if wait:
        done = started + Duration(nanoseconds=int(round(duration * 1e9)))
        while rclpy.ok() and node.get_clock().now() < done:
            rclpy.spin_once(node, timeout_sec=0.05)
        log('played: %.6g s have passed on the %s clock'
            % (duration, 'simulated' if node.get_parameter('use_sim_time').value else 'system'))
    return 0


def main(args=None):
    import rclpy

    from .executor import init, program_arguments
    argv = program_arguments(args)
    if argv is None:
        return EXIT_INPUT
    options = _parser().parse_args(argv)
    from ..analysis import AnalysisError
    from ..analysis.planned import read_trajectory
    try:
        planned = read_trajectory(options.file)
    except AnalysisError as err:
        print('error: %s' % err, file=sys.stderr)
        return EXIT_INPUT
    if not options.delay >= 0.0 or not options.approach >= 0.0:
        print('error: --delay and --approach must not be negative', file=sys.stderr)
        return EXIT_INPUT
    if not options.tolerance > 0.0:
        print('error: --tolerance must be positive', file=sys.stderr)
        return EXIT_INPUT
    msg = trajectory_message(planned, options.delay)
    if not init(args):
        return EXIT_INPUT
    node = rclpy.create_node('rbd_dynamics_send')
    try:
        if not options.no_check:
            code = _check_start(node, msg, options)
            if code:
                return code
        return send(node, msg, options.topic, options.timeout, not options.no_wait,
                    log=lambda text: print(text, flush=True))
    except KeyboardInterrupt:
        return 130
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


def _check_start(node, msg, options):
    """Refuse (the exit code) or shift ``msg`` when the robot is away from its first point."""
    positions = measured_positions(node, options.joint_states, list(msg.joint_names),
                                   options.timeout)
    if positions is None:
        print("error: no joint states of %s on %s in %g s: the robot's position is unknown "
              '(--joint-states TOPIC, or --no-check to send without it)'
              % (', '.join(msg.joint_names), options.joint_states, options.timeout),
              file=sys.stderr)
        return EXIT_AWAY
    distances = start_distances(msg, positions)
    away = [(name, d) for name, d in zip(msg.joint_names, distances) if d > options.tolerance]
    if not away:
        return 0
    listing = ', '.join('%s %.4g' % item for item in away)
    if options.approach > 0.0:
        shifted(msg, options.approach)
        print('the robot is away from the first point (%s; rad or m): moving there over %g s '
              'first' % (listing, options.approach), flush=True)
        return 0
    print("error: the robot is away from the trajectory's first point by more than %g (rad or "
          'm): %s; move it there, or give --approach SECONDS to move there first'
          % (options.tolerance, listing), file=sys.stderr)
    return EXIT_AWAY


if __name__ == '__main__':
    sys.exit(main())
