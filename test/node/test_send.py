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
from support.ros import spin_until  # noqa: E402
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


def test_the_file_reaches_the_controller_as_written(tmp_path):
    path = tmp_path / 'plan.yaml'
    path.write_text(PLAN)
    if not rclpy.ok():
        rclpy.init()
    node = rclpy.create_node('send_peer')
    executor = rclpy.executors.SingleThreadedExecutor()
    executor.add_node(node)
    received = []
    node.create_subscription(JointTrajectory, '/send_test/joint_trajectory', received.append, 10)
    proc = subprocess.Popen(processes.command(*processes.SEND)
                            + [str(path), '--topic', '/send_test/joint_trajectory', '--delay',
                               '0.5', '--timeout', '60'],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert spin_until(executor, lambda: received, 60.0, 0.05, lambda: proc.poll() is None)
        # without --no-wait it returns once the trajectory's time has passed
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        executor.remove_node(node)
        node.destroy_node()
    out = proc.stdout.read()
    assert 'sent 2 points over 0.75 s to /send_test/joint_trajectory' in out and 'played' in out
    msg = received[0]
    plan = read_trajectory(str(path))
    assert list(msg.joint_names) == list(plan.joint_names)
    assert msg.header.stamp.sec == msg.header.stamp.nanosec == 0  # starts on receipt
    for k, point in enumerate(msg.points):
        np.testing.assert_array_equal(point.positions, plan.positions[k])
        np.testing.assert_array_equal(point.velocities, plan.velocities[k])
        np.testing.assert_array_equal(point.accelerations, plan.accelerations[k])
        assert len(point.effort) == 0
        t = point.time_from_start.sec + 1e-9 * point.time_from_start.nanosec
        assert t == pytest.approx(plan.time[k] + 0.5, abs=1e-9)


def test_bad_file_exits_1_and_no_listener_exits_3(tmp_path):
    bad = tmp_path / 'bad.yaml'
    bad.write_text('joint_names: [a]\n')
    proc = send([str(bad)])
    assert proc.returncode == 1 and 'not a trajectory_msgs/JointTrajectory' in proc.stderr
    assert 'Traceback' not in proc.stderr
    good = tmp_path / 'plan.yaml'
    good.write_text(PLAN)
    proc = send([str(good), '--topic', '/nobody_listens', '--timeout', '1', '--no-wait'])
    assert proc.returncode == 3 and 'nothing subscribes to /nobody_listens' in proc.stdout
