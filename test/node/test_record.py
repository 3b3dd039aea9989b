"""
``rbd_dynamics_record``: topics recorded into a rosbag2 without the ``ros2`` command.

The test's own node publishes joint states and a wrist wrench; the recording holds every
message as published (read back with the package's own bag reader) and appears whole or not
at all.
"""

import os
import sys

import numpy as np
import pytest

rclpy = pytest.importorskip('rclpy')
pytest.importorskip('rosbags')
WrenchStamped = pytest.importorskip('geometry_msgs.msg').WrenchStamped

from rbd_dynamics.analysis.bag import read_joint_states  # noqa: E402
import rclpy.executors  # noqa: E402
from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from support.ros import run_spinning  # noqa: E402

STATES, WRENCH = '/record_test/joint_states', '/record_test/wrench'


class Robot:
    """Joint states (best effort, as many drivers publish them) and a wrench, every 10 ms."""

    def __init__(self):
        if not rclpy.ok():
            rclpy.init()
        self.node = rclpy.create_node('record_peer')
        self.executor = rclpy.executors.SingleThreadedExecutor()
        self.executor.add_node(self.node)
        states = self.node.create_publisher(
            JointState, STATES, QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT))
        wrench = self.node.create_publisher(WrenchStamped, WRENCH, 10)
        self.sent = []

        def publish():
            k = len(self.sent)
            msg = JointState(name=['joint1', 'joint2'], position=[0.01 * k, -0.02 * k],
                             velocity=[1.0, -2.0], effort=[3.0 + k, 4.0])
            msg.header.stamp.sec, msg.header.stamp.nanosec = 100 + k // 100, (k % 100) * 10 ** 7
            states.publish(msg)
            w = WrenchStamped()
            w.header.frame_id = 'ft_frame'
            w.wrench.force.z = float(k)
            wrench.publish(w)
            self.sent.append(msg)

        self.node.create_timer(0.01, publish)

    def run(self, args, timeout=60.0):
        """Run the recorder while publishing; ``(exit code, stdout, stderr)``."""
        return run_spinning(self.executor, [sys.executable, '-m', 'rbd_dynamics', 'record']
                            + args, timeout, period=0.005)

    def close(self):
        self.executor.remove_node(self.node)
        self.node.destroy_node()


@pytest.fixture
def robot():
    started = Robot()
    yield started
    started.close()


def test_joint_states_and_a_wrench_recorded_as_published(robot, tmp_path):
    out = tmp_path / 'run1'
    code, stdout, err = robot.run([str(out), STATES, WRENCH, '--duration', '1.0'])
    assert code == 0, err
    assert 'wrote %s' % out in stdout and 'Traceback' not in err
    assert sorted(os.listdir(tmp_path)) == ['run1']  # no partial directory left
    states = read_joint_states(str(out), STATES)
    group = states.groups[0]
    assert list(group.names) == ['joint1', 'joint2']
    # 1 s at 100 Hz; a publisher's timer delayed by a loaded machine fires again at once to
    # catch up, so the count is not held to 100 (a recorder that ignored --duration would run
    # to the test's 60 s)
    assert 50 <= len(group.stamp) <= 250, len(group.stamp)
    sent = {m.header.stamp.sec * 10 ** 9 + m.header.stamp.nanosec: m for m in robot.sent}
    for k, stamp in enumerate(group.stamp):
        msg = sent[int(stamp)]
        np.testing.assert_array_equal(group.position[k], msg.position)
        np.testing.assert_array_equal(group.velocity[k], msg.velocity)
        np.testing.assert_array_equal(group.effort[k], msg.effort)
    # consecutive: nothing lost between the first and the last
    k = sorted(list(sent).index(int(s)) for s in group.stamp)
    assert k == list(range(k[0], k[-1] + 1))
    from rosbags.highlevel import AnyReader
    from pathlib import Path
    with AnyReader([Path(out)]) as reader:
        wrench = [c for c in reader.connections if c.topic == WRENCH]
        assert wrench and wrench[0].msgtype == 'geometry_msgs/msg/WrenchStamped'
        forces = [reader.deserialize(raw, c.msgtype).wrench.force.z
                  for c, _, raw in reader.messages(connections=wrench)]
    assert len(forces) >= 80 and forces == sorted(forces)


def test_refusals_write_nothing(robot, tmp_path):
    (tmp_path / 'taken').mkdir()
    code, _, err = robot.run([str(tmp_path / 'taken'), STATES, '--duration', '0.2'])
    assert code == 1 and 'exists' in err and 'Traceback' not in err, err
    code, _, err = robot.run([str(tmp_path / 'none'), '/record_test/nobody', '--timeout', '1'])
    assert code == 3 and 'no publisher of /record_test/nobody' in err, err
    assert sorted(os.listdir(tmp_path)) == ['taken']
    # a type the package's tools do not read is refused before anything is written
    from rbd_dynamics.ros.record import Recorder
    with pytest.raises(ValueError, match='my_pkg/msg/Thing'):
        Recorder(str(tmp_path / 'odd'), {STATES: 'sensor_msgs/msg/JointState',
                                         '/thing': 'my_pkg/msg/Thing'}, 'mcap')
    assert sorted(os.listdir(tmp_path)) == ['taken']
