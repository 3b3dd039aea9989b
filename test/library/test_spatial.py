"""Spatial algebra checked directly: hand-computed cases and the identities the book states."""

import numpy as np
import pytest

from rbd_dynamics.spatial import (axis_angle_to_matrix, cross_force, cross_motion,
                                  frame_transform, from_public, inertia_tensor, plux,
                                  quaternion_to_matrix, rpy_to_matrix, skew, spatial_inertia,
                                  to_public)


def test_skew_is_the_cross_product():
    p = np.array([1.0, -2.0, 3.0])
    u = np.array([0.5, 4.0, -1.0])
    np.testing.assert_allclose(skew(p), [[0, -3, -2], [3, 0, -1], [2, 1, 0]])
    np.testing.assert_allclose(skew(p) @ u, np.cross(p, u))
    batch = skew(np.stack((p, u)))
    assert batch.shape == (2, 3, 3)
    np.testing.assert_allclose(batch[1], -batch[1].T)


def test_rpy_is_fixed_axes_roll_pitch_yaw():
    # yaw alone turns x onto y
    np.testing.assert_allclose(rpy_to_matrix([0.0, 0.0, np.pi / 2]) @ [1, 0, 0], [0, 1, 0],
                               atol=1e-15)
    # roll alone turns y onto z
    np.testing.assert_allclose(rpy_to_matrix([np.pi / 2, 0.0, 0.0]) @ [0, 1, 0], [0, 0, 1],
                               atol=1e-15)
    # pitch alone turns z onto x
    np.testing.assert_allclose(rpy_to_matrix([0.0, np.pi / 2, 0.0]) @ [0, 0, 1], [1, 0, 0],
                               atol=1e-15)
    # the composition order: Rz(yaw) Ry(pitch) Rx(roll)
    r, p, y = 0.3, -0.7, 1.1
    expected = (axis_angle_to_matrix([0, 0, 1], y) @ axis_angle_to_matrix([0, 1, 0], p)
                @ axis_angle_to_matrix([1, 0, 0], r))
    np.testing.assert_allclose(rpy_to_matrix([r, p, y]), expected, atol=1e-15)


def test_axis_angle_rotates_about_the_axis():
    axis = np.array([1.0, 1.0, 1.0]) / np.sqrt(3.0)
    R = axis_angle_to_matrix(axis, 2 * np.pi / 3)  # a third of a turn cycles x -> y -> z
    np.testing.assert_allclose(R @ [1, 0, 0], [0, 1, 0], atol=1e-15)
    np.testing.assert_allclose(R @ axis, axis, atol=1e-15)
    np.testing.assert_allclose(R @ R.T, np.eye(3), atol=1e-15)
    batch = axis_angle_to_matrix([0, 0, 1], np.array([0.0, np.pi]))
    np.testing.assert_allclose(batch[1], np.diag([-1.0, -1.0, 1.0]), atol=1e-15)


def test_quaternion_is_xyzw_and_normalised():
    half = np.pi / 4  # a quarter turn about z: [0, 0, sin(pi/4), cos(pi/4)]
    np.testing.assert_allclose(quaternion_to_matrix([0, 0, np.sin(half), np.cos(half)]),
                               axis_angle_to_matrix([0, 0, 1], np.pi / 2), atol=1e-15)
    np.testing.assert_allclose(quaternion_to_matrix([0, 0, 0, 5.0]), np.eye(3))
    with pytest.raises(ValueError, match='norm'):
        quaternion_to_matrix([0.0, 0.0, 0.0, 0.0])


def test_one_quaternion_is_its_batch_of_one_bit_for_bit():
    # (one quaternion takes a path in floats; a batch, arrays: the same operations)
    rng = np.random.default_rng(3)
    quats = rng.normal(size=(2, 10, 4)) * rng.uniform(0.1, 10.0, size=(2, 10, 1))
    quats[0, 0] = [0.0, 0.0, 0.0, 1.0]
    quats[0, 1] = [0.0, 0.0, -3.0, 0.0]
    batched = quaternion_to_matrix(quats)
    assert batched.shape == (2, 10, 3, 3)
    for quat, expect in zip(quats.reshape(-1, 4), batched.reshape(-1, 3, 3)):
        R = quaternion_to_matrix(quat.tolist())
        assert R.shape == (3, 3) and R.dtype == np.float64
        np.testing.assert_array_equal(R, expect)
        np.testing.assert_array_equal(quaternion_to_matrix(quat[None])[0], expect)
        np.testing.assert_allclose(R @ R.T, np.eye(3), atol=1e-14)
        assert np.linalg.det(R) > 0.0
    quats[1, 3] = 0.0
    for bad in (quats, quats[1, 3], [np.nan, 0.0, 0.0, 1.0]):
        with pytest.raises(ValueError, match='norm'):
            quaternion_to_matrix(bad)


