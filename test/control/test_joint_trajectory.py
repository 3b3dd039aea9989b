"""The JointTrajectory checks shared by the node, the offline command and the simulator."""

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
