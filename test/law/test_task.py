"""
The task-space laws without ROS (:mod:`rbd_dynamics.control.task`).

At the desired pose and at rest both laws give exactly the gravity compensation; a known
small displacement of the desired pose gives ``Jᵀ K e`` with ``e`` the displacement
(impedance); with the exact model, operational space makes the link's acceleration exactly
``ẍ_d + K e + D ė`` (forward dynamics by ``M⁻¹``, independent of the law's own algebra); near a
singularity the torques stay finite; the rotation error takes the short way round.
"""

import numpy as np
import pytest
import rbd_dynamics as rbd
from rbd_dynamics.control import task
from rbd_dynamics.resources import demo_urdf_path
from rbd_dynamics.spatial import axis_angle_to_matrix
from support.robots import robots_directory

LINK = 'tool_center_point'


@pytest.fixture(scope='module')
def arm():
    return rbd.Model.from_urdf_file(demo_urdf_path())


def _quaternion(R):
    """``[x, y, z, w]`` of a rotation matrix (for building desired poses here)."""
    w = np.sqrt(max(0.0, 1.0 + np.trace(R))) / 2.0
    if w > 1e-3:
        return np.array([(R[2, 1] - R[1, 2]) / (4 * w), (R[0, 2] - R[2, 0]) / (4 * w),
                         (R[1, 0] - R[0, 1]) / (4 * w), w])
    # half a turn: an axis from R + I
    axis = np.linalg.eigh(R + np.eye(3))[1][:, -1]
    return np.concatenate((axis, [0.0]))


def _state(model, seed=1):
    rng = np.random.default_rng(seed)
    q = np.array([0.3, 0.6, -0.2, -1.2, 0.1, 0.8, 0.0, 0.02])[:model.nv] + \
        rng.uniform(-0.2, 0.2, model.nv) * (np.arange(model.nv) < 7)
    return q, rng.normal(scale=0.5, size=model.nv) * (np.arange(model.nv) < 7)


@pytest.mark.parametrize('mode', task.MODES)
def test_at_the_desired_pose_and_at_rest_the_torque_is_gravity(arm, mode):
    q, _ = _state(arm)
    T = rbd.link_pose(arm, q, LINK)
    result = task.task_torques(arm, q, np.zeros(arm.nv), LINK, T[:3, 3], _quaternion(T[:3, :3]),
                               mode=mode)
    np.testing.assert_allclose(result.error, 0.0, atol=1e-12)
    np.testing.assert_allclose(result.torque, rbd.gravity_torques(arm, q), rtol=0, atol=1e-9)


def test_a_small_displacement_gives_jt_k_e(arm):
    q, _ = _state(arm, 2)
    T = rbd.link_pose(arm, q, LINK)
    dp = np.array([0.004, -0.003, 0.002])
    axis = np.array([0.3, -0.5, 0.8]) / np.linalg.norm([0.3, -0.5, 0.8])
    angle = 0.02
    R_d = axis_angle_to_matrix(axis, angle) @ T[:3, :3]
    K = np.array([800.0, 700.0, 600.0, 40.0, 35.0, 30.0])
    result = task.task_torques(arm, q, np.zeros(arm.nv), LINK, T[:3, 3] + dp, _quaternion(R_d),
                               stiffness=K)
    # the rotation vector of R_d R^T is the turn itself, whichever way axis_angle_to_matrix
    # writes it: R_d R^T = rot(axis, angle)
    expected_e = np.concatenate((dp, angle * axis))
    np.testing.assert_allclose(result.error, expected_e, atol=1e-12)
    J = rbd.jacobian(arm, q, LINK)
    np.testing.assert_allclose(result.torque - rbd.gravity_torques(arm, q), J.T @ (K * expected_e),
                               rtol=1e-12, atol=1e-9)


