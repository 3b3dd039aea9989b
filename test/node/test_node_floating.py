"""
A floating base over real DDS: a humanoid's torques from its IMU, its feet's sensors and contacts.

The node runs the Unitree G1 (example-robot-data) with ``base.type: floating``, its IMU on the
torso (three joints from the pelvis) and both feet as surface contacts. Without an IMU reading
nothing is published and the diagnostics say so, naming the IMU; with one, the joint torques,
the base wrench and the contact wrenches are the library's; a bad reading is refused with the
reason and the last good one kept until its timeout, after which nothing is published; ankle
F/T sensors carry the feet instead of the contacts; ``base.type`` changes at runtime, and is
refused with the reason where the IMU is missing.
"""

import os
import warnings

import numpy as np
import pytest

rclpy = pytest.importorskip('rclpy')

from geometry_msgs.msg import WrenchStamped  # noqa: E402, I100
import rbd_dynamics as rbd  # noqa: E402
from rbd_dynamics.floating import base_motion_from_imu, floating_torques  # noqa: E402
from rbd_dynamics.spatial import axis_angle_to_matrix, matrix_to_quaternion  # noqa: E402
from sensor_msgs.msg import Imu  # noqa: E402
from support.robots import robots_directory  # noqa: E402
from support.ros import exchange, NodeProcess, Peer, ready_node, stamped  # noqa: E402

ROOT = robots_directory()
pytestmark = pytest.mark.skipif(ROOT is None, reason='example-robot-data is not installed')
G1 = 'g1_description/urdf/g1_29dof_rev_1_0.urdf'
FEET = ['left_ankle_roll_link', 'right_ankle_roll_link']
IMU_LINK = 'torso_link'
TIMEOUT = 1.0  # s, base.imu.timeout
TOL = 1e-9


@pytest.fixture(scope='module')
def g1():
    with open(os.path.join(ROOT, G1)) as stream:
        text = stream.read()
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', rbd.DescriptionWarning)
        return text, rbd.Model.from_urdf(text, floating_base=True)


def _imu_reading():
    """Return a reading of the torso's IMU: turning, accelerating, tilted."""
    # (the transfer of a reading to the base is held to Pinocchio in test/library/test_floating)
    axis = np.array([0.3, -0.2, 0.93])
    R = axis_angle_to_matrix(axis / np.linalg.norm(axis), 0.4)
    omega, proper = np.array([0.2, -0.1, 0.3]), np.array([0.4, -0.3, 9.6])
    return matrix_to_quaternion(R), omega, proper


class ImuPeer:
    """The test's IMU publisher beside a :class:`~support.ros.Peer`."""

    def __init__(self, peer):
        self.peer = peer
        self.pub = peer.node.create_publisher(Imu, 'imu', 10)
        self.stamp_ns = 0

    def send(self, frame, quaternion, omega, proper):
        msg = Imu()
        msg.header.frame_id = frame
        msg.header.stamp = self.peer.node.get_clock().now().to_msg()
        o, w, a = msg.orientation, msg.angular_velocity, msg.linear_acceleration
        o.x, o.y, o.z, o.w = (float(v) for v in quaternion)
        w.x, w.y, w.z = (float(v) for v in omega)
        a.x, a.y, a.z = (float(v) for v in proper)
        self.pub.publish(msg)


def _wrenches(peer, topics):
    found = {topic: [] for topic in topics}
    for topic in topics:
        peer.node.create_subscription(WrenchStamped, 'rbd_dynamics/%s' % topic,
                                      found[topic].append, 50)
    return found


def _values(msg):
    f, n = msg.wrench.force, msg.wrench.torque
    return np.array([f.x, f.y, f.z, n.x, n.y, n.z])


def _answer(peer, imu, names, q, qd, reading, timeout=10.0):
    """Send the IMU reading, then a joint state: its (feedforward, gravity) or None."""
    imu.send(IMU_LINK, *reading)
    peer.spin(0.01)
    answer = exchange(peer, names, q, qd, timeout=timeout)
    return None if answer is None else answer[:2]


