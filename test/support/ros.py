"""
Start the node as its own process and talk to it over real ROS 2 topics.

``NodeProcess`` starts ``rbd_dynamics_node`` the way the launch file does
(``--ros-args --params-file``, :mod:`rbd_dynamics.ros.processes`); ``Peer`` is the test's
side of the graph: publishers for every input, subscriptions that record every output, and the
node's parameter service.
"""

import contextlib
import os
import subprocess
import tempfile
import time

from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import InertiaStamped, WrenchStamped
import numpy as np
from rbd_dynamics.ros import processes
from rbd_dynamics.ros.processes import RosProcess
from rcl_interfaces.srv import SetParameters
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

NODE = 'rbd_dynamics'

#: How long one try of a repeated exchange waits for its answer [s]: a joint state sent before
#: the node listens, or has a model, is never answered, so the next try goes out after this;
#: the whole wait is bounded by the caller's much longer deadline.
ATTEMPT = 2.0


def spin_until(executor, predicate, timeout=120.0, period=0.01, alive=None):
    """
    Spin ``executor`` until ``predicate()`` holds.

    Spin until ``predicate()`` is true, ``timeout`` [s] has passed or ``alive()`` (when given)
    is false; return the predicate's last value.
    """
    end = time.monotonic() + timeout
    while time.monotonic() < end and (alive is None or alive()):
        if predicate():
            return True
        executor.spin_once(timeout_sec=period)
    return predicate()


def run_spinning(executor, command, timeout=60.0, period=0.05, drain=0):
    """
    Run ``command`` in a process while spinning ``executor``: ``(exit code, stdout, stderr)``.

    ``drain`` more spins once it has ended, for what is still in flight.
    """
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        spin_until(executor, lambda: proc.poll() is not None, timeout, period)
        for _ in range(drain):
            executor.spin_once(timeout_sec=0.01)
        code = proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
    return code, proc.stdout.read(), proc.stderr.read()


class NodeProcess(RosProcess):
    """
    An executable of the package (default: the node) in its own process, output to a log.

    Each test fixture runs its node in its own namespace (as the launch file's ``namespace``
    argument does), so nodes that overlap in time never share a topic.
    """

    def __init__(self, params=None, namespace='', params_files=(), extra_args=(), command=None):
        log_dir = tempfile.mkdtemp(prefix='rbd_node_')
        self.log_path = os.path.join(log_dir, 'node.log')
        self._log = open(self.log_path, 'w')
        super().__init__(command or processes.command(*processes.NODE), params, namespace,
                         params_files, extra_args, stdout=self._log)

    def log(self):
        with open(self.log_path) as stream:
            return stream.read()

    def stop(self, timeout=60.0):
        """Interrupt the node; its exit code (0 for a clean shutdown)."""
        code = super().stop(timeout)
        self._log.close()
        return code

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


