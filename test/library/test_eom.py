"""
The equations of motion term by term: mass matrix, Coriolis matrix, Jacobian, regressor.

Against Pinocchio on the descriptions of ``robots.CROSS_CHECK`` (fixed base, mimic joints as
independent Pinocchio joints folded with ``PinocchioPair.velocity_map``) and on a floating base
against its free flyer: ``crba`` (upper triangle, symmetrised), ``computeCoriolisMatrix``,
``computeFrameJacobian`` (``LOCAL_WORLD_ALIGNED`` for our ``'world'``: Pinocchio's world is
our root link; ``LOCAL`` for ``'local'``; both linear first like ours) and
``computeJointTorqueRegressor``. Pinocchio's joint frame of a URDF joint is its child link's
frame, our body frame, so its regressor compares column by column once its parameter order
``[m, mc, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]`` is mapped to ours; the body parameters compare too.
Relative error ``|ours - ref| / max(1, |ref|)`` at most 1e-10.

Then the properties that define each term (``rnea`` is the reference), the two-link arm's
closed form, payloads, batches and bad input.

Every check runs on both paths: the compiled one (numba) and the NumPy reference (the same
model with its packed model taken away, or a model built with ``compiled=False``).
"""

import copy
import os
import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import rbd_dynamics as rbd
from rbd_dynamics import compiled as _compiled
from support.robots import (CROSS_CHECK, FLOATING_JOINT, PinocchioPair, robot_id,
                            robots_directory, WORLD_LINK)
from support.urdf_builders import inertial, joint, link, robot, two_link, two_link_terms

ROOT = robots_directory()
TOL = 1e-10
PANDA = 'panda_description/urdf/panda.urdf'
PR2 = 'pr2_description/urdf/pr2.urdf'
FLOATING = ('solo_description/robots/solo12.urdf', 'anymal_c_simple_description/urdf/anymal.urdf',
            'talos_data/robots/talos_full_v2.urdf')
# Pinocchio's dynamic parameters [m, mc, Ixx, Ixy, Iyy, Ixz, Iyz, Izz] -> ours
# [m, mc, ixx, ixy, ixz, iyy, iyz, izz]
PIN_PARAMETER_ORDER = np.array([0, 1, 2, 3, 4, 5, 7, 6, 8, 9])

needs_robots = pytest.mark.skipif(ROOT is None, reason='example-robot-data is not installed')
PATHS = ('numpy', 'compiled')


def skip_without_compiled_eom():
    if not _compiled.AVAILABLE:
        pytest.skip('numba is not installed')
    if not _compiled.EOM_AVAILABLE:
        pytest.skip('numba older than %d.%d runs the equations of motion in NumPy'
                    % _compiled.EOM_MIN_NUMBA)


def on_path(model, path):
    """Return ``model`` itself (compiled) or a twin of it on the NumPy path."""
    if path == 'compiled':
        skip_without_compiled_eom()
        assert model.packed is not None
        return model
    twin = copy.copy(model)
    twin.runtime = model.runtime.replace(packed=None)
    return twin


def path_of(rel):
    return os.path.join(ROOT, rel)


def rel_error(ours, ref):
    ref = np.asarray(ref)
    return np.linalg.norm(np.asarray(ours) - ref) / max(1.0, np.linalg.norm(ref))


def assert_close(ours, ref, what, tol=TOL):
    assert np.shape(ours) == np.shape(ref), (what, np.shape(ours), np.shape(ref))
    err = rel_error(ours, ref)
    assert err <= tol, '%s: relative error %.3g (tolerance %g)' % (what, err, tol)


def seed(text):
    return sum(map(ord, text))


def random_q(model, rng):
    """Return a ``(nq,)`` position within ±pi, unit quaternions for floating joints."""
    q = rng.uniform(-np.pi, np.pi, model.nq)
    start = 0
    for jtype, nq in zip(model.joint_types, model.joint_nq):
        if jtype == 'floating':
            quat = rng.normal(size=4)
            q[start + 3:start + 7] = quat / np.linalg.norm(quat)
        start += nq
    return q


