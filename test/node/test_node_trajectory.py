"""
Trajectory feedforward for a JointTrajectoryController.

Trajectory feedforward for a JointTrajectoryController: ``~/trajectory`` in,
``~/trajectory_with_effort`` out, over real DDS, against the library.
"""

import numpy as np
import pytest

rclpy = pytest.importorskip('rclpy')

import rbd_dynamics as rbd  # noqa: E402
from support import TOL  # noqa: E402
from support.ros import exchange, NodeProcess, Peer, wait_ready  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

HOLD = np.array([0.1, 0.7, -0.2, -1.3, 0.2, 0.6, -0.1, 0.01])


def trajectory(names, positions, velocities=None, accelerations=None, dt=0.1):
    msg = JointTrajectory()
    msg.joint_names = list(names)
    for k, q in enumerate(positions):
        point = JointTrajectoryPoint()
        point.positions = [float(v) for v in q]
        if velocities is not None:
            point.velocities = [float(v) for v in velocities[k]]
        if accelerations is not None:
            point.accelerations = [float(v) for v in accelerations[k]]
        t = (k + 1) * dt
        point.time_from_start.sec = int(t)
        point.time_from_start.nanosec = int(round((t - int(t)) * 1e9))
        msg.points.append(point)
    return msg


def expected(model, names, q, qd, qdd, held=HOLD, drive=None):
    """Efforts point by point with single library calls."""
    rows = [model.joint_names.index(n) for n in names]
    out = []
    for k in range(len(q)):
        full = [held.copy(), np.zeros(model.nv), np.zeros(model.nv)]
        for arr, values in zip(full, (q[k], qd[k], qdd[k])):
            arr[rows] = values
        tau = rbd.rnea(model, *full)
        if drive is not None:
            tau = tau + rbd.drive_torques(full[1], full[2], *drive)
        out.append(tau[rows])
    return np.array(out)


def send(peer, msg, timeout=120.0):
    """
    Publish a trajectory and wait for its forwarded message.

    Publish a trajectory once the node listens and its output reaches the test; the
    forwarded message, or ``None``.
    """
    assert peer.wait_for(lambda: peer.pub_trajectory.get_subscription_count() > 0
                         and peer.sub_trajectories.get_publisher_count() > 0, 120.0)
    del peer.trajectories[:]
    peer.pub_trajectory.publish(msg)
    peer.wait_for(lambda: peer.trajectories, timeout)
    return peer.trajectories[-1] if peer.trajectories else None


def refused(peer, msg, word, count):
    assert send(peer, msg, timeout=1.0) is None
    assert peer.wait_for(lambda: int(peer.diagnostic('rejected_trajectory') or 0) >= count, 60)
    reason = peer.diagnostic('last trajectory rejection') or ''
    assert peer.wait_for(lambda: word in (peer.diagnostic('last trajectory rejection') or ''),
                         60.0), (word, reason)


@pytest.fixture(scope='module')
def planner(urdf, model):
    params = {'robot_description': urdf, 'joints': list(model.joint_names),
              'limits.effort': [320.0, 80.0, 176.0, 176.0, 110.0, 40.0, 40.0, 70.0]}
    node = NodeProcess(params, namespace='/planner')
    peer = Peer('/planner')
    assert wait_ready(peer, model), node.log()
    yield node, peer
    peer.close()
    assert node.stop() == 0, node.log()


