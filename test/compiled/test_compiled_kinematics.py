"""
The joint models (:mod:`rbd_dynamics.compiled.kinematics`) against :mod:`rbd_dynamics.spatial`.

A turn about an axis and a quaternion's rotation, as the coordinate transforms the forward
pass applies (``R^T``); a quaternion that is not normalised is normalised, a zero one refused.
"""

import numpy as np
import pytest
from rbd_dynamics.spatial import axis_angle_to_matrix, quaternion_to_matrix
from support.compiled import needs_numba

pytestmark = needs_numba


@pytest.fixture(scope='module')
def kinematics():
    from rbd_dynamics.compiled import kinematics
    return kinematics


def test_axis_rotation_is_the_transposed_turn(kinematics):
    rng = np.random.default_rng(4)
    for _ in range(6):
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        angle = rng.uniform(-4, 4)
        got = np.array(kinematics.axis_rotation(angle, (axis[0], axis[1], axis[2])))
        np.testing.assert_allclose(got.reshape(3, 3), axis_angle_to_matrix(axis, angle).T,
                                   atol=1e-14)


def test_quaternion_rotation_normalises_and_refuses_zero(kinematics):
    rng = np.random.default_rng(5)
    for _ in range(6):
        quat = rng.normal(size=4) * rng.uniform(0.2, 5.0)
        got = np.array(kinematics.quaternion_rotation(*quat))
        np.testing.assert_allclose(got.reshape(3, 3), quaternion_to_matrix(quat).T, atol=1e-14)
    with pytest.raises(ValueError, match='non-zero norm'):
        kinematics.quaternion_rotation(0.0, 0.0, 0.0, 0.0)
