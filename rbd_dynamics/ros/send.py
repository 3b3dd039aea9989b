"""
``rbd_dynamics_send``: send a planned trajectory file to a JointTrajectoryController.

    ros2 run rbd_dynamics rbd_dynamics_send FILE [--topic TOPIC] [--delay S] [--timeout S]
        [--no-wait] [--ros-args ...]

``FILE`` is a ``trajectory_msgs/JointTrajectory`` saved as YAML (what ``python -m rbd_dynamics
excite`` writes, or ``ros2 topic echo --once`` prints). It is published once, action-less, on
``TOPIC`` (default ``/joint_trajectory_controller/joint_trajectory``, the controller's
``~/joint_trajectory``) with a zero stamp, so the controller starts it on receipt. Send it to
the node's ``/rbd_dynamics/trajectory`` instead and the node fills in the efforts and forwards
it to the controller (``~/trajectory_with_effort``, remapped to the controller's topic).

The command waits until something subscribes to ``TOPIC`` (at most ``--timeout`` seconds), sends
the trajectory, waits until the subscribers have it, and then (unless ``--no-wait``) until its
duration has passed on the node's clock (``-p use_sim_time:=true`` follows ``/clock``), so a
recording started before it can be stopped when it returns. ``--delay`` shifts every point
later by that much: the controller first moves from where the robot is to the first point
(the start pose of an excitation) over that time.

Exit codes: 0 sent (and played), 1 an unusable file, 2 a command line that does not parse, 3
nothing subscribed to the topic in time.
"""

import argparse
import sys

EXIT_INPUT = 1
EXIT_NO_SUBSCRIBER = 3
DEFAULT_TOPIC = '/joint_trajectory_controller/joint_trajectory'


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
    return parser


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
    from rclpy.utilities import remove_ros_args

    argv = remove_ros_args(sys.argv if args is None else args)[1:]
    options = _parser().parse_args(argv)
    from ..analysis import AnalysisError
    from ..analysis.planned import read_trajectory
    try:
        planned = read_trajectory(options.file)
    except AnalysisError as err:
        print('error: %s' % err, file=sys.stderr)
        return EXIT_INPUT
    if not options.delay >= 0.0:
        print('error: --delay must not be negative', file=sys.stderr)
        return EXIT_INPUT
    msg = trajectory_message(planned, options.delay)
    rclpy.init(args=args)
    node = rclpy.create_node('rbd_dynamics_send')
    try:
        return send(node, msg, options.topic, options.timeout, not options.no_wait,
                    log=lambda text: print(text, flush=True))
    except KeyboardInterrupt:
        return 130
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == '__main__':
    sys.exit(main())
