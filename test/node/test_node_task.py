"""
The node's task-space output over real DDS: ``command_output: task``.

One node on the demo arm with ``task.link`` at the tool centre point. The expected torques
come from the library's law (:func:`rbd_dynamics.control.task.task_torques`) with the inputs
the test sends: the pose held when the law starts (and again after a switch from the
joint-space output), a desired pose and twist from their topics, both laws, bad inputs
refused with the last good pose kept, and bad settings refused with their reasons.
"""

import numpy as np
import pytest

rclpy = pytest.importorskip('rclpy')
geometry_msgs = pytest.importorskip('geometry_msgs.msg')

import rbd_dynamics as rbd  # noqa: E402
from rbd_dynamics import spatial  # noqa: E402
from rbd_dynamics.control import task  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from support import TOL  # noqa: E402
from support.ros import exchange, NodeProcess, Peer, wait_ready  # noqa: E402

LINK = 'tool_center_point'
NAMESPACE = '/task'
STIFFNESS = [400.0, 500.0, 600.0, 20.0, 25.0, 30.0]


class TaskPeer(Peer):
    """The test's side, with the task-space topics."""

    def __init__(self):
        super().__init__(NAMESPACE)
        node = self.node_path
        create = self.node.create_publisher
        self.pub_pose = create(geometry_msgs.PoseStamped, node + '/desired_pose', 10)
        self.pub_twist = create(geometry_msgs.TwistStamped, node + '/desired_twist', 10)
        self.task_errors = []
        self.node.create_subscription(geometry_msgs.TwistStamped, node + '/task_error',
                                      self.task_errors.append, 50)

    def pose(self, position, quaternion, frame=''):
        msg = geometry_msgs.PoseStamped()
        msg.header.frame_id = frame
        p, o = msg.pose.position, msg.pose.orientation
        p.x, p.y, p.z = (float(v) for v in position)
        o.x, o.y, o.z, o.w = (float(v) for v in quaternion)
        self.pub_pose.publish(msg)

    def twist(self, values, frame=''):
        msg = geometry_msgs.TwistStamped()
        msg.header.frame_id = frame
        v, w = msg.twist.linear, msg.twist.angular
        v.x, v.y, v.z, w.x, w.y, w.z = (float(x) for x in values)
        self.pub_twist.publish(msg)


@pytest.fixture(scope='module')
def task_node(urdf):
    params = {'robot_description': urdf, 'command_output': 'task', 'task.link': LINK,
              'task.stiffness': STIFFNESS, 'desired_timeout': 0.0}
    node = NodeProcess(params, namespace=NAMESPACE)
    peer = TaskPeer()
    yield node, peer
    peer.close()
    assert node.stop() == 0, node.log()


def _answer(peer, model, q, qd):
    """Return the command and the task error answering one joint state (error ``None``)."""
    del peer.task_errors[:]
    answer = exchange(peer, model.joint_names, q, qd)
    assert answer is not None
    peer.wait_for(lambda: peer.task_errors, 2.0)
    stamp = (answer[0].header.stamp.sec, answer[0].header.stamp.nanosec)
    errors = [e for e in peer.task_errors if (e.header.stamp.sec, e.header.stamp.nanosec) == stamp]
    error = None
    if errors:
        t = errors[-1].twist
        error = np.array([t.linear.x, t.linear.y, t.linear.z,
                          t.angular.x, t.angular.y, t.angular.z])
        assert errors[-1].header.frame_id == model.root_link
    return np.array(answer[2].data), error


def _until(peer, model, q, qd, expect, timeout=120.0):
    """Send the state until the command equals ``expect``; the last (command, error)."""
    found = []

    def matches():
        found[:] = [_answer(peer, model, q, qd)]
        return np.abs(found[0][0] - expect).max() <= TOL

    assert peer.wait_for(matches, timeout), (found[0] if found else None, expect)
    return found[0]


def _held(model, q):
    T = rbd.link_pose(model, q, LINK)
    return T[:3, 3], spatial.matrix_to_quaternion(T[:3, :3])


