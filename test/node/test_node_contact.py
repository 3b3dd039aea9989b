"""
Sensorless contact over real DDS: the node's momentum observer on the joint states' efforts.

The arm at rest; its efforts say that a known torque on one joint is missing from what gravity
needs, from a known stamp on. The residual on ``~/external_effort`` is then the exact
first-order response to that torque; the stamp rules, efforts that are not finite, joint
states without efforts, ``~/contact`` and ``~/reset_contact`` behave as the contract says.
"""

import math

import numpy as np
import pytest

rclpy = pytest.importorskip('rclpy')
WrenchStamped = pytest.importorskip('geometry_msgs.msg').WrenchStamped

import rbd_dynamics as rbd  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Bool  # noqa: E402
from support.ros import first_answered, publish_at, ready_node, stamped  # noqa: E402

GAIN = 40.0
PUSH = 5.0  # N m on joint2
THRESHOLD = 1.0
T0_NS = 100 * 10 ** 9  # the stamp of the first state
DT_NS = 1_000_000


@pytest.fixture
def node(urdf, model):
    params = {'robot_description': urdf, 'contact.observer': True, 'contact.gain': GAIN,
              'contact.threshold': [THRESHOLD] * model.nv,
              'contact.wrench_link': 'tool_center_point'}
    with ready_node(params, '/contact_node', model) as started:
        yield started


