"""
The floating base's kernel (:mod:`rbd_dynamics.compiled.floating`) equals the NumPy reference.

On a humanoid (G1: two feet as surfaces, an IMU on the torso, three joints from the pelvis, and
on a wrist), a quadruped (Go2: four point feet) and an arm on a moving base (Panda), at random
states: the base's motion from an IMU (with and without odometry), the torques with and
without the sensors' wrenches, with and without contacts and weights, and at rest; every case
compared ran on the kernel. Point contacts that cannot carry the base's moments (two feet on a
line) fall back to the reference's least squares, and so does a rest state that is not at rest.
"""

import os
import warnings

import numpy as np
import pytest
import rbd_dynamics as rbd
from rbd_dynamics import floating
from rbd_dynamics.compiled.layout import BAD_SIZES, BASE
from support.compiled import needs_compiled_eom, needs_numba, watch_kernel
from support.robots import robots_directory

ROOT = robots_directory()
pytestmark = [needs_numba, needs_compiled_eom,
              pytest.mark.skipif(ROOT is None, reason='example-robot-data is not installed')]

TOL = 1e-9
# robot: (description, contacts and their type, the IMU's links, a link a sensor is on)
ROBOTS = {
    'g1': ('g1_description/urdf/g1_29dof_rev_1_0.urdf',
           (('left_ankle_roll_link', 'right_ankle_roll_link'), 'surface'),
           ('torso_link', 'pelvis', 'left_wrist_yaw_link'), 'left_wrist_yaw_link'),
    'go2': ('go2_description/urdf/go2.urdf',
            (('FL_foot', 'FR_foot', 'RL_foot', 'RR_foot'), 'point'), ('FL_calf', 'base'),
            'FR_calf'),
    'panda': ('panda_description/urdf/panda.urdf', (('panda_link0',), 'surface'),
              ('panda_link3', 'panda_link0'), 'panda_hand'),
}


def _models(name):
    with open(os.path.join(ROOT, ROBOTS[name][0])) as stream:
        xml = stream.read()
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', rbd.DescriptionWarning)
        return (rbd.Model.from_urdf(xml, floating_base=True),
                rbd.Model.from_urdf(xml, floating_base=True, compiled=False))


def _watch(monkeypatch):
    """Record whether each call of the kernel's caller gave the torques (its second value)."""
    return watch_kernel(monkeypatch, floating, '_compiled_results',
                        answered=lambda found: found[1] is not None)


def _unit(rng, size=4):
    x = rng.normal(size=size)
    return x / np.linalg.norm(x)


def _reading(model, rng, link, odometry):
    n = model.nv - 6
    q = rng.uniform(-0.6, 0.6, model.nq - 7)
    qd, qdd = rng.normal(size=(2, n))
    rotation = (_unit(rng), rng.normal(size=3), rng.normal(size=3)) if odometry else None
    return (q, qd, qdd, link, _unit(rng), rng.normal(size=3), rng.normal(size=3),
            rng.normal(size=3) + [0.0, 0.0, 9.81], rotation)


def _assert_results(a, b):
    np.testing.assert_allclose(a.torques, b.torques, rtol=0, atol=TOL)
    np.testing.assert_allclose(a.base_wrench, b.base_wrench, rtol=0, atol=TOL)
    np.testing.assert_allclose(a.unbalanced, b.unbalanced, rtol=0, atol=TOL)
    assert a.contact_wrenches.keys() == b.contact_wrenches.keys()
    for link, wrench in a.contact_wrenches.items():
        np.testing.assert_allclose(wrench, b.contact_wrenches[link], rtol=0, atol=TOL)


@pytest.mark.parametrize('name', sorted(ROBOTS))
def test_the_kernel_gives_the_references_motion_and_torques(name, monkeypatch):
    compiled_model, reference = _models(name)
    _, (contacts, kind), imu_links, sensed = ROBOTS[name]
    on_kernel = _watch(monkeypatch)
    rng = np.random.default_rng(11)
    for trial in range(6):
        link = imu_links[trial % len(imu_links)]
        reading = _reading(compiled_model, rng, link, odometry=trial % 3 == 2)
        q, qd, qdd = reading[:3]
        motion = floating.base_motion_from_imu(compiled_model, *reading)
        expected = floating.base_motion_from_imu(reference, *reading)
        for got, want in zip(motion, expected):
            np.testing.assert_allclose(got, want, rtol=0, atol=TOL)
        rest = floating.base_at_rest(motion.orientation)
        f_ext = {sensed: rng.normal(size=6)} if trial % 2 else None
        f_rest = {sensed: rng.normal(size=6)} if trial % 2 else None
        weights = rng.uniform(0.5, 2.0, len(contacts)) if trial % 2 else None
        for chosen in ((), contacts):
            args = (f_ext, f_rest, chosen, kind, None if not chosen else weights)
            result, at_rest = floating.floating_torques(compiled_model, q, qd, qdd, motion,
                                                        rest, *args)
            want, want_rest = floating.floating_torques(reference, q, qd, qdd, motion, rest,
                                                        *args)
            _assert_results(result, want)
            np.testing.assert_allclose(at_rest, want_rest, rtol=0, atol=TOL)
            alone = floating.floating_inverse_dynamics(compiled_model, q, qd, qdd, motion,
                                                       f_ext, chosen, kind, args[-1])
            _assert_results(alone, want)
            if f_ext is None:  # the IMU's reading to the torques in one call
                found, result, at_rest = floating.floating_torques_from_imu(
                    compiled_model, *reading, chosen, kind, args[-1])
                for got, expected_value in zip(found, motion):
                    np.testing.assert_allclose(got, expected_value, rtol=0, atol=TOL)
                _assert_results(result, want)
                np.testing.assert_allclose(at_rest, want_rest, rtol=0, atol=TOL)
                _, result, none = floating.floating_torques_from_imu(
                    compiled_model, *reading, chosen, kind, args[-1], at_rest=False)
                _assert_results(result, want)
                assert none is None
    assert on_kernel and all(on_kernel)


