"""
The link-frame kernels (:mod:`rbd_dynamics.compiled.frames`) equal the NumPy reference.

``link_pose`` and ``link_acceleration`` of every link (fixed-joint children and base links
included), single states and batches, on a tree with every joint type and mimic joints and on
the demo arm; an entry point refuses other sizes without writing.
"""

import numpy as np
import rbd_dynamics as rbd
from rbd_dynamics.frames import link_acceleration_reference, link_pose_reference
from support.compiled import load, MODELS, needs_compiled_eom, needs_numba, random_q

pytestmark = [needs_numba, needs_compiled_eom]


def _check(model, rng, states=3):
    q = random_q(model, rng, (states,))
    qd, qdd = rng.normal(size=(2, states, model.nv))
    for link in model.link_names:
        pose = link_pose_reference(model, q, link)
        acceleration = link_acceleration_reference(model, q, qd, qdd, link)
        tol = 1e-12 * max(1.0, np.abs(acceleration).max())
        np.testing.assert_allclose(rbd.link_pose(model, q, link), pose, rtol=0, atol=1e-12,
                                   err_msg=link)
        np.testing.assert_allclose(rbd.link_acceleration(model, q, qd, qdd, link),
                                   acceleration, rtol=0, atol=tol, err_msg=link)
        for s in range(states):
            np.testing.assert_allclose(rbd.link_pose(model, q[s], link), pose[s], rtol=0,
                                       atol=1e-12, err_msg=link)
            np.testing.assert_allclose(rbd.link_acceleration(model, q[s], qd[s], qdd[s], link),
                                       acceleration[s], rtol=0, atol=tol, err_msg=link)


def test_every_joint_type_and_link(code_model):
    _check(code_model, np.random.default_rng(21))


def test_the_demo_arm():
    _check(load(MODELS['demo_arm']), np.random.default_rng(22))


def test_entry_points_refuse_other_sizes(code_model):
    from rbd_dynamics.compiled import frames, layout
    packed = code_model.packed
    q = random_q(code_model, np.random.default_rng(23))
    v = np.zeros(code_model.nv)
    rbd.link_pose(code_model, q, 'tip')  # the kernels compile at first use
    links = len(code_model.link_names)
    for call, out in ((lambda o: frames.pose1(packed.blob, q, links, o), np.full((4, 4), 7.0)),
                      (lambda o: frames.pose1(packed.blob, q[:-1], 0, o), np.full((4, 4), 7.0)),
                      (lambda o: frames.pose1(packed.blob, q, 0, o), np.full((3, 4), 7.0)),
                      (lambda o: frames.acceleration1(packed.blob, q, v[:-1], v, 0, o),
                       np.full(6, 7.0)),
                      (lambda o: frames.acceleration1(packed.blob, q, v, v, 0, o),
                       np.full(5, 7.0))):
        assert call(out) == layout.BAD_SIZES
        assert np.all(out == 7.0)


def test_single_states_and_batches_take_the_compiled_path(code_model, monkeypatch):
    """The NumPy references are never called: both paths give the same numbers, only this tells."""
    from rbd_dynamics import frames
    rng = np.random.default_rng(24)
    q = random_q(code_model, rng, (3,))
    qd, qdd = rng.normal(size=(2, 3, code_model.nv))
    expected = (link_pose_reference(code_model, q, 'tip'),
                link_acceleration_reference(code_model, q, qd, qdd, 'tip'))

    def reference(*args):
        raise AssertionError('the NumPy path was taken')

    monkeypatch.setattr(frames, 'link_pose_reference', reference)
    monkeypatch.setattr(frames, 'link_acceleration_reference', reference)
    np.testing.assert_allclose(rbd.link_pose(code_model, q, 'tip'), expected[0], atol=1e-12)
    np.testing.assert_allclose(rbd.link_pose(code_model, q[1], 'tip'), expected[0][1],
                               atol=1e-12)
    tol = 1e-12 * max(1.0, np.abs(expected[1]).max())
    np.testing.assert_allclose(rbd.link_acceleration(code_model, q, qd, qdd, 'tip'),
                               expected[1], atol=tol)
    np.testing.assert_allclose(rbd.link_acceleration(code_model, q[2], qd[2], qdd[2], 'tip'),
                               expected[1][2], atol=tol)
