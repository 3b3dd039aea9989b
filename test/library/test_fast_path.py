"""
The compiled path (numba) equals the NumPy reference, on every robot and joint type.

Robots: every URDF shipped by example-robot-data (6.0.0, from the Python registry) that loads,
the bundled demo arm, and code-built trees using each joint type of the library (helical,
spherical, floating and planar included) with mimic joints.
"""

import importlib.util
import os
import subprocess
import sys
import warnings
import zlib

import numpy as np
import pytest
import rbd_dynamics as rbd
from rbd_dynamics import _fast
from rbd_dynamics.dynamics import external_forces, rnea_reference
from rbd_dynamics.eom import (coriolis_matrix_reference, jacobian_reference,
                              mass_matrix_reference, regressor_reference)
from support.robots import all_urdfs, BROKEN, robot_id, robots_directory

pytestmark = pytest.mark.skipif(not _fast.AVAILABLE, reason='numba is not installed')
needs_compiled_eom = pytest.mark.skipif(
    not _fast.EOM_AVAILABLE, reason='numba older than %d.%d runs the equations of motion in '
    'NumPy' % _fast.EOM_MIN_NUMBA)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _load(path):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', rbd.DescriptionWarning)
        return rbd.Model.from_urdf_file(path)


def _code_built():
    """Build a tree with every joint type, a mimic chain and fixed children, without a URDF."""
    rng = np.random.default_rng(7)
    desc = rbd.Description('all_joints')

    def link(name):
        # I = tr(S) 1 - S for a second-moment matrix S: a physically consistent inertia
        a = rng.normal(scale=0.1, size=(3, 3))
        second_moment = a @ a.T
        desc.add_link(name, mass=rng.uniform(0.5, 2.0), com=rng.normal(scale=0.1, size=3),
                      inertia=np.trace(second_moment) * np.eye(3) - second_moment)

    link('base')
    parent = 'base'
    for i, (jtype, axis) in enumerate([('floating', (1, 0, 0)), ('revolute', (0, 1, 1)),
                                       ('helical', (1, 2, 0)), ('spherical', (0, 0, 1)),
                                       ('planar', (0.3, 0.2, 1.0)), ('prismatic', (1, -1, 0.5)),
                                       ('continuous', (0, 0, 1)), ('planar', (1, 0, 0))]):
        name = 'l%d' % i
        link(name)
        desc.add_joint('j%d' % i, jtype, parent, name, xyz=rng.normal(scale=0.2, size=3),
                       rpy=rng.uniform(-3, 3, size=3), axis=axis, pitch=0.05)
        parent = name
    link('tip')
    desc.add_joint('tip_fixed', 'fixed', parent, 'tip', xyz=(0.1, 0.0, 0.05), rpy=(0.3, 0, 0))
    link('m1')
    desc.add_joint('m1', 'revolute', 'l2', 'm1', xyz=(0, 0.1, 0), axis=(0, 0, 1),
                   mimic=('j1', -2.0, 0.3))
    link('m2')
    desc.add_joint('m2', 'prismatic', 'm1', 'm2', xyz=(0, 0.1, 0), axis=(1, 0, 0),
                   mimic=('m1', 0.5, -0.1))
    return rbd.Model.from_description(desc, gravity=(0.5, -1.0, -9.0))


MODELS = {'demo_arm': os.path.join(ROOT, 'urdf', 'demo_arm.urdf')}
MODELS.update((robot_id(path), path) for path in all_urdfs())


def _seed(name):
    """
    Return a seed that does not change between runs.

    ``hash`` of a str does, with PYTHONHASHSEED.
    """
    return zlib.crc32(name.encode())


def test_example_robot_data_is_found():
    """The descriptions below come from example-robot-data: finding none must not pass."""
    if robots_directory() is None:
        if importlib.util.find_spec('example_robot_data') is None:
            pytest.skip('example_robot_data is not installed')
        pytest.fail('example_robot_data is importable, but no robots directory was found')
    assert len(MODELS) > 40, sorted(MODELS)


def _random_q(model, rng, batch=()):
    q = rng.uniform(-1.5, 1.5, batch + (model.nq,))
    return q


@pytest.fixture(scope='module')
def code_model():
    return _code_built()


