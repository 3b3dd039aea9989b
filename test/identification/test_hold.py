"""
Held joints (:mod:`rbd_dynamics.identification.hold`): a joint fixed where it stands.

The description with a joint held must be the robot with that joint at that position: the
same torques for every other joint, on real descriptions (a UR10's revolute joints, a Panda's
fingers with their mimic joint).
"""

import os
import warnings

import numpy as np
import pytest
import rbd_dynamics as rbd
from rbd_dynamics.analysis import AnalysisError
from rbd_dynamics.identification import hold
from rbd_dynamics.spatial import matrix_to_rpy, rpy_to_matrix
from support.robots import robots_directory

ROBOTS = {'ur10': ('ur_description/urdf/ur10_robot.urdf',
                   {'elbow_joint': 1.1, 'wrist_3_joint': -0.7}),
          'panda': ('panda_description/urdf/panda.urdf', {'panda_finger_joint1': 0.03}),
          'panda wrist': ('panda_description/urdf/panda.urdf',
                          {'panda_joint4': -1.9, 'panda_joint7': 0.4})}


def _text(relative):
    root = robots_directory()
    if root is None:
        pytest.skip('example-robot-data is not installed')
    with open(os.path.join(root, relative)) as stream:
        return stream.read()


def _model(text):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', rbd.DescriptionWarning)
        return rbd.Model.from_urdf(text, compiled=False)


@pytest.mark.parametrize('robot', sorted(ROBOTS))
def test_a_held_joint_is_the_robot_with_the_joint_there(robot):
    relative, values = ROBOTS[robot]
    text = _text(relative)
    full = _model(text)
    held = _model(hold.held_description(text, values))
    assert held.nv == full.nv - len(values)
    assert not set(values) & set(held.joint_names)
    rng = np.random.default_rng(0)
    others = [full.joint_names.index(n) for n in held.joint_names]
    for _ in range(5):
        q, qd, qdd = rng.uniform(-1.0, 1.0, (3, full.nv))
        for name, value in values.items():
            j = full.joint_names.index(name)
            q[j], qd[j], qdd[j] = value, 0.0, 0.0
        tau = rbd.rnea(full, q, qd, qdd)
        tau_held = rbd.rnea(held, q[others], qd[others], qdd[others])
        np.testing.assert_allclose(tau_held, tau[others], rtol=1e-12,
                                   atol=1e-12 * np.abs(tau).max())
    # the same mass, lumped: the bodies beyond the held joints belong to their parent's
    assert held.inertial_parameters()[0::10].sum() == pytest.approx(
        full.inertial_parameters()[0::10].sum(), rel=1e-12)


def test_unknown_or_fixed_joints_cannot_be_held():
    text = _text(ROBOTS['panda'][0])
    with pytest.raises(AnalysisError, match='not a moving joint'):
        hold.held_description(text, {'panda_joint8': 0.0})  # a fixed joint
    with pytest.raises(AnalysisError, match='not a moving joint'):
        hold.held_description(text, {'no_such_joint': 0.0})


def test_rpy_round_trip():
    rng = np.random.default_rng(1)
    for rpy in np.concatenate([rng.uniform(-3, 3, (20, 3)) * [1, 0.5, 1],
                               [[0.3, np.pi / 2, 0.2], [0.0, -np.pi / 2, 1.0]]]):
        R = rpy_to_matrix(rpy)
        np.testing.assert_allclose(rpy_to_matrix(matrix_to_rpy(R)), R, atol=1e-12)


def _recorded(names, positions):
    """Joint states as :func:`hold.choose` reads them: one group of a bag."""
    from types import SimpleNamespace
    group = SimpleNamespace(names=list(names), position=np.asarray(positions, dtype=float))
    return [SimpleNamespace(groups=[group])]


def test_a_joint_given_to_hold_that_moves_is_refused_with_its_motion():
    model = _model(_text(ROBOTS['ur10'][0]))
    t = np.linspace(0.0, 10.0, 200)
    swing = 0.3 + 0.4 * np.sin(t)
    states = _recorded(model.joint_names, np.column_stack([swing] * model.nv))
    with pytest.raises(AnalysisError, match=r'holding shoulder_pan_joint at 0.3: '
                                            r'shoulder_pan_joint moves in the recordings '
                                            r'\(from -0.1 to 0.7 rad\)'):
        hold.choose(model, {}, states, {'shoulder_pan_joint': 0.3})
    # standing still, or nearly (a finger pressed by its drive): held, and how far it moved said
    still = np.column_stack([swing] + [0.3 + 0.01 * np.sin(t)] + [swing] * (model.nv - 2))
    held = hold.choose(model, {}, _recorded(model.joint_names, still),
                       {'shoulder_lift_joint': 0.3})
    assert held.values == {'shoulder_lift_joint': 0.3}
    assert held.reasons['shoulder_lift_joint'] == 'given; it moves by 20 mrad in the recordings'
    # not recorded at all: held where given
    held = hold.choose(model, {}, _recorded(model.joint_names[1:], still[:, 1:]),
                       {'shoulder_pan_joint': -0.2})
    assert held.values == {'shoulder_pan_joint': -0.2}
    assert held.reasons['shoulder_pan_joint'] == 'given'
