"""The node's torque law without ROS: rbd_dynamics.control.law with arrays in and out."""

import math

import numpy as np
import pytest

import rbd_dynamics as rbd
from rbd_dynamics.control.config import check_lengths, Config
from rbd_dynamics.control.desired import Desired
from rbd_dynamics.control.law import Controller
from rbd_dynamics.control.sensors import Sensor
from rbd_dynamics.control.setup import first_over_limit, Setup

NS = 1_000_000_000


def _desired(model, qdd, q=None, qd=None):
    return Desired(np.asarray(qdd, float), None if q is None else np.asarray(q, float),
                   None if qd is None else np.asarray(qd, float), np.ones(model.nv, bool))


def test_setup_orders_and_defaults(model):
    joints = list(reversed(model.joint_names))
    setup = Setup(model, Config(joints=joints, kp=list(range(8)), **{'limits.effort': [0.0] * 8}))
    assert setup.joints == tuple(joints)
    # gains in model order; effort limit 0 is unlimited; drive defaults from the URDF
    assert setup.kp.tolist() == list(range(8))[::-1]
    assert np.isinf(setup.effort_limits).all() and not setup.limited
    np.testing.assert_array_equal(setup.viscous, model.damping)
    np.testing.assert_array_equal(setup.coulomb, model.friction)
    assert not setup.armature.any()
    tau = np.arange(8.0)
    assert setup.to_outputs(tau).tolist() == list(range(8))[::-1]
    default = Setup(model, Config())
    np.testing.assert_array_equal(default.effort_limits, model.effort_limits)


@pytest.mark.parametrize('config, word', [
    (Config(joints=['joint1', 'nope']), 'nope'),
    (Config(joints=['joint1', 'right_finger_joint']), 'mimic'),
    (Config(joints=['joint1', 'joint1']), 'more than once'),
    (Config(kp=[1.0, 2.0]), 'kp has 2 entries, joints has 8'),
    (Config(joints=['joint1'], **{'drive.armature': [1.0, 2.0]}), 'drive.armature has 2'),
])
def test_setup_refuses(model, config, word):
    with pytest.raises(ValueError, match=word):
        Setup(model, config)


def test_lengths_checked_before_a_model_exists():
    assert check_lengths(Config(kp=[1.0, 2.0]), None) == ''
    assert 'limits.effort has 1 entries, joints has 2' == check_lengths(
        Config(joints=['a', 'b'], **{'limits.effort': [1.0]}), 2)


def test_pd_terms_and_wrapped_continuous_error():
    urdf = ('<robot name="c"><link name="base"/><link name="a"><inertial><mass value="1"/>'
            '<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>'
            '<joint name="j" type="continuous"><parent link="base"/><child link="a"/>'
            '<axis xyz="0 0 1"/></joint></robot>')
    model = rbd.Model.from_urdf(urdf, compiled=False)
    setup = Setup(model, Config(kp=[10.0], kd=[2.0]))
    controller = Controller()
    q = np.array([math.pi - 0.1])
    desired = _desired(model, [1.0], q=[-math.pi + 0.1], qd=[0.5])
    qdd = controller.commanded_acceleration(setup, q, np.array([0.25]), desired)
    # the short way round is +0.2 rad, not -2 pi + 0.2
    assert qdd[0] == pytest.approx(1.0 + 10.0 * 0.2 + 2.0 * 0.25)
    assert controller.commanded_acceleration(setup, q, q, None) is setup.zero