def test_efforts_equal_the_library(planner, model, urdf):
    node, peer = planner
    # the held joints measured: the node has answered this state
    assert exchange(peer, model.joint_names, HOLD, np.zeros(model.nv)) is not None, node.log()
    rng = np.random.default_rng(4)
    names = ['joint4', 'joint2', 'joint6']  # a subset, in its own order
    q, qd, qdd = rng.uniform(-0.5, 0.5, (3, 20, 3))
    q = q + HOLD[[3, 1, 5]]
    out = send(peer, trajectory(names, q, qd, qdd))
    assert out is not None, node.log()
    assert list(out.joint_names) == names and len(out.points) == 20
    efforts = np.array([p.effort for p in out.points])
    np.testing.assert_allclose(efforts, expected(model, names, q, qd, qdd), rtol=0, atol=TOL)
    # the rest of the message is passed through
    np.testing.assert_array_equal([p.positions for p in out.points], q)
    assert out.points[3].time_from_start.nanosec == 400000000

    # the drive terms when compensating
    drive = ([0.5] * 8, [0.3] * 8, [0.2] * 8, 0.05)
    results = peer.set_parameters(**{'drive.compensate': True, 'drive.viscous': drive[0],
                                     'drive.coulomb': drive[1], 'drive.armature': drive[2],
                                     'drive.coulomb_velocity': drive[3]})
    assert all(r.successful for r in results), results
    out = send(peer, trajectory(names, q, qd, qdd))
    np.testing.assert_allclose([p.effort for p in out.points],
                               expected(model, names, q, qd, qdd, drive=drive), rtol=0, atol=TOL)
    (result,) = peer.set_parameters(**{'drive.compensate': False})
    assert result.successful

    # a payload in the hand
    peer.payload('ft_frame', 2.0, (0.0, 0.0, 0.05), (0.01, 0.0, 0.0, 0.01, 0.0, 0.01))
    held = rbd.Model.from_urdf(urdf)
    held.set_payload('ft_frame', 2.0, (0.0, 0.0, 0.05), (0.01, 0.0, 0.0, 0.01, 0.0, 0.01))
    target = expected(held, names, q, qd, qdd)

    def with_payload():
        out = send(peer, trajectory(names, q, qd, qdd))
        efforts = [p.effort for p in out.points] if out is not None else None
        return efforts is not None and np.allclose(efforts, target, rtol=0, atol=TOL)

    assert peer.wait_for(with_payload, 120.0), node.log()
    peer.payload('ft_frame', 0.0)


def test_refusals(planner, model):
    node, peer = planner
    # the held joints measured: the node has answered this state
    assert exchange(peer, model.joint_names, HOLD, np.zeros(model.nv)) is not None, node.log()
    names = ['joint2', 'joint3']
    q = np.tile(HOLD[[1, 2]], (5, 1))
    zero = np.zeros((5, 2))
    assert peer.wait_for(lambda: peer.diagnostic('rejected_trajectory') is not None, 60.0)
    count = int(peer.diagnostic('rejected_trajectory'))
    cases = [
        (trajectory(names, q, None, zero), 'velocities'),
        (trajectory(names, q, zero, None), 'accelerations'),
        (trajectory(['joint2', 'elbow'], q, zero, zero), 'elbow'),
        (trajectory(['joint2', 'right_finger_joint'], q, zero, zero), 'right_finger_joint'),
        (trajectory(['joint2', 'joint2'], q, zero, zero), 'more than once'),
        (trajectory(names, np.full((5, 2), np.nan), zero, zero), 'not finite'),
        (trajectory(names, [], zero, zero), 'no points'),
        (trajectory(names, q, np.full((5, 2), 1e200), zero), 'not finite'),
    ]
    for msg, word in cases:
        count += 1
        refused(peer, msg, word, count)
    # over the limits: joint2 is limited to 80 N m here; accelerating hard at point 3
    qdd = zero.copy()
    qdd[2:, 0] = 400.0
    count += 1
    refused(peer, trajectory(names, q, zero, qdd), 'effort of joint2 at time_from_start 0.300 s',
            count)
    assert node.alive()


def test_refused_until_held_joints_are_measured(urdf, model):
    node = NodeProcess({'robot_description': urdf}, namespace='/unmeasured')
    peer = Peer('/unmeasured')
    try:
        assert peer.wait_matched(), node.log()
        names = ['joint1']
        one = np.zeros((2, 1))
        assert peer.wait_for(lambda: peer.pub_trajectory.get_subscription_count() > 0, 120.0)
        # the model is built from the parameter at start
        assert peer.wait_for(lambda: peer.diagnostic('model') is not None, 120.0), node.log()
        assert send(peer, trajectory(names, one, one, one), timeout=1.0) is None
        assert peer.wait_for(lambda: 'no joint_states yet' in (
            peer.diagnostic('last trajectory rejection') or ''), 60.0), node.log()
        # the whole robot measured: forwarded
        assert exchange(peer, model.joint_names, HOLD, np.zeros(model.nv)) is not None, \
            node.log()
        assert send(peer, trajectory(names, one, one, one)) is not None
    finally:
        peer.close()
        assert node.stop() == 0, node.log()