def test_operational_space_gives_the_commanded_acceleration(arm):
    q, qd = _state(arm, 3)
    rng = np.random.default_rng(4)
    T = rbd.link_pose(arm, q, LINK)
    R_d = axis_angle_to_matrix(np.array([1.0, 0.0, 0.0]), 0.05) @ T[:3, :3]
    K = np.array([500.0] * 3 + [50.0] * 3)
    D = np.array([40.0] * 3 + [10.0] * 3)
    twist_d = rng.normal(scale=0.1, size=6)
    acc_d = rng.normal(scale=0.5, size=6)
    result = task.task_torques(arm, q, qd, LINK, T[:3, 3] + [0.01, 0.0, -0.01], _quaternion(R_d),
                               mode='operational_space', stiffness=K, damping=D, twist=twist_d,
                               acceleration=acc_d, nullspace_stiffness=20.0,
                               posture=q + 0.1)
    M = rbd.mass_matrix(arm, q)
    J = rbd.jacobian(arm, q, LINK)
    assert np.linalg.eigvalsh(J @ np.linalg.solve(M, J.T)).min() > task.DAMPING_THRESHOLD
    qdd = np.linalg.solve(M, result.torque - rbd.rnea(arm, q, qd, np.zeros(arm.nv)))
    achieved = rbd.link_acceleration(arm, q, qd, qdd, LINK)
    commanded = acc_d + K * result.error + D * (twist_d - J @ qd)
    np.testing.assert_allclose(achieved, commanded, rtol=1e-9, atol=1e-9)


def test_near_a_singularity_the_torques_stay_finite_and_bounded():
    root = robots_directory()
    if root is None:
        pytest.skip('example-robot-data is not installed')
    ur10 = rbd.Model.from_urdf_file(root + '/ur_description/urdf/ur10_robot.urdf')
    link = ur10.link_names[-1]
    # the elbow stretched and the wrist aligned: two singularities at once
    for q in (np.array([0.0, -1.57, 0.0, -1.57, 0.0, 0.0]),
              np.array([0.0, -1.57, 1e-7, -1.57, 1e-7, 0.0])):
        T = rbd.link_pose(ur10, q, link)
        for mode in task.MODES:
            result = task.task_torques(ur10, q, np.zeros(6), link, T[:3, 3] + [0.0, 0.0, 0.01],
                                       _quaternion(T[:3, :3]), mode=mode)
            assert np.all(np.isfinite(result.torque))
            extra = result.torque - rbd.gravity_torques(ur10, q)
            assert np.abs(extra).max() < 1e3, (mode, extra)


def test_a_link_with_few_joints_gets_the_components_it_can_reach(arm):
    q, _ = _state(arm, 5)
    J = rbd.jacobian(arm, q, 'link1')
    assert task.reachable(J).sum() < 6
    T = rbd.link_pose(arm, q, 'link1')
    for mode in task.MODES:
        result = task.task_torques(arm, q, np.zeros(arm.nv), 'link1', T[:3, 3] + 0.01,
                                   _quaternion(T[:3, :3]), mode=mode)
        assert np.all(np.isfinite(result.torque))
        # only joint1 moves link1: every other torque is gravity's
        np.testing.assert_allclose(result.torque[1:], rbd.gravity_torques(arm, q)[1:], atol=1e-9)


def test_the_rotation_error_takes_the_short_way():
    axis = np.array([0.0, 0.0, 1.0])
    for angle in (np.pi - 0.1, np.pi + 0.1, 0.5, -2.0):
        R = axis_angle_to_matrix(axis, angle)
        wrapped = (angle + np.pi) % (2 * np.pi) - np.pi
        np.testing.assert_allclose(task.rotation_vector(R), wrapped * axis, atol=1e-12)


@pytest.mark.parametrize('quaternion', [[0, 0, 0, 0], [0, 0, 0, 2.0], [np.nan, 0, 0, 1],
                                        [0.1, 0.2, 0.3, 0.4]])
def test_a_bad_quaternion_is_refused(arm, quaternion):
    with pytest.raises(ValueError, match='unit quaternion'):
        task.task_torques(arm, np.zeros(arm.nv), np.zeros(arm.nv), LINK, [0, 0, 0.5], quaternion)


def test_an_unknown_link_and_mode_are_refused(arm):
    with pytest.raises(rbd.UnknownLinkError):
        task.task_torques(arm, np.zeros(arm.nv), np.zeros(arm.nv), 'no_link', [0, 0, 0.5],
                          [0, 0, 0, 1])
    with pytest.raises(ValueError, match='mode'):
        task.task_torques(arm, np.zeros(arm.nv), np.zeros(arm.nv), LINK, [0, 0, 0.5],
                          [0, 0, 0, 1], mode='admittance')