def test_residual_stamps_and_contact(node, model):
    process, peer = node
    external, contact = [], []
    peer.node.create_subscription(JointState, 'rbd_dynamics/external_effort', external.append,
                                  100)
    peer.node.create_subscription(
        Bool, 'rbd_dynamics/contact', contact.append,
        QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                   durability=DurabilityPolicy.TRANSIENT_LOCAL))
    assert peer.wait_for(lambda: contact, 60.0), process.log()
    assert contact == [Bool(data=False)]
    q = np.linspace(0.2, 0.5, model.nq)
    gravity = rbd.gravity_torques(model, q)
    pushed = gravity.copy()
    push = np.zeros(model.nv)
    push[model.joint_names.index('joint2')] = PUSH
    pushed -= push

    def send(k, effort, timeout=None):
        """
        Send the state of stamp ``k`` ms; the residual answering it (None if none).

        Without a ``timeout``, a state with efforts must be answered within 10 s.
        """
        stamp_ns = T0_NS + k * DT_NS
        peer.clear()
        del external[:]
        publish_at(peer, model.joint_names, q, effort, stamp_ns)

        def answered(messages):
            return stamped(messages, stamp_ns)
        if effort is None:  # torques answer it; a residual would come in the same cycle
            assert peer.wait_for(lambda: answered(peer.feedforward), 10.0), \
                'no answer to the state of %d ms' % k
            peer.spin(0.2)
        elif timeout is not None:
            peer.wait_for(lambda: answered(external), timeout)
        else:
            assert peer.wait_for(lambda: answered(external), 10.0), \
                'no residual answers the state of %d ms' % k
        found = answered(external)
        return np.asarray(found[-1].effort) if found else None

    a = math.exp(-GAIN * 1e-3)

    def response(k, start):
        """Return ``r`` at ``k`` ms, the push in every sample from ``start`` ms (a restart)."""
        return push * (1.0 - a ** (k - start))

    def ramped(k, start):
        """Return ``r`` when the sample before ``start`` had no push: a ramp between them."""
        return push * (1.0 - a ** (k - start) * (1.0 + a) / 2.0)

    first_answered(lambda k, timeout: send(k, gravity, timeout), log=process.log)
    for k in range(5):
        r = send(k, gravity)
        np.testing.assert_allclose(r, 0.0, atol=1e-9)
    for k in range(5, 40):
        r = send(k, pushed)
        np.testing.assert_allclose(r, ramped(k, 5), rtol=1e-9, atol=1e-9)
    crossed = 5 + math.ceil(-math.log(1.0 - THRESHOLD / PUSH) / (GAIN * 1e-3))
    assert crossed < 40
    assert peer.wait_for(lambda: contact[-1].data, 10.0)
    assert peer.wait_for(lambda: peer.diagnostic('contact') == 'joint2', 10.0)
    # not finite: the whole state is refused and never reaches the integral
    bad = pushed.copy()
    bad[3] = float('nan')
    rejected = int(peer.diagnostic('rejected_joint_states'))
    peer.pub_joint_states.publish(JointState(name=list(model.joint_names), position=q.tolist(),
                                             velocity=[0.0] * model.nv, effort=bad.tolist()))
    assert peer.wait_for(lambda: int(peer.diagnostic('rejected_joint_states')) > rejected,
                         10.0)
    r = send(41, pushed)
    np.testing.assert_allclose(r, ramped(41, 5), rtol=1e-9, atol=1e-9)
    # no efforts: torques answered, the observer paused; it goes on when they are back
    assert send(42, None) is None and peer.feedforward
    assert peer.wait_for(lambda: peer.diagnostic('observer') ==
                         'paused (joint states without efforts)', 10.0)
    np.testing.assert_allclose(send(43, pushed), ramped(43, 5), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(send(44, pushed), ramped(44, 5), rtol=1e-9, atol=1e-9)
    assert peer.wait_for(lambda: peer.diagnostic('observer') == 'running', 10.0)
    assert peer.diagnostic('observer restarts') == '0'
    # a stamp that goes back, and a gap: restarts, counted
    np.testing.assert_allclose(send(40, pushed), 0.0, atol=1e-12)
    np.testing.assert_allclose(send(41, pushed), response(41, 40), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(send(41 + 101, pushed), 0.0, atol=1e-12)
    assert peer.wait_for(lambda: peer.diagnostic('observer restarts') == '2', 10.0)
    largest = peer.diagnostic('largest external effort per joint, last period')
    assert largest.startswith('[') and len(largest.split(',')) == model.nv, largest
    # still latched; the reset clears it
    assert contact[-1].data
    success, message = peer.trigger('reset_contact')
    assert success and 'cleared' in message
    assert peer.wait_for(lambda: not contact[-1].data, 10.0)
    assert [m.data for m in contact] == [False, True, False]
    np.testing.assert_allclose(send(200, pushed), 0.0, atol=1e-12)

    # the wrench at the tool: once its compiled Jacobian is ready (built off the torque path),
    # the least-squares wrench of the residual, in the tool's frame (a torque on joint2 alone
    # is not a wrench at the tool: its part that one is)
    wrenches = []
    peer.node.create_subscription(WrenchStamped, 'rbd_dynamics/external_wrench',
                                  wrenches.append, 100)
    k = [201]

    def wrench_came():
        r = send(k[0], pushed)
        k[0] += 1
        return wrenches and r is not None
    assert peer.wait_for(wrench_came, 300.0), process.log()
    assert wrenches[-1].header.frame_id == 'tool_center_point'
    assert peer.wait_for(lambda: peer.diagnostic('external wrench at') ==
                         'tool_center_point (rank 6 of 6)', 10.0), \
        peer.diagnostic('external wrench at')
    w = wrenches[-1].wrench
    w = np.array([w.force.x, w.force.y, w.force.z, w.torque.x, w.torque.y, w.torque.z])
    stamp_ns = wrenches[-1].header.stamp.sec * 10 ** 9 + wrenches[-1].header.stamp.nanosec
    jt = rbd.jacobian(model, q, 'tool_center_point', frame='local').T
    r = response((stamp_ns - T0_NS) // DT_NS, 200)
    np.testing.assert_allclose(w, np.linalg.lstsq(jt, r, rcond=None)[0], atol=1e-9 * PUSH)
    assert np.linalg.norm(jt @ w - r) < 0.1 * np.linalg.norm(r)  # mostly explained


def test_contact_drive_is_checked_and_switches_the_drive_in_the_observer(urdf, model):
    """
    contact.drive: auto is on with drive.viscous given; bad values refused, the old one kept.

    The arm turns at a constant velocity at one pose (the observer needs no consistent
    trajectory for that: ``M dqd = 0``), and its efforts are those of a plant with viscous
    friction, as a motor current reports them: with the drive in the observer the residual
    stays zero; without it, the friction ``viscous qd`` shows as the first-order response.
    """
    viscous = np.linspace(2.0, 0.5, model.nv)
    params = {'robot_description': urdf, 'contact.observer': True, 'contact.gain': GAIN,
              'drive.viscous': viscous.tolist()}
    q = np.linspace(0.2, 0.5, model.nq)
    qd = np.linspace(-0.4, 0.4, model.nv)
    efforts = rbd.rnea(model, q, qd, np.zeros(model.nv)) + viscous * qd
    with ready_node(params, '/contact_drive_node', model) as (process, peer):
        external = []
        subscription = peer.node.create_subscription(
            JointState, 'rbd_dynamics/external_effort', external.append, 100)
        # (the node publishes the residual only to a subscriber it knows of)
        assert peer.wait_for(lambda: subscription.get_publisher_count() > 0, 60.0), \
            process.log()

        def send(k, timeout):
            """Send the moving state of stamp ``k`` ms; the residual answering it, or ``None``."""
            stamp_ns = T0_NS + k * DT_NS
            del external[:]
            msg = JointState(name=list(model.joint_names), position=q.tolist(),
                             velocity=qd.tolist(), effort=efforts.tolist())
            msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp_ns, 10 ** 9)
            peer.pub_joint_states.publish(msg)
            if not peer.wait_for(lambda: stamped(external, stamp_ns), timeout):
                return None
            return np.asarray(stamped(external, stamp_ns)[-1].effort)

        def answer(k):
            """Return the residual answering the state of ``k`` ms (there must be one)."""
            r = send(k, 10.0)
            assert r is not None, 'no residual for the state of %d ms' % k
            return r

        def drive_model():
            return peer.diagnostic('observer drive model') or ''

        first_answered(send, log=process.log)
        for k in range(10):
            np.testing.assert_allclose(answer(k), 0.0, atol=1e-9)
        assert peer.wait_for(lambda: drive_model().startswith(
            'on (contact.drive auto: drive.viscous given): viscous [2,'), 10.0), drive_model()
        for bad in ('sometimes', 'ON', ''):
            (result,) = peer.set_parameters(**{'contact.drive': bad})
            assert not result.successful, bad
            assert "contact.drive unknown value '%s' (use auto or on or off)" % bad \
                in result.reason, result.reason
        # the old value is kept: still no residual
        for k in range(10, 20):
            np.testing.assert_allclose(answer(k), 0.0, atol=1e-9)
        (result,) = peer.set_parameters(**{'contact.drive': 'off'})
        assert result.successful, result.reason
        # (the change applies from the next step on; the integral goes on)
        for k in range(20, 40):
            r = answer(k)
        expect = -viscous * qd * (1.0 - math.exp(-GAIN * 20 * 1e-3))
        np.testing.assert_allclose(r, expect, rtol=1e-9, atol=1e-9)
        assert peer.wait_for(lambda: drive_model().startswith(
            'off (contact.drive off): the efforts are taken as the joint torques after the gear'),
            10.0), drive_model()
        assert peer.diagnostic('observer restarts') == '0'
