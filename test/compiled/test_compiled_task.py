"""
The task-space law's kernel (:mod:`rbd_dynamics.compiled.task`) equals the law's NumPy path.

Both laws, with twist, acceleration, posture, armature and a measured wrench, at random states
and desired poses (rotation errors up to π included), on the demo arm, real descriptions and a
tree with every joint type and mimic joints (every link, so links moved by fewer than six joint
coordinates too); a mass matrix that is not positive definite and arrays of other sizes are
refused without a result.
"""

import numpy as np
import pytest
import rbd_dynamics as rbd
from rbd_dynamics import spatial
from rbd_dynamics.control import task
from rbd_dynamics.spatial import axis_angle_to_matrix
from support.compiled import load, MODELS, needs_compiled_eom, needs_numba, random_q, seed, \
    watch_kernel
from support.urdf_builders import inertial, joint, link as urdf_link, robot

pytestmark = [needs_numba, needs_compiled_eom]


def _numpy_path(monkeypatch, call):
    """Return ``call()`` with the law on its NumPy path."""
    with monkeypatch.context() as patch:
        patch.setattr(task, '_compiled_law', lambda *args: None)
        return call()


def _desired(model, q, link, rng):
    """Return a desired pose near, or far from, the link's pose at ``q``."""
    T = rbd.link_pose(model, q, link)
    axis = rng.normal(size=3)
    angle = rng.choice([rng.uniform(-0.3, 0.3), rng.uniform(np.pi - 0.05, np.pi)])
    R = axis_angle_to_matrix(axis / np.linalg.norm(axis), angle) @ T[:3, :3]
    return T[:3, 3] + rng.normal(scale=0.05, size=3), spatial.matrix_to_quaternion(R)


def _compare(monkeypatch, model, links, rng, states=3):
    # every case compared must have run on the kernel, not fallen back to the NumPy path
    on_kernel = watch_kernel(monkeypatch, task, '_compiled_law')
    posture_ok = model.nq == model.nv
    for link in links:
        for mode in task.MODES:
            for _ in range(states):
                q = random_q(model, rng)
                qd = rng.normal(size=model.nv)
                position, quaternion = _desired(model, q, link, rng)
                values = {'mode': mode, 'stiffness': rng.uniform(0, 900, 6),
                          'damping': rng.uniform(0, 50, 6), 'twist': rng.normal(size=6),
                          'acceleration': rng.normal(size=6),
                          'nullspace_stiffness': 4.0 if posture_ok else 0.0,
                          'posture': random_q(model, rng) if posture_ok else None,
                          'armature': rng.uniform(0, 0.2, model.nv),
                          'f_ext': {link: rng.normal(size=6)}}

                def law():
                    return task.task_torques(model, q, qd, link, position, quaternion, **values)

                compiled = law()
                assert on_kernel.pop() is True, (link, mode)
                reference = _numpy_path(monkeypatch, law)
                scale = max(1.0, np.abs(reference.torque).max())
                np.testing.assert_allclose(compiled.torque, reference.torque, rtol=0,
                                           atol=1e-10 * scale, err_msg=(link, mode))
                np.testing.assert_allclose(compiled.error, reference.error, rtol=0,
                                           atol=1e-12, err_msg=(link, mode))
                np.testing.assert_allclose(compiled.twist_error, reference.twist_error,
                                           rtol=0, atol=1e-12, err_msg=(link, mode))
                np.testing.assert_allclose(compiled.jacobian, reference.jacobian, rtol=0,
                                           atol=1e-12, err_msg=(link, mode))


def _takes_compiled_path(model, link):
    """Say whether the law of ``model`` at ``link`` runs on the kernel (not the NumPy path)."""
    q = random_q(model, np.random.default_rng(0))
    packed = model.runtime.eom_packed
    return task._compiled_law(packed, q, np.zeros(model.nv), link, np.zeros(3), np.eye(3),
                              task.law_head('operational_space', np.ones(6), np.ones(6), 0.0),
                              None, None, None, None, np.zeros(model.nv)) is not None