class Peer:
    """The test's node: publishes inputs, records outputs."""

    def __init__(self, namespace='', sensor_topics=(), name='rbd_test_peer'):
        if not rclpy.ok():
            rclpy.init()
        node = '%s/%s' % (namespace, NODE)
        self.node_path = node
        self.node = rclpy.create_node(name, namespace=namespace or None)
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)
        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        n = self.node
        self.pub_description = n.create_publisher(String, 'robot_description', latched)
        self.pub_joint_states = n.create_publisher(JointState, 'joint_states', 10)
        self.pub_desired = n.create_publisher(JointTrajectory, '%s/desired_state' % node, 10)
        self.pub_desired_acc = n.create_publisher(Float64MultiArray,
                                                  '%s/desired_accelerations' % node, 10)
        self.pub_wrench = {topic: n.create_publisher(WrenchStamped, topic, 10)
                           for topic in sensor_topics}
        self.feedforward, self.gravity, self.commands, self.diagnostics = [], [], [], []
        n.create_subscription(JointState, '%s/feedforward' % node, self.feedforward.append, 50)
        n.create_subscription(JointState, '%s/gravity_compensation' % node,
                              self.gravity.append, 50)
        n.create_subscription(Float64MultiArray, '%s/effort_commands' % node,
                              self.commands.append, 50)
        n.create_subscription(DiagnosticArray, '/diagnostics', self.diagnostics.append, 10)
        self.param_client = n.create_client(SetParameters, '%s/set_parameters' % node)
        self.pub_payload = n.create_publisher(InertiaStamped, '%s/payload' % node, 10)
        self.pub_trajectory = n.create_publisher(JointTrajectory, '%s/trajectory' % node, 10)
        self.trajectories = []
        self.sub_trajectories = n.create_subscription(
            JointTrajectory, '%s/trajectory_with_effort' % node, self.trajectories.append, 10)
        self._triggers = {}

    def spin(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.executor.spin_once(timeout_sec=0.01)

    def wait_for(self, predicate, timeout=120.0):
        return spin_until(self.executor, predicate, timeout)

    def clear(self):
        del self.feedforward[:], self.gravity[:], self.commands[:]

    def wait_matched(self, timeout=120.0, desired=False):
        """
        Wait until the node is connected to the test.

        Until the node subscribes to joint_states and publishes feedforward (``desired``:
        and subscribes to both desired inputs, so that a single message reaches it).
        """
        pubs = [self.pub_joint_states] + ([self.pub_desired, self.pub_desired_acc]
                                          if desired else [])
        return self.wait_for(lambda: all(pub.get_subscription_count() > 0 for pub in pubs)
                             and self.node.count_publishers(self.node_path + '/feedforward') > 0,
                             timeout)

    def joint_state(self, names, positions=(), velocities=(), stamp=None):
        msg = JointState()
        msg.header.stamp = stamp or self.node.get_clock().now().to_msg()
        msg.name = list(names)
        msg.position = [float(v) for v in positions]
        msg.velocity = [float(v) for v in velocities]
        self.pub_joint_states.publish(msg)
        return msg

    def desired(self, names, accelerations, positions=(), velocities=()):
        msg = JointTrajectory()
        msg.joint_names = list(names)
        point = JointTrajectoryPoint()
        point.accelerations = [float(v) for v in accelerations]
        point.positions = [float(v) for v in positions]
        point.velocities = [float(v) for v in velocities]
        msg.points = [point]
        self.pub_desired.publish(msg)

    def wrench(self, topic, frame, values):
        msg = WrenchStamped()
        msg.header.frame_id = frame
        msg.header.stamp = self.node.get_clock().now().to_msg()
        f, t = msg.wrench.force, msg.wrench.torque
        f.x, f.y, f.z, t.x, t.y, t.z = [float(v) for v in values]
        self.pub_wrench[topic].publish(msg)

    def payload(self, link, mass, com=(0.0, 0.0, 0.0), inertia=(0.0,) * 6):
        msg = InertiaStamped()
        msg.header.frame_id = link
        msg.inertia.m = float(mass)
        msg.inertia.com.x, msg.inertia.com.y, msg.inertia.com.z = [float(v) for v in com]
        i = msg.inertia
        i.ixx, i.ixy, i.ixz, i.iyy, i.iyz, i.izz = [float(v) for v in inertia]
        self.pub_payload.publish(msg)

    def trigger(self, service):
        """
        Call the node's ``std_srvs/Trigger`` service ``service``.

        Call the node's ``std_srvs/Trigger`` service ``service`` (relative to the node):
        ``(success, message)``.
        """
        client = self._triggers.get(service)
        if client is None:
            client = self._triggers[service] = self.node.create_client(
                Trigger, '%s/%s' % (self.node_path, service))
        assert client.wait_for_service(timeout_sec=60.0), service
        future = client.call_async(Trigger.Request())
        assert self.wait_for(future.done, 60.0)
        return future.result().success, future.result().message

    def diagnostic(self, key):
        """Return the latest value of ``key`` in the node's diagnostics, or ``None``."""
        for array in reversed(self.diagnostics):
            for status in array.status:
                if status.name.startswith(self.node_path + ':'):
                    for value in status.values:
                        if value.key == key:
                            return value.value
        return None

    def diagnostic_history(self, key):
        """Every value of ``key`` in the node's diagnostics received so far, oldest first."""
        return [value.value for array in self.diagnostics for status in array.status
                if status.name.startswith(self.node_path + ':')
                for value in status.values if value.key == key]

    def counts(self, *keys, timeout=60.0):
        """
        Read the node's diagnostics counters.

        The node's counters ``keys`` (ints) from a diagnostics message that arrives after
        this call, so every input sent before it has been counted or is in flight.
        """
        del self.diagnostics[:]
        assert self.wait_for(lambda: self.diagnostic(keys[0]) is not None, timeout), \
            'no diagnostics from %s within %.0f s' % (self.node_path, timeout)
        return [int(self.diagnostic(key)) for key in keys]

    def wait_count(self, key, value, timeout=60.0):
        """Until the counter ``key`` reaches ``value``: its last value (an int, or ``None``)."""
        self.wait_for(lambda: self.diagnostic(key) is not None
                      and int(self.diagnostic(key)) >= value, timeout)
        last = self.diagnostic(key)
        return None if last is None else int(last)

    def set_parameters(self, *params, **values):
        """
        Set parameters on the node.

        Set parameters on the node (``rclpy.parameter.Parameter`` objects, for an empty
        list with its type, and name=value pairs): the list of ``SetParametersResult``.
        """
        assert self.param_client.wait_for_service(timeout_sec=60.0)
        request = SetParameters.Request()
        params = list(params) + [Parameter(name, value=value) for name, value in values.items()]
        request.parameters = [param.to_parameter_msg() for param in params]
        future = self.param_client.call_async(request)
        assert self.wait_for(future.done, 60.0)
        return future.result().results

    def close(self):
        self.executor.remove_node(self.node)
        self.node.destroy_node()


def publish_at(peer, names, q, effort, stamp_ns):
    """Publish a joint state at rest stamped ``stamp_ns`` with ``effort`` (``None``: none)."""
    msg = JointState(name=list(names), position=[float(v) for v in q],
                     velocity=[0.0] * len(names),
                     effort=[] if effort is None else [float(v) for v in effort])
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp_ns, 10 ** 9)
    peer.pub_joint_states.publish(msg)


