"""
``rbd_dynamics_send``: a trajectory file published to a controller's topic.

The test's own node plays the controller: it subscribes to the topic and receives what the
command sends, point for point.
"""

import subprocess

import numpy as np
import pytest

rclpy = pytest.importorskip('rclpy')
pytest.importorskip('yaml')

from rbd_dynamics.analysis.planned import read_trajectory  # noqa: E402
from rbd_dynamics.ros import processes  # noqa: E402
import rclpy.executors  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from support.ros import run_spinning  # noqa: E402
from trajectory_msgs.msg import JointTrajectory  # noqa: E402

PLAN = """header:
  stamp: {sec: 0, nanosec: 0}
  frame_id: ''
joint_names: [joint1, joint2]
points:
- positions: [0.1, 0.2]
  velocities: [0.0, 0.0]
  accelerations: [0.0, 0.0]
  effort: []
  time_from_start: {sec: 0, nanosec: 0}
- positions: [0.3, -0.4]
  velocities: [0.5, 0.25]
  accelerations: [1.0, -2.0]
  effort: []
  time_from_start: {sec: 0, nanosec: 250000000}
---
"""


def send(args, timeout=60):
    return subprocess.run(processes.command(*processes.SEND) + list(args), capture_output=True,
                          text=True, timeout=timeout)


class Robot:
    """
    The test's own node: a robot publishing its joint states and a controller's subscription.

    ``received`` collects what arrives on ``/send_test/joint_trajectory``.
    """

    def __init__(self, positions):
        if not rclpy.ok():
            rclpy.init()
        self.node = rclpy.create_node('send_peer')
        self.executor = rclpy.executors.SingleThreadedExecutor()
        self.executor.add_node(self.node)
        self.received = []
        self.node.create_subscription(JointTrajectory, '/send_test/joint_trajectory',
                                      self.received.append, 10)
        states = self.node.create_publisher(JointState, '/send_test/joint_states', 10)

        def publish():
            states.publish(JointState(name=['joint2', 'joint1', 'finger'],
                                      position=[positions[1], positions[0], 0.01]))

        self.node.create_timer(0.02, publish)

    def run(self, args, timeout=60.0):
        """Run the command while spinning; return ``(exit code, stdout, stderr)``."""
        return run_spinning(self.executor, processes.command(*processes.SEND) + args, timeout,
                            drain=10)

    def close(self):
        self.executor.remove_node(self.node)
        self.node.destroy_node()


def plan_file(tmp_path):
    path = tmp_path / 'plan.yaml'
    path.write_text(PLAN)
    return str(path)


ARGS = ['--topic', '/send_test/joint_trajectory', '--joint-states', '/send_test/joint_states',
        '--timeout', '60']


def test_the_file_reaches_the_controller_as_written(tmp_path):
    path = plan_file(tmp_path)
    robot = Robot([0.1 + 0.01, 0.2 - 0.02])  # at the first point, within the tolerance
    try:
        code, out, err = robot.run([path, '--delay', '0.5'] + ARGS)
    finally:
        robot.close()
    # without --no-wait it returns once the trajectory's time has passed
    assert code == 0, err
    assert 'sent 2 points over 0.75 s to /send_test/joint_trajectory' in out and 'played' in out
    msg = robot.received[0]
    plan = read_trajectory(path)
    assert list(msg.joint_names) == list(plan.joint_names)
    assert msg.header.stamp.sec == msg.header.stamp.nanosec == 0  # starts on receipt
    for k, point in enumerate(msg.points):
        np.testing.assert_array_equal(point.positions, plan.positions[k])
        np.testing.assert_array_equal(point.velocities, plan.velocities[k])
        np.testing.assert_array_equal(point.accelerations, plan.accelerations[k])
        assert len(point.effort) == 0
        t = point.time_from_start.sec + 1e-9 * point.time_from_start.nanosec
        assert t == pytest.approx(plan.time[k] + 0.5, abs=1e-9)


def test_a_robot_away_from_the_start_is_not_made_to_jump(tmp_path):
    """Refused with each joint's distance; with ``--approach`` it moves there first."""
    path = plan_file(tmp_path)
    robot = Robot([0.1 + 0.4, 0.2 - 0.03])  # joint1 0.4 rad away, joint2 within 0.05
    try:
        code, out, err = robot.run([path, '--no-wait'] + ARGS)
        assert code == 4, (out, err)
        assert "away from the trajectory's first point" in err and 'joint1 0.4' in err
        assert 'joint2' not in err.split('0.05 (rad or m):')[1] and 'Traceback' not in err
        assert robot.received == []
        code, out, err = robot.run([path, '--no-wait', '--approach', '2.5'] + ARGS)
        assert code == 0, err
        assert 'moving there over 2.5 s first' in out
    finally:
        robot.close()
    times = [p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec
             for p in robot.received[0].points]
    assert times == pytest.approx([2.5, 2.75], abs=1e-9)


def test_bad_file_exits_1_and_no_listener_exits_3(tmp_path):
    bad = tmp_path / 'bad.yaml'
    bad.write_text('joint_names: [a]\n')
    proc = send([str(bad)])
    assert proc.returncode == 1 and 'not a trajectory_msgs/JointTrajectory' in proc.stderr
    assert 'Traceback' not in proc.stderr
    good = tmp_path / 'plan.yaml'
    good.write_text(PLAN)
    proc = send([str(good), '--topic', '/nobody_listens', '--timeout', '1', '--no-wait',
                 '--no-check'])
    assert proc.returncode == 3 and 'nothing subscribes to /nobody_listens' in proc.stdout
    # no joint states of the trajectory's joints: the position is unknown, nothing is sent
    proc = send([str(good), '--joint-states', '/nobody_publishes', '--timeout', '1'])
    assert proc.returncode == 4 and 'no joint states of joint1, joint2' in proc.stderr