def test_the_demo_arm(monkeypatch):
    model = load(MODELS['demo_arm'])
    assert _takes_compiled_path(model, 'tool_center_point')
    _compare(monkeypatch, model, ('tool_center_point', 'link7', 'link2'),
             np.random.default_rng(31), states=5)


@pytest.mark.parametrize('name', ['panda', 'ur/ur10_robot', 'talos_data/talos_full_v2'])
def test_real_descriptions(monkeypatch, name):
    if name not in MODELS:
        pytest.skip('example-robot-data is not installed')
    model = load(MODELS[name])
    links = model.link_names
    assert _takes_compiled_path(model, links[-1])
    _compare(monkeypatch, model, (links[-1], links[len(links) // 2]),
             np.random.default_rng(seed(name)))


def test_every_joint_type_mimic_joints_and_every_link(monkeypatch, code_model):
    # (spherical and floating joints: no posture term; the base link has no Jacobian)
    assert _takes_compiled_path(code_model, 'tip')
    _compare(monkeypatch, code_model, code_model.link_names, np.random.default_rng(32),
             states=1)


def test_a_mass_matrix_that_is_not_positive_definite_takes_the_numpy_path(monkeypatch):
    urdf = robot('massless_tip', urdf_link('base'),
                 urdf_link('upper', inertial(1.0, (0.0, 0.0, 0.2), 0.01, 0.01, 0.01)),
                 urdf_link('tip'),
                 joint('a', 'revolute', 'base', 'upper', axis=(0, 1, 0)),
                 joint('b', 'revolute', 'upper', 'tip', xyz=(0.0, 0.0, 0.4), axis=(1, 0, 0)))
    model = rbd.Model.from_urdf(urdf)
    assert not _takes_compiled_path(model, 'tip')
    q, qd = np.array([0.3, -0.2]), np.array([0.1, -0.2])
    result = task.task_torques(model, q, qd, 'tip', [0.1, 0.0, 0.3], [0.0, 0.0, 0.0, 1.0],
                               mode='operational_space')
    reference = _numpy_path(monkeypatch, lambda: task.task_torques(
        model, q, qd, 'tip', [0.1, 0.0, 0.3], [0.0, 0.0, 0.0, 1.0], mode='operational_space'))
    np.testing.assert_array_equal(result.torque, reference.torque)
    assert np.isfinite(result.torque).all()


def test_the_kernel_refuses_other_sizes():
    from rbd_dynamics.compiled import layout
    model = load(MODELS['demo_arm'])
    assert _takes_compiled_path(model, 'link7')  # built
    packed = model.runtime.eom_packed
    nv = model.nv
    q, v = np.zeros(nv), np.zeros(nv)
    gains = np.zeros(layout.GAINS)
    gains[layout.G_MODE] = 1.0

    def arrays(**sizes):
        shapes = {'J': (6, nv), 'M': (nv, nv), 'work': (nv + layout.TASK_WORK_ROWS, 6),
                  'T': (4, 4), 'jdot': (6,), 'out': (nv + layout.TASK_OUT_EXTRA,)}
        shapes.update(sizes)
        return [np.full(shape, 7.0) for shape in shapes.values()]

    cases = [((q[:-1], v, 0, gains, v, v, v), arrays()),
             ((q, v, len(model.link_names), gains, v, v, v), arrays()),
             ((q, v, 0, gains[:-1], v, v, v), arrays()),
             ((q, v, 0, gains, v[:-1], v, v), arrays()),
             ((q, v, 0, gains, v, v, v), arrays(J=(5, nv))),
             ((q, v, 0, gains, v, v, v), arrays(work=(nv, 6))),
             ((q, v, 0, gains, v, v, v), arrays(out=(nv + 6,)))]
    for args, outs in cases:
        assert packed.task1(packed.blob, *args, *outs) == layout.BAD_SIZES
        for out in outs:
            assert np.all(out == 7.0)
