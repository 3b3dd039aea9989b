"""
Joint states merged by name (rbd_dynamics.control.joint_states), and angle wrapping.

The messages are plain objects with the fields of a ``sensor_msgs/JointState`` and its field
types (``array.array('d')``), so the merging is tested without ROS.
"""

import array
import math
import types

from hypothesis import given, settings, strategies as st
import numpy as np
import pytest
from rbd_dynamics.control.joint_states import JointStateMerger
from rbd_dynamics.control.law import wrap_angle

JOINTS = ('a', 'b', 'c', 'd')


def joint_state(names, position=(), velocity=(), effort=()):
    # the field types of a generated sensor_msgs/JointState: a list of names, float64 arrays
    return types.SimpleNamespace(name=list(names), position=array.array('d', position),
                                 velocity=array.array('d', velocity),
                                 effort=array.array('d', effort))


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


def test_finite_values_whose_sum_overflows_are_merged():
    # (the finiteness check sums a message's values first: an overflow is looked at again)
    merger = JointStateMerger(JOINTS)
    merger.update(joint_state(JOINTS, [1e308, 1e308, -1e308, -1e308], [1e308] * 4, [1e308] * 4),
                  efforts=True)
    np.testing.assert_array_equal(merger.position, [1e308, 1e308, -1e308, -1e308])
    assert merger.effort_fresh


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


@given(st.floats(-1e6, 1e6))
def test_wrap_angle(angle):
    wrapped = wrap_angle(angle)
    assert -math.pi <= wrapped < math.pi
    assert math.isclose(math.cos(wrapped), math.cos(angle), abs_tol=1e-6)
    assert math.isclose(math.sin(wrapped), math.sin(angle), abs_tol=1e-6)


def test_efforts_merged_when_asked_and_not_finite_ones_refuse_the_state():
    merger = JointStateMerger(JOINTS)
    # not asked (no observer): efforts are not read, a NaN effort changes nothing
    merger.update(joint_state(JOINTS, [1.0] * 4, [0.0] * 4, [math.nan] * 4))
    assert not merger.effort_fresh and not merger.has_effort.any()
    merger.update(joint_state(['a', 'b'], [1.0, 2.0], [], [0.5, 0.6]), efforts=True)
    assert not merger.effort_fresh  # c and d never had one
    merger.update(joint_state(['d', 'c'], [4.0, 3.0], [], [0.8, 0.7]), efforts=True)
    assert merger.effort_fresh
    np.testing.assert_array_equal(merger.effort, [0.5, 0.6, 0.7, 0.8])
    with pytest.raises(ValueError, match='effort is not finite for c'):
        merger.update(joint_state(['a', 'c'], [9.0, 9.0], [9.0, 9.0], [0.1, math.inf]),
                      efforts=True)
    # refused whole: nothing of that state was merged
    np.testing.assert_array_equal(merger.position, [1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(merger.effort, [0.5, 0.6, 0.7, 0.8])
    # a state without efforts: not fresh (the observer pauses)
    merger.update(joint_state(JOINTS, [1.0] * 4), efforts=True)
    assert not merger.effort_fresh
