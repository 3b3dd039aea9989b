"""Closed-form dynamics of small robots against rnea and gravity_torques."""

import numpy as np
import pytest
import rbd_dynamics as rbd
from rbd_dynamics.resources import demo_urdf_path
from rbd_dynamics.spatial import quaternion_to_matrix
from support.urdf_builders import (inertial, joint, link, pendulum, robot, two_link,
                                   two_link_terms)

G = 9.81
RNG = np.random.default_rng(1234)


def test_pendulum():
    m, length, ic = 2.5, 0.7, 0.03
    model = rbd.Model.from_urdf(pendulum(m, length, ic))
    for theta, theta_d, theta_dd in RNG.uniform(-4, 4, (50, 3)):
        # rotating about y by theta puts the bob at (-l sin, 0, -l cos): V = -m g l cos(theta)
        expected = (ic + m * length ** 2) * theta_dd + m * G * length * np.sin(theta)
        assert rbd.rnea(model, [theta], [theta_d], [theta_dd])[0] == pytest.approx(
            expected, rel=1e-12, abs=1e-12)
        assert rbd.gravity_torques(model, [theta])[0] == pytest.approx(
            m * G * length * np.sin(theta), rel=1e-12, abs=1e-12)


def test_pendulum_with_a_force_on_its_tip():
    """A force on the fixed ``tip`` link at the bob: torque -(r x F) about the joint axis."""
    m, length = 1.5, 0.4
    model = rbd.Model.from_urdf(pendulum(m, length, 0.01))
    for theta, fx, fy, fz in RNG.uniform(-3, 3, (20, 4)):
        # the tip frame is the bob's frame moved to r = (0, 0, -l): (r x F).y = -l fx
        expected = m * G * length * np.sin(theta) + length * fx
        tau = rbd.gravity_torques(model, [theta], {'tip': [fx, fy, fz, 0, 0, 0]})
        assert tau[0] == pytest.approx(expected, rel=1e-12, abs=1e-12)
        # the same wrench moved to the bob's origin carries the moment r x F
        r = np.array([0, 0, -length])
        moment = np.cross(r, [fx, fy, fz])
        tau_bob = rbd.gravity_torques(model, [theta], {'bob': [fx, fy, fz, *moment]})
        assert tau_bob[0] == pytest.approx(expected, rel=1e-12, abs=1e-12)


def two_link_closed_form(params, q, qd, qdd, g=G):
    """Torques, gravity and M of the lecture notes' planar arm (gravity along -y of the base)."""
    mass, coriolis, gravity = two_link_terms(params, q, qd, g)
    return mass @ qdd + coriolis @ qd + gravity, gravity, mass


