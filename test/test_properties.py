"""Properties every correct inverse dynamics has, on the demo arm and real descriptions."""

import os

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import rbd_dynamics as rbd
from rbd_dynamics.resources import demo_urdf_path
from rbd_dynamics.spatial import rpy_to_matrix

from robots import load, robots_directory

REAL = ('panda_description/urdf/panda.urdf', 'pr2_description/urdf/pr2.urdf',
        'talos_data/robots/talos_full_v2.urdf', 'allegro_hand_description/urdf/'
        'allegro_right_hand.urdf')


def models():
    out = {'demo_arm': rbd.Model.from_urdf_file(demo_urdf_path())}
    root = robots_directory()
    if root is not None:
        for rel in REAL:
            out[os.path.basename(rel)] = load(os.path.join(root, rel))
    return out


MODELS = models()


@pytest.fixture(params=sorted(MODELS))
def model(request):
    return MODELS[request.param]


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


def test_gravity_is_rnea_at_rest(model):
    rng = np.random.default_rng(1)
    for _ in range(5):
        q, _, _ = state(model, rng)
        zero = np.zeros(model.nv)
        f_ext = wrenches(model, rng)
        np.testing.assert_allclose(rbd.gravity_torques(model, q), rbd.rnea(model, q, zero, zero),
                                   rtol=0, atol=1e-12)
        np.testing.assert_allclose(rbd.gravity_torques(model, q, f_ext),
                                   rbd.rnea(model, q, zero, zero, f_ext), rtol=0, atol=1e-12)


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
    """tool_center_point hangs off gripper_base by a fixed joint: move the wrench across it."""
    model = MODELS['demo_arm']
    with open(demo_urdf_path()) as stream:
        joint = rbd.parse_urdf(stream.read()).joints['tcp_joint']
    assert joint.parent == 'gripper_base' and joint.child == 'tool_center_point'
    rot = rpy_to_matrix(joint.rpy)
    p = np.asarray(joint.xyz, dtype=float)
    rng = np.random.default_rng(3)
    for _ in range(10):
        q, qd, qdd = state(model, rng)
        f, n = rng.normal(size=3), rng.normal(size=3)
        parent = np.concatenate([rot @ f, rot @ n + np.cross(p, rot @ f)])
        np.testing.assert_allclose(
            rbd.rnea(model, q, qd, qdd, {'tool_center_point': np.concatenate([f, n])}),
            rbd.rnea(model, q, qd, qdd, {'gripper_base': parent}), rtol=0, atol=1e-12)


def test_wrench_linearity(model):
    rng = np.random.default_rng(4)
    q, qd, qdd = state(model, rng)
    base = rbd.rnea(model, q, qd, qdd)
    f1, f2 = wrenches(model, rng), wrenches(model, rng)
    both = dict(f1)
    for link, w in f2.items():
        both[link] = both[link] + w if link in both else w
    np.testing.assert_allclose(rbd.rnea(model, q, qd, qdd, both) - base,
                               (rbd.rnea(model, q, qd, qdd, f1) - base)
                               + (rbd.rnea(model, q, qd, qdd, f2) - base), rtol=0, atol=1e-9)


def test_mass_matrix_symmetric_positive_definite(model):
    rng = np.random.default_rng(5)
    for _ in range(3):
        q, _, _ = state(model, rng)
        mass = mass_matrix(model, q)
        np.testing.assert_allclose(mass, mass.T, rtol=0, atol=1e-10 * np.abs(mass).max())
        assert np.linalg.eigvalsh(mass).min() > 0


def test_rnea_linear_in_acceleration(model):
    rng = np.random.default_rng(6)
    q, qd, qdd = state(model, rng)
    bias = rbd.rnea(model, q, qd, np.zeros(model.nv))
    np.testing.assert_allclose(rbd.rnea(model, q, qd, qdd), bias + mass_matrix(model, q) @ qdd,
                               rtol=0, atol=1e-9)


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
