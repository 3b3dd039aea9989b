"""
The RNEA's kernels (:mod:`rbd_dynamics.compiled.rnea`) equal the NumPy reference.

On every robot of :mod:`support.compiled` and every joint type, single states and batches, with
external wrenches, payload wrenches and every kind of input; inputs that must not reach an
entry point take the general path.
"""

import importlib.util
import os
import sys
import warnings

import numpy as np
import pytest
import rbd_dynamics as rbd
from rbd_dynamics.dynamics import external_forces, rnea_reference
from support.compiled import check_rnea, load, MODELS, needs_numba, seed
from support.robots import BROKEN, robots_directory

pytestmark = needs_numba


def test_example_robot_data_is_found():
    """The descriptions below come from example-robot-data: finding none must not pass."""
    if robots_directory() is None:
        if importlib.util.find_spec('example_robot_data') is None:
            pytest.skip('example_robot_data is not installed')
        pytest.fail('example_robot_data is importable, but no robots directory was found')
    assert len(MODELS) > 40, sorted(MODELS)


@pytest.mark.parametrize('name', sorted(MODELS))
def test_compiled_equals_reference_on_urdf(name):
    path = MODELS[name]
    root = robots_directory()
    broken = root is not None and os.path.relpath(path, root).replace(os.sep, '/') in BROKEN
    if broken:  # shipped broken: it must be refused, not loaded
        with pytest.raises(rbd.UrdfError):
            load(path)
        return
    model = load(path)
    assert model.packed is not None
    if model.nv == 0:  # nothing moves: an empty torque, the compiled path still answers
        assert rbd.rnea(model, [], [], []).shape == (0,)
        assert rbd.gravity_torques(model, []).shape == (0,)
        return
    check_rnea(model, np.random.default_rng(seed(name)))


def test_compiled_equals_reference_on_every_joint_type(code_model):
    assert {j.jtype for j in code_model.joints} == {
        'floating', 'revolute', 'helical', 'spherical', 'planar', 'prismatic', 'continuous'}
    check_rnea(code_model, np.random.default_rng(3))