def test_two_link_planar_arm():
    params = (1.7, 1.1, 0.55, 0.3, 0.22, 0.04, 0.02)
    m1, m2, l1, r1, r2, i1, i2 = params
    model = rbd.Model.from_urdf(two_link(m1, m2, l1, r1, r2, i1, i2), gravity=(0, -G, 0))
    for q, qd, qdd in RNG.uniform(-3, 3, (100, 3, 2)):
        tau, gravity, mass = two_link_closed_form(params, q, qd, qdd)
        np.testing.assert_allclose(rbd.rnea(model, q, qd, qdd), tau, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(rbd.gravity_torques(model, q), gravity, rtol=1e-12,
                                   atol=1e-12)
        columns = [rbd.rnea(model, q, [0, 0], e) - gravity for e in np.eye(2)]
        np.testing.assert_allclose(np.array(columns).T, mass, rtol=1e-12, atol=1e-12)


def test_prismatic_slider_on_an_inclined_axis():
    m = 3.2
    axis = np.array([0.0, 0.6, 0.8])
    text = robot('slider', link('base'),
                 joint('slide', 'prismatic', 'base', 'carriage', axis=axis * 5.0),
                 link('carriage', inertial(m, (0.1, -0.2, 0.3), ixx=0.1, iyy=0.1, izz=0.1)))
    model = rbd.Model.from_urdf(text)
    for q, qd, qdd in RNG.uniform(-2, 2, (20, 3)):
        # translation only: the carriage's mass, against the gravity component along the axis
        expected = m * (qdd + G * axis[2])
        assert rbd.rnea(model, [q], [qd], [qdd])[0] == pytest.approx(expected, rel=1e-12)


def rigid_body(mass, com, inertia_c):
    return robot('body', link('world'),
                 joint('free', 'floating', 'world', 'body', xyz=(0.3, -0.2, 1.0),
                       rpy=(0.1, 0.2, 0.3)),
                 link('body', inertial(mass, com, **inertia_c)))


def test_floating_single_body_newton_euler():
    """A free rigid body: the Newton-Euler equations about its centre of mass, in the body."""
    m = 4.0
    c = np.array([0.05, -0.1, 0.2])
    ic_entries = {'ixx': 0.3, 'iyy': 0.4, 'izz': 0.5, 'ixy': 0.01, 'ixz': -0.02, 'iyz': 0.03}
    ic = np.array([[0.3, 0.01, -0.02], [0.01, 0.4, 0.03], [-0.02, 0.03, 0.5]])
    model = rbd.Model.from_urdf(rigid_body(m, c, ic_entries))
    r_world_joint = rbd.spatial.rpy_to_matrix((0.1, 0.2, 0.3))
    for _ in range(30):
        quat = RNG.normal(size=4)
        quat /= np.linalg.norm(quat)
        q = np.concatenate([RNG.normal(size=3), quat])
        v, w = RNG.normal(size=3), RNG.normal(size=3)  # origin velocity, angular, body frame
        a, alpha = RNG.normal(size=3), RNG.normal(size=3)  # their time derivatives, body frame
        rot = r_world_joint @ quaternion_to_matrix(quat)
        g_body = rot.T @ np.array([0, 0, -G])
        # acceleration of the centre of mass in an inertial frame, body coordinates
        a_origin = a + np.cross(w, v)
        a_com = a_origin + np.cross(alpha, c) + np.cross(w, np.cross(w, c))
        force = m * (a_com - g_body)
        moment_c = ic @ alpha + np.cross(w, ic @ w)
        moment = moment_c + np.cross(c, force)
        tau = rbd.rnea(model, q, np.concatenate([v, w]), np.concatenate([a, alpha]))
        np.testing.assert_allclose(tau, np.concatenate([force, moment]), rtol=1e-11,
                                   atol=1e-11)


def test_planar_single_body_lagrange():
    """A body on a planar joint (normal z): generalised forces from Lagrange's equations."""
    m, izz = 2.0, 0.07
    c = np.array([0.2, -0.1, 0.05])
    text = robot('planar', link('world'), joint('plane', 'planar', 'world', 'body'),
                 link('body', inertial(m, c, ixx=0.05, iyy=0.06, izz=izz)))
    g = np.array([-3.0, -4.0, -G])
    model = rbd.Model.from_urdf(text, gravity=g)
    rot90 = np.array([[0.0, -1.0], [1.0, 0.0]])
    for q, qd, qdd in RNG.uniform(-3, 3, (30, 3, 3)):
        th = q[2]
        rot = np.array([[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]])
        r = rot @ c[:2]  # centre of mass relative to the moving origin, plane coordinates
        acc = qdd[:2] + qdd[2] * (rot90 @ r) - qd[2] ** 2 * r
        force = m * (acc - g[:2])
        torque = izz * qdd[2] + (r[0] * force[1] - r[1] * force[0])
        np.testing.assert_allclose(rbd.rnea(model, q, qd, qdd), [*force, torque], rtol=1e-11,
                                   atol=1e-11)


@pytest.mark.parametrize('multiplier, offset', [(1.0, 0.0), (-0.5, 0.01), (2.0, -0.3)])
def test_mimic_equals_an_explicit_model(multiplier, offset):
    """The mimic finger against a model where it is an independent joint, driven and folded."""
    with open(demo_urdf_path()) as stream:
        text = stream.read()
    tag = '<mimic joint="left_finger_joint" multiplier="1" offset="0"/>'
    assert tag in text
    mimic = rbd.Model.from_urdf(text.replace(tag, '<mimic joint="left_finger_joint" '
                                             'multiplier="%r" offset="%r"/>'
                                             % (multiplier, offset)))
    explicit = rbd.Model.from_urdf(text.replace(tag, ''))
    assert 'right_finger_joint' not in mimic.joint_names
    master = mimic.joint_names.index('left_finger_joint')
    rows = [explicit.joint_names.index(n) for n in mimic.joint_names]
    slave = explicit.joint_names.index('right_finger_joint')
    for _ in range(20):
        q, qd, qdd = RNG.uniform(-1, 1, (3, mimic.nv))
        f_ext = {'right_finger': RNG.normal(size=6), 'tool_center_point': RNG.normal(size=6)}
        full = []
        for value, off in ((q, offset), (qd, 0.0), (qdd, 0.0)):
            out = np.zeros(explicit.nv)
            out[rows] = value
            out[slave] = multiplier * value[master] + off
            full.append(out)
        tau_explicit = rbd.rnea(explicit, *full, f_ext)
        expected = tau_explicit[rows]
        expected[master] += multiplier * tau_explicit[slave]
        np.testing.assert_allclose(rbd.rnea(mimic, q, qd, qdd, f_ext), expected, rtol=1e-12,
                                   atol=1e-12)


def test_mimic_chain():
    """A mimic of a mimic follows the master with the product of the multipliers."""
    text = robot(
        'chain', link('base'),
        joint('a', 'revolute', 'base', 'la', axis=(0, 1, 0)),
        link('la', inertial(1.0, (0.2, 0, 0), 0.01, 0.01, 0.01)),
        joint('b', 'revolute', 'la', 'lb', xyz=(0.3, 0, 0), axis=(0, 1, 0),
              mimic=('a', 2.0, 0.1)),
        link('lb', inertial(1.0, (0.2, 0, 0), 0.01, 0.01, 0.01)),
        joint('c', 'revolute', 'lb', 'lc', xyz=(0.3, 0, 0), axis=(0, 1, 0),
              mimic=('b', -0.5, 0.2)),
        link('lc', inertial(1.0, (0.2, 0, 0), 0.01, 0.01, 0.01)))
    model = rbd.Model.from_urdf(text)
    assert model.joint_names == ('a',)
    assert model.mimic['c'] == ('a', pytest.approx(-1.0), pytest.approx(0.15))
    free = rbd.Model.from_urdf(text.replace('<mimic joint="a" multiplier="2.0" offset="0.1"/>',
                                            '').replace('<mimic joint="b" multiplier="-0.5" '
                                                        'offset="0.2"/>', ''))
    for qa, qda, qdda in RNG.uniform(-2, 2, (10, 3)):
        q = [qa, 2 * qa + 0.1, -0.5 * (2 * qa + 0.1) + 0.2]
        qd = [qda, 2 * qda, -qda]
        qdd = [qdda, 2 * qdda, -qdda]
        tau = rbd.rnea(free, q, qd, qdd)
        expected = tau[0] + 2 * tau[1] - tau[2]
        assert rbd.rnea(model, [qa], [qda], [qdda])[0] == pytest.approx(expected, rel=1e-12)


def one_body(jtype, mass, com, inertia_c, rpy, axis=(1.0, 0.0, 0.0), pitch=0.0,
             gravity=(0.0, 0.0, -G)):
    """
    Build a single body on one joint of ``jtype`` from a fixed base.

    The joint frame is turned by ``rpy``.
    """
    desc = rbd.Description('one_body')
    desc.add_link('base')
    desc.add_link('body', mass=mass, com=com, inertia=inertia_c)
    desc.add_joint('j', jtype, 'base', 'body', xyz=(0.3, -0.1, 0.2), rpy=rpy, axis=axis,
                   pitch=pitch)
    return rbd.Model.from_description(desc, gravity=gravity)


def rpy_matrix(rpy):
    """Rz(yaw) Ry(pitch) Rx(roll), written out here."""
    (cr, cp, cy), (sr, sp, sy) = np.cos(rpy), np.sin(rpy)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


INERTIA_C = np.array([[0.3, 0.01, -0.02], [0.01, 0.4, 0.03], [-0.02, 0.03, 0.5]])


def test_helical_single_body_lagrange():
    """
    A body screwing along a unit axis matches the Lagrangian.

    A body screwing along the unit axis a (pitch p): its centre of mass moves at
    theta_d (a x R c + p a), so T = J theta_d^2 / 2 with the constant
    J = a.Ic a + m |a x c|^2 + m p^2, and V = -m g.(R c + p theta a).
    """
    m, p = 2.5, 0.07
    c = np.array([0.1, -0.2, 0.15])
    a = np.array([1.0, 2.0, -0.5])
    a /= np.linalg.norm(a)
    rpy = (0.3, -0.6, 1.2)
    gravity = np.array([1.0, -2.0, -9.0])
    model = one_body('helical', m, c, INERTIA_C, rpy, axis=a, pitch=p, gravity=gravity)
    g = rpy_matrix(rpy).T @ gravity  # in the joint frame
    inertia = a @ INERTIA_C @ a + m * np.cross(a, c) @ np.cross(a, c) + m * p ** 2
    for theta, theta_d, theta_dd in RNG.uniform(-3, 3, (30, 3)):
        # Rodrigues: R c
        rc = (c * np.cos(theta) + np.cross(a, c) * np.sin(theta)
              + a * (a @ c) * (1 - np.cos(theta)))
        expected = inertia * theta_dd - m * g @ (np.cross(a, rc) + p * a)
        assert rbd.rnea(model, [theta], [theta_d], [theta_dd])[0] == pytest.approx(
            expected, rel=1e-11, abs=1e-11)


def test_spherical_single_body_euler():
    """
    A body turning about a fixed point matches Euler's equations.

    A body turning about a fixed point: Euler's equations about the pivot, in the body,
    tau = I_o w_d + w x I_o w - c x m g_body (q: quaternion [x y z w], qd: w in the body).
    """
    m = 1.7
    c = np.array([0.05, 0.2, -0.3])
    rpy = (-0.4, 0.2, 0.9)
    model = one_body('spherical', m, c, INERTIA_C, rpy)
    i_o = INERTIA_C + m * (c @ c * np.eye(3) - np.outer(c, c))
    g_joint = rpy_matrix(rpy).T @ np.array([0, 0, -G])
    for _ in range(30):
        x, y, z, w = quat = RNG.normal(size=4)
        n2 = quat @ quat
        rot = np.eye(3) + 2.0 / n2 * np.array(
            [[-(y * y + z * z), x * y - z * w, x * z + y * w],
             [x * y + z * w, -(x * x + z * z), y * z - x * w],
             [x * z - y * w, y * z + x * w, -(x * x + y * y)]])  # body axes in the joint frame
        omega, omega_d = RNG.normal(size=(2, 3))
        expected = (i_o @ omega_d + np.cross(omega, i_o @ omega)
                    - np.cross(c, m * rot.T @ g_joint))
        np.testing.assert_allclose(rbd.rnea(model, quat, omega, omega_d), expected, rtol=1e-11,
                                   atol=1e-11)
