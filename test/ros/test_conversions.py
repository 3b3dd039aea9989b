"""
Message -> array conversions: desired input, planned trajectories, wrenches; hostile messages.

Message objects are the real generated ROS 2 message classes when they are importable, so the
field types (``array.array('d')`` sequences) are the ones the node sees.
"""

import math

from hypothesis import given, settings, strategies as st
import numpy as np
import pytest
from rbd_dynamics.ros.conversions import desired_from_array, desired_from_trajectory, \
    wrench_to_array

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
