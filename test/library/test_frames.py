"""
``link_pose`` and ``link_acceleration`` against Pinocchio, on the real descriptions.

Pinocchio's ``updateFramePlacements`` (``oMf``) and ``getFrameClassicalAcceleration`` with
``LOCAL_WORLD_ALIGNED`` after ``forwardKinematics(q, v, a)``, for every link both models have
(fixed-joint children and mimic joints included), single states and batches; and the algebra
that ties the acceleration to the Jacobian: ``a(q, qd, qdd) - a(q, qd, 0) = J(q) qdd``.
"""

import os

import numpy as np
import pytest
import rbd_dynamics as rbd
from support.robots import CROSS_CHECK, PinocchioPair, robot_id, robots_directory

pin = pytest.importorskip('pinocchio')
ROOT = robots_directory()
pytestmark = pytest.mark.skipif(ROOT is None, reason='example-robot-data is not installed')

#: The descriptions of the comparison: arms with mimic fingers, a humanoid, a mobile
#: manipulator with fixed-joint children everywhere.
ROBOTS = [rel for rel in CROSS_CHECK if any(name in rel for name in (
    'panda.urdf', 'ur10_robot', 'xarm7', 'talos_reduced', 'tiago_dual', 'kinova'))]


@pytest.fixture(scope='module', params=ROBOTS, ids=robot_id)
def pair(request):
    return PinocchioPair(os.path.join(ROOT, request.param), pin)


def _states(pair, rng, count):
    model = pair.model
    q = rng.uniform(-1.2, 1.2, (count, model.nq))
    qd, qdd = rng.normal(size=(2, count, model.nv))
    return q, qd, qdd


def test_the_robots_are_found():
    assert len(ROBOTS) >= 4, ROBOTS


def test_pose_and_acceleration_equal_pinocchio(pair):
    model, pm, pd = pair.model, pair.pin_model, pair.pin_data
    links = [link for link in model.link_names if pm.existFrame(link)]
    assert len(links) >= 0.9 * len(model.link_names)
    q, qd, qdd = _states(pair, np.random.default_rng(sum(map(ord, pair.path))), 3)
    poses = {link: rbd.link_pose(model, q, link) for link in links}
    accelerations = {link: rbd.link_acceleration(model, q, qd, qdd, link) for link in links}
    for s in range(len(q)):
        pin.forwardKinematics(pm, pd, *pair.pin_state(q[s], qd[s], qdd[s]))
        pin.updateFramePlacements(pm, pd)
        for link in links:
            fid = pm.getFrameId(link)
            T = pd.oMf[fid].homogeneous
            np.testing.assert_allclose(poses[link][s], T, rtol=0, atol=1e-12, err_msg=link)
            np.testing.assert_allclose(rbd.link_pose(model, q[s], link), T, rtol=0,
                                       atol=1e-12, err_msg=link)
            a = pin.getFrameClassicalAcceleration(pm, pd, fid, pin.LOCAL_WORLD_ALIGNED)
            expected = np.concatenate((a.linear, a.angular))
            tol = 1e-12 * max(1.0, np.abs(expected).max())
            np.testing.assert_allclose(accelerations[link][s], expected, rtol=0, atol=tol,
                                       err_msg=link)
            np.testing.assert_allclose(rbd.link_acceleration(model, q[s], qd[s], qdd[s], link),
                                       expected, rtol=0, atol=tol, err_msg=link)


def test_acceleration_is_the_jacobian_times_qdd_plus_jdot_qd(pair):
    model = pair.model
    link = model.link_names[-1]
    q, qd, qdd = _states(pair, np.random.default_rng(3), 4)
    full = rbd.link_acceleration(model, q, qd, qdd, link)
    bias = rbd.link_acceleration(model, q, qd, np.zeros_like(qdd), link)
    J = rbd.jacobian(model, q, link)
    np.testing.assert_allclose(full - bias, np.einsum('bij,bj->bi', J, qdd), rtol=0,
                               atol=1e-10 * max(1.0, np.abs(full).max()))
    # at rest, only qdd: J qdd
    np.testing.assert_allclose(rbd.link_acceleration(model, q, 0 * qd, qdd, link),
                               np.einsum('bij,bj->bi', J, qdd), rtol=0, atol=1e-10)


def test_batch_shapes_and_bad_input():
    from rbd_dynamics.resources import demo_urdf_path
    model = rbd.Model.from_urdf_file(demo_urdf_path())
    q = np.zeros((2, 3, model.nq))
    assert rbd.link_pose(model, q, 'ft_frame').shape == (2, 3, 4, 4)
    assert rbd.link_acceleration(model, q, np.zeros(model.nv), np.zeros(model.nv),
                                 'ft_frame').shape == (2, 3, 6)
    with pytest.raises(rbd.UnknownLinkError):
        rbd.link_pose(model, np.zeros(model.nq), 'no_such_link')
    with pytest.raises(ValueError, match='model expects'):
        rbd.link_acceleration(model, np.zeros(3), np.zeros(model.nv), np.zeros(model.nv),
                              'ft_frame')
    # the root link sits at the origin, at rest whatever the joints do
    np.testing.assert_array_equal(rbd.link_pose(model, np.ones(model.nq), model.root_link),
                                  np.eye(4))
