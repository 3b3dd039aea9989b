"""
Message -> array conversions: merging by name, desired input, wrenches; hostile messages.

Message objects are the real generated ROS 2 message classes when they are importable, so the
field types (``array.array('d')`` sequences) are the ones the node sees.
"""

import math

from hypothesis import given, settings, strategies as st
import numpy as np
import pytest
from rbd_dynamics.controller import wrap_angle
from rbd_dynamics.ros.conversions import (desired_from_array, desired_from_trajectory,
                                          JointStateMerger, wrench_to_array)

sensor_msgs = pytest.importorskip('sensor_msgs.msg')
std_msgs = pytest.importorskip('std_msgs.msg')
trajectory_msgs = pytest.importorskip('trajectory_msgs.msg')
geometry_msgs = pytest.importorskip('geometry_msgs.msg')

JOINTS = ('a', 'b', 'c', 'd')


def joint_state(names, position=(), velocity=(), effort=()):
    msg = sensor_msgs.JointState()
    msg.name = list(names)
    msg.position = [float(v) for v in position]
    msg.velocity = [float(v) for v in velocity]
    msg.effort = [float(v) for v in effort]
    return msg


def test_merge_partial_messages_by_name():
    merger = JointStateMerger(JOINTS)
    assert merger.update(joint_state(['c', 'x', 'a'], [3.0, 9.0, 1.0], [0.3, 9.0, 0.1])) == 2
    assert merger.missing() == ['b', 'd']
    merger.update(joint_state(['d', 'b'], [4.0, 2.0]))
    assert merger.missing() == [] and merger.missing_count == 0
    np.testing.assert_array_equal(merger.position, [1.0, 2.0, 3.0, 4.0])
    # b and d never had a velocity: zero; a and c keep theirs
    np.testing.assert_array_equal(merger.velocity, [0.1, 0.0, 0.3, 0.0])
    merger.update(joint_state(['a'], [1.5]))
    np.testing.assert_array_equal(merger.velocity, [0.1, 0.0, 0.3, 0.0])
    np.testing.assert_array_equal(merger.position, [1.5, 2.0, 3.0, 4.0])


@pytest.mark.parametrize('msg, reason', [
    (joint_state(['a', 'b'], [1.0]), 'position'),
    (joint_state(['a'], [1.0], [1.0, 2.0]), 'velocity'),
    (joint_state(['a'], [1.0], [], [1.0, 2.0]), 'effort'),
    (joint_state(['a', 'a'], [1.0, 2.0]), 'more than once'),
    (joint_state(['a', 'b'], [1.0, math.nan]), 'not finite for b'),
    (joint_state(['a'], [1.0], [math.inf]), 'velocity is not finite for a'),
])
def test_bad_joint_states_change_nothing(msg, reason):
    merger = JointStateMerger(JOINTS)
    merger.update(joint_state(JOINTS, [1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]))
    before = merger.position.copy(), merger.velocity.copy()
    with pytest.raises(ValueError, match=reason):
        merger.update(msg)
    np.testing.assert_array_equal(merger.position, before[0])
    np.testing.assert_array_equal(merger.velocity, before[1])


def test_non_finite_values_of_foreign_joints_are_ignored():
    merger = JointStateMerger(JOINTS)
    merger.update(joint_state(['a', 'other'], [1.0, math.nan], [0.0, math.inf]))
    assert merger.position[0] == 1.0


def test_adopt_carries_state_over_by_name():
    old = JointStateMerger(JOINTS)
    old.update(joint_state(['a', 'c'], [1.0, 3.0], [0.1, 0.3]))
    new = JointStateMerger(('c', 'e', 'a'))
    new.adopt(old)
    assert new.missing() == ['e']
    np.testing.assert_array_equal(new.position, [3.0, 0.0, 1.0])
    np.testing.assert_array_equal(new.velocity, [0.3, 0.0, 0.1])


name_lists = st.lists(st.sampled_from(JOINTS + ('x', 'y', 'mimic')), max_size=8)
values = st.floats(allow_nan=True, allow_infinity=True, width=64)


@settings(max_examples=300, deadline=None)
@given(names=name_lists, position=st.lists(values, max_size=9),
       velocity=st.lists(values, max_size=9), effort=st.lists(values, max_size=9))
def test_any_joint_state_is_merged_or_refused(names, position, velocity, effort):
    """Whatever arrives: a ValueError, or finite arrays that hold exactly the message's values."""
    merger = JointStateMerger(JOINTS)
    merger.update(joint_state(JOINTS, [0.5] * 4, [0.25] * 4))
    msg = joint_state(names, position, velocity, effort)
    try:
        merger.update(msg)
    except ValueError:
        np.testing.assert_array_equal(merger.position, [0.5] * 4)
        np.testing.assert_array_equal(merger.velocity, [0.25] * 4)
        return
    assert np.all(np.isfinite(merger.position)) and np.all(np.isfinite(merger.velocity))
    assert len(set(names)) == len(names)
    for k, name in enumerate(names):
        if name in JOINTS:
            i = JOINTS.index(name)
            if position:
                assert merger.position[i] == position[k]
            if velocity:
                assert merger.velocity[i] == velocity[k]


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


@given(st.floats(-1e6, 1e6))
def test_wrap_angle(angle):
    wrapped = wrap_angle(angle)
    assert -math.pi <= wrapped < math.pi
    assert math.isclose(math.cos(wrapped), math.cos(angle), abs_tol=1e-6)
    assert math.isclose(math.sin(wrapped), math.sin(angle), abs_tol=1e-6)