def test_readonly_and_strided_inputs(code_model):
    rng = np.random.default_rng(5)
    q = rng.normal(size=code_model.nq)
    qd = rng.normal(size=2 * code_model.nv)[::2]
    qdd = rng.normal(size=code_model.nv)
    q.setflags(write=False)
    expected = rnea_reference(code_model, q[None], qd[None], qdd[None])[0]
    np.testing.assert_allclose(rbd.rnea(code_model, q, qd, qdd), expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(rbd.rnea(code_model, list(q), list(qd), list(qdd)), expected,
                               rtol=0, atol=1e-12)


def test_every_kind_of_input_reaches_the_same_answer():
    """
    Every kind of input reaches the same answer.

    Inputs the compiled entry points refuse (lists, other dtypes, strided or read-only
    arrays) take the general path: same numbers, and size errors name the expected size.
    """
    model = load(MODELS['demo_arm'])
    rng = np.random.default_rng(9)
    q, qd, qdd = rng.uniform(-1, 1, (3, model.nv))
    f_ext = {'ft_frame': rng.normal(size=6)}
    expected = rnea_reference(model, q[None], qd[None], qdd[None],
                              external_forces(model, f_ext, (1,)))[0]
    expected_g = rnea_reference(model, q[None], 0 * qd[None], 0 * qdd[None])[0]
    strided = np.zeros((model.nv, 2))
    strided[:, 0] = q
    readonly = q.copy()
    readonly.setflags(write=False)
    for variant in (q, list(q), tuple(q), strided[:, 0],
                    readonly):
        np.testing.assert_allclose(rbd.rnea(model, variant, qd, qdd, f_ext), expected,
                                   rtol=0, atol=1e-12)
        np.testing.assert_allclose(rbd.gravity_torques(model, variant), expected_g, rtol=0,
                                   atol=1e-12)
    ints = np.zeros(model.nv, dtype=np.int64)
    np.testing.assert_allclose(rbd.gravity_torques(model, ints),
                               rnea_reference(model, ints[None] * 1.0, 0 * qd[None],
                                              0 * qdd[None])[0], rtol=0, atol=1e-12)
    for bad in (q[:-1], np.append(q, 0.0), [], 0.5):
        with pytest.raises(ValueError, match='model expects %d' % model.nv):
            rbd.rnea(model, bad, qd, qdd)
        with pytest.raises(ValueError, match='model expects %d' % model.nv):
            rbd.gravity_torques(model, bad)
    with pytest.raises(ValueError, match='model expects %d' % model.nv):
        rbd.rnea(model, q, qd[:-1], qdd)
    # a call with external forces leaves nothing behind for the next one
    np.testing.assert_allclose(rbd.rnea(model, q, qd, qdd),
                               rnea_reference(model, q[None], qd[None], qdd[None])[0], rtol=0,
                               atol=1e-12)


def test_inputs_the_entry_points_must_not_get():
    """
    Only float64 vectors reach the compiled entry points.

    The wrappers hand only float64 vectors to the compiled entry points, which skip numba's
    type checks: integer, single-precision, complex, object and 2-D inputs take the general
    path and give the reference's answer (or its error).
    """
    model = load(MODELS['demo_arm'])
    rng = np.random.default_rng(11)
    q, qd, qdd = rng.uniform(-1, 1, (3, model.nv))
    expected = rnea_reference(model, q[None], qd[None], qdd[None])[0]
    expected_g = rnea_reference(model, q[None], 0 * qd[None], 0 * qdd[None])[0]
    ints = np.arange(model.nv) - 3
    np.testing.assert_allclose(rbd.rnea(model, ints, ints, ints), rnea_reference(
        model, ints[None] * 1.0, ints[None] * 1.0, ints[None] * 1.0)[0], rtol=0, atol=1e-12)
    for variant in (q.astype(np.float32).astype(object), q.astype(object)):
        got = rbd.gravity_torques(model, variant)
        ref = rnea_reference(model, variant.astype(float)[None], 0 * qd[None], 0 * qdd[None])[0]
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12)
    single = q.astype(np.float32)
    np.testing.assert_allclose(rbd.gravity_torques(model, single), rnea_reference(
        model, single.astype(float)[None], 0 * qd[None], 0 * qdd[None])[0], rtol=0, atol=1e-12)
    # a batch of one keeps its batch shape
    got = rbd.rnea(model, q[None], qd[None], qdd[None])
    assert got.shape == (1, model.nv)
    np.testing.assert_allclose(got[0], expected, rtol=0, atol=1e-12)
    assert rbd.gravity_torques(model, q[None]).shape == (1, model.nv)
    np.testing.assert_allclose(rbd.gravity_torques(model, q[None])[0], expected_g, rtol=0,
                               atol=1e-12)
    # complex64 has a float64's size: it must not be read as one (its real part is used,
    # with NumPy's warning, as for any conversion to float)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        got = rbd.rnea(model, (q + 0.5j).astype(np.complex64), qd, qdd)
    np.testing.assert_allclose(got, rnea_reference(
        model, q.astype(np.float32).astype(float)[None], qd[None], qdd[None])[0], rtol=0,
        atol=1e-12)
    big_endian = q.astype('>f8')
    np.testing.assert_allclose(rbd.rnea(model, big_endian, qd, qdd), expected, rtol=0,
                               atol=1e-12)
    # wrenches that are not float vectors of 6 go the general way too
    link = 'ft_frame'
    wrench = rng.normal(size=6)
    ref = rbd.rnea(model, q, qd, qdd, {link: wrench})
    np.testing.assert_allclose(rbd.rnea(model, q, qd, qdd, {link: list(wrench)}), ref, rtol=0,
                               atol=1e-12)
    single = wrench.astype(np.float32)
    np.testing.assert_allclose(rbd.rnea(model, q, qd, qdd, {link: single}),
                               rbd.rnea(model, q, qd, qdd, {link: single.astype(float)}),
                               rtol=0, atol=1e-12)
    for bad in (wrench[:5], np.append(wrench, 1.0)):
        with pytest.raises(ValueError, match='6'):
            rbd.rnea(model, q, qd, qdd, {link: bad})
    with pytest.raises(ValueError, match='6'):  # a bad wrench on the base is an error as well
        rbd.rnea(model, q, qd, qdd, {model.root_link: wrench[:5]})
    # a missing velocity or acceleration is the general path's error, with or without wrenches
    for f_ext in (None, {link: wrench}):
        for args in ((q, None, qdd), (q, qd, None)):
            with pytest.raises(ValueError, match='model expects'):
                rbd.rnea(model, *args, f_ext)