def test_what_the_kernel_leaves_to_the_reference(monkeypatch):
    """Two point feet (a line: no moment about it) and a rest state that moves."""
    compiled_model, reference = _models('g1')
    feet = ROBOTS['g1'][1][0]
    on_kernel = _watch(monkeypatch)
    rng = np.random.default_rng(5)
    reading = _reading(compiled_model, rng, 'torso_link', odometry=False)
    q, qd, qdd = reading[:3]
    motion = floating.base_motion_from_imu(reference, *reading)
    result, at_rest = floating.floating_torques(compiled_model, q, qd, qdd, motion,
                                                floating.base_at_rest(motion.orientation),
                                                contacts=feet, contact_type='point')
    want, want_rest = floating.floating_torques(reference, q, qd, qdd, motion,
                                                floating.base_at_rest(motion.orientation),
                                                contacts=feet, contact_type='point')
    _assert_results(result, want)
    np.testing.assert_allclose(at_rest, want_rest, rtol=0, atol=TOL)
    assert on_kernel == [False]  # refused by the kernel: A A^T singular
    assert np.abs(result.unbalanced).max() > 1e-3  # what two points cannot carry
    # from the IMU's reading: the kernel's motion kept, its refused split not tried again
    found, result, at_rest = floating.floating_torques_from_imu(
        compiled_model, *reading, feet, 'point')
    for got, expected in zip(found, motion):
        np.testing.assert_allclose(got, expected, rtol=0, atol=TOL)
    _assert_results(result, want)
    np.testing.assert_allclose(at_rest, want_rest, rtol=0, atol=TOL)
    assert on_kernel == [False, False]  # (one call more, refused once)
    turning = motion._replace(proper_acceleration=np.array([0.0, 0.0, 9.81]))
    result, at_rest = floating.floating_torques(compiled_model, q, qd, qdd, motion, turning,
                                                contacts=feet)
    want, want_rest = floating.floating_torques(reference, q, qd, qdd, motion, turning,
                                                contacts=feet)
    _assert_results(result, want)
    np.testing.assert_allclose(at_rest, want_rest, rtol=0, atol=TOL)
    assert on_kernel == [False, False]  # (not called: the rest state turns)


def test_readings_the_kernel_cannot_take_are_the_references(monkeypatch):
    """No orientation (a zero quaternion), a vector of another size: the reference answers."""
    compiled_model, reference = _models('g1')
    on_kernel = _watch(monkeypatch)
    n = compiled_model.nv - 6
    q, zero = np.zeros(compiled_model.nq - 7), np.zeros(n)
    still = ([0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 9.81])
    got = floating.base_motion_from_imu(compiled_model, q, zero, zero, 'torso_link',
                                        [0.0, 0.0, 0.0, 0.0], *still)
    want = floating.base_motion_from_imu(reference, q, zero, zero, 'torso_link',
                                         [0.0, 0.0, 0.0, 0.0], *still)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    for model in (compiled_model, reference):
        with pytest.raises(TypeError):  # a number where a vector belongs
            floating.base_motion_from_imu(model, q, zero, zero, 'torso_link',
                                          [0.0, 0.0, 0.0, 1.0], 1.0, *still[1:])
        with pytest.raises(ValueError):  # odometry's rotation without its acceleration
            floating.base_motion_from_imu(model, q, zero, zero, 'torso_link',
                                          [0.0, 0.0, 0.0, 1.0], *still,
                                          ([0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0]))
    assert on_kernel == []  # (the motion alone does not reach the torques' caller)


def test_the_kernel_refuses_other_sizes_and_a_fixed_base():
    compiled_model, _ = _models('panda')
    packed = compiled_model.runtime.eom_packed
    n, nq, nv, nb = packed.nv - 6, packed.nq, packed.nv, packed.nb

    def call(packed, q, out_size, rows=7):
        fext = np.zeros((packed.nb, 6))
        return packed.floating1(packed.blob, q, np.zeros(n), np.zeros(n), np.zeros(BASE), 6,
                                fext, fext, fext, np.zeros(0, dtype=np.int64), False,
                                np.zeros(0), np.empty(packed.nq), np.empty((rows, packed.nv)),
                                np.empty((1, 6, packed.nv)), np.empty((4, 4)),
                                np.empty((8, 6)), np.empty(out_size))

    assert call(packed, np.zeros(nq - 7), 2 * n + 12) == 0
    assert call(packed, np.zeros(nq - 6), 2 * n + 12) == BAD_SIZES
    assert call(packed, np.zeros(nq - 7), 2 * n + 11) == BAD_SIZES
    assert call(packed, np.zeros(nq - 7), 2 * n + 12, rows=6) == BAD_SIZES
    assert nb == compiled_model.nb and nv == compiled_model.nv
    with open(os.path.join(ROOT, ROBOTS['panda'][0])) as stream:
        fixed = rbd.Model.from_urdf(stream.read()).runtime.eom_packed
    fixed.bind_eom()
    n = fixed.nv - 6
    assert call(fixed, np.zeros(fixed.nq - 7), 2 * n + 12) == BAD_SIZES