def test_a_humanoid_on_its_feet(g1):
    text, model = g1
    names = list(model.joint_names[1:])
    params = {'robot_description': text, 'base.type': 'floating', 'base.imu.topic': 'imu',
              'base.imu.timeout': TIMEOUT, 'contacts.links': FEET,
              'contacts.weights': [1.0, 2.0]}
    process = NodeProcess(params, namespace='/floating_node')
    peer = Peer('/floating_node')
    try:
        imu = ImuPeer(peer)
        wrenches = _wrenches(peer, ['base_wrench'] + ['contact_wrench/%s' % f for f in FEET])
        assert peer.wait_matched(120.0), process.log()
        rng = np.random.default_rng(7)
        q, qd = rng.uniform(-0.3, 0.3, (2, len(names)))
        # no IMU yet: nothing at all, and the diagnostics name the IMU
        assert peer.wait_for(lambda: peer.node.count_subscribers('/floating_node/imu') > 0,
                             60.0)
        peer.joint_state(names, q, qd)
        assert peer.wait_for(lambda: 'no reading of the IMU on /floating_node/imu'
                             in (peer.diagnostic('floating base problem') or ''), 60.0), \
            process.log()
        assert not peer.feedforward and not peer.gravity and not peer.commands
        reading = _imu_reading()
        answer = None
        for _ in range(60):  # the first state may meet the kernels being built
            answer = _answer(peer, imu, names, q, qd, reading, timeout=2.0)
            if answer is not None:
                break
        assert answer is not None, process.log()
        ff, g = answer
        zero = np.zeros(len(names))
        motion = base_motion_from_imu(model, q, qd, zero, IMU_LINK, reading[0], reading[1],
                                      np.zeros(3), reading[2])
        rest = rbd.base_at_rest(motion.orientation)
        result, tau_g = floating_torques(model, q, qd, zero, motion, rest, contacts=FEET,
                                         weights=[1.0, 2.0])
        assert list(ff.name) == names
        np.testing.assert_allclose(ff.effort, result.torques, rtol=0, atol=TOL)
        np.testing.assert_allclose(g.effort, tau_g, rtol=0, atol=TOL)
        np.testing.assert_allclose(peer.commands[-1].data, result.torques, rtol=0, atol=TOL)
        stamp_ns = ff.header.stamp.sec * 10 ** 9 + ff.header.stamp.nanosec
        assert peer.wait_for(lambda: all(stamped(found, stamp_ns)
                                         for found in wrenches.values()), 10.0)
        base = stamped(wrenches['base_wrench'], stamp_ns)[-1]
        assert base.header.frame_id == 'pelvis'
        np.testing.assert_allclose(_values(base), result.base_wrench, rtol=0, atol=TOL)
        for foot in FEET:
            msg = stamped(wrenches['contact_wrench/%s' % foot], stamp_ns)[-1]
            assert msg.header.frame_id == foot
            np.testing.assert_allclose(_values(msg), result.contact_wrenches[foot], rtol=0,
                                       atol=TOL)

        def fresh_and_reported():
            imu.send(IMU_LINK, *reading)  # (kept fresh until a report comes)
            return peer.diagnostic('floating base problem') == 'none'
        assert peer.wait_for(fresh_and_reported, 10.0)
        unbalanced = [float(v) for v in peer.diagnostic('unbalanced base wrench').split()]
        assert len(unbalanced) == 6 and max(map(abs, unbalanced)) < 1e-6

        # bad readings: refused with the reason, the good one kept while fresh
        bad = [('no_such_link', reading), (IMU_LINK, ([0, 0, 0, 1.2],) + reading[1:]),
               (IMU_LINK, (reading[0], [np.nan, 0, 0], reading[2]))]
        answer = None
        for _ in range(10):  # (a loaded machine may answer after the good reading's timeout)
            imu.send(IMU_LINK, *reading)
            for frame, values in bad:
                imu.send(frame, *values)
            peer.spin(0.02)
            answer = exchange(peer, names, q, qd, timeout=0.8 * TIMEOUT)
            if answer is not None:
                break
        assert answer is not None, process.log()
        np.testing.assert_allclose(answer[0].effort, result.torques, rtol=0, atol=TOL)
        assert peer.wait_for(lambda: peer.counts('rejected_imu')[0] >= 3, 30.0)
        reason = peer.diagnostic('last imu rejection')
        assert 'angular velocity' in reason or 'norm' in reason or 'not a link' in reason

        # stale: nothing at all, not even zeros; the diagnostics warn, naming the IMU
        peer.spin(TIMEOUT * 1.5)
        peer.clear()
        peer.joint_state(names, q, qd)
        peer.spin(0.5)
        assert not peer.feedforward and not peer.gravity and not peer.commands
        assert peer.wait_for(lambda: 'stale' in (peer.diagnostic('floating base problem')
                                                 or ''), 10.0)
        assert peer.wait_count('floating_base_unpublished', 1) >= 1
        level_found = [ord(s.level) for d in peer.diagnostics for s in d.status
                       if s.message.startswith('floating base: no torques published')]
        assert level_found and min(level_found) >= 1  # WARN or worse

        # base.type at runtime: fixed (the pelvis bolted down), then floating again
        result_set = peer.set_parameters(**{'base.type': 'fixed'})[0]
        assert result_set.successful, result_set.reason
        fixed = rbd.Model.from_urdf(text)
        expected = rbd.rnea(fixed, q, qd, zero)
        assert peer.wait_for(lambda: (exchange(peer, names, q, qd, timeout=2.0) or [None])[0]
                             is not None and np.allclose(peer.feedforward[-1].effort,
                                                         expected, atol=1e-9), 120.0)
        result_set = peer.set_parameters(**{'base.type': 'floating'})[0]
        assert result_set.successful, result_set.reason
        again = None
        for _ in range(60):  # (the fixed model answers until the floating one is built)
            again = _answer(peer, imu, names, q, qd, reading, timeout=2.0)
            if again is not None and np.allclose(again[0].effort, result.torques, rtol=0,
                                                 atol=TOL):
                break
        assert again is not None, process.log()
        np.testing.assert_allclose(again[0].effort, result.torques, rtol=0, atol=TOL)
    finally:
        peer.close()
        assert process.stop() == 0, process.log()