def test_the_task_output_over_topics(task_node, model):
    node, peer = task_node
    assert wait_ready(peer, model), node.log()
    assert peer.wait_for(lambda: peer.pub_pose.get_subscription_count() > 0
                         and peer.pub_twist.get_subscription_count() > 0), node.log()
    q = np.array([0.3, 0.5, -0.2, -1.1, 0.2, 0.7, 0.1, 0.02])
    zero = np.zeros(model.nv)
    # the law runs once its kernels are built (gravity compensation until then)
    assert peer.wait_for(lambda: _answer(peer, model, q, zero)[1] is not None), node.log()

    # switched from the joint-space output and back: it starts where the link is, bumpless
    (result,) = peer.set_parameters(command_output='feedforward')
    assert result.successful, result.reason
    assert _answer(peer, model, q, zero)[1] is None
    (result,) = peer.set_parameters(command_output='task')
    assert result.successful, result.reason
    command, error = _answer(peer, model, q, zero)
    np.testing.assert_allclose(command, rbd.gravity_torques(model, q), rtol=0, atol=TOL)
    np.testing.assert_allclose(error, 0.0, atol=1e-12)

    # a desired pose and twist from the topics
    position, quaternion = _held(model, q)
    axis = np.array([0.2, -0.6, 0.7]) / np.linalg.norm([0.2, -0.6, 0.7])
    R = rbd.spatial.axis_angle_to_matrix(axis, 0.03) @ rbd.link_pose(model, q, LINK)[:3, :3]
    target = (position + [0.01, -0.005, 0.02], spatial.matrix_to_quaternion(R))
    peer.pose(*target)
    expect = task.task_torques(model, q, zero, LINK, *target, stiffness=STIFFNESS)
    command, error = _until(peer, model, q, zero, expect.torque, 20.0)
    np.testing.assert_allclose(error, expect.error, rtol=0, atol=1e-12)
    np.testing.assert_allclose(error[:3], [0.01, -0.005, 0.02], atol=1e-12)
    qd = np.array([0.2, -0.1, 0.3, 0.1, -0.2, 0.1, 0.3, 0.0])
    twist = [0.05, 0.0, -0.02, 0.0, 0.1, 0.0]
    peer.twist(twist, frame=model.root_link)
    expect = task.task_torques(model, q, qd, LINK, *target, stiffness=STIFFNESS, twist=twist)
    _until(peer, model, q, qd, expect.torque)

    # bad inputs are refused with a reason; the last good pose and twist stay in use
    before, = peer.counts('rejected_desired')
    peer.pose(target[0], target[1], frame='link3')
    peer.pose(target[0], [0.0, 0.0, 0.0, 0.0])
    peer.pose(target[0], [0.0, 0.0, 1.0, 1.0])
    peer.pose([np.nan, 0.0, 0.3], target[1])
    peer.twist([np.inf, 0.0, 0.0, 0.0, 0.0, 0.0])
    assert peer.wait_count('rejected_desired', before + 5) == before + 5, node.log()
    assert "frame_id 'link3'" in peer.diagnostic('last desired rejection') or \
        'link3' in node.log()
    command, _ = _answer(peer, model, q, qd)
    np.testing.assert_allclose(command, expect.torque, rtol=0, atol=TOL)
    assert np.isfinite(command).all()

    # operational space, changed at runtime: the same pose, the law of the contract
    (result,) = peer.set_parameters(**{'task.mode': 'operational_space'})
    assert result.successful, result.reason
    expect = task.task_torques(model, q, qd, LINK, *target, mode='operational_space',
                               stiffness=STIFFNESS, twist=twist)
    _until(peer, model, q, qd, expect.torque)
    assert peer.wait_for(lambda: 'operational_space: commanding' in (
        peer.diagnostic('task') or ''), 30.0), peer.diagnostic('task')


@pytest.mark.parametrize('values, reason', [
    ({'task.link': 'nowhere'}, 'not a link'),
    ({'task.link': ''}, 'needs task.link'),
    ({'task.mode': 'admittance'}, 'unknown value'),
    ({'task.stiffness': [600.0] * 5 + [-1.0]}, '>= 0'),
    ({'task.stiffness': [600.0] * 3}, 'must be 6 numbers'),
    ({'task.damping': [1.0, 2.0]}, 'must be 6 numbers'),
    ({'task.nullspace_stiffness': -2.0}, '>= 0'),
])
def test_bad_task_settings_are_refused(task_node, model, values, reason):
    node, peer = task_node
    assert wait_ready(peer, model), node.log()
    params = [Parameter(name, value=value) for name, value in values.items()]
    (result,) = peer.set_parameters(*params)
    assert not result.successful
    assert reason in result.reason, result.reason
    assert peer.wait_for(lambda: LINK in (peer.diagnostic('task') or ''), 30.0)


def test_a_task_link_refused_at_start_corrected_at_runtime(urdf, model):
    """
    A start with an unknown ``task.link`` refuses the description; setting a link builds it.

    The description itself is fine: the node builds it again with the corrected setting
    (as it would with a corrected ``joints``), without a new description.
    """
    params = {'robot_description': urdf, 'command_output': 'task', 'task.link': 'nowhere'}
    node = NodeProcess(params, namespace='/task_fix')
    peer = Peer('/task_fix')
    try:
        assert peer.wait_matched(), node.log()
        assert peer.wait_for(lambda: 'rejected' in node.log(), 60.0), node.log()
        zero = np.zeros(model.nv)
        assert exchange(peer, model.joint_names, zero, zero, timeout=0.5) is None
        (result,) = peer.set_parameters(**{'task.link': LINK})
        assert result.successful, result.reason
        assert wait_ready(peer, model), node.log()
        assert 'after the description was refused' in node.log(), node.log()
    finally:
        peer.close()
        assert node.stop() == 0, node.log()
