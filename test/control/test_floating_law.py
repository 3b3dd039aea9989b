"""
The torque law on a floating base, without ROS: the IMU's readings, the setup, the torques.

A humanoid (G1) on its feet: the law's torques equal the library's floating-base inverse
dynamics with the same inputs; the IMU is refused when bad (the last good reading kept) and,
once stale, nothing is computed; the angular acceleration differentiated from the readings'
stamps follows a known motion; settings that do not exist on a floating base are refused.
"""

import os
import warnings

import numpy as np
import pytest
import rbd_dynamics as rbd
from rbd_dynamics.control.base import BaseInput, DIFFERENTIATE_WINDOW
from rbd_dynamics.control.config import Config
from rbd_dynamics.control.law import Controller
from rbd_dynamics.control.sensors import Sensor
from rbd_dynamics.control.setup import Setup
from rbd_dynamics.floating import base_at_rest, base_motion_from_imu, base_state, \
    floating_inverse_dynamics
from rbd_dynamics.spatial import axis_angle_to_matrix, matrix_to_quaternion
from support.robots import robots_directory

ROOT = robots_directory()
pytestmark = pytest.mark.skipif(ROOT is None, reason='example-robot-data is not installed')
NS = 1_000_000_000
FEET = ('left_ankle_roll_link', 'right_ankle_roll_link')
IMU_LINK = 'torso_link'


@pytest.fixture(scope='module')
def g1():
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', rbd.DescriptionWarning)
        return rbd.Model.from_urdf_file(
            os.path.join(ROOT, 'g1_description/urdf/g1_29dof_rev_1_0.urdf'), floating_base=True)


def _quaternion(axis, angle):
    axis = np.asarray(axis, float)
    return matrix_to_quaternion(axis_angle_to_matrix(axis / np.linalg.norm(axis), angle))


def test_the_law_is_the_librarys_floating_inverse_dynamics(g1):
    setup = Setup(g1, Config(contacts_links=list(FEET), contacts_weights=[1.0, 3.0]))
    assert setup.floating and setup.nv == g1.nv - 6 and setup.names == g1.joint_names[1:]
    sensor = Sensor('hand', compensate=True)
    controller = Controller([sensor])
    rng = np.random.default_rng(0)
    q, qd = rng.uniform(-0.5, 0.5, (2, setup.nv))
    quaternion = _quaternion([1.0, 2.0, 0.5], 0.3)
    omega, proper = np.array([0.1, -0.2, 0.3]), np.array([0.5, 0.2, 9.7])
    controller.base.receive_imu(g1, '', NS, NS, 'torso_link', quaternion, omega, proper)
    wrench = np.array([1.0, -2.0, 3.0, 0.1, 0.2, -0.3])
    sensor.receive(NS, 'left_wrist_yaw_link', wrench)
    out = controller.compute(setup, q, qd, NS + 1000)
    assert controller.base_problem == ''
    zero = np.zeros(setup.nv)
    motion = base_motion_from_imu(g1, q, qd, zero, 'torso_link', quaternion, omega,
                                  np.zeros(3), proper)
    rest = base_at_rest(motion.orientation)
    # the compensating sensor: the reading plus the bodies beyond it, at each output's state
    full = base_state(g1, q, qd, zero, motion)
    still = base_state(g1, q, zero, zero, rest)
    f_ff = {'left_wrist_yaw_link': wrench + rbd.payload_wrench(g1, 'left_wrist_yaw_link', *full)}
    f_g = {'left_wrist_yaw_link': wrench + rbd.payload_wrench(g1, 'left_wrist_yaw_link', *still)}
    expected = floating_inverse_dynamics(g1, q, qd, zero, motion, f_ff, FEET,
                                         weights=[1.0, 3.0])
    expected_g = floating_inverse_dynamics(g1, q, zero, zero, rest, f_g, FEET,
                                           weights=[1.0, 3.0])
    np.testing.assert_allclose(out.feedforward, expected.torques, rtol=0, atol=1e-9)
    np.testing.assert_allclose(out.gravity, expected_g.torques, rtol=0, atol=1e-9)
    np.testing.assert_allclose(out.floating.unbalanced, 0.0, atol=1e-8)
    for foot in FEET:
        np.testing.assert_allclose(out.floating.contact_wrenches[foot],
                                   expected.contact_wrenches[foot], rtol=0, atol=1e-9)
    np.testing.assert_array_equal(out.command, out.feedforward)


