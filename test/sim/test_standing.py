"""
The floating MuJoCo model of a humanoid has the library's floating-base dynamics.

MuJoCo's inverse dynamics (no contacts) of the G1 on a free joint equals ``rnea`` of the model
built with ``floating_base=True``, the free joint's linear velocity, acceleration and force
taken from the world's axes to the base's; and its simulated IMU, moved to the base by the
library, gives the base's true motion.
"""

import warnings

import numpy as np
import pytest

mujoco = pytest.importorskip('mujoco')

import rbd_dynamics as rbd  # noqa: E402
from rbd_dynamics.floating import base_motion_from_imu, floating_inverse_dynamics  # noqa: E402
from rbd_dynamics.sim import mujoco_model  # noqa: E402
from rbd_dynamics.sim.standing import Standing  # noqa: E402
from rbd_dynamics.spatial import quaternion_to_matrix  # noqa: E402
from support.robots import robots_directory  # noqa: E402

ROOT = robots_directory()
pytestmark = pytest.mark.skipif(ROOT is None, reason='example-robot-data is not installed')
FEET = ('left_ankle_roll_link', 'right_ankle_roll_link')
SOLE = ((0.035, 0.0, -0.03), (0.085, 0.03, 0.005))


@pytest.fixture(scope='module')
def g1():
    with open('%s/g1_description/urdf/g1_29dof_rev_1_0.urdf' % ROOT) as stream:
        text = stream.read()
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', rbd.DescriptionWarning)
        return text, rbd.Model.from_urdf(text, floating_base=True)


def test_floating_inverse_dynamics_agree(g1):
    text, model = g1
    sim, mimic = mujoco_model.load(text, floating=True)
    names = [mujoco.mj_id2name(sim, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(sim.njnt)]
    assert mimic == {} and names == list(model.joint_names)
    data = mujoco.MjData(sim)
    rng = np.random.default_rng(0)
    for _ in range(5):
        q = rng.uniform(-1.0, 1.0, model.nq)
        q[3:7] /= np.linalg.norm(q[3:7])
        qd, qdd = rng.uniform(-1.0, 1.0, (2, model.nv))
        R = quaternion_to_matrix(q[3:7])  # base to world
        data.qpos[:] = np.concatenate((q[:3], np.roll(q[3:7], 1), q[7:]))
        data.qvel[:] = np.concatenate((R @ qd[:3], qd[3:]))
        data.qacc[:] = np.concatenate((R @ (qdd[:3] + np.cross(qd[3:6], qd[:3])), qdd[3:]))
        mujoco.mj_inverse(sim, data)
        found = data.qfrc_inverse.copy()
        found[:3] = R.T @ found[:3]
        np.testing.assert_allclose(found, rbd.rnea(model, q, qd, qdd), rtol=0, atol=1e-9)


def test_the_fixed_base_model_is_unchanged(g1):
    text, _ = g1
    assert mujoco_model.mjcf_from_urdf(text) == mujoco_model.mjcf_from_urdf(text, floating=False)
    assert 'freejoint' not in mujoco_model.mjcf_from_urdf(text)[0]


def test_the_imu_and_the_feet_sensors_read_the_librarys_motion(g1):
    text, model = g1
    joints = model.joint_names[1:]
    sim = Standing(text, joints, FEET, SOLE, {name: (0.0, 0.0) for name in joints},
                   imu_link='imu_in_pelvis', ft_links=FEET)
    m, d = sim.mj_model, sim.data
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    rng = np.random.default_rng(3)
    quaternion = rng.normal(size=4)
    d.qpos[:7] = np.concatenate(([0.1, 0.2, 1.5], quaternion / np.linalg.norm(quaternion)))
    d.qpos[sim.qpos] = rng.uniform(-0.5, 0.5, len(joints))
    d.qvel[:] = rng.uniform(-1.0, 1.0, m.nv)
    tau = rng.uniform(-5.0, 5.0, len(joints))
    d.qfrc_applied[sim.dofs] = tau
    mujoco.mj_forward(m, d)
    q, qd = sim.joint_state()
    qdd = d.qacc[sim.dofs]
    motion = base_motion_from_imu(model, q, qd, qdd, 'imu_in_pelvis', *sim.imu()[:2],
                                  d.qacc[3:6], sim.imu()[2])
    R = quaternion_to_matrix(sim.base_pose()[1])
    np.testing.assert_allclose(motion.angular_velocity, d.qvel[3:6], atol=1e-10)
    np.testing.assert_allclose(motion.proper_acceleration, R.T @ (d.qacc[:3] - m.opt.gravity),
                               atol=1e-9)
    # free-floating: the torques applied, and no wrench needed from outside
    result = floating_inverse_dynamics(model, q, qd, qdd, motion)
    np.testing.assert_allclose(result.torques, tau, atol=1e-9)
    np.testing.assert_allclose(result.base_wrench, 0.0, atol=1e-9)
    # a foot's sensor without contact: minus the wrench that moves the foot
    qf = np.concatenate(([0.0] * 6 + [1.0], q))
    vf = np.concatenate((motion.angular_velocity * 0.0, motion.angular_velocity, qd))
    af = np.concatenate((motion.proper_acceleration + model.gravity, d.qacc[3:6], qdd))
    for foot in FEET:
        np.testing.assert_allclose(sim.wrench(foot), -rbd.payload_wrench(model, foot, qf, vf, af),
                                   atol=1e-8)
