"""The JointTrajectory checks shared by the node, the offline command and the simulator."""

import array
import math

import numpy as np
import pytest
from rbd_dynamics.control.joint_trajectory import check_points

NAMES = ['a', 'b']


def test_fields_become_arrays_and_absent_fields_none():
    out = check_points(NAMES, {'positions': [[1.0, 2.0], [3.0, 4.0]], 'effort': [[], []]},
                       required=('positions',), known=('a', 'b', 'c'), times=[0.0, 0.5])
    np.testing.assert_array_equal(out['positions'], [[1.0, 2.0], [3.0, 4.0]])
    assert out['effort'] is None


@pytest.mark.parametrize('names, fields, times, reason', [
    ([], {'positions': [[]]}, None, 'has no joint_names'),
    (NAMES, {'positions': []}, None, 'has no points'),
    (['a', 'zz'], {'positions': [[0.0, 0.0]]}, None, 'unknown joints: zz'),
    (['a', 'a'], {'positions': [[0.0, 0.0]]}, None, 'more than once: a'),
    (NAMES, {'positions': [[0.0]]}, None, 'point 0: positions has 1 entries'),
    (NAMES, {'positions': [[]]}, None, 'point 0 has no positions'),
    (NAMES, {'positions': [[0.0, math.nan]]}, None, 'positions are not finite'),
    (NAMES, {'positions': [[0.0, 0.0]] * 2, 'velocities': [[0.0, 0.0], []]}, None,
     'point 1 has no velocities'),
    (NAMES, {'positions': [[0.0, 0.0]] * 2}, [0.0, 0.0], 'point 1 is not finite'),
    (NAMES, {'positions': [[0.0, 0.0]] * 2}, [-1.0, 0.0], 'point 0 is not finite'),
])
def test_bad_trajectories_are_named(names, fields, times, reason):
    with pytest.raises(ValueError, match=reason):
        check_points(names, fields, required=('positions',), known=('a', 'b'), times=times)


def test_message_arrays_take_one_copy_with_the_same_results():
    # rclpy gives each point's field as an array.array('d'): checked and stacked at once,
    # to the loop's arrays, and refused with the loop's reason
    rows = [[1.0, 2.0], [3.0, 4.0], [5.0, -6.0]]
    fast = check_points(NAMES, {'positions': [array.array('d', r) for r in rows]})
    np.testing.assert_array_equal(fast['positions'], check_points(NAMES, {'positions': rows})
                                  ['positions'])
    assert fast['positions'].flags.writeable
    bad = [array.array('d', r) for r in rows]
    bad[2][1] = math.inf
    with pytest.raises(ValueError, match='point 2: positions are not finite'):
        check_points(NAMES, {'positions': bad})
    with pytest.raises(ValueError, match='point 1: positions has 1 entries'):
        check_points(NAMES, {'positions': [bad[0], array.array('d', [1.0]), bad[2]]})
