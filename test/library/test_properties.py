"""
Properties every correct inverse dynamics has, on the demo arm and real descriptions.

Where a property alone would hold for a wrong answer too (gravity equals RNEA at rest, torques
linear in the wrenches and in the acceleration), the value is also compared with Pinocchio
(``computeGeneralizedGravity``, ``computeFrameJacobian``, ``crba``): an independent library.
"""

import os
import warnings
import xml.etree.ElementTree as ET

from hypothesis import given, settings, strategies as st
import numpy as np
import pytest
import rbd_dynamics as rbd
from rbd_dynamics.resources import demo_urdf_path
from rbd_dynamics.spatial import rpy_to_matrix
from support.robots import FLOATING_JOINT, floating_urdf, load, PinocchioPair, robots_directory
from support.urdf_builders import inertial, joint, link, robot

REAL = ('panda_description/urdf/panda.urdf', 'pr2_description/urdf/pr2.urdf',
        'talos_data/robots/talos_full_v2.urdf', 'allegro_hand_description/urdf/'
        'allegro_right_hand.urdf')


def paths():
    out = {'demo_arm': demo_urdf_path()}
    root = robots_directory()
    if root is not None:
        for rel in REAL:
            out[os.path.basename(rel)] = os.path.join(root, rel)
    return out


PATHS = paths()
MODELS = {name: load(path) for name, path in PATHS.items()}
_PAIRS = {}


@pytest.fixture(params=sorted(MODELS))
def name(request):
    return request.param


@pytest.fixture
def model(name):
    return MODELS[name]


@pytest.fixture
def pair(name):
    """Pinocchio's model of the same description, mapped to ours (built once per robot)."""
    pin = pytest.importorskip('pinocchio')
    if name not in _PAIRS:
        _PAIRS[name] = PinocchioPair(PATHS[name], pin)
    return _PAIRS[name]


def velocity_map(pair, q):
    """``(pin nv, nv)``: Pinocchio's velocity for each of ours (mimic joints follow)."""
    zero = np.zeros(pair.model.nv)
    return np.array([pair.pin_state(q, e, zero)[1] for e in np.eye(pair.model.nv)]).T


def state(model, rng, batch=()):
    return (rng.uniform(-1.5, 1.5, batch + (model.nq,)), rng.normal(size=batch + (model.nv,)),
            rng.normal(size=batch + (model.nv,)))


def wrenches(model, rng, batch=()):
    links = rng.choice(model.link_names, size=3, replace=False)
    return {link: rng.normal(scale=5.0, size=batch + (6,)) for link in links}


def mass_matrix(model, q):
    g = rbd.gravity_torques(model, q)
    zero = np.zeros(model.nv)
    return np.array([rbd.rnea(model, q, zero, e) - g for e in np.eye(model.nv)]).T


def test_gravity_is_rnea_at_rest(model, pair):
    rng = np.random.default_rng(1)
    zero = np.zeros(model.nv)
    for _ in range(5):
        q, _, _ = state(model, rng)
        f_ext = wrenches(model, rng)
        tau_g = rbd.gravity_torques(model, q)
        tau_g_ext = rbd.gravity_torques(model, q, f_ext)
        np.testing.assert_allclose(tau_g, rbd.rnea(model, q, zero, zero), rtol=0, atol=1e-12)
        np.testing.assert_allclose(tau_g_ext, rbd.rnea(model, q, zero, zero, f_ext), rtol=0,
                                   atol=1e-12)
        # and the value: Pinocchio's
        expected = pair.gravity(q)
        np.testing.assert_allclose(tau_g, expected, rtol=0,
                                   atol=1e-10 * max(1.0, np.abs(expected).max()))
        expected = pair.rnea(q, zero, zero, f_ext)
        np.testing.assert_allclose(tau_g_ext, expected, rtol=0,
                                   atol=1e-10 * max(1.0, np.abs(expected).max()))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-3.0, 3.0), min_size=8, max_size=8))
def test_gravity_is_rnea_at_rest_anywhere(q):
    model = MODELS['demo_arm']
    zero = np.zeros(model.nv)
    np.testing.assert_allclose(rbd.gravity_torques(model, q), rbd.rnea(model, q, zero, zero),
                               rtol=0, atol=1e-12)


def test_batch_equals_loop(model):
    rng = np.random.default_rng(2)
    q, qd, qdd = state(model, rng, (3, 4))
    f_ext = wrenches(model, rng, (3, 4))
    tau = rbd.rnea(model, q, qd, qdd, f_ext)
    tau_g = rbd.gravity_torques(model, q, f_ext)
    assert tau.shape == (3, 4, model.nv) and tau_g.shape == (3, 4, model.nv)
    for i in range(3):
        for j in range(4):
            single = {link: w[i, j] for link, w in f_ext.items()}
            np.testing.assert_allclose(tau[i, j], rbd.rnea(model, q[i, j], qd[i, j], qdd[i, j],
                                                           single), rtol=0, atol=1e-12)
            np.testing.assert_allclose(tau_g[i, j], rbd.gravity_torques(model, q[i, j], single),
                                       rtol=0, atol=1e-12)
    # a batch of positions with one velocity and acceleration broadcast against it
    tau = rbd.rnea(model, q[0], qd[0, 0], qdd[0, 0])
    for j in range(4):
        np.testing.assert_allclose(tau[j], rbd.rnea(model, q[0, j], qd[0, 0], qdd[0, 0]),
                                   rtol=0, atol=1e-12)