def checked_links(model):
    """Pick the last body's link, a link merged by a fixed joint into a body, a base link."""
    bodies = set(model.body_links)
    merged = [name for name in model.link_names
              if model.link_body[name] >= 0 and name not in bodies]
    base = [name for name in model.link_names if model.link_body[name] < 0]
    links = [model.body_links[-1]] + merged[-1:] + base[-1:]
    return [name for name in dict.fromkeys(links) if name != WORLD_LINK]


# Pinocchio ----------------------------------------------------------------------------------

def compare_with_pinocchio(pair, states=2):
    """M, C, J and Y of one model against Pinocchio's at random states."""
    pin = pair.pin
    model, pm, pd = pair.model, pair.pin_model, pair.pin_data
    G = pair.velocity_map()
    body_of = {name: b for b, name in enumerate(model.body_joint_names)}
    columns = np.empty(10 * model.nb, dtype=np.int64)
    for jid in range(1, pm.njoints):
        b = body_of[pm.names[jid]]
        columns[10 * b:10 * b + 10] = 10 * (jid - 1) + PIN_PARAMETER_ORDER
    # the same bodies in both: the parameters agree
    pin_pi = np.concatenate([pm.inertias[jid].toDynamicParameters()
                             for jid in range(1, pm.njoints)])
    assert_close(model.inertial_parameters(), pin_pi[columns], 'inertial parameters')
    rng = np.random.default_rng(seed(model.name))
    paths = {path: on_path(model, path) for path in PATHS}
    for _ in range(states):
        q = pair.random_q(rng)
        qd, qdd = rng.normal(size=(2, model.nv))
        pq, pv, pa = pair.pin_state(q, qd, qdd)
        M = pin.crba(pm, pd, pq)
        M = G.T @ (np.triu(M) + np.triu(M, 1).T) @ G
        C = G.T @ pin.computeCoriolisMatrix(pm, pd, pq, pv) @ G
        Y = G.T @ pin.computeJointTorqueRegressor(pm, pd, pq, pv, pa)[:, columns]
        jacobians = {}
        for name in checked_links(model):
            frame = pm.getFrameId(name, pin.BODY)
            for ours, ref in (('world', pin.LOCAL_WORLD_ALIGNED), ('local', pin.LOCAL)):
                jacobians[name, ours] = pin.computeFrameJacobian(pm, pd, pq, frame, ref) @ G
        for path, ours in paths.items():
            assert_close(rbd.mass_matrix(ours, q), M, 'mass matrix, %s' % path)
            assert_close(rbd.coriolis_matrix(ours, q, qd), C, 'Coriolis matrix, %s' % path)
            assert_close(rbd.regressor(ours, q, qd, qdd), Y, 'regressor, %s' % path)
            for (name, frame), J in jacobians.items():
                assert_close(rbd.jacobian(ours, q, name, frame), J,
                             'Jacobian of %s, %s, %s' % (name, frame, path))


@needs_robots
@pytest.mark.parametrize('rel', CROSS_CHECK, ids=robot_id)
def test_against_pinocchio(rel):
    pin = pytest.importorskip('pinocchio')
    compare_with_pinocchio(PinocchioPair(path_of(rel), pin))


@needs_robots
@pytest.mark.parametrize('rel', FLOATING, ids=robot_id)
def test_floating_base_against_pinocchio(rel):
    """A URDF floating joint against the free flyer: a column per velocity coordinate."""
    pin = pytest.importorskip('pinocchio')
    pair = PinocchioPair(path_of(rel), pin, floating=True)
    assert pair.model.joint_names[0] == FLOATING_JOINT
    compare_with_pinocchio(pair)


# Properties ---------------------------------------------------------------------------------