def test_threads_share_a_model():
    """
    Threads sharing a model each get their own answer.

    Calls from several threads on one model, each with its own external wrench, all get
    their own answer (external forces are arguments of the compiled call, not shared state).
    """
    import threading
    model = load(MODELS['demo_arm'])
    rng = np.random.default_rng(12)
    q, qd, qdd = rng.uniform(-1, 1, (3, model.nv))
    wrenches = [rng.normal(scale=20.0, size=6) for _ in range(3)]
    expected = [rbd.rnea(model, q, qd, qdd, {'ft_frame': w}) for w in wrenches]
    expected_plain = rbd.rnea(model, q, qd, qdd)
    wrong = []

    def work(k):
        for _ in range(3000):
            if k < len(wrenches):
                got = rbd.rnea(model, q, qd, qdd, {'ft_frame': wrenches[k]})
                ok = np.array_equal(got, expected[k])
            else:
                ok = np.array_equal(rbd.rnea(model, q, qd, qdd), expected_plain)
            if not ok:
                wrong.append(k)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        threads = [threading.Thread(target=work, args=(k,)) for k in range(len(wrenches) + 1)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert not wrong


def _axes_chain():
    """
    Build a chain of 1-DoF joints along many axes.

    A chain whose 1-DoF joints point along +-z, nearly z, +-x, -y and skew axes, with
    fixed children between them: the frames the packed model turns onto z.
    """
    desc = rbd.Description('axes')
    rng = np.random.default_rng(13)
    desc.add_link('base', mass=1.0, com=(0, 0, 0), inertia=np.eye(3) * 0.01)
    parent = 'base'
    joints = [('revolute', (0, 0, -1)), ('prismatic', (0, 0, -1)), ('revolute', (0, 0, 1)),
              ('helical', (0, 0, -1)), ('continuous', (-1, 0, 0)), ('prismatic', (0, -1, 0)),
              ('revolute', (1e-9, 0, 1)), ('revolute', (1, 1e-7, -1e-7)),
              ('prismatic', (-1e-12, 1e-12, -1)), ('revolute', (0.3, -0.5, -0.8))]
    for i, (jtype, axis) in enumerate(joints):
        a = rng.normal(scale=0.1, size=(3, 3))
        second_moment = a @ a.T
        desc.add_link('l%d' % i, mass=rng.uniform(0.5, 2.0), com=rng.normal(scale=0.1, size=3),
                      inertia=np.trace(second_moment) * np.eye(3) - second_moment)
        desc.add_joint('j%d' % i, jtype, parent, 'l%d' % i, xyz=rng.normal(scale=0.2, size=3),
                       rpy=rng.uniform(-3, 3, size=3), axis=axis, pitch=-0.03)
        desc.add_link('tool%d' % i, mass=0.2, com=(0.01, 0.02, 0.03),
                      inertia=np.eye(3) * 1e-3)
        desc.add_joint('fix%d' % i, 'fixed', 'l%d' % i, 'tool%d' % i, xyz=(0.05, 0, 0.1),
                       rpy=(0.2, -0.4, 1.0))
        parent = 'tool%d' % i if i % 2 else 'l%d' % i
    return rbd.Model.from_description(desc, gravity=(0.3, 0.2, -9.7))


def test_axes_in_every_direction():
    model = _axes_chain()
    rotations = model.packed.rotation
    np.testing.assert_allclose(rotations[:, :, 2], [j.axis for j in model.joints], rtol=0,
                               atol=1e-15)
    np.testing.assert_allclose(rotations @ rotations.transpose(0, 2, 1),
                               np.broadcast_to(np.eye(3), rotations.shape), rtol=0, atol=1e-15)
    assert np.array_equal(rotations[2], np.eye(3))  # already along z: left alone
    check_rnea(model, np.random.default_rng(14))