def stamped(messages, stamp_ns):
    """Return the messages stamped ``stamp_ns``."""
    return [m for m in messages
            if m.header.stamp.sec * 10 ** 9 + m.header.stamp.nanosec == stamp_ns]


def first_answered(send, first=-50, timeout=0.5, log=None):
    """
    Send the states ``first``, ``first + 1``, ... ms by ``send(k, timeout)`` until one is answered.

    A test can see the node's publisher before the node has discovered the test's new
    subscription and publishes to it, so the first states after subscribing can go unanswered
    (``send`` returns ``None`` for them). By default the states stay within 50 ms before 0 ms,
    inside the observer's largest gap (0.1 s). Returns the ``k`` answered; ``log``, the node's
    log, goes into the failure's message.
    """
    for k in range(first, 0):
        if send(k, timeout) is not None:
            return k
    raise AssertionError('none of the states from %d ms to -1 ms was answered%s'
                         % (first, '' if log is None else ': %s' % log()))


def exchange(peer, names, q=(), qd=(), timeout=60.0):
    """
    Send one joint state; the (feedforward, gravity, command) answering it, or ``None``.

    Every cycle publishes one message on each output; the command carries no stamp, so it is
    the last one once as many commands as feedforward messages have arrived.
    """
    peer.clear()
    msg = peer.joint_state(names, q, qd)
    stamp = (msg.header.stamp.sec, msg.header.stamp.nanosec)

    def match(messages):
        found = [m for m in messages if (m.header.stamp.sec, m.header.stamp.nanosec) == stamp]
        return found[-1] if found else None

    def answered():
        return (match(peer.feedforward) is not None and match(peer.gravity) is not None
                and len(peer.commands) >= len(peer.feedforward))

    if not peer.wait_for(answered, timeout):
        return None
    return match(peer.feedforward), match(peer.gravity), peer.commands[-1]


def no_answer(peer, names, q=(), qd=(), wait=0.5):
    """Send one joint state and check that nothing answers it."""
    peer.clear()
    peer.joint_state(names, q, qd)
    peer.spin(wait)
    return not peer.feedforward and not peer.gravity and not peer.commands


def wait_for_torques(peer, names, q, qd=(), feedforward=None, gravity=None, joints=None,
                     timeout=120.0, tol=1e-9):
    """
    Send the joint state until an answer carries these torques.

    Send the joint state until an answer carries these torques (and these output
    ``joints``): for a change the node applies asynchronously (a new model, an input on
    another topic). The matching answer, or ``None`` when none came within ``timeout``.
    """
    found = []

    def matches():
        answer = exchange(peer, names, q, qd, timeout=ATTEMPT)
        if answer is None:
            return False
        ff, g, _ = answer
        if joints is not None and (list(ff.name) != list(joints)
                                   or list(g.name) != list(joints)):
            return False
        for msg, expect in ((ff, feedforward), (g, gravity)):
            if expect is not None and not (len(msg.effort) == len(expect) and np.allclose(
                    msg.effort, expect, rtol=0, atol=tol)):
                return False
        found.append(answer)
        return True

    return found[-1] if peer.wait_for(matches, timeout) else None


def wait_ready(peer, model, timeout=120.0):
    """Until the node has a model and answers a complete joint state."""
    assert peer.wait_matched(timeout)
    zero = np.zeros(model.nv)
    return peer.wait_for(
        lambda: exchange(peer, model.joint_names, zero, zero, timeout=ATTEMPT) is not None,
        timeout)


@contextlib.contextmanager
def ready_node(params, namespace, model, sensor_topics=(), params_files=()):
    """
    Start the node and a peer in ``namespace``; yield ``(process, peer)`` once it answers.

    ``params_files`` are given after ``params`` (``--params-file`` each). Afterwards the peer
    is closed and the node stopped, which must exit cleanly.
    """
    process = NodeProcess(params, namespace=namespace, params_files=params_files)
    peer = Peer(namespace, sensor_topics=sensor_topics)
    try:
        assert wait_ready(peer, model), process.log()
        yield process, peer
    finally:
        peer.close()
        assert process.stop() == 0, process.log()


def in_order(model, joints, tau):
    index = [model.joint_names.index(name) for name in joints]
    return np.asarray(tau)[index]
