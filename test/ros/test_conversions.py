"""
Message -> array conversions: desired input, planned trajectories, wrenches; hostile messages.

Message objects are the real generated ROS 2 message classes when they are importable, so the
field types (``array.array('d')`` sequences) are the ones the node sees.
"""

import array
import math
import struct

from hypothesis import given, settings, strategies as st
import numpy as np
import pytest
from rbd_dynamics.ros.conversions import desired_from_array, desired_from_trajectory, \
    imu_from_cdr, JointStateBytes, JointStateReader, wrench_to_array

std_msgs = pytest.importorskip('std_msgs.msg')
trajectory_msgs = pytest.importorskip('trajectory_msgs.msg')
geometry_msgs = pytest.importorskip('geometry_msgs.msg')

JOINTS = ('a', 'b', 'c', 'd')
values = st.floats(allow_nan=True, allow_infinity=True, width=64)


def trajectory(names, points):
    msg = trajectory_msgs.JointTrajectory()
    msg.joint_names = list(names)
    for acc, pos, vel in points:
        point = trajectory_msgs.JointTrajectoryPoint()
        point.accelerations = [float(v) for v in acc]
        point.positions = [float(v) for v in pos]
        point.velocities = [float(v) for v in vel]
        msg.points.append(point)
    return msg


INDEX = {name: i for i, name in enumerate(JOINTS)}


