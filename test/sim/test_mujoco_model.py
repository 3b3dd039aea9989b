"""
The MuJoCo model of the simulated driver agrees with the library.

The MuJoCo model the simulated driver uses has the library's dynamics, and its wrist
force/torque sensor reads the library's payload wrench.
"""

import numpy as np
import pytest

mujoco = pytest.importorskip('mujoco')

import rbd_dynamics as rbd  # noqa: E402
from rbd_dynamics.resources import demo_urdf_path  # noqa: E402
from rbd_dynamics.sim import mujoco_model  # noqa: E402

MIMIC = '<mimic joint="left_finger_joint" multiplier="1" offset="0"/>'


@pytest.fixture(scope='module')
def explicit():
    """
    Make the demo arm without mimic joints.

    The demo arm with its mimic finger made independent (MuJoCo's inverse dynamics would
    otherwise include the equality constraint's forces).
    """
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


def sensed(sim, data, qpos, qvel, qacc):
    """
    Compute inverse dynamics and the wrist reading in MuJoCo.

    MuJoCo's inverse dynamics at a state (left in ``data.qfrc_inverse``) and the wrist
    sensor's reading then, ``(6,)`` force first.
    """
    data.qpos[:], data.qvel[:], data.qacc[:] = qpos, qvel, qacc
    mujoco.mj_inverse(sim, data)
    mujoco.mj_rnePostConstraint(sim, data)
    mujoco.mj_sensorAcc(sim, data)
    return np.concatenate([data.sensor('ft_force').data, data.sensor('ft_torque').data])


def test_wrist_sensor_reads_the_payload_wrench(explicit):
    sim, model, order = explicit
    data = mujoco.MjData(sim)
    rng = np.random.default_rng(1)
    for _ in range(10):
        q, qd, qdd = rng.uniform(-1.5, 1.5, (3, model.nv))
        reading = sensed(sim, data, q[order], qd[order], qdd[order])
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


