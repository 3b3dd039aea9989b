"""
The floating base: ``floating_base=True`` and its inverse dynamics, against Pinocchio.

On a humanoid (G1), a quadruped (Go2) and an arm on a moving base (Panda), both paths: the
model with a free joint equals Pinocchio's free flyer; the joint torques from a base motion
(angular velocity and acceleration, proper acceleration) equal Pinocchio's ``rnea`` at that
state with the sensors' wrenches; contact wrenches found by the minimum-norm split balance the
base (checked with Pinocchio's ``rnea`` with those wrenches, whose base rows must vanish), and a
single foot's wrench equals the one Pinocchio's foot Jacobian gives; an IMU two joints away
from the base gives the base's own motion back.
"""

import functools
import os
import warnings

import numpy as np
import pytest
import rbd_dynamics as rbd
from rbd_dynamics.floating import base_at_rest, base_motion_from_imu, BaseMotion, \
    floating_inverse_dynamics
from rbd_dynamics.spatial import quaternion_to_matrix
from support.robots import FLOATING_JOINT, floating_urdf, PinocchioPair, robots_directory, \
    WORLD_LINK

pin = pytest.importorskip('pinocchio')
ROOT = robots_directory()
pytestmark = pytest.mark.skipif(ROOT is None, reason='example-robot-data is not installed')

TOL = 1e-9
GRAVITY = np.array([0.0, 0.0, -9.81])
# robot: (description, feet, a link two joints or more from the base, links no foot follows)
ROBOTS = {
    'g1': ('g1_description/urdf/g1_29dof_rev_1_0.urdf',
           ('left_ankle_roll_link', 'right_ankle_roll_link'), 'torso_link',
           ('left_shoulder_pitch_joint', 'right_wrist_yaw_joint')),
    'go2': ('go2_description/urdf/go2.urdf', ('FL_foot', 'FR_foot', 'RL_foot', 'RR_foot'),
            'FL_calf', ()),
    'panda': ('panda_description/urdf/panda.urdf', ('panda_link0',), 'panda_link3', ()),
}


def _ids(param):
    return '%s-%s' % (param[0], 'compiled' if param[1] else 'numpy')


PATHS = [(name, compiled) for name in ROBOTS for compiled in (False, True)]


@functools.lru_cache(maxsize=None)
def _build(name, compiled):
    rel, feet, imu_link, upper = ROBOTS[name]
    path = os.path.join(ROOT, rel)
    pair = PinocchioPair(path, pin, floating=True, gravity=GRAVITY)
    with open(path) as stream:
        xml = stream.read()
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', rbd.DescriptionWarning)
        model = rbd.Model.from_urdf(xml, floating_base=True, compiled=compiled)
    return name, model, pair, feet, imu_link, upper


@pytest.fixture(params=PATHS, ids=_ids)
def robot(request):
    return _build(*request.param)


@pytest.fixture(params=[p for p in PATHS if len(ROBOTS[p[0]][1]) > 1], ids=_ids)
def legged(request):
    return _build(*request.param)


def random_state(pair, rng):
    q = pair.random_q(rng)
    qd, qdd = rng.normal(size=(2, pair.model.nv))
    return q, qd, qdd


def motion_of(q, qd, qdd):
    """Return the base's :class:`BaseMotion` at a full floating state (Pinocchio's layout)."""
    R = quaternion_to_matrix(q[3:7])
    v, w = qd[:3], qd[3:6]
    proper = qdd[:3] + np.cross(w, v) - R.T @ GRAVITY  # classical acceleration minus gravity
    return BaseMotion(q[3:7], w, qdd[3:6], proper)


def test_the_free_joint_is_pinocchios_free_flyer(robot):
    _, model, pair, _, _, _ = robot
    assert model.base_joint == FLOATING_JOINT and model.joint_types[0] == 'floating'
    assert model.root_link == WORLD_LINK and model.base_link == pair.model.body_links[0]
    assert model.joint_names == pair.model.joint_names
    rng = np.random.default_rng(1)
    for _ in range(3):
        q, qd, qdd = random_state(pair, rng)
        np.testing.assert_allclose(rbd.rnea(model, q, qd, qdd), pair.rnea(q, qd, qdd),
                                   rtol=0, atol=TOL)