def test_desired_state_in_any_order():
    msg = trajectory(['c', 'a', 'b', 'd'], [([3.0, 1.0, 2.0, 4.0], [30.0, 10.0, 20.0, 40.0], [])])
    desired = desired_from_trajectory(msg, INDEX, 4, JOINTS)
    np.testing.assert_array_equal(desired.qdd, [1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(desired.q, [10.0, 20.0, 30.0, 40.0])
    assert desired.qd is None and desired.mask.all()


def test_desired_state_for_a_subset_of_joints():
    msg = trajectory(['c'], [([3.0], [], [0.5])])
    desired = desired_from_trajectory(msg, INDEX, 4, ('c',))
    np.testing.assert_array_equal(desired.qdd, [0.0, 0.0, 3.0, 0.0])
    np.testing.assert_array_equal(desired.mask, [False, False, True, False])
    assert desired.q is None and desired.qd[2] == 0.5


@pytest.mark.parametrize('msg, reason', [
    (trajectory(JOINTS, []), 'exactly one point'),
    (trajectory(JOINTS, [([0.0] * 4, [], [])] * 2), 'exactly one point'),
    (trajectory(JOINTS, [([], [0.0] * 4, [])]), 'accelerations'),
    (trajectory(JOINTS, [([0.0] * 3, [], [])]), 'accelerations'),
    (trajectory(JOINTS, [([0.0] * 4, [0.0] * 3, [])]), 'positions'),
    (trajectory(JOINTS, [([0.0] * 4, [], [math.nan] * 4)]), 'velocities are not finite'),
    (trajectory(JOINTS, [([0.0, 0.0, math.inf, 0.0], [], [])]), 'not finite'),
    (trajectory(('a', 'b', 'c', 'zz'), [([0.0] * 4, [], [])]), 'unknown joints: zz'),
    (trajectory(('a', 'b', 'c'), [([0.0] * 3, [], [])]), 'missing joints: d'),
    (trajectory(('a', 'b', 'c', 'c'), [([0.0] * 4, [], [])]), 'more than once'),
])
def test_bad_desired_state(msg, reason):
    with pytest.raises(ValueError, match=reason):
        desired_from_trajectory(msg, INDEX, 4, JOINTS)


def test_desired_accelerations():
    msg = std_msgs.Float64MultiArray(data=[1.0, 2.0])
    rows = np.array([3, 1])
    desired = desired_from_array(msg, rows, 4)
    np.testing.assert_array_equal(desired.qdd, [0.0, 2.0, 0.0, 1.0])
    with pytest.raises(ValueError, match='3 entries, joints has 2'):
        desired_from_array(std_msgs.Float64MultiArray(data=[1.0, 2.0, 3.0]), rows, 4)
    with pytest.raises(ValueError, match='not finite'):
        desired_from_array(std_msgs.Float64MultiArray(data=[1.0, math.nan]), rows, 4)


def wrench(values):
    msg = geometry_msgs.WrenchStamped()
    f, t = msg.wrench.force, msg.wrench.torque
    f.x, f.y, f.z, t.x, t.y, t.z = [float(v) for v in values]
    return msg


@settings(max_examples=200, deadline=None)
@given(st.lists(values, min_size=6, max_size=6))
def test_wrench_conventions(components):
    msg = wrench(components)
    if not all(math.isfinite(v) for v in components):
        with pytest.raises(ValueError, match='not finite'):
            wrench_to_array(msg, 'applied_on_robot')
        return
    np.testing.assert_array_equal(wrench_to_array(msg, 'applied_on_robot'), components)
    np.testing.assert_array_equal(wrench_to_array(msg, 'exerted_by_robot'),
                                  -np.array(components))


def test_unknown_convention():
    with pytest.raises(ValueError, match='applied_on_robot or exerted_by_robot'):
        wrench_to_array(wrench([0.0] * 6), 'sideways')


def test_a_serialized_imu_reads_as_the_deserialized_message():
    """The IMU's fast reader gives the message's numbers, whatever the frame's length."""
    serialization = pytest.importorskip('rclpy.serialization')
    sensor_msgs = pytest.importorskip('sensor_msgs.msg')
    rng = np.random.default_rng(3)
    for frame in ('', 'a', 'imu', 'torso_link', 'x' * 7, 'pelvis_imu_link_0', 'é'):
        msg = sensor_msgs.Imu()
        msg.header.stamp.sec, msg.header.stamp.nanosec = int(rng.integers(0, 2**31)), \
            int(rng.integers(0, 10**9))
        msg.header.frame_id = frame
        o, w, a = msg.orientation, msg.angular_velocity, msg.linear_acceleration
        o.x, o.y, o.z, o.w, w.x, w.y, w.z, a.x, a.y, a.z = rng.normal(size=10)
        msg.orientation_covariance = rng.normal(size=9)
        msg.angular_velocity_covariance = rng.normal(size=9)
        msg.linear_acceleration_covariance = rng.normal(size=9)
        data = serialization.serialize_message(msg)
        read = imu_from_cdr(data)
        if read is None:  # (a middleware that encapsulates otherwise: the node deserializes)
            assert data[:2] != b'\x00\x01'
            continue
        stamp, got_frame, orientation, angular, linear = read
        assert stamp == msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec
        assert got_frame == frame
        assert orientation == (o.x, o.y, o.z, o.w)
        assert angular == (w.x, w.y, w.z) and linear == (a.x, a.y, a.z)
        assert imu_from_cdr(data[:len(data) // 2]) is None  # ends too soon
    # what it cannot read is left to the deserializer: big-endian, empty, no terminator
    assert imu_from_cdr(b'\x00\x00' + bytes(400)) is None
    assert imu_from_cdr(b'') is None
    assert imu_from_cdr(b'\x00\x01\x00\x00' + bytes(8) + struct.pack('<I', 3) + b'abc'
                        + bytes(400)) is None


def test_a_little_endian_imu_buffer_built_by_hand():
    """The layout itself: encapsulation, stamp, frame, 8-aligned orientation, covariances."""
    frame = b'imu\x00'
    head = b'\x00\x01\x00\x00' + struct.pack('<iII', 5, 7, len(frame)) + frame
    head += bytes(-(len(head) - 4) % 8)  # align the doubles to 8 after the encapsulation
    body = struct.pack('<4d', 0.0, 0.0, 0.0, 1.0) + bytes(72) + struct.pack('<3d', 1, 2, 3) \
        + bytes(72) + struct.pack('<3d', 4, 5, 9.81) + bytes(72)
    assert imu_from_cdr(head + body) == (5 * 10**9 + 7, 'imu', (0.0, 0.0, 0.0, 1.0),
                                         (1.0, 2.0, 3.0), (4.0, 5.0, 9.81))


def _joint_state(sensor_msgs, names, frame, rng, effort=True):
    msg = sensor_msgs.JointState()
    msg.header.stamp.sec, msg.header.stamp.nanosec = int(rng.integers(0, 2**31)), \
        int(rng.integers(0, 10**9))
    msg.header.frame_id = frame
    msg.name = list(names)
    msg.position = rng.normal(size=len(names)).tolist()
    msg.velocity = rng.normal(size=len(names)).tolist()
    if effort:
        msg.effort = rng.normal(size=len(names)).tolist()
    return msg


def test_serialized_joint_states_read_as_the_deserialized_messages():
    """The joint states' reader gives the message's fields, its names kept between messages."""
    serialization = pytest.importorskip('rclpy.serialization')
    sensor_msgs = pytest.importorskip('sensor_msgs.msg')
    rng = np.random.default_rng(4)
    reader = JointStateReader()
    seven = ['joint%d' % k for k in range(1, 8)]
    cases = [(seven, '', True), (seven, '', False), (seven, '', True), (seven[:3], 'base', True),
             ([], '', True), (['é', 'ab', 'c' * 9], 'x', True), (seven, '', True)]
    for names, frame, effort in cases:
        msg = _joint_state(sensor_msgs, names, frame, rng, effort)
        data = serialization.serialize_message(msg)
        read = reader.read(data)
        if read is None:  # (another encapsulation: the node deserializes)
            assert data[:2] != b'\x00\x01'
            continue
        sec, nanosec, got_frame, got_names, position, velocity, got_effort = read
        assert (sec, nanosec) == (msg.header.stamp.sec, msg.header.stamp.nanosec)
        assert got_frame == frame and got_names == names
        for got, want in ((position, msg.position), (velocity, msg.velocity),
                          (got_effort, msg.effort)):
            assert type(got) is array.array and got.typecode == 'd'
            assert got.tolist() == want.tolist()
        assert reader.read(data[:len(data) // 2]) is None  # ends too soon
    # the same names again but a frame of another length: read afresh, not from the kept part
    msg = _joint_state(sensor_msgs, seven, 'frame', rng)
    assert reader.read(serialization.serialize_message(msg))[2:4] == ('frame', seven)
    assert reader.read(b'\x00\x00' + bytes(64)) is None  # big-endian: not read here
    assert reader.read(b'\x00\x01\x00\x00' + bytes(8) + struct.pack('<I', 0)) is None


def test_torques_serialized_by_hand_read_as_the_message():
    """The torques' bytes are the message the middleware reads back."""
    serialization = pytest.importorskip('rclpy.serialization')
    sensor_msgs = pytest.importorskip('sensor_msgs.msg')
    rng = np.random.default_rng(6)
    for names in ([], ['a'], ['joint%d' % k for k in range(29)], ['ab', 'é', 'c']):
        layout = JointStateBytes(names)
        for _ in range(2):  # the same layout, written again
            effort = rng.normal(size=len(names))
            sec, nanosec = int(rng.integers(0, 2**31)), int(rng.integers(0, 10**9))
            msg = serialization.deserialize_message(layout.serialized(sec, nanosec, effort),
                                                    sensor_msgs.JointState)
            assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == (sec, nanosec)
            assert msg.header.frame_id == '' and msg.name == names
            assert list(msg.effort) == effort.tolist()
            assert len(msg.position) == 0 and len(msg.velocity) == 0
        with pytest.raises(ValueError):  # efforts for other joints: no message
            layout.serialized(0, 0, np.zeros(len(names) + 1))