def test_wrench_on_fixed_child_equals_transformed_wrench_on_parent():
    """
    A wrench on a fixed child equals the transformed wrench on its parent.

    A tool on a fixed joint turned and shifted from its link: a wrench on the tool equals
    the same wrench moved across the joint onto the link.
    """
    rpy, xyz = (0.4, -1.1, 2.3), (0.12, -0.05, 0.31)
    text = robot('arm', link('base'),
                 joint('j1', 'revolute', 'base', 'upper', axis=(0, 1, 0)),
                 link('upper', inertial(1.2, (0.1, 0.02, 0.3), 0.02, 0.03, 0.01)),
                 joint('j2', 'revolute', 'upper', 'fore', xyz=(0, 0, 0.5), axis=(1, 0, 1)),
                 link('fore', inertial(0.8, (0.0, 0.1, 0.2), 0.01, 0.02, 0.01)),
                 joint('tool_joint', 'fixed', 'fore', 'tool', xyz=xyz, rpy=rpy),
                 link('tool', inertial(0.3, (0.01, 0.0, 0.05), 0.001, 0.001, 0.001)))
    model = rbd.Model.from_urdf(text)
    rot = rpy_to_matrix(rpy)  # tool axes in fore's
    p = np.asarray(xyz)
    rng = np.random.default_rng(3)
    for _ in range(10):
        q, qd, qdd = state(model, rng)
        f, n = rng.normal(size=3), rng.normal(size=3)
        on_fore = np.concatenate([rot @ f, rot @ n + np.cross(p, rot @ f)])
        with_tool = rbd.rnea(model, q, qd, qdd, {'tool': np.concatenate([f, n])})
        np.testing.assert_allclose(with_tool, rbd.rnea(model, q, qd, qdd, {'fore': on_fore}),
                                   rtol=0, atol=1e-12)
        # the rotation matters: the unturned wrench gives other torques
        unturned = np.concatenate([f, n + np.cross(p, f)])
        assert np.abs(with_tool - rbd.rnea(model, q, qd, qdd, {'fore': unturned})).max() > 1e-3


def test_wrench_maps_through_the_link_jacobian(model, pair):
    """
    A wrench maps to joint torques through the link Jacobian.

    tau(f_ext) - tau(0) = -sum J_link^T w_link, with each link's Jacobian (velocity of its
    origin and angular velocity, in its frame) from Pinocchio.
    """
    pin = pair.pin
    rng = np.random.default_rng(4)
    q, qd, qdd = state(model, rng)
    f_ext = wrenches(model, rng)
    pq, _, _ = pair.pin_state(q, qd, qdd)
    to_pin = velocity_map(pair, q)
    expected = rbd.rnea(model, q, qd, qdd)
    for link_name, wrench in f_ext.items():
        frame = pair.pin_model.getFrameId(link_name, pin.BODY)
        jacobian = pin.computeFrameJacobian(pair.pin_model, pair.pin_data, pq, frame, pin.LOCAL)
        expected = expected - (jacobian @ to_pin).T @ wrench
    got = rbd.rnea(model, q, qd, qdd, f_ext)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-10 * max(1.0, np.abs(got).max()))


def test_mass_matrix_symmetric_positive_definite(model):
    rng = np.random.default_rng(5)
    for _ in range(3):
        q, _, _ = state(model, rng)
        mass = mass_matrix(model, q)
        np.testing.assert_allclose(mass, mass.T, rtol=0, atol=1e-10 * np.abs(mass).max())
        assert np.linalg.eigvalsh(mass).min() > 0


def test_rnea_linear_in_acceleration(model, pair):
    """
    RNEA is linear in acceleration: tau = bias + M qdd.

    M comes from Pinocchio's composite-rigid-body algorithm.
    """
    rng = np.random.default_rng(6)
    q, qd, qdd = state(model, rng)
    pq, _, _ = pair.pin_state(q, qd, qdd)
    upper = pair.pin.crba(pair.pin_model, pair.pin_data, pq)
    to_pin = velocity_map(pair, q)
    mass = to_pin.T @ (np.triu(upper) + np.triu(upper, 1).T) @ to_pin
    np.testing.assert_allclose(mass_matrix(model, q), mass, rtol=0,
                               atol=1e-10 * np.abs(mass).max())
    bias = rbd.rnea(model, q, qd, np.zeros(model.nv))
    np.testing.assert_allclose(rbd.rnea(model, q, qd, qdd), bias + mass @ qdd, rtol=0, atol=1e-9)