def test_plux_and_frame_transform():
    E = axis_angle_to_matrix([0, 0, 1], 0.4)
    r = np.array([0.2, -0.5, 1.0])
    X = plux(E, r)
    np.testing.assert_allclose(X[:3, :3], E)
    np.testing.assert_allclose(X[3:, 3:], E)
    np.testing.assert_allclose(X[:3, 3:], 0.0)
    np.testing.assert_allclose(X[3:, :3], -E @ skew(r))
    # a pure rotation about A's origin moves B's origin (at r) with w x r, in B axes
    w = np.array([0.0, 0.0, 2.0])
    m = X @ np.concatenate((w, np.zeros(3)))
    np.testing.assert_allclose(m[:3], E @ w)
    np.testing.assert_allclose(m[3:], E @ np.cross(w, r))
    # frame_transform takes the new frame's axes as columns: the transpose of plux's E
    R = rpy_to_matrix([0.1, 0.2, 0.3])
    np.testing.assert_allclose(frame_transform(R, r), plux(R.T, r))


def test_cross_products_match_their_matrices_and_are_dual():
    rng = np.random.default_rng(3)
    v, m, f = rng.normal(size=(3, 6))
    crm = np.zeros((6, 6))  # Eq. 2.31
    crm[:3, :3] = skew(v[:3])
    crm[3:, 3:] = skew(v[:3])
    crm[3:, :3] = skew(v[3:])
    np.testing.assert_allclose(cross_motion(v, m), crm @ m, atol=1e-14)
    np.testing.assert_allclose(cross_force(v, f), -crm.T @ f, atol=1e-14)
    # (v x* f) . m = -f . (v x m)
    assert cross_force(v, f) @ m == pytest.approx(-(f @ cross_motion(v, m)), abs=1e-12)
    np.testing.assert_allclose(cross_motion(v, v), 0.0, atol=1e-14)


def test_spatial_inertia_of_a_point_mass():
    # 2 kg at c = (0, 0, 0.5), no inertia about its centre: about the origin the rotational
    # inertia is m (c.c 1 - c c^T) = diag(0.5, 0.5, 0), and h = m c.
    out = spatial_inertia(2.0, [0.0, 0.0, 0.5], np.zeros((3, 3)))
    np.testing.assert_allclose(out[:3, :3], np.diag([0.5, 0.5, 0.0]))
    np.testing.assert_allclose(out[:3, 3:], skew([0.0, 0.0, 1.0]))
    np.testing.assert_allclose(out[3:, :3], skew([0.0, 0.0, 1.0]).T)
    np.testing.assert_allclose(out[3:, 3:], 2.0 * np.eye(3))
    # its momentum spinning at 3 rad/s about x through the origin: linear m (w x c)
    momentum = out @ np.array([3.0, 0, 0, 0, 0, 0])
    np.testing.assert_allclose(momentum[3:], 2.0 * np.cross([3.0, 0, 0], [0, 0, 0.5]))
    np.testing.assert_allclose(momentum[:3], [1.5, 0, 0])


def test_public_order_swaps_halves():
    featherstone = np.array([1.0, 2, 3, 4, 5, 6])  # [n, f]
    np.testing.assert_array_equal(to_public(featherstone), [4, 5, 6, 1, 2, 3])
    np.testing.assert_array_equal(from_public(to_public(featherstone)), featherstone)
    batch = np.arange(12.0).reshape(2, 6)
    np.testing.assert_array_equal(to_public(batch)[1], [9, 10, 11, 6, 7, 8])


def test_inertia_tensor_is_urdf_order():
    tensor = inertia_tensor([1.0, 0.1, 0.2, 2.0, 0.3, 3.0])  # ixx ixy ixz iyy iyz izz
    np.testing.assert_array_equal(tensor, [[1.0, 0.1, 0.2], [0.1, 2.0, 0.3], [0.2, 0.3, 3.0]])
    with pytest.raises(ValueError):
        inertia_tensor([1.0, 2.0, 3.0])