def test_ankle_sensors_carry_the_feet(g1):
    """F/T sensors at both ankles, no contacts: the torques are the RNEA's with their wrenches."""
    text, model = g1
    names = list(model.joint_names[1:])
    sensors = {'left': FEET[0], 'right': FEET[1]}
    params = {'robot_description': text, 'base.type': 'floating', 'base.imu.topic': 'imu',
              'base.imu.timeout': 1.0, 'base.angular_acceleration': 'zero',
              'wrench_sensors': list(sensors)}
    for name in sensors:
        params['wrench.%s.topic' % name] = 'ft_%s' % name
        params['wrench.%s.timeout' % name] = 1.0
    topics = ['ft_%s' % name for name in sensors]
    process = NodeProcess(params, namespace='/ankle_node')
    peer = Peer('/ankle_node', sensor_topics=topics)
    try:
        imu = ImuPeer(peer)
        assert peer.wait_matched(120.0), process.log()
        rng = np.random.default_rng(8)
        q, qd = rng.uniform(-0.3, 0.3, (2, len(names)))
        reading = _imu_reading()
        feet = {foot: rng.normal(scale=30.0, size=6) for foot in FEET}
        answer = None
        for _ in range(60):
            for name, link in sensors.items():
                peer.wrench('ft_%s' % name, link, feet[link])
            answer = _answer(peer, imu, names, q, qd, reading, timeout=2.0)
            if answer is not None:
                break
        assert answer is not None, process.log()
        zero = np.zeros(len(names))
        motion = base_motion_from_imu(model, q, qd, zero, IMU_LINK, reading[0], reading[1],
                                      np.zeros(3), reading[2])
        expected = rbd.floating_inverse_dynamics(model, q, qd, zero, motion, feet)
        np.testing.assert_allclose(answer[0].effort, expected.torques, rtol=0, atol=TOL)
        assert peer.wait_for(lambda: peer.diagnostic('unbalanced base wrench') not in
                             (None, 'none yet'), 10.0)
        unbalanced = [float(v) for v in peer.diagnostic('unbalanced base wrench').split()]
        np.testing.assert_allclose(unbalanced, expected.unbalanced, rtol=1e-5, atol=1e-4)
    finally:
        peer.close()
        assert process.stop() == 0, process.log()


def test_a_floating_base_without_an_imu_is_refused(urdf, model):
    with ready_node({'robot_description': urdf}, '/no_imu_node', model) as (process, peer):
        result = peer.set_parameters(**{'base.type': 'floating'})[0]
        assert not result.successful
        assert 'base.imu.topic' in result.reason