def test_compute_with_drive_desired_timeout_and_reorder(model):
    config = Config(joints=list(reversed(model.joint_names)), desired_timeout=1.0,
                    drive_compensate=True,
                    **{'drive.viscous': [0.5] * 8, 'drive.coulomb': [0.2] * 8,
                       'drive.armature': [0.1] * 8})
    setup = Setup(model, config)
    controller = Controller()
    rng = np.random.default_rng(2)
    q, qd, qdd = rng.uniform(-1, 1, (3, model.nv))
    controller.set_desired(model, _desired(model, qdd), 0)
    out = controller.compute(setup, q, qd, NS // 2)
    expect = rbd.rnea(model, q, qd, qdd) + rbd.drive_torques(qd, qdd, 0.5, 0.2, 0.1)
    np.testing.assert_allclose(out.feedforward, expect[::-1], rtol=0, atol=1e-12)
    np.testing.assert_allclose(out.gravity, rbd.gravity_torques(model, q)[::-1], rtol=0,
                               atol=1e-12)
    np.testing.assert_array_equal(out.command, out.feedforward)
    assert out.saturated == ()
    # stale after the timeout: zero acceleration, drive at zero acceleration
    out = controller.compute(setup, q, qd, 2 * NS)
    expect = rbd.rnea(model, q, qd, np.zeros(8)) + rbd.drive_torques(qd, None, 0.5, 0.2)
    np.testing.assert_allclose(out.feedforward, expect[::-1], rtol=0, atol=1e-12)
    # non-finite torques give no output
    assert controller.compute(setup, np.full(8, 1e308), qd, 2 * NS) is None


def test_clamp_and_rate_limit(model):
    limits = [10.0, 10.0, 0.0, 10.0, 10.0, 10.0, 10.0, 10.0]
    setup = Setup(model, Config(command_output='gravity_compensation', clamp=True,
                                effort_rate=100.0, **{'limits.effort': limits}))
    controller = Controller()
    q = np.array([0.0, 0.8, 0.0, -1.2, 0.0, 0.6, 0.0, 0.02])
    out = controller.compute(setup, q, np.zeros(8), NS)
    tau_g = rbd.gravity_torques(model, q)
    bounds = np.where(np.array(limits) > 0, limits, np.inf)
    np.testing.assert_allclose(out.command, np.clip(tau_g, -bounds, bounds), rtol=0, atol=1e-12)
    assert set(out.saturated) == {model.joint_names[i] for i in np.flatnonzero(
        np.abs(tau_g) > bounds)}
    np.testing.assert_allclose(out.gravity, tau_g, rtol=0, atol=1e-12)  # never clamped
    # 10 ms later at 100 N m/s a command moves at most 1 N m
    first = out.command
    out = controller.compute(setup, q + 0.5, np.zeros(8), NS + NS // 100)
    assert np.abs(out.command - first).max() == pytest.approx(1.0)
    # a new setup starts afresh
    setup2 = Setup(model, setup.config)
    out = controller.compute(setup2, q + 0.5, np.zeros(8), NS + NS // 50)
    target = np.clip(rbd.gravity_torques(model, q + 0.5), -bounds, bounds)
    np.testing.assert_allclose(out.command, target, rtol=0, atol=1e-12)


def test_wrenches_tare_and_compensation(model):
    setup = Setup(model, Config())
    sensor = Sensor('wrist', frame='ft_frame', timeout=0.1, compensate=True)
    controller = Controller([sensor])
    q = np.linspace(-0.4, 0.4, 8)
    with pytest.raises(ValueError, match='no fresh reading'):
        controller.tare(sensor, setup, q, NS)
    bias = np.array([5.0, -1.0, 2.0, 0.1, 0.0, -0.2])
    sensor.receive(NS, 'ft_frame', -rbd.payload_wrench(model, 'ft_frame', q) + bias)
    with pytest.raises(ValueError, match='no model'):
        controller.tare(sensor, None, q, NS)
    with pytest.raises(ValueError, match='joint state'):
        controller.tare(sensor, setup, None, NS)
    with pytest.raises(ValueError, match='no fresh reading'):
        controller.tare(sensor, setup, q, NS + NS)  # too old
    link, found = controller.tare(sensor, setup, q, NS + 1000)
    assert link == 'ft_frame'
    np.testing.assert_allclose(found, bias, rtol=0, atol=1e-12)
    out = controller.compute(setup, q, np.zeros(8), NS + 2000)
    np.testing.assert_allclose(out.gravity, rbd.gravity_torques(model, q), rtol=0, atol=1e-12)
    # without compensation the expected reading is zero: the bias is the whole reading
    plain = Sensor('plain', frame='ft_frame')
    plain.receive(NS, 'ft_frame', bias)
    np.testing.assert_array_equal(Controller([plain]).tare(plain, setup, None, NS)[1], bias)
    # a reading on an unknown frame is refused with the sensor's name
    with pytest.raises(ValueError, match="sensor plain: frame 'nope'"):
        Controller.reading_link(Sensor('plain'), 'nope', model)
    with pytest.raises(ValueError, match='empty header.frame_id'):
        Controller.reading_link(Sensor('plain'), '', model)


def test_first_over_limit_is_first_in_time_then_in_joint_order():
    limits = np.array([10.0, 5.0, np.inf])
    efforts = np.array([[10.0, -5.0, 1e9],    # equal to the limits: within
                        [1.0, 1.0, 1.0],
                        [1.0, -9.0, 1.0],     # joint 1 is over by more, joint 0 comes first
                        [-10.5, 0.0, 0.0]])
    assert first_over_limit(efforts[:2], limits) is None
    assert first_over_limit(efforts, limits) == (2, 1)
    efforts[2, 0] = 10.1
    assert first_over_limit(efforts, limits) == (2, 0)
