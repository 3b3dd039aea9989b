"""The MuJoCo model the simulated driver uses has the library's dynamics, and its wrist
force/torque sensor reads the library's payload wrench."""

import numpy as np
import pytest

import rbd_dynamics as rbd
from rbd_dynamics.resources import demo_urdf_path

mujoco = pytest.importorskip('mujoco')
from rbd_dynamics import mujoco_model  # noqa: E402

MIMIC = '<mimic joint="left_finger_joint" multiplier="1" offset="0"/>'


@pytest.fixture(scope='module')
def explicit():
    """The demo arm with its mimic finger made independent (MuJoCo's inverse dynamics would
    otherwise include the equality constraint's forces)."""
    with open(demo_urdf_path()) as stream:
        text = stream.read().replace(MIMIC, '')
    sim, mimic = mujoco_model.load(text, sensor_frame='ft_frame')
    assert mimic == {}
    model = rbd.Model.from_urdf(text)
    names = [mujoco.mj_id2name(sim, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(sim.njnt)]
    order = [model.joint_names.index(n) for n in names]
    return sim, model, order


def test_inverse_dynamics_agree(explicit):
    sim, model, order = explicit
    data = mujoco.MjData(sim)
    rng = np.random.default_rng(0)
    for _ in range(20):
        q, qd, qdd = rng.uniform(-1.5, 1.5, (3, model.nv))
        data.qpos[:], data.qvel[:], data.qacc[:] = q[order], qd[order], qdd[order]
        mujoco.mj_inverse(sim, data)
        np.testing.assert_allclose(data.qfrc_inverse, rbd.rnea(model, q, qd, qdd)[order],
                                   rtol=0, atol=1e-10)


def test_wrist_sensor_reads_the_payload_wrench(explicit):
    sim, model, order = explicit
    data = mujoco.MjData(sim)
    rng = np.random.default_rng(1)
    for _ in range(10):
        q, qd, qdd = rng.uniform(-1.5, 1.5, (3, model.nv))
        data.qpos[:], data.qvel[:], data.qacc[:] = q[order], qd[order], qdd[order]
        mujoco.mj_inverse(sim, data)
        mujoco.mj_rnePostConstraint(sim, data)
        mujoco.mj_sensorAcc(sim, data)
        reading = np.concatenate([data.sensor('ft_force').data, data.sensor('ft_torque').data])
        np.testing.assert_allclose(reading, rbd.payload_wrench(model, 'ft_frame', q, qd, qdd),
                                   rtol=0, atol=1e-10)


def test_mimic_becomes_an_equality_constraint():
    with open(demo_urdf_path()) as stream:
        text = stream.read().replace(MIMIC, '<mimic joint="left_finger_joint" '
                                            'multiplier="-0.5" offset="0.01"/>')
    sim, mimic = mujoco_model.load(text)
    assert mimic == {'right_finger_joint': ('left_finger_joint', -0.5, 0.01)}
    assert sim.neq == 1
    np.testing.assert_allclose(sim.eq_data[0][:2], [0.01, -0.5])


def test_unsupported_joint_type_is_refused():
    text = ('<robot name="r"><link name="a"/><link name="b"/><joint name="f" type="floating">'
            '<parent link="a"/><child link="b"/></joint></robot>')
    with pytest.raises(ValueError, match='floating'):
        mujoco_model.mjcf_from_urdf(text)
