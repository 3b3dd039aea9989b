"""How joint states reach the node: QoS, the joint-state thread and the executor path.

The node takes ``joint_states`` (and F/T readings) with best-effort QoS, as robot_state_publisher
does, so sensor-data publishers are heard; by default on a thread of its own
(``joint_states_thread``), otherwise in the executor. Both paths give the library's torques.
"""

import numpy as np
import pytest

rclpy = pytest.importorskip('rclpy')

import rbd_dynamics as rbd  # noqa: E402
from rclpy.qos import qos_profile_sensor_data  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from geometry_msgs.msg import WrenchStamped  # noqa: E402

from ros_helpers import NodeProcess, Peer  # noqa: E402

TOL = 1e-9


def stamp_of(msg):
    return msg.header.stamp.sec, msg.header.stamp.nanosec


@pytest.mark.parametrize('thread', [True, False], ids=['own_thread', 'executor'])
def test_sensor_data_publishers_and_both_paths(urdf, model, thread):
    """Best-effort joint states and wrench (a reliable subscription would never hear them):
    answered with the library's torques on either path; a burst is answered in full, in
    order."""
    namespace = '/transport_%s' % ('thread' if thread else 'executor')
    node = NodeProcess({'robot_description': urdf, 'joint_states_thread': thread,
                        'wrench_sensors': ['wrist'], 'wrench.wrist.topic': '/be/wrench',
                        'wrench.wrist.timeout': 0.0}, namespace=namespace)
    peer = Peer(namespace)
    states = peer.node.create_publisher(JointState, 'joint_states', qos_profile_sensor_data)
    wrenches = peer.node.create_publisher(WrenchStamped, '/be/wrench', qos_profile_sensor_data)
    try:
        assert peer.wait_for(lambda: states.get_subscription_count() > 0
                             and wrenches.get_subscription_count() > 0, 20.0), node.log()
        wrench = np.array([2.0, -1.0, 4.0, 0.2, 0.1, -0.1])
        msg = WrenchStamped()
        msg.header.frame_id = 'ft_frame'
        f, t = msg.wrench.force, msg.wrench.torque
        f.x, f.y, f.z, t.x, t.y, t.z = wrench.tolist()
        rng = np.random.default_rng(21)
        q = rng.uniform(-1.0, 1.0, (8, model.nq))
        qd = rng.uniform(-1.0, 1.0, (8, model.nv))

        def send(k):
            js = JointState()
            js.header.stamp = peer.node.get_clock().now().to_msg()
            js.header.stamp.nanosec = (js.header.stamp.nanosec // 1000) * 1000 + k
            js.name = list(model.joint_names)
            js.position = q[k].tolist()
            js.velocity = qd[k].tolist()
            states.publish(js)
            return stamp_of(js)

        def ready():  # the model is built and the wrench has arrived
            wrenches.publish(msg)
            peer.clear()
            stamp = send(0)
            peer.spin(0.2)
            return any(stamp_of(m) == stamp and np.allclose(
                m.effort, rbd.gravity_torques(model, q[0], {'ft_frame': wrench}), rtol=0,
                atol=TOL) for m in peer.gravity)

        assert peer.wait_for(ready, 30.0), node.log()
        # until then the node answers only the newest state of a burst (NumPy path)
        assert peer.wait_for(
            lambda: peer.diagnostic('compiled path') == 'in use', 20.0), node.log()
        peer.clear()
        stamps = [send(k) for k in range(8)]  # back to back: queued together at the node
        assert peer.wait_for(lambda: len(peer.feedforward) >= 8, 10.0), node.log()
        peer.spin(0.3)
        assert [stamp_of(m) for m in peer.feedforward] == stamps
        for k, (ff, g) in enumerate(zip(peer.feedforward, peer.gravity)):
            expect_ff = rbd.rnea(model, q[k], qd[k], np.zeros(model.nv), {'ft_frame': wrench})
            np.testing.assert_allclose(ff.effort, expect_ff, rtol=0, atol=TOL)
            np.testing.assert_allclose(g.effort, rbd.gravity_torques(
                model, q[k], {'ft_frame': wrench}), rtol=0, atol=TOL)
        where = 'a thread of their own' if thread else 'the executor'
        assert peer.wait_for(
            lambda: peer.diagnostic('joint_states taken on') == where, 5.0)
        assert peer.diagnostic('callback_failures') == '0'
    finally:
        peer.close()
        assert node.stop() == 0, node.log()


def test_without_a_wait_set_joint_states_go_through_the_executor(monkeypatch):
    """Where rclpy has no wait set to build the thread on, the node subscribes the usual way."""
    from rclpy.impl.implementation_singleton import rclpy_implementation
    from rbd_dynamics.ros import spinning
    from rbd_dynamics.ros.node import DynamicsNode

    def no_wait_set(*args):
        raise AttributeError('WaitSet')

    monkeypatch.setattr(rclpy_implementation, 'WaitSet', no_wait_set)
    if not rclpy.ok():
        rclpy.init()
    node = DynamicsNode(namespace='/no_wait_set')
    try:
        with pytest.raises(RuntimeError, match='no rclpy wait set: AttributeError: WaitSet'):
            spinning.SubscriptionThread(node)
        assert node._joint_state_thread is None
        groups = {sub.topic_name: type(sub.callback_group).__name__
                  for sub in node.subscriptions}
        assert groups['/no_wait_set/joint_states'] == 'MutuallyExclusiveCallbackGroup'
    finally:
        node.destroy_node()