def test_torques_from_the_base_motion_with_sensor_wrenches(robot):
    """Joint torques and the unbalanced wrench equal Pinocchio's rnea rows, wrenches included."""
    _, model, pair, feet, _, _ = robot
    rng = np.random.default_rng(2)
    for _ in range(3):
        q, qd, qdd = random_state(pair, rng)
        f_ext = {foot: rng.normal(scale=20.0, size=6) for foot in feet}
        result = floating_inverse_dynamics(model, q[7:], qd[6:], qdd[6:],
                                           motion_of(q, qd, qdd), f_ext)
        alone = pair.rnea(q, qd, qdd)
        loaded = pair.rnea(q, qd, qdd, f_ext)
        np.testing.assert_allclose(result.base_wrench, alone[:6], rtol=0, atol=TOL)
        np.testing.assert_allclose(result.torques, loaded[6:], rtol=0, atol=TOL)
        np.testing.assert_allclose(result.unbalanced, loaded[:6], rtol=0, atol=TOL)
        assert result.contact_wrenches == {}


def test_one_foot_carries_the_base_exactly(robot):
    """One surface contact: the wrench Pinocchio's foot Jacobian gives; the base balanced."""
    _, model, pair, feet, _, _ = robot
    rng = np.random.default_rng(3)
    q, qd, qdd = random_state(pair, rng)
    foot = feet[0]
    result = floating_inverse_dynamics(model, q[7:], qd[6:], qdd[6:], motion_of(q, qd, qdd),
                                       contacts=[foot])
    lam = result.contact_wrenches[foot]
    pm, pd = pair.pin_model, pair.pin_data
    pq, _, _ = pair.pin_state(q, qd, qdd)
    J = pin.computeFrameJacobian(pm, pd, pq, pm.getFrameId(foot, pin.BODY), pin.LOCAL)
    expected = np.linalg.solve(J[:, :6].T, pair.rnea(q, qd, qdd)[:6])
    np.testing.assert_allclose(lam, expected, rtol=1e-9, atol=1e-8)
    balanced = pair.rnea(q, qd, qdd, {foot: lam})
    np.testing.assert_allclose(balanced[:6], 0.0, atol=1e-8)
    np.testing.assert_allclose(result.torques, balanced[6:], rtol=0, atol=1e-8)
    np.testing.assert_allclose(result.unbalanced, 0.0, atol=1e-8)


def test_feet_share_the_base_and_the_upper_body_is_exact(legged):
    """Several contacts: balanced, the weights move the share, the arms do not see it."""
    _, model, pair, feet, _, upper = legged
    rng = np.random.default_rng(4)
    q, qd, qdd = random_state(pair, rng)
    base = motion_of(q, qd, qdd)
    even = floating_inverse_dynamics(model, q[7:], qd[6:], qdd[6:], base, contacts=feet)
    heavy = floating_inverse_dynamics(model, q[7:], qd[6:], qdd[6:], base, contacts=feet,
                                      weights=[10.0] + [1.0] * (len(feet) - 1))
    point = floating_inverse_dynamics(model, q[7:], qd[6:], qdd[6:], base, contacts=feet,
                                      contact_type='point')
    for result in (even, heavy):
        checked = pair.rnea(q, qd, qdd, result.contact_wrenches)
        np.testing.assert_allclose(checked[:6], 0.0, atol=1e-8)
        np.testing.assert_allclose(result.torques, checked[6:], rtol=0, atol=1e-8)
    assert (np.linalg.norm(heavy.contact_wrenches[feet[0]])
            < np.linalg.norm(even.contact_wrenches[feet[0]]))
    for wrench in point.contact_wrenches.values():
        assert np.all(wrench[3:] == 0.0)
    checked = pair.rnea(q, qd, qdd, point.contact_wrenches)
    np.testing.assert_allclose(point.unbalanced, checked[:6], atol=1e-8)
    alone = pair.rnea(q, qd, qdd)
    for joint in upper:
        i = model.joint_names.index(joint) - 1  # the torques leave out the base (joint 0)
        for result in (even, heavy, point):
            assert abs(result.torques[i] - alone[i + 6]) < TOL


#: links fixed to the base's body, where an IMU usually sits
ON_THE_BASE = {'g1': 'imu_in_pelvis', 'go2': 'imu', 'panda': 'panda_link0'}