def test_no_torque_without_a_fresh_imu(g1):
    setup = Setup(g1, Config(contacts_links=list(FEET), imu_timeout=0.05))
    controller = Controller()
    q = qd = np.zeros(setup.nv)
    assert controller.compute(setup, q, qd, NS) is None
    assert 'no IMU reading' in controller.base_problem
    controller.base.receive_imu(g1, '', NS, NS, 'pelvis', [0, 0, 0, 1], [0, 0, 0], [0, 0, 9.81])
    assert controller.compute(setup, q, qd, NS + NS // 100) is not None
    assert controller.compute(setup, q, qd, NS + NS // 10) is None
    assert 'stale' in controller.base_problem and '0.05' in controller.base_problem


@pytest.mark.parametrize('frame, quaternion, omega, accel, word', [
    ('no_such_link', [0, 0, 0, 1], [0, 0, 0], [0, 0, 9.81], 'not a link'),
    ('', [0, 0, 0, 1], [0, 0, 0], [0, 0, 9.81], 'empty header.frame_id'),
    ('pelvis', [0, 0, 0, 1.01], [0, 0, 0], [0, 0, 9.81], 'norm 1.01'),
    ('pelvis', [0, 0, 0, 1], [0, np.nan, 0], [0, 0, 9.81], 'angular velocity'),
    ('pelvis', [0, 0, 0, 1], [0, 0, 0], [0, 0, np.inf], 'linear acceleration'),
])
def test_a_bad_imu_reading_is_refused_and_the_good_one_kept(g1, frame, quaternion, omega,
                                                            accel, word):
    base = BaseInput()
    base.receive_imu(g1, '', NS, NS, 'pelvis', [0, 0, 0, 1], [0, 0, 0], [0, 0, 9.81])
    good = base.imu
    with pytest.raises(ValueError, match=word):
        base.receive_imu(g1, '', NS + 1, NS + 1, frame, quaternion, omega, accel)
    assert base.imu is good


def test_a_nearly_unit_quaternion_is_normalised(g1):
    base = BaseInput()
    base.receive_imu(g1, '', NS, NS, 'pelvis', [0, 0, 0, 1.0005], [0, 0, 0], [0, 0, 9.81])
    assert abs(np.linalg.norm(base.imu.orientation) - 1.0) < 1e-15


def test_the_angular_acceleration_follows_the_angular_velocity():
    """Readings at 500 Hz of w(t) = (sin 2t, t^2, 3t): the fit's derivative at the newest."""
    base = BaseInput()

    class Links:
        link_body = {'imu': 0}

    for k in range(100):
        t = 1.0 + k * 0.002
        omega = [np.sin(2 * t), t * t, 3 * t]
        base.receive_imu(Links, '', 0, int(t * NS), 'imu', [0, 0, 0, 1], omega, [0, 0, 9.81])
        if k >= DIFFERENTIATE_WINDOW / 0.002:
            expected = np.array([2 * np.cos(2 * t), 2 * t, 3.0])
            np.testing.assert_allclose(base.imu.angular_acceleration, expected, rtol=2e-3)
    # a repeated stamp keeps the last derivative; an unstamped reading counts by its arrival
    last = base.imu.angular_acceleration
    base.receive_imu(Links, '', 0, int(t * NS), 'imu', [0, 0, 0, 1], [9.0, 9.0, 9.0],
                     [0, 0, 9.81])
    np.testing.assert_array_equal(base.imu.angular_acceleration, last)
    np.testing.assert_array_equal(base.imu.angular_velocity, [9.0, 9.0, 9.0])
    unstamped = BaseInput()
    for k in range(5):
        unstamped.receive_imu(Links, '', NS + k * NS // 100, 0, 'imu', [0, 0, 0, 1],
                              [0.5 * k, 0, 0], [0, 0, 9.81])
    np.testing.assert_allclose(unstamped.imu.angular_acceleration, [50.0, 0, 0], rtol=1e-9)


@pytest.mark.parametrize('settings, word', [
    ({'contacts_links': ['nope']}, 'not links of the model'),
    ({'contacts_links': list(FEET), 'contacts_weights': [1.0]}, 'contacts.weights has 1'),
    ({'contact_observer': True}, 'contact.observer: not available on a floating base'),
    ({'task_link': 'torso_link'}, 'task.link: not available on a floating base'),
    ({'imu_frame': 'nope'}, 'base.imu.frame'),
])
def test_what_a_floating_setup_refuses(g1, settings, word):
    with pytest.raises(ValueError, match=word):
        Setup(g1, Config(**settings))


def test_contacts_are_unused_on_a_fixed_base(model):
    setup = Setup(model, Config(contacts_links=[model.link_names[-1]]))
    assert not setup.floating and setup.contacts == ()


def test_odometry_gives_the_bases_rotation_and_the_imu_its_acceleration(g1):
    """With fresh odometry its orientation and angular velocity are the base's."""
    setup = Setup(g1, Config(contacts_links=list(FEET), angular_acceleration='zero'))
    controller = Controller()
    rng = np.random.default_rng(3)
    q, qd = rng.uniform(-0.5, 0.5, (2, setup.nv))
    zero = np.zeros(setup.nv)
    imu = (_quaternion([0.0, 1.0, 0.2], 0.2), np.array([0.3, 0.1, -0.2]),
           np.array([0.2, -0.1, 9.7]))
    odometry = (_quaternion([1.0, 0.0, 0.3], -0.1), np.array([-0.05, 0.2, 0.1]))
    controller.base.receive_imu(g1, '', NS, NS, IMU_LINK, *imu)
    controller.base.receive_odometry(NS, NS, *odometry)
    out = controller.compute(setup, q, qd, NS + 1000)
    motion = base_motion_from_imu(g1, q, qd, zero, IMU_LINK, imu[0], imu[1], np.zeros(3),
                                  imu[2], base_rotation=(odometry[0], odometry[1], np.zeros(3)))
    np.testing.assert_allclose(motion.orientation, odometry[0], atol=1e-15)
    np.testing.assert_allclose(motion.angular_velocity, odometry[1], atol=1e-15)
    expected = floating_inverse_dynamics(g1, q, qd, zero, motion, contacts=FEET)
    np.testing.assert_allclose(out.feedforward, expected.torques, rtol=0, atol=1e-9)
    rest = floating_inverse_dynamics(g1, q, zero, zero, base_at_rest(odometry[0]),
                                     contacts=FEET)
    np.testing.assert_allclose(out.gravity, rest.torques, rtol=0, atol=1e-9)
    # without odometry the IMU's own rotation: other torques
    alone = Controller()
    alone.base.receive_imu(g1, '', NS, NS, IMU_LINK, *imu)
    assert np.abs(alone.compute(setup, q, qd, NS + 1000).feedforward - out.feedforward).max() \
        > 1e-3


def test_the_gravity_compensation_left_out_where_nobody_reads_it(g1):
    setup = Setup(g1, Config(contacts_links=list(FEET)))
    controller = Controller()
    q = qd = np.full(setup.nv, 0.1)
    controller.base.receive_imu(g1, '', NS, NS, IMU_LINK, [0, 0, 0, 1], [0, 0, 0], [0, 0, 9.81])
    both = controller.compute(setup, q, qd, NS)
    lean = controller.compute(setup, q, qd, NS, gravity=False)
    assert lean.gravity is None and both.gravity is not None
    np.testing.assert_allclose(lean.feedforward, both.feedforward, rtol=0, atol=1e-12)
    # the command is the gravity compensation: computed all the same
    gravity_out = Setup(g1, Config(contacts_links=list(FEET),
                                   command_output='gravity_compensation'))
    out = controller.compute(gravity_out, q, qd, NS, gravity=False)
    np.testing.assert_array_equal(out.gravity, both.gravity)
    np.testing.assert_array_equal(out.command, both.gravity)
