"""jcalc of every joint type at known positions (Featherstone Table 4.1)."""

import numpy as np
import pytest

import rbd_dynamics as rbd
from rbd_dynamics.joints import check_joint_type, jcalc, JointModel, URDF_JOINT_TYPES
from rbd_dynamics.spatial import axis_angle_to_matrix, plux, quaternion_to_matrix


def _calc(jtype, q, qd, **kw):
    joint = JointModel(jtype, **kw)
    XJ, S, vJ, cJ = jcalc(joint, np.atleast_2d(np.asarray(q, dtype=float)),
                          np.atleast_2d(np.asarray(qd, dtype=float)))
    return joint, XJ[0], S[0], vJ[0], cJ[0]


@pytest.mark.parametrize('jtype', ['revolute', 'continuous'])
def test_revolute(jtype):
    _, XJ, S, vJ, cJ = _calc(jtype, [0.5], [2.0], axis=(0, 0, 1))
    # C is J turned by q about z: C_X_J = rot(E) with E = R^T
    np.testing.assert_allclose(XJ, plux(axis_angle_to_matrix([0, 0, 1], 0.5).T, np.zeros(3)),
                               atol=1e-15)
    np.testing.assert_allclose(S[:, 0], [0, 0, 1, 0, 0, 0])
    np.testing.assert_allclose(vJ, [0, 0, 2.0, 0, 0, 0])
    np.testing.assert_allclose(cJ, 0.0)


def test_prismatic():
    _, XJ, S, vJ, cJ = _calc('prismatic', [0.3], [-1.5], axis=(0, 2, 0))  # normalised
    np.testing.assert_allclose(XJ, plux(np.eye(3), [0, 0.3, 0]), atol=1e-15)
    np.testing.assert_allclose(S[:, 0], [0, 0, 0, 0, 1, 0])
    np.testing.assert_allclose(vJ, [0, 0, 0, 0, -1.5, 0])
    np.testing.assert_allclose(cJ, 0.0)


def test_helical():
    _, XJ, S, vJ, _ = _calc('helical', [np.pi / 2], [1.0], axis=(0, 0, 1), pitch=0.1)
    E = axis_angle_to_matrix([0, 0, 1], np.pi / 2).T
    np.testing.assert_allclose(XJ, plux(E, [0, 0, 0.1 * np.pi / 2]), atol=1e-15)
    np.testing.assert_allclose(S[:, 0], [0, 0, 1, 0, 0, 0.1])
    np.testing.assert_allclose(vJ, S[:, 0])


def test_spherical():
    quat = np.array([0.0, np.sin(0.3), 0.0, np.cos(0.3)])  # 0.6 rad about y
    w = np.array([0.1, -0.2, 0.3])
    _, XJ, S, vJ, cJ = _calc('spherical', quat, w)
    np.testing.assert_allclose(XJ, plux(quaternion_to_matrix(quat).T, np.zeros(3)), atol=1e-15)
    np.testing.assert_allclose(S, np.vstack((np.eye(3), np.zeros((3, 3)))))
    np.testing.assert_allclose(vJ, np.concatenate((w, np.zeros(3))))
    np.testing.assert_allclose(cJ, 0.0)


def test_floating():
    q = np.array([1.0, 2.0, 3.0, 0.0, 0.0, np.sin(0.2), np.cos(0.2)])
    qd = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6])  # [v; w] in C
    _, XJ, S, vJ, cJ = _calc('floating', q, qd)
    np.testing.assert_allclose(XJ, plux(quaternion_to_matrix(q[3:]).T, q[:3]), atol=1e-15)
    np.testing.assert_allclose(vJ, [0.4, 0.5, 0.6, 0.1, 0.2, 0.3])
    np.testing.assert_allclose(S @ qd, vJ)
    np.testing.assert_allclose(cJ, 0.0)


def test_planar():
    q = np.array([0.4, -0.2, np.pi / 2])
    qd = np.array([1.0, 2.0, 3.0])
    joint, XJ, S, vJ, cJ = _calc('planar', q, qd, axis=(0, 0, 1))
    E = axis_angle_to_matrix([0, 0, 1], np.pi / 2).T
    np.testing.assert_allclose(XJ, plux(E, [0.4, -0.2, 0.0]), atol=1e-15)
    # in C (turned a quarter turn), J's x reads as -y and J's y as x
    np.testing.assert_allclose(S[:, 0], [0, 0, 0, 0, -1, 0], atol=1e-15)
    np.testing.assert_allclose(S[:, 1], [0, 0, 0, 1, 0, 0], atol=1e-15)
    np.testing.assert_allclose(S[:, 2], [0, 0, 1, 0, 0, 0])
    np.testing.assert_allclose(vJ, S @ qd, atol=1e-15)
    # cJ = -(axis theta_dot) x v_xy, with v_xy = (2, -1, 0) in C: (-3 z) x (2, -1, 0) = (-3, -6, 0)
    np.testing.assert_allclose(cJ, [0, 0, 0, -3.0, -6.0, 0.0], atol=1e-14)
    # and it is the time derivative of S qd at constant qd: (S(t + h) - S(t)) / h qd
    h = 1e-7
    _, _, S2, _, _ = _calc('planar', q + h * qd, qd, axis=(0, 0, 1))
    np.testing.assert_allclose((S2 - S) @ qd / h, cJ, atol=1e-5)


def test_fixed():
    _, XJ, S, vJ, cJ = _calc('fixed', np.zeros(0), np.zeros(0))
    np.testing.assert_array_equal(XJ, np.eye(6))
    assert S.shape == (6, 0)
    np.testing.assert_array_equal(vJ, 0.0)


@pytest.mark.parametrize('jtype', rbd.SUPPORTED_JOINT_TYPES)
def test_sizes_match_the_table(jtype):
    joint = JointModel(jtype, axis=(0, 1, 0))
    rng = np.random.default_rng(5)
    q = rng.normal(size=(3, joint.nq))
    qd = rng.normal(size=(3, joint.nv))
    XJ, S, vJ, cJ = jcalc(joint, q, qd)
    assert XJ.shape == (3, 6, 6) and S.shape == (3, 6, joint.nv)
    np.testing.assert_allclose(vJ, np.einsum('bij,bj->bi', S, qd), atol=1e-14)


def test_unknown_type_lists_the_supported_ones():
    with pytest.raises(ValueError) as info:
        JointModel('ball')
    message = str(info.value)
    assert "'ball'" in message
    for jtype in rbd.SUPPORTED_JOINT_TYPES:
        assert jtype in message
    with pytest.raises(rbd.UrdfError, match='supported URDF joint types: revolute'):
        check_joint_type('helical', "joint 'j'", urdf=True, error=rbd.UrdfError)
    assert 'helical' not in URDF_JOINT_TYPES
    check_joint_type('helical')  # a code-only type is supported outside URDF