def planar_robot():
    """Return a planar base carrying a revolute arm, a prismatic slider and a mimic finger."""
    solid = {'ixx': 0.05, 'iyy': 0.04, 'izz': 0.03, 'ixy': 0.004, 'ixz': -0.002, 'iyz': 0.001}
    return robot(
        'planar',
        link('ground'),
        joint('base', 'planar', 'ground', 'cart', xyz=(0.1, 0.0, 0.2), rpy=(0.3, 0.0, 0.1),
              axis=(0.0, 0.2, 1.0)),
        link('cart', inertial(4.0, (0.05, -0.02, 0.1), **solid)),
        joint('arm', 'revolute', 'cart', 'upper', xyz=(0.2, 0.1, 0.3), rpy=(0.0, 0.4, 0.0),
              axis=(1.0, 0.0, 0.0)),
        link('upper', inertial(1.5, (0.0, 0.1, 0.2), **solid)),
        joint('slide', 'prismatic', 'upper', 'carriage', xyz=(0.0, 0.0, 0.4),
              axis=(0.0, 0.6, 0.8)),
        link('carriage', inertial(0.8, (0.02, 0.0, 0.05), **solid)),
        joint('finger', 'revolute', 'carriage', 'finger_link', xyz=(0.0, 0.05, 0.0),
              axis=(0.0, 0.0, 1.0), mimic=('arm', -0.7, 0.2)),
        link('finger_link', inertial(0.3, (0.05, 0.0, 0.0), **solid)),
        joint('tool', 'fixed', 'finger_link', 'tool_link', xyz=(0.1, 0.02, -0.03),
              rpy=(0.2, -0.1, 0.5)),
        link('tool_link', inertial(0.2, (0.01, 0.0, 0.02), **solid)))


def property_models():
    """``{name: (urdf text, has a floating joint)}`` for the property tests."""
    models = {'planar': planar_robot(),
              'two_link': two_link(1.7, 1.1, 0.55, 0.3, 0.22, 0.04, 0.02)}
    if ROOT is not None:
        for rel in (PANDA, PR2):
            with open(path_of(rel)) as handle:
                models[robot_id(rel)] = handle.read()
    return models


MODELS = property_models()


def make(name, path='compiled', **kwargs):
    """Load a property model on ``path``."""
    if path == 'compiled':
        skip_without_compiled_eom()
    return load_text(MODELS[name], compiled=path == 'compiled', **kwargs)


