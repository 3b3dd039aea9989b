"""
Efforts in the drive's units over real DDS: ``drive.effort_scale`` and ``drive.effort_offset``.

A driver that speaks current, with a bias: its joint states carry ``(N m + offset) / scale``
and its command takes the same unit. The observer sees joint torques without the bias (a bias
is no external torque), ``~/effort_commands`` and ``~/trajectory_with_effort`` leave in the
driver's unit without it, ``~/feedforward`` and ``~/gravity_compensation`` stay in N m.
"""

import math

import numpy as np
import pytest

rclpy = pytest.importorskip('rclpy')

import rbd_dynamics as rbd  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from support import TOL  # noqa: E402
from support.ros import first_answered, publish_at, ready_node, stamped  # noqa: E402
from test_node_trajectory import send, trajectory  # noqa: E402

# N m per unit of the driver's effort; one joint turns the other way
SCALE = np.array([12.0, 15.0, -9.5, 7.0, 3.0, 2.5, 1.5, 40.0])
# N m (N) the measured efforts read beyond the joint torques: a sensor's bias
OFFSET = np.array([0.4, -1.9, 0.7, 0.3, -0.2, 0.1, 0.05, 0.0])
GAIN = 40.0
PUSH = 4.0  # N m on joint2
T0_NS = 100 * 10 ** 9
DT_NS = 1_000_000


@pytest.fixture
def node(urdf, model):
    params = {'robot_description': urdf, 'contact.observer': True, 'contact.gain': GAIN,
              'drive.effort_scale': SCALE.tolist(), 'drive.effort_offset': OFFSET.tolist()}
    with ready_node(params, '/scaled_node', model) as started:
        yield started


def test_efforts_in_the_drivers_units(node, model):
    process, peer = node
    external = []
    peer.node.create_subscription(JointState, 'rbd_dynamics/external_effort', external.append,
                                  100)
    q = np.linspace(-0.3, 0.4, model.nv)
    gravity = rbd.gravity_torques(model, q)
    push = np.zeros(model.nv)
    push[model.joint_names.index('joint2')] = PUSH

    def offer(k, effort, timeout):
        """Send the state of stamp ``k`` ms; ``(feedforward, command, residual)``, or None."""
        stamp_ns = T0_NS + k * DT_NS
        peer.clear()
        del external[:]
        publish_at(peer, model.joint_names, q, effort, stamp_ns)

        def answered(messages):
            return stamped(messages, stamp_ns)
        if not peer.wait_for(lambda: answered(peer.feedforward) and answered(external)
                             and peer.commands, timeout):
            return None
        return (np.asarray(answered(peer.feedforward)[-1].effort),
                np.asarray(peer.commands[-1].data), np.asarray(answered(external)[-1].effort))

    def state(k, effort):
        """Send the state of stamp ``k`` ms; ``(feedforward, command, residual)`` answering it."""
        answer = offer(k, effort, 10.0)
        assert answer is not None, 'no answer to the state of %d ms: %s' % (k, process.log())
        return answer

    measured = (gravity + OFFSET) / SCALE  # what the driver reports holding the arm
    first_answered(lambda k, timeout: offer(k, measured, timeout), log=process.log)
    # the driver reports what gravity takes, in its unit, with its bias: nothing external
    for k in range(5):
        feedforward, command, residual = state(k, measured)
        np.testing.assert_allclose(residual, 0.0, atol=1e-9)
    # feedforward in N m, the command in the driver's unit
    np.testing.assert_allclose(feedforward, gravity, rtol=0, atol=TOL)
    np.testing.assert_allclose(command, gravity / SCALE, rtol=0, atol=TOL)
    # a push of 4 N m on joint2 is missing from the drive's current from the sample of 5 ms
    # on: the residual in N m (the push linear between the samples of 4 and 5 ms)
    a = math.exp(-GAIN * 1e-3)
    for k in range(5, 30):
        _, _, residual = state(k, (gravity - push + OFFSET) / SCALE)
        expect = push * (1.0 - a ** (k - 5) * (1.0 + a) / 2.0)
        np.testing.assert_allclose(residual, expect, rtol=1e-9, atol=1e-9)
    assert peer.wait_for(lambda: 'joint torque per unit' in (peer.diagnostic('effort scale')
                                                             or ''), 10.0)

    # a trajectory's efforts leave in the driver's unit
    rng = np.random.default_rng(2)
    positions, velocities, accelerations = rng.uniform(-0.5, 0.5, (3, 4, model.nv))
    out = send(peer, trajectory(model.joint_names, positions, velocities, accelerations))
    assert out is not None, process.log()
    efforts = np.array([p.effort for p in out.points])
    np.testing.assert_allclose(efforts * SCALE, rbd.rnea(model, positions, velocities,
                                                         accelerations), rtol=0, atol=1e-9)

    # refused with the reason, the old values kept
    for bad in ([1.0] * 3, [0.0] + [1.0] * 7, [float('inf')] + [1.0] * 7):
        (result,) = peer.set_parameters(**{'drive.effort_scale': bad})
        assert not result.successful and 'drive.effort_scale' in result.reason, result.reason
    for bad in ([1.0] * 3, [float('nan')] + [0.0] * 7):
        (result,) = peer.set_parameters(**{'drive.effort_offset': bad})
        assert not result.successful and 'drive.effort_offset' in result.reason, result.reason
    _, command, _ = state(40, measured)
    np.testing.assert_allclose(command, gravity / SCALE, rtol=0, atol=TOL)
    # back to N m at runtime
    (result,) = peer.set_parameters(**{'drive.effort_scale': [1.0] * model.nv})
    assert result.successful, result.reason
    assert peer.wait_for(lambda: (peer.diagnostic('effort scale') or '').startswith('1 '), 10.0)