def test_power_balance():
    """Along a smooth trajectory: qd . (tau - g(q)) = dT/dt, with T = qd . M(q) qd / 2."""
    model = MODELS['demo_arm']
    rng = np.random.default_rng(7)
    amp, freq, phase = rng.uniform(0.2, 0.8, (3, model.nv))
    amp[-1] = 0.01  # the finger

    def trajectory(t):
        return (amp * np.sin(freq * t + phase), amp * freq * np.cos(freq * t + phase),
                -amp * freq ** 2 * np.sin(freq * t + phase))

    def kinetic(t):
        q, qd, _ = trajectory(t)
        return 0.5 * qd @ mass_matrix(model, q) @ qd

    h = 1e-4
    for t in rng.uniform(0, 10, 8):
        q, qd, qdd = trajectory(t)
        power = qd @ (rbd.rnea(model, q, qd, qdd) - rbd.gravity_torques(model, q))
        d_kinetic = (kinetic(t + h) - kinetic(t - h)) / (2 * h)
        assert power == pytest.approx(d_kinetic, rel=1e-6, abs=1e-8)
    # a wrong model breaks the balance: it can fail
    q, qd, qdd = trajectory(1.0)
    wrong = qd @ (rbd.rnea(model, q, qd, 1.1 * qdd) - rbd.gravity_torques(model, q))
    right = (kinetic(1.0 + h) - kinetic(1.0 - h)) / (2 * h)
    assert abs(wrong - right) > 1e-3 * abs(right)


def floating_at(path, link_name):
    """
    Return the description with a floating joint above ``link_name``.

    The description with the joint above ``link_name`` (a new one from a ``world`` link for
    the root) made ``floating``; returns the URDF text and that joint's name.
    """
    tree = ET.parse(path).getroot()
    for element in tree.findall('joint'):
        if element.find('child').get('link') == link_name:
            element.set('type', 'floating')
            return ET.tostring(tree, encoding='unicode'), element.get('name')
    return floating_urdf(path), FLOATING_JOINT


def coordinates(model):
    """Map each joint name to its (slice of q, slice of qd)."""
    out = {}
    q0 = v0 = 0
    for joint_name, nq, nv in zip(model.joint_names, model.joint_nq, model.joint_nv):
        out[joint_name] = slice(q0, q0 + nq), slice(v0, v0 + nv)
        q0, v0 = q0 + nq, v0 + nv
    return out


@pytest.mark.parametrize('rel, link_name', [
    ('demo_arm', 'base_link'),  # the root: everything
    ('ur_description/urdf/ur5_robot.urdf', 'base_link'),  # fixed to the root, the arm beyond
    ('pr2_description/urdf/pr2.urdf', 'base_link'),
    ('pr2_description/urdf/pr2.urdf', 'fl_caster_rotation_link'),
])
def test_payload_wrench_on_a_link_of_the_base(rel, link_name):
    """
    The payload wrench on a link of the base is what a floating joint there carries.

    payload_wrench at a link fixed to the base against the torque of a floating joint put
    above that link in another model: the wrench that joint transmits (force first, in the
    link frame) is what carries everything beyond it, computed by a differently built tree.
    """
    if rel == 'demo_arm':
        path = demo_urdf_path()
    else:
        if robots_directory() is None:
            pytest.skip('example_robot_data is not installed')
        path = os.path.join(robots_directory(), rel)
    model = load(path)
    assert model.link_body[link_name] < 0
    text, floating = floating_at(path, link_name)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', rbd.InertiaWarning)
        carried = rbd.Model.from_urdf(text)
    ours, theirs = coordinates(model), coordinates(carried)
    rng = np.random.default_rng(8)
    for _ in range(3):
        q, qd, qdd = state(model, rng)
        q2 = np.zeros(carried.nq)
        qd2, qdd2 = np.zeros((2, carried.nv))
        q2[theirs[floating][0].stop - 1] = 1.0  # identity quaternion: the link where it was
        for joint_name, (iq, iv) in ours.items():
            q2[theirs[joint_name][0]] = q[iq]
            qd2[theirs[joint_name][1]], qdd2[theirs[joint_name][1]] = qd[iv], qdd[iv]
        expected = rbd.rnea(carried, q2, qd2, qdd2)[theirs[floating][1]]
        got = rbd.payload_wrench(model, link_name, q, qd, qdd)
        np.testing.assert_allclose(got, expected, rtol=0,
                                   atol=1e-10 * max(1.0, np.abs(expected).max()))
        expected = rbd.gravity_torques(carried, q2)[theirs[floating][1]]
        assert np.linalg.norm(expected[:3]) > 0.1  # there is a weight to carry
        np.testing.assert_allclose(rbd.payload_wrench(model, link_name, q), expected, rtol=0,
                                   atol=1e-10 * max(1.0, np.abs(expected).max()))