def load_text(text, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', rbd.DescriptionWarning)
        return rbd.Model.from_urdf(text, **kwargs)


def reweighted(text, rng):
    """Return the same description with other inertias: masses scaled, centres of mass moved."""
    root = ET.fromstring(text.encode() if isinstance(text, str) else text)
    for element in root.iter('inertial'):
        mass = element.find('mass')
        mass.set('value', repr(float(mass.get('value')) * rng.uniform(0.5, 2.0)))
        origin = element.find('origin')
        if origin is None:
            origin = ET.SubElement(element, 'origin')
        xyz = np.array([float(x) for x in origin.get('xyz', '0 0 0').split()])
        origin.set('xyz', ' '.join(repr(float(x)) for x in xyz + rng.normal(scale=0.05,
                                                                            size=3)))
    return ET.tostring(root, encoding='unicode')


def link_pose(model, q, link_name):
    """Position ``(3,)`` of the link frame's origin and rotation ``(3, 3)``, root coordinates."""
    qf = q[model.q_src] * model.q_mult + model.q_off
    X = model.link_X[link_name]
    b = model.link_body[link_name]
    while b >= 0:
        jm = model.joints[b]
        qs = model.q_start[b]
        XJ = rbd.jcalc(jm, qf[None, qs:qs + jm.nq], np.zeros((1, jm.nv)))[0][0]
        X = X @ XJ @ model.Xtree[b]
        b = model.parent[b]
    E = X[:3, :3]  # root axes -> link axes
    position = -E.T @ X[3:, :3]  # [r]x
    return np.array([position[2, 1], position[0, 2], position[1, 0]]), E.T


@pytest.mark.parametrize('path', PATHS)
@pytest.mark.parametrize('name', sorted(MODELS))
def test_mass_matrix(name, path):
    model = make(name, path)
    rng = np.random.default_rng(seed(name))
    zero = np.zeros(model.nv)
    for _ in range(3):
        q = random_q(model, rng)
        qdd = rng.normal(size=model.nv)
        M = rbd.mass_matrix(model, q)
        assert M.shape == (model.nv, model.nv)
        np.testing.assert_array_equal(M, M.T)
        assert np.linalg.eigvalsh(M)[0] > 0.0
        assert_close(M @ qdd, rbd.rnea(model, q, zero, qdd) - rbd.gravity_torques(model, q),
                     'M qdd')


@pytest.mark.parametrize('path', PATHS)
@pytest.mark.parametrize('name', sorted(MODELS))
def test_coriolis_matrix(name, path):
    model = make(name, path)
    rng = np.random.default_rng(1 + seed(name))
    zero = np.zeros(model.nv)
    h = 1e-6
    for _ in range(3):
        q = random_q(model, rng)
        qd = rng.normal(size=model.nv)
        C = rbd.coriolis_matrix(model, q, qd)
        assert_close(C @ qd, rbd.rnea(model, q, qd, zero) - rbd.gravity_torques(model, q),
                     'C qd')
        # Mdot = sum_k dM/dq_k qd_k (every coordinate here is a velocity's integral)
        Mdot = (rbd.mass_matrix(model, q + h * qd) - rbd.mass_matrix(model, q - h * qd)) / (2 * h)
        assert_close(C + C.T, Mdot, 'C + C^T', tol=1e-7)


@pytest.mark.parametrize('path', PATHS)
@pytest.mark.parametrize('name', sorted(MODELS))
def test_jacobian(name, path):
    model = make(name, path)
    rng = np.random.default_rng(2 + seed(name))
    h = 1e-6
    links = [model.body_links[0], model.body_links[-1]] + checked_links(model)
    for _ in range(2):
        q = random_q(model, rng)
        qd = rng.normal(size=model.nv)
        for name_ in dict.fromkeys(links):
            J = rbd.jacobian(model, q, name_)
            J_local = rbd.jacobian(model, q, name_, frame='local')
            p0, R0 = link_pose(model, q - h * qd, name_)
            p1, R1 = link_pose(model, q + h * qd, name_)
            p, R = link_pose(model, q, name_)
            omega_x = (R1 - R0) / (2 * h) @ R.T
            omega = np.array([omega_x[2, 1], omega_x[0, 2], omega_x[1, 0]])
            assert_close(J @ qd, np.concatenate(((p1 - p0) / (2 * h), omega)), name_, tol=1e-7)
            assert_close(J_local, np.kron(np.eye(2), R.T) @ J, name_)
            # a wrench on the link: tau = -J_local^T w (applied on it by the environment)
            w = rng.normal(size=6)
            assert_close(rbd.gravity_torques(model, q, {name_: w}) - rbd.gravity_torques(model, q),
                         -J_local.T @ w, 'wrench on %s' % name_)


@pytest.mark.parametrize('path', PATHS)
@pytest.mark.parametrize('name', sorted(MODELS))
def test_regressor(name, path):
    model = make(name, path)
    rng = np.random.default_rng(3 + seed(name))
    other = load_text(reweighted(MODELS[name], rng), compiled=path == 'compiled')
    pi, pi_other = model.inertial_parameters(), other.inertial_parameters()
    assert pi.shape == (10 * model.nb,) and rel_error(pi_other, pi) > 1e-2
    for _ in range(3):
        q = random_q(model, rng)
        qd, qdd = rng.normal(size=(2, model.nv))
        Y = rbd.regressor(model, q, qd, qdd)
        assert Y.shape == (model.nv, 10 * model.nb)
        assert_close(Y @ pi, rbd.rnea(model, q, qd, qdd), 'Y pi')
        assert_close(Y @ pi_other, rbd.rnea(other, q, qd, qdd), 'Y pi of other inertias')
        np.testing.assert_array_equal(Y, rbd.regressor(other, q, qd, qdd))


def test_inertial_parameters_of_a_body():
    """The pendulum-like first body of the two-link arm: about the joint, not the com."""
    m1, lc1, i1 = 1.7, 0.3, 0.04
    model = rbd.Model.from_urdf(two_link(m1, 1.1, 0.55, lc1, 0.22, i1, 0.02))
    assert model.body_links == ('upper', 'fore')
    pi = model.inertial_parameters()[:10]
    np.testing.assert_allclose(pi, [m1, m1 * lc1, 0, 0, 0.03, 0, 0, i1 + 0.02 + m1 * lc1 ** 2,
                                    0, i1 + m1 * lc1 ** 2], rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize('path', PATHS)
def test_two_link_closed_form(path):
    params = (1.7, 1.1, 0.55, 0.3, 0.22, 0.04, 0.02)
    model = on_path(rbd.Model.from_urdf(two_link(*params), gravity=(0, -9.81, 0)), path)
    rng = np.random.default_rng(7)
    m1, m2, l1 = params[:3]
    for q, qd, qdd in rng.uniform(-3, 3, (20, 3, 2)):
        mass, coriolis, gravity = two_link_terms(params, q, qd)
        np.testing.assert_allclose(rbd.mass_matrix(model, q), mass, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(rbd.coriolis_matrix(model, q, qd), coriolis, rtol=1e-12,
                                   atol=1e-12)
        Y = rbd.regressor(model, q, qd, qdd)
        np.testing.assert_allclose(Y @ model.inertial_parameters(),
                                   mass @ qdd + coriolis @ qd + gravity, rtol=1e-12, atol=1e-12)
        # the tip of the forearm frame: p = l1 (cos q1, sin q1), planar in x-y
        J = rbd.jacobian(model, q, 'fore')
        expected = np.array([[-l1 * np.sin(q[0]), 0], [l1 * np.cos(q[0]), 0], [0, 0],
                             [0, 0], [0, 0], [1, 1]])
        np.testing.assert_allclose(J, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize('path', PATHS)
def test_a_payload_counts(path):
    model = make('planar', path)
    rng = np.random.default_rng(11)
    q = random_q(model, rng)
    qd, qdd = rng.normal(size=(2, model.nv))
    M0 = rbd.mass_matrix(model, q)
    pi0 = model.inertial_parameters()
    model.set_payload('tool_link', 2.0, com=(0.05, 0.0, 0.1), inertia=(0.01, 0, 0, 0.02, 0, 0.01))
    M = rbd.mass_matrix(model, q)
    pi = model.inertial_parameters()
    assert rel_error(M, M0) > 1e-2 and rel_error(pi, pi0) > 1e-2
    zero = np.zeros(model.nv)
    assert_close(M @ qdd, rbd.rnea(model, q, zero, qdd) - rbd.gravity_torques(model, q), 'M')
    C = rbd.coriolis_matrix(model, q, qd)
    assert_close(C @ qd, rbd.rnea(model, q, qd, zero) - rbd.gravity_torques(model, q), 'C')
    assert_close(rbd.regressor(model, q, qd, qdd) @ pi, rbd.rnea(model, q, qd, qdd), 'Y pi')
    model.clear_payloads()
    np.testing.assert_array_equal(rbd.mass_matrix(model, q), M0)
    np.testing.assert_array_equal(model.inertial_parameters(), pi0)


def all_terms(model, q, qd, qdd, name):
    return (rbd.mass_matrix(model, q), rbd.coriolis_matrix(model, q, qd),
            rbd.jacobian(model, q, name), rbd.jacobian(model, q, name, 'local'),
            rbd.regressor(model, q, qd, qdd))


@pytest.mark.parametrize('path', PATHS)
@pytest.mark.parametrize('name', sorted(MODELS))
def test_batches_equal_loops(name, path):
    model = make(name, path)
    rng = np.random.default_rng(4)
    q = np.array([random_q(model, rng) for _ in range(6)]).reshape(2, 3, model.nq)
    qd, qdd = rng.normal(size=(2, 2, 3, model.nv))
    link_name = model.body_links[-1]
    batch = all_terms(model, q, qd, qdd, link_name)
    for term in batch:
        assert term.shape[:2] == (2, 3)
    for s in np.ndindex(2, 3):
        for one, many in zip(all_terms(model, q[s], qd[s], qdd[s], link_name), batch):
            np.testing.assert_allclose(many[s], one, rtol=1e-14, atol=1e-14)
    # one q for many velocities broadcasts like rnea
    C = rbd.coriolis_matrix(model, q[0, 0], qd.reshape(6, -1))
    assert C.shape == (6, model.nv, model.nv)
    np.testing.assert_allclose(C[4], rbd.coriolis_matrix(model, q[0, 0], qd[1, 1]), rtol=1e-14,
                               atol=1e-14)


@pytest.mark.parametrize('path', PATHS)
def test_a_nan_stays_in_its_row(path):
    model = make('two_link', path)
    q = np.array([[0.1, 0.2], [np.nan, np.nan], [0.4, -0.5]])
    qd = np.ones((3, 2))
    for term in all_terms(model, q, qd, qd, 'fore'):
        assert np.isnan(term[1]).any()
        assert np.isfinite(term[[0, 2]]).all()
    # a NaN velocity or acceleration: only its row too
    qd[1] = np.nan
    for term in (rbd.coriolis_matrix(model, q[[0, 0, 2]], qd),
                 rbd.regressor(model, q[[0, 0, 2]], qd, np.ones((3, 2)))):
        assert np.isnan(term[1]).any()
        assert np.isfinite(term[[0, 2]]).all()


@pytest.mark.parametrize('path', PATHS)
def test_results_into_out(path):
    """``out=`` receives the result, single states and batches, and is what is returned."""
    model = make('planar', path)
    rng = np.random.default_rng(9)
    q = np.array([random_q(model, rng) for _ in range(4)]).reshape(2, 2, model.nq)
    qd, qdd = rng.normal(size=(2, 2, 2, model.nv))
    nv, width = model.nv, 10 * model.nb
    calls = ((rbd.mass_matrix, (q,), (nv, nv)), (rbd.coriolis_matrix, (q, qd), (nv, nv)),
             (rbd.jacobian, (q, 'tool_link', 'local'), (6, nv)),
             (rbd.regressor, (q, qd, qdd), (nv, width)))
    for function, args, shape in calls:
        expected = function(model, *args)
        out = np.full((2, 2) + shape, np.nan)
        assert function(model, *args, out=out) is out
        np.testing.assert_array_equal(out, expected)
        single = np.full(shape, np.nan)
        state = tuple(a[1, 0] if isinstance(a, np.ndarray) else a for a in args)
        assert function(model, *state, out=single) is single
        np.testing.assert_allclose(single, expected[1, 0], rtol=1e-14, atol=1e-14)
        for wrong in (np.empty(shape[::-1] if shape[0] != shape[1] else (nv, nv + 1)),
                      np.empty(shape, dtype=np.float32), np.empty((2,) + shape)[:, 0],
                      [[0.0] * shape[1]] * shape[0]):
            with pytest.raises(ValueError, match=r'out must be a writable C-contiguous float64 '
                                                 r'array of shape \(%d, %d\)' % shape):
                function(model, *state, out=wrong)
        frozen = np.empty(shape)
        frozen.setflags(write=False)
        with pytest.raises(ValueError, match='out must be a writable'):
            function(model, *state, out=frozen)


@pytest.mark.parametrize('path', PATHS)
def test_bad_input(path):
    model = make('two_link', path)
    q = np.zeros(2)
    with pytest.raises(ValueError, match='q has 3 entries, model expects 2'):
        rbd.mass_matrix(model, np.zeros(3))
    with pytest.raises(ValueError, match='qd has 1 entries, model expects 2'):
        rbd.coriolis_matrix(model, q, [0.0])
    with pytest.raises(ValueError, match='q has a scalar, model expects 2'):
        rbd.jacobian(model, 0.0, 'fore')
    with pytest.raises(ValueError, match='qdd has 4 entries, model expects 2'):
        rbd.regressor(model, q, q, np.zeros(4))
    with pytest.raises(ValueError, match='do not broadcast'):
        rbd.regressor(model, np.zeros((2, 2)), np.zeros((3, 2)), q)
    with pytest.raises(KeyError, match="unknown link 'hand'.*base, upper, fore"):
        rbd.jacobian(model, q, 'hand')
    with pytest.raises(ValueError, match="frame 'body' is not one of 'world', 'local'"):
        rbd.jacobian(model, q, 'fore', frame='body')