def _check(model, rng):
    nb_states = 4
    q = _random_q(model, rng, (nb_states,))
    qd = rng.normal(size=(nb_states, model.nv))
    qdd = rng.normal(size=(nb_states, model.nv))
    links = list(rng.choice(model.link_names, size=min(3, len(model.link_names)),
                            replace=False))
    f_ext = {link: rng.normal(scale=5.0, size=(nb_states, 6)) for link in links}
    ref = rnea_reference(model, q, qd, qdd, external_forces(model, f_ext, (nb_states,)))
    ref_g = rnea_reference(model, q, 0 * qd, 0 * qdd, external_forces(model, f_ext, (nb_states,)))
    scale = max(1.0, np.abs(ref).max())
    # batch kernel
    np.testing.assert_allclose(rbd.rnea(model, q, qd, qdd, f_ext), ref, rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(rbd.gravity_torques(model, q, f_ext), ref_g, rtol=0,
                               atol=1e-12 * scale)
    # single-state kernel, gravity-only mode included
    for s in range(nb_states):
        single = {link: w[s] for link, w in f_ext.items()}
        np.testing.assert_allclose(rbd.rnea(model, q[s], qd[s], qdd[s], single), ref[s], rtol=0,
                                   atol=1e-12 * scale)
        np.testing.assert_allclose(rbd.gravity_torques(model, q[s], single), ref_g[s], rtol=0,
                                   atol=1e-12 * scale)
        np.testing.assert_allclose(rbd.rnea(model, q[s], qd[s], qdd[s]),
                                   rnea_reference(model, q[s:s + 1], qd[s:s + 1],
                                                  qdd[s:s + 1])[0],
                                   rtol=0, atol=1e-12 * scale)
    # payload wrench: single-state kernel against the batched reference
    for link in links:
        batch = rbd.payload_wrench(model, link, q, qd, qdd)
        static = rbd.payload_wrench(model, link, q)
        for s in range(nb_states):
            np.testing.assert_allclose(rbd.payload_wrench(model, link, q[s], qd[s], qdd[s]),
                                       batch[s], rtol=0, atol=1e-12 * scale)
            np.testing.assert_allclose(rbd.payload_wrench(model, link, q[s]), static[s], rtol=0,
                                       atol=1e-12 * scale)


def _check_eom(model, rng, states=2):
    """M, C, J (every link, both frames) and Y: batch and single-state kernels = reference."""
    q = _random_q(model, rng, (states,))
    qd, qdd = rng.normal(size=(2, states, model.nv))
    inertia = model.runtime.inertia
    terms = [(rbd.mass_matrix, (q,), mass_matrix_reference(model, q, inertia)),
             (rbd.coriolis_matrix, (q, qd), coriolis_matrix_reference(model, q, qd, inertia)),
             (rbd.regressor, (q, qd, qdd), regressor_reference(model, q, qd, qdd))]
    for link in model.link_names:
        for frame in ('world', 'local'):
            terms.append((rbd.jacobian, (q, link, frame),
                          jacobian_reference(model, q, link, frame)))
    for function, args, ref in terms:
        what = '%s%s' % (function.__name__, args[1:] if function is rbd.jacobian else '')
        tol = 1e-12 * max(1.0, np.abs(ref).max())
        np.testing.assert_allclose(function(model, *args), ref, rtol=0, atol=tol, err_msg=what)
        for s in range(states):
            state = tuple(a[s] if isinstance(a, np.ndarray) else a for a in args)
            np.testing.assert_allclose(function(model, *state), ref[s], rtol=0, atol=tol,
                                       err_msg=what)


@pytest.mark.parametrize('name', sorted(MODELS))
def test_compiled_equals_reference_on_urdf(name):
    path = MODELS[name]
    root = robots_directory()
    broken = root is not None and os.path.relpath(path, root).replace(os.sep, '/') in BROKEN
    if broken:  # shipped broken: it must be refused, not loaded
        with pytest.raises(rbd.UrdfError):
            _load(path)
        return
    model = _load(path)
    assert model.packed is not None
    if model.nv == 0:  # nothing moves: an empty torque, the compiled path still answers
        assert rbd.rnea(model, [], [], []).shape == (0,)
        assert rbd.gravity_torques(model, []).shape == (0,)
        assert rbd.mass_matrix(model, []).shape == (0, 0)
        assert rbd.regressor(model, [], [], []).shape == (0, 10 * model.nb)
        assert rbd.jacobian(model, [], model.link_names[-1]).shape == (6, 0)
        return
    rng = np.random.default_rng(_seed(name))
    _check(model, rng)
    _check_eom(model, rng)


def test_compiled_equals_reference_on_every_joint_type(code_model):
    assert {j.jtype for j in code_model.joints} == {
        'floating', 'revolute', 'helical', 'spherical', 'planar', 'prismatic', 'continuous'}
    rng = np.random.default_rng(3)
    _check(code_model, rng)
    _check_eom(code_model, rng, states=4)


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


@pytest.mark.slow
def test_without_numba_the_reference_path_gives_the_same_numbers(tmp_path):
    """RBD_DYNAMICS_DISABLE_JIT=1 (as where numba is missing): same torques, no packed model."""
    script = (
        'import json, sys, numpy as np, rbd_dynamics as rbd\n'
        'm = rbd.Model.from_urdf_file(sys.argv[1])\n'
        'q = np.linspace(-1, 1, m.nq); qd = np.linspace(1, -1, m.nv); qdd = np.ones(m.nv)\n'
        'print(json.dumps({"packed": m.packed is not None,\n'
        '    "tau": rbd.rnea(m, q, qd, qdd, {"ft_frame": [1, 2, 3, 0.1, 0.2, 0.3]}).tolist()}))\n')
    path = os.path.join(ROOT, 'urdf', 'demo_arm.urdf')
    env = dict(os.environ, RBD_DYNAMICS_DISABLE_JIT='1')
    out = subprocess.run([sys.executable, '-c', script, path], env=env, check=True,
                         capture_output=True, text=True, timeout=600)
    import json
    result = json.loads(out.stdout)
    assert result['packed'] is False
    model = _load(path)
    q = np.linspace(-1, 1, model.nq)
    qd = np.linspace(1, -1, model.nv)
    expected = rbd.rnea(model, q, qd, np.ones(model.nv), {'ft_frame': [1, 2, 3, 0.1, 0.2, 0.3]})
    np.testing.assert_allclose(result['tau'], expected, rtol=0, atol=1e-12)


def test_every_kind_of_input_reaches_the_same_answer():
    """
    Every kind of input reaches the same answer.

    Inputs the compiled entry points refuse (lists, other dtypes, strided or read-only
    arrays) take the general path: same numbers, and size errors name the expected size.
    """
    model = _load(MODELS['demo_arm'])
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
    model = _load(MODELS['demo_arm'])
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


def test_threads_share_a_model():
    """
    Threads sharing a model each get their own answer.

    Calls from several threads on one model, each with its own external wrench, all get
    their own answer (external forces are arguments of the compiled call, not shared state).
    """
    import threading
    model = _load(MODELS['demo_arm'])
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
    _check(model, np.random.default_rng(14))


def test_compile_later():
    """
    A model built without the compiled path switches to it later.

    ``compiled=False`` gives the NumPy path until ``compile()``; the numbers do not change,
    and payload wrenches computed before switch to the compiled path too.
    """
    path = MODELS['demo_arm']
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', rbd.DescriptionWarning)
        model = rbd.Model.from_urdf_file(path, compiled=False)
    assert model.packed is None
    rng = np.random.default_rng(15)
    q, qd, qdd = rng.uniform(-1, 1, (3, model.nv))
    f_ext = {'ft_frame': rng.normal(size=6)}
    before = (rbd.rnea(model, q, qd, qdd, f_ext), rbd.gravity_torques(model, q),
              rbd.payload_wrench(model, 'ft_frame', q, qd, qdd))
    assert model.runtime.beyond['ft_frame'].packed is None
    assert model.compile() and model.packed is not None
    assert model.compile()  # once is enough
    after = (rbd.rnea(model, q, qd, qdd, f_ext), rbd.gravity_torques(model, q),
             rbd.payload_wrench(model, 'ft_frame', q, qd, qdd))
    assert model.runtime.beyond['ft_frame'].packed is not None
    for a, b in zip(before, after):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


def test_large_batches_run_on_threads(code_model, monkeypatch):
    """
    Large batches run on threads and equal the loop.

    A batch of PARALLEL_BATCH states or more goes to the parallel kernel (on two threads
    here, whatever the machine has) and equals the loop of single calls, with wrenches, for
    rnea and gravity torques.
    """
    model = code_model
    calls = []
    parallel = _fast._batch_parallel

    def spy(blobs, *args):
        calls.append(blobs.shape[0])
        return parallel(blobs, *args)

    monkeypatch.setattr(_fast, '_batch_parallel', spy)
    numba = _fast.numba
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.fail('numba has %d thread: run with NUMBA_NUM_THREADS=2 or more (test/conftest.py '
                    'sets it)' % numba.config.NUMBA_NUM_THREADS)
    threads = numba.get_num_threads()
    numba.set_num_threads(2)
    try:
        rng = np.random.default_rng(16)
        batch = _fast.PARALLEL_BATCH + 45  # not a multiple of the number of threads
        q = _random_q(model, rng, (batch,))
        qd, qdd = rng.normal(size=(2, batch, model.nv))
        links = ['l3', 'tip', 'base']  # a moving body, a fixed child, the base
        f_ext = {link: rng.normal(scale=5.0, size=(batch, 6)) for link in links}
        tau = rbd.rnea(model, q, qd, qdd, f_ext)
        tau_g = rbd.gravity_torques(model, q, f_ext)
    finally:
        numba.set_num_threads(threads)
    assert calls == [2, 2]
    for s in range(batch):
        single = {link: wrench[s] for link, wrench in f_ext.items()}
        np.testing.assert_allclose(tau[s], rbd.rnea(model, q[s], qd[s], qdd[s], single),
                                   rtol=0, atol=1e-12 * max(1.0, np.abs(tau[s]).max()))
        np.testing.assert_allclose(tau_g[s], rbd.gravity_torques(model, q[s], single),
                                   rtol=0, atol=1e-12 * max(1.0, np.abs(tau_g[s]).max()))
    # a batch just below the threshold takes the one-thread kernel
    rbd.rnea(model, q[:_fast.PARALLEL_BATCH - 1], qd[:_fast.PARALLEL_BATCH - 1],
             qdd[:_fast.PARALLEL_BATCH - 1])
    assert calls == [2, 2]


@needs_compiled_eom
def test_large_equations_of_motion_batches_run_on_threads(code_model, monkeypatch):
    """M, C, J and Y of a large batch: on two threads, equal to single calls, NaN in its row."""
    model = code_model
    calls = []
    parallel = _fast._eom_batch_parallel

    def spy(blobs, *args):
        calls.append(blobs.shape[0])
        return parallel(blobs, *args)

    monkeypatch.setattr(_fast, '_eom_batch_parallel', spy)
    numba = _fast.numba
    threads = numba.get_num_threads()
    numba.set_num_threads(2)
    try:
        rng = np.random.default_rng(17)
        batch = _fast.PARALLEL_BATCH + 45
        q = _random_q(model, rng, (batch,))
        q[7, 7] = np.nan  # the angle of j1, the revolute joint under the floating one
        qd, qdd = rng.normal(size=(2, batch, model.nv))
        results = [(rbd.mass_matrix, (q,)), (rbd.coriolis_matrix, (q, qd)),
                   (rbd.jacobian, (q, 'tip', 'local')), (rbd.regressor, (q, qd, qdd))]
        results = [(function, args, function(model, *args)) for function, args in results]
    finally:
        numba.set_num_threads(threads)
    assert calls == [2, 2, 2, 2]
    for function, args, many in results:
        assert np.isnan(many[7]).any() and np.isfinite(np.delete(many, 7, axis=0)).all()
        for s in range(0, batch, 37):
            state = tuple(a[s] if isinstance(a, np.ndarray) else a for a in args)
            np.testing.assert_array_equal(many[s], function(model, *state))


@pytest.mark.slow
def test_batches_of_any_input_kind_after_a_second_warm_up(tmp_path):
    """
    Batch kernels take any input kind after a second warm-up.

    Batch kernels compiled in a process whose single-state kernels came from numba's disk
    cache, then frozen by a second model's warm-up, still take batches whose inputs are
    broadcast (read-only) or not: every batch reaches them as one array type.
    """
    load = ('import rbd_dynamics as rbd\n'
            'from rbd_dynamics.resources import demo_urdf_path\n'
            'm = rbd.Model.from_urdf_file(demo_urdf_path())\n')
    batches = load + (
        'import numpy as np\n'
        'Q = np.tile(np.linspace(-1, 1, m.nq), (300, 1)); z = np.zeros(m.nv)\n'
        'a = rbd.rnea(m, Q, z, z)\n'
        'm2 = rbd.Model.from_urdf_file(demo_urdf_path())\n'
        'Z = np.zeros((300, m.nv))\n'
        'b = rbd.rnea(m2, Q, Z, Z)\n'
        'c = rbd.gravity_torques(m2, np.broadcast_to(Q[0], Q.shape))\n'
        'assert np.abs(a - b).max() == 0 and np.abs(a - c).max() < 1e-12\n')
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    # the first process caches the single-state kernels only; the second loads them and
    # compiles the batch kernels
    for script in (load, batches):
        result = subprocess.run([sys.executable, '-c', script], env=env, capture_output=True,
                                text=True, timeout=600)
        assert result.returncode == 0, result.stderr[-2000:]


def test_compile_readies_the_batch_kernels(code_model):
    """A compiled model's batch kernels, serial and parallel, are loaded before any batch."""
    assert code_model.packed is not None
    assert _fast._batch.signatures
    assert _fast._batch_parallel.signatures


@needs_compiled_eom
def test_equations_of_motion_compile_on_first_use(code_model):
    """
    The equations of motion's entry points start as stubs that compile them, then call them.

    Once compiled in the process, every packed model (a payload's copy too) takes the kernels
    themselves.
    """
    packed = code_model.packed
    q = _random_q(code_model, np.random.default_rng(2))
    stub = _fast._CompileFirst(packed, 'mass1')
    M = np.empty((code_model.nv, code_model.nv))
    assert stub(packed.blob, q, M) == _fast.OK
    np.testing.assert_allclose(M, mass_matrix_reference(code_model, q[None],
                                                        code_model.runtime.inertia)[0],
                               rtol=0, atol=1e-12)
    for name in _fast.EOM_ENTRIES:
        assert _fast.ENTRY[name] is not None
        assert getattr(packed, name) is _fast.ENTRY[name]
        assert getattr(packed.with_inertia(code_model.inertia), name) is _fast.ENTRY[name]
    assert _fast._eom_batch_parallel.signatures


def test_a_payload_swaps_one_runtime_state():
    """
    A payload change builds a new runtime state and leaves the old one as it was.

    The packed model of each state holds that state's inertias, so a reader holding either
    computes with one consistent set.
    """
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', rbd.DescriptionWarning)
        model = rbd.Model.from_urdf_file(MODELS['demo_arm'])
    before = model.runtime
    inertia_before = before.inertia.copy()
    model.set_payload('ft_frame', 1.5, (0.0, 0.0, 0.1))
    after = model.runtime
    assert after is not before
    assert before.payloads == {} and set(after.payloads) == {'ft_frame'}
    assert model.inertia is after.inertia and model.packed is after.packed
    np.testing.assert_array_equal(before.inertia, inertia_before)
    assert not np.array_equal(after.inertia, inertia_before)
    for state in (before, after):
        assert state.packed.source_inertia is state.inertia
        np.testing.assert_allclose(state.packed.inertia,
                                   state.packed.pack_inertia(state.inertia), rtol=0, atol=0)
    with pytest.raises(TypeError):
        after.payloads['ft_frame'] = None
    model.clear_payloads()
    assert model.payloads == {} and model.packed.source_inertia is model.inertia
    np.testing.assert_array_equal(model.inertia, inertia_before)


@needs_compiled_eom
def test_single_states_take_the_entry_points(monkeypatch):
    """
    A single state of float64 vectors never takes the general path.

    Both paths give the same numbers, so only this tells a fast path that silently stopped
    being taken (a wrong status constant, a missed code lookup) from a working one.
    """
    from rbd_dynamics import eom
    assert eom._OK == _fast.OK
    model = _load(MODELS['demo_arm'])
    q = np.random.default_rng(5).uniform(-1, 1, model.nq)
    rbd.mass_matrix(model, q)  # the equations of motion compile at their first call
    link = model.link_names[-1]
    expected = {frame: jacobian_reference(model, q[None], link, frame)[0]
                for frame in ('world', 'local')}

    def general(*args):
        raise AssertionError('a single state took the general path')

    monkeypatch.setattr(eom, '_batch', general)
    M = rbd.mass_matrix(model, q)
    assert M.shape == (model.nv, model.nv)
    for frame in ('world', 'local'):
        np.testing.assert_allclose(rbd.jacobian(model, q, link, frame), expected[frame],
                                   rtol=0, atol=1e-12)
    np.testing.assert_allclose(rbd.jacobian(model, q, link), expected['world'], rtol=0,
                               atol=1e-12)