def test_an_imu_two_joints_away_gives_the_base_motion(robot):
    """IMU readings made with Pinocchio on a distal link, moved back to the base."""
    name, model, pair, _, imu_link, _ = robot
    rng = np.random.default_rng(5)
    pm, pd = pair.pin_model, pair.pin_data
    for imu_link in (imu_link, ON_THE_BASE[name], imu_link):
        q, qd, qdd = random_state(pair, rng)
        pq, pv, pa = pair.pin_state(q, qd, qdd)
        pin.forwardKinematics(pm, pd, pq, pv, pa)
        pin.updateFramePlacements(pm, pd)
        frame = pm.getFrameId(imu_link, pin.BODY)
        R = pd.oMf[frame].rotation
        omega = pin.getFrameVelocity(pm, pd, frame, pin.LOCAL).angular
        alpha = pin.getFrameAcceleration(pm, pd, frame, pin.LOCAL).angular
        linear = pin.getFrameClassicalAcceleration(pm, pd, frame, pin.LOCAL).linear
        proper = linear - R.T @ GRAVITY
        quat = pin.Quaternion(R).coeffs()
        found = base_motion_from_imu(model, q[7:], qd[6:], qdd[6:], imu_link, quat, omega,
                                     alpha, proper)
        expected = motion_of(q, qd, qdd)
        np.testing.assert_allclose(quaternion_to_matrix(found.orientation),
                                   quaternion_to_matrix(expected.orientation), atol=1e-12)
        for got, want in zip(found[1:], expected[1:]):
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-10)
        result = floating_inverse_dynamics(model, q[7:], qd[6:], qdd[6:], found)
        np.testing.assert_allclose(result.torques, pair.rnea(q, qd, qdd)[6:], rtol=0,
                                   atol=TOL)


def test_a_base_at_rest_is_held_against_gravity(robot):
    """base_at_rest: Pinocchio's generalized gravity at that orientation."""
    _, model, pair, _, _, _ = robot
    rng = np.random.default_rng(6)
    q = pair.random_q(rng)
    zero = np.zeros(model.nv - 6)
    result = floating_inverse_dynamics(model, q[7:], zero, zero, base_at_rest(q[3:7]))
    gravity = pair.gravity(q)
    np.testing.assert_allclose(result.torques, gravity[6:], rtol=0, atol=TOL)
    np.testing.assert_allclose(result.base_wrench, gravity[:6], rtol=0, atol=TOL)


def test_a_floating_joint_of_the_description_is_used_as_it_is():
    path = os.path.join(ROOT, ROBOTS['go2'][0])
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', rbd.DescriptionWarning)
        own = rbd.Model.from_urdf(floating_urdf(path), floating_base=True, compiled=False)
        added = rbd.Model.from_urdf_file(path, floating_base=True, compiled=False)
        below = rbd.Model.from_urdf(floating_urdf(path), root_link=added.base_link,
                                    floating_base=True, compiled=False)
        moved = floating_urdf(path).replace('<parent link="world" />',
                                            '<origin xyz="0 0 1" /><parent link="world" />')
    for model in (own, below):
        assert model.joint_names == added.joint_names and model.nq == added.nq
        assert (model.base_joint, model.base_link) == (added.base_joint, added.base_link)
    assert moved != floating_urdf(path)
    with pytest.raises(rbd.UrdfError, match='origin'):
        rbd.Model.from_urdf(moved, floating_base=True, compiled=False)


def test_what_the_floating_dynamics_refuse():
    name, model, pair, feet, _, _ = _build('go2', False)
    fixed = pair.model.__class__.from_urdf_file(os.path.join(ROOT, ROBOTS['go2'][0]),
                                                compiled=False)
    zero = np.zeros(model.nv - 6)
    base = base_at_rest([0.0, 0.0, 0.0, 1.0])
    with pytest.raises(ValueError, match='fixed base'):
        floating_inverse_dynamics(fixed, zero, zero, zero, base)
    with pytest.raises(ValueError, match='one of surface, point'):
        floating_inverse_dynamics(model, zero, zero, zero, base, contacts=feet,
                                  contact_type='line')
    for weights in ([1.0], [1.0, 1.0, 1.0, -1.0], [1.0, 1.0, np.nan, 1.0]):
        with pytest.raises(ValueError, match='4 positive numbers'):
            floating_inverse_dynamics(model, zero, zero, zero, base, contacts=feet,
                                      weights=weights)