def fold(sim, model, values, mimic):
    """
    Fold MuJoCo's per-joint values into the library's order.

    MuJoCo's per-joint ``values`` of the explicit demo arm in the order of ``model`` (whose
    finger has its mimic): a mimic joint's entry folded into its master's, times the
    multiplier, as the library folds torques.
    """
    names = [mujoco.mj_id2name(sim, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(sim.njnt)]
    out = np.array([values[names.index(n)] for n in model.joint_names])
    for name, (master, mult, _) in mimic.items():
        out[model.joint_names.index(master)] += mult * values[names.index(name)]
    return out


def explicit_state(sim, model, mimic, q, qd, qdd):
    """
    Map the library's state to the explicit demo arm.

    MuJoCo's ``qpos, qvel, qacc`` of the explicit demo arm for the library's state, every
    mimic joint following its master.
    """
    names = [mujoco.mj_id2name(sim, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(sim.njnt)]
    out = []
    for values, with_offset in ((q, True), (qd, False), (qdd, False)):
        state = np.zeros(len(names))
        for k, name in enumerate(names):
            if name in mimic:
                master, mult, off = mimic[name]
                state[k] = mult * values[model.joint_names.index(master)] + off * with_offset
            else:
                state[k] = values[model.joint_names.index(name)]
        out.append(state)
    return out


def test_drive_terms_agree():
    """
    Drive terms agree with MuJoCo's inverse dynamics.

    Damping on every joint (the URDF's, the mimic finger's on itself) and armature on the
    independent ones: MuJoCo's inverse dynamics equals ``rnea + drive_torques`` with the
    library's damping (the mimic's reflected onto its master), joint by joint.
    """
    with open(demo_urdf_path()) as stream:
        text = stream.read()
    model = rbd.Model.from_urdf(text)
    mimic = {'right_finger_joint': ('left_finger_joint', 1.0, 0.0)}
    armature = np.linspace(0.05, 0.4, model.nv)
    drive = {name: (model.damping[i] - (2.0 if name == 'left_finger_joint' else 0.0), 0.0,
                    armature[i]) for i, name in enumerate(model.joint_names)}
    sim, _ = mujoco_model.load(text.replace(MIMIC, ''), damping=True, drive=drive)
    assert sim.dof_damping.min() > 0.0 and sim.dof_frictionloss.max() == 0.0
    data = mujoco.MjData(sim)
    rng = np.random.default_rng(2)
    for _ in range(20):
        q, qd, qdd = rng.uniform(-1.5, 1.5, (3, model.nv))
        data.qpos[:], data.qvel[:], data.qacc[:] = explicit_state(sim, model, mimic, q, qd, qdd)
        mujoco.mj_inverse(sim, data)
        expected = rbd.rnea(model, q, qd, qdd) + rbd.drive_torques(
            qd, qdd, viscous=model.damping, armature=armature)
        np.testing.assert_allclose(fold(sim, model, data.qfrc_inverse, mimic), expected,
                                   rtol=0, atol=1e-10)
        # the drive is really in there
        assert np.abs(expected - rbd.rnea(model, q, qd, qdd)).min() > 1e-3


def test_urdf_damping_and_friction_reach_the_joints():
    with open(demo_urdf_path()) as stream:
        text = stream.read().replace('<dynamics damping="2" friction="0"/>',
                                     '<dynamics damping="2" friction="0.7"/>')
    sim, _ = mujoco_model.load(text, damping=True)
    ideal, _ = mujoco_model.load(text)
    names = [mujoco.mj_id2name(sim, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(sim.njnt)]
    finger = names.index('right_finger_joint')
    assert sim.dof_damping[finger] == 2.0 and sim.dof_frictionloss[finger] == 0.7
    assert sim.dof_damping[names.index('joint3')] == 0.5
    assert ideal.dof_damping.max() == ideal.dof_frictionloss.max() == 0.0


def test_bad_drive_is_refused():
    with open(demo_urdf_path()) as stream:
        text = stream.read()
    with pytest.raises(ValueError, match='unknown joints'):
        mujoco_model.mjcf_from_urdf(text, drive={'elbow': (1.0, 0.0, 0.0)})
    with pytest.raises(ValueError, match='joint1'):
        mujoco_model.mjcf_from_urdf(text, drive={'joint1': (1.0, -1.0, 0.0)})
    with pytest.raises(ValueError, match='payload_link'):
        mujoco_model.mjcf_from_urdf(text, payload_link='hand')


PAYLOAD = (2.0, [0.02, -0.01, 0.08], [0.01, 0.002, -0.001, 0.02, 0.003, 0.015])


@pytest.mark.parametrize('link', ['gripper_base', 'link5'])
def test_payload_agrees(link):
    """
    Payload agrees with MuJoCo's inverse dynamics.

    A payload (with products of inertia) set at run time: MuJoCo's inverse dynamics equals
    ``rnea`` with ``set_payload``, and the wrist sensor sees it when it is beyond it.
    """
    with open(demo_urdf_path()) as stream:
        text = stream.read().replace(MIMIC, '')
    sim, _ = mujoco_model.load(text, sensor_frame='ft_frame', payload_link=link)
    model = rbd.Model.from_urdf(text)
    bare = rbd.Model.from_urdf(text)
    names = [mujoco.mj_id2name(sim, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(sim.njnt)]
    order = [model.joint_names.index(n) for n in names]
    data = mujoco.MjData(sim)
    mass, com, inertia = PAYLOAD
    mujoco_model.set_payload(sim, mass, com, inertia)
    model.set_payload(link, mass, com, inertia)
    rng = np.random.default_rng(3)
    for _ in range(10):
        q, qd, qdd = rng.uniform(-1.5, 1.5, (3, model.nv))
        reading = sensed(sim, data, q[order], qd[order], qdd[order])
        np.testing.assert_allclose(data.qfrc_inverse, rbd.rnea(model, q, qd, qdd)[order],
                                   rtol=0, atol=1e-10)
        assert np.abs(rbd.rnea(bare, q, qd, qdd) - rbd.rnea(model, q, qd, qdd)).max() > 0.1
        np.testing.assert_allclose(reading, rbd.payload_wrench(model, 'ft_frame', q, qd, qdd),
                                   rtol=0, atol=1e-10)
        beyond = link == 'gripper_base'
        change = np.abs(reading - rbd.payload_wrench(bare, 'ft_frame', q, qd, qdd)).max()
        assert (change > 1.0) if beyond else (change < 1e-10)
    mujoco_model.set_payload(sim, 0.0)
    mujoco.mj_inverse(sim, data)
    np.testing.assert_allclose(data.qfrc_inverse, rbd.rnea(bare, q, qd, qdd)[order],
                               rtol=0, atol=1e-10)


def test_bad_payload_is_refused():
    with open(demo_urdf_path()) as stream:
        text = stream.read()
    sim, _ = mujoco_model.load(text, payload_link='link7')
    plain, _ = mujoco_model.load(text)
    with pytest.raises(ValueError, match='no payload body'):
        mujoco_model.set_payload(plain, 1.0)
    with pytest.raises(ValueError, match='mass'):
        mujoco_model.set_payload(sim, -1.0)
    with pytest.raises(ValueError, match='expected 6'):
        mujoco_model.set_payload(sim, 1.0, inertia=[1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match='not positive semi-definite'):
        mujoco_model.set_payload(sim, 1.0, inertia=[1.0, 0.0, 0.0, -1.0, 0.0, 1.0])
    with pytest.raises(ValueError, match='triangle inequality'):  # no body has these moments
        mujoco_model.set_payload(sim, 1.0, inertia=[1.0, 0.0, 0.0, 0.2, 0.0, 0.2])


def _two_joints(limit_a, limit_b, extra=''):
    joint = ('<joint name="%s" type="revolute"><parent link="%s"/><child link="%s"/>'
             '<axis xyz="0 0 1"/>%s</joint>')
    body = '<link name="%s"><inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" ' \
           'iyy="0.1" iyz="0" izz="0.1"/></inertial></link>'
    return ('<robot name="r"><link name="base"/>%s%s%s%s%s</robot>'
            % (body % 'a', body % 'b', joint % ('ja', 'base', 'a', limit_a),
               joint % ('jb', 'a', 'b', limit_b), extra))


def test_position_limits_come_from_the_description():
    from rbd_dynamics.parsers.urdf import parse_urdf
    text = _two_joints('<limit effort="5" velocity="1" lower="-0.5" upper="0.75"/>',
                       '<limit effort="5" velocity="1"/>')
    joints = parse_urdf(text).joints
    assert (joints['ja'].lower, joints['ja'].upper) == (-0.5, 0.75)
    assert (joints['jb'].lower, joints['jb'].upper) == (-np.inf, np.inf)
    sim, _ = mujoco_model.load(text, limits=True)
    ja = mujoco.mj_name2id(sim, mujoco.mjtObj.mjOBJ_JOINT, 'ja')
    jb = mujoco.mj_name2id(sim, mujoco.mjtObj.mjOBJ_JOINT, 'jb')
    np.testing.assert_array_equal(sim.jnt_range[ja], [-0.5, 0.75])
    assert sim.jnt_limited[ja] and not sim.jnt_limited[jb]
    with pytest.raises(rbd.UrdfError, match="joint 'ja' limit lower"):
        parse_urdf(_two_joints('<limit effort="5" velocity="1" lower="nan" upper="1"/>', ''))


def test_several_roots_are_refused():
    extra = '<link name="stray"/>'
    with pytest.raises(ValueError, match='2 root links'):
        mujoco_model.mjcf_from_urdf(_two_joints('', '', extra))


def test_hard_friction_is_coulomb_friction_while_moving_and_sticks_at_rest():
    """
    With ``hard_friction`` a joint's friction is ``-coulomb * sign(qd)`` while it moves.

    The demo arm's wrist (its lightest joint) with 2 N m of Coulomb friction, in zero gravity:
    1.5 N m applied for 0.3 s leaves it creeping at under 0.05 rad/s (MuJoCo's default soft
    friction lets it turn at over 1 rad/s); 4 N m turns it, against a friction of 2 N m.
    """
    with open(demo_urdf_path()) as stream:
        text = stream.read()
    model = rbd.Model.from_urdf(text)
    drive = {name: (0.0, 2.0 if name == 'joint7' else 0.0, 0.0) for name in model.joint_names}
    outcome = {}
    for hard in (False, True):
        sim, _ = mujoco_model.load(text, gravity=(0.0, 0.0, 0.0), drive=drive,
                                   hard_friction=hard)
        assert (sim.dof_solref[:, 0] == 0.002).any() == hard
        data = mujoco.MjData(sim)
        dof = sim.jnt_dofadr[mujoco.mj_name2id(sim, mujoco.mjtObj.mjOBJ_JOINT, 'joint7')]
        runs = []
        for torque in (1.5, 4.0):
            mujoco.mj_resetData(sim, data)
            for _ in range(300):
                data.qfrc_applied[:] = 0.0
                data.qfrc_applied[dof] = torque
                mujoco.mj_step(sim, data)
            runs.append((data.qvel[dof], data.qfrc_constraint[dof]))
        outcome[hard] = runs
    (creep, _), (speed, friction) = outcome[True]
    assert abs(creep) < 0.05 and abs(speed) > 1.0, outcome
    assert abs(friction + 2.0 * np.sign(speed)) < 0.02, outcome
    assert abs(outcome[False][0][0]) > 1.0, outcome
