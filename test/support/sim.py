"""
The simulated arm's test side.

The driver alone (:class:`Sim`) and the closed loop of driver, node and desired-state
publisher (:class:`Loop`), each in its own processes, with the readers of their messages and
the reference swing.
"""

import time

from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import WrenchStamped
import numpy as np
import rbd_dynamics as rbd
from rbd_dynamics.resources import demo_urdf_path
from rbd_dynamics.ros import demo_setup, processes
from rbd_dynamics.ros.demo_setup import JOINTS
from rbd_dynamics.ros.executor import queued_messages, stop_threads, subscribe_on_thread
import rclpy
import rclpy.executors
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from .ros import ATTEMPT, NodeProcess, spin_until

SIM = processes.command(*processes.SIM)
TRAJECTORY = processes.command(*processes.TRAJECTORY)
#: The start pose of every simulated run, in ``JOINTS`` order (the demo's).
Q0 = np.array(demo_setup.Q0)
#: A drive on every joint of the simulated arm, heavier on the heavier joints (joints 1..7,
#: then the finger): viscous [N m s/rad], Coulomb [N m], armature [kg m^2]; SIM_DRIVE are the
#: simulated driver's parameters for it.
VISCOUS = [2.0, 2.0, 1.5, 1.5, 0.5, 0.3, 0.1, 2.0]
COULOMB = [1.0, 1.0, 0.5, 0.5, 0.2, 0.1, 0.02, 0.2]
ARMATURE = [0.3, 0.3, 0.2, 0.2, 0.05, 0.03, 0.01, 0.05]
SIM_DRIVE = {'drive.enabled': True, 'drive.viscous': VISCOUS, 'drive.coulomb': COULOMB,
             'drive.armature': ARMATURE}


def stamp(msg):
    return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec


class Sim:
    """
    The driver under test and the test side.

    The driver in namespace ``ns`` and the test's side: every joint state and wrench is
    recorded; in lockstep ``controller(msg)`` (if given) answers each joint state with the
    effort command in ``JOINTS`` order.
    """

    def __init__(self, ns, params, controller=None):
        sim = {'lockstep': True, 'rate': 1000.0, 'joints': JOINTS,
               'initial_positions': Q0.tolist(), 'wait_for_subscribers': 1}
        sim.update(params)
        self.proc = NodeProcess(sim, ns, command=SIM)
        if not rclpy.ok():
            rclpy.init()
        self.node = rclpy.create_node('sim_peer', namespace=ns)
        self.executor = rclpy.executors.SingleThreadedExecutor()
        self.executor.add_node(self.node)
        self.states, self.wrenches = [], []
        self.controller = controller
        self._answered = (-1.0, 0.0)  # (stamp, monotonic time) of the last state answered
        self.pub_command = self.node.create_publisher(Float64MultiArray, 'effort_commands', 10)
        self.pub_trajectory = self.node.create_publisher(JointTrajectory, 'joint_trajectory', 10)
        # deep enough to keep every state of a run the test reads after it (a free-running
        # simulation does not wait for the test)
        self.node.create_subscription(JointState, 'joint_states', self._on_state, 5000)
        self.node.create_subscription(WrenchStamped, 'ft_sensor/wrench', self.wrenches.append,
                                      5000)
        self.diagnostics = []  # this driver's statuses on /diagnostics
        self.node.create_subscription(DiagnosticArray, '/diagnostics', self._on_diagnostics, 10)

    def _on_diagnostics(self, msg):
        name = '%s/rbd_dynamics_sim: simulation' % self.node.get_namespace()
        self.diagnostics += [status for status in msg.status if status.name == name]

    def _on_state(self, msg):
        self.states.append(msg)
        # one answer per state: the driver repeats its initial state until the first command,
        # and a slow test would answer every repeat; each answer steps the simulation, so the
        # extra ones would put commands in flight and delay every later answer by a step. A
        # repeat is answered again only when the last answer is ATTEMPT old: it was lost (sent
        # before the driver's subscription knew this publisher), and the driver waits for it.
        when, now = stamp(msg), time.monotonic()
        if self.controller is not None and (
                when > self._answered[0]
                or when == self._answered[0] and now - self._answered[1] >= ATTEMPT):
            self._answered = (when, now)
            command = self.controller(msg)
            self.pub_command.publish(Float64MultiArray(data=[float(v) for v in command]))

    def spin_until(self, predicate, timeout=120.0):
        assert spin_until(self.executor, predicate, timeout, 0.05, self.proc.alive), \
            self.proc.log()[-3000:]

    def run_until(self, sim_time, timeout=120.0):
        self.spin_until(lambda: self.states and stamp(self.states[-1]) >= sim_time, timeout)

    def close(self):
        self.executor.remove_node(self.node)
        self.node.destroy_node()
        assert self.proc.stop() == 0, self.proc.log()[-3000:]


def positions(msg, joints=JOINTS):
    names = list(msg.name)
    return np.array([msg.position[names.index(n)] for n in joints])


def velocities(msg, joints=JOINTS):
    names = list(msg.name)
    return np.array([msg.velocity[names.index(n)] for n in joints])


def efforts(msg, joints=JOINTS):
    names = list(msg.name)
    return np.array([msg.effort[names.index(n)] for n in joints])


def wrench(msg):
    f, t = msg.wrench.force, msg.wrench.torque
    return np.array([f.x, f.y, f.z, t.x, t.y, t.z])


def diagnostic_values(status):
    return {kv.key: kv.value for kv in status.values}


def swing(t):
    """Swing every joint at 0.5 Hz from rest at Q0: the reference ``(q, qd, qdd)``."""
    return demo_setup.swing(t, Q0, [0.2, 0.15, 0.2, 0.15, 0.2, 0.2, 0.2, 0.0], 0.5)


def trajectory_message(model, with_effort, duration=2.0, step=0.02):
    times = np.arange(0.0, duration + step / 2, step)
    q, qd, qdd = swing(times)
    msg = JointTrajectory()
    msg.joint_names = JOINTS
    order = [JOINTS.index(n) for n in model.joint_names]
    back = [model.joint_names.index(n) for n in JOINTS]
    tau = rbd.rnea(model, q[:, order], qd[:, order], qdd[:, order])[:, back]
    for k, t in enumerate(times):
        point = JointTrajectoryPoint(positions=q[k].tolist(), velocities=qd[k].tolist(),
                                     accelerations=qdd[k].tolist())
        if with_effort:
            point.effort = tau[k].tolist()
        point.time_from_start.sec = int(t)
        point.time_from_start.nanosec = int(round((t - int(t)) * 1e9))
        msg.points.append(point)
    return msg


def low_trajectory_gains(model):
    """
    Return the trajectory controller's parameters with PID gains far too low to hold the arm.

    The gains are critically damped at 10 rad/s on the diagonal of the mass matrix at Q0.
    """
    order = [model.joint_names.index(n) for n in JOINTS]
    q0 = np.empty(model.nv)
    q0[order] = Q0
    inertia = np.array([rbd.rnea(model, q0, np.zeros(model.nv), np.eye(model.nv)[j])[j]
                        - rbd.gravity_torques(model, q0)[j] for j in order])
    return {'controller': 'joint_trajectory', 'jtc.p': (100.0 * inertia).tolist(),
            'jtc.d': (20.0 * inertia).tolist()}


RATE = demo_setup.RATE
BATCH = 0.005  # s between two takes of a loop's recorded outputs (Loop.run_until)


class Loop:
    """
    Sim, node (and optionally the trajectory publisher) in namespace ``ns``.

    ``observer``: the parameters of a second node, ``observer``, that watches the loop from
    outside the lockstep (its joint states are the simulator's; its gravity compensation is
    recorded in ``observed``). The simulation starts only once it listens too, so its answers
    cover the run from the start however slowly the machine starts processes.

    ``record``: ``{name: (message type, topic, qos)}`` of more outputs to keep from the start
    in ``self.recorded[name]`` (matched before the simulation can start, like the observer's).

    ``gravity``: keep the node's ``~/gravity_compensation`` in ``self.gravity`` (from when it
    matches). Off unless asked: every message the node publishes and the test takes costs
    both processes time at each of the loop's thousand steps a second.

    ``stream``: ``{topic: (message type, make)}``: inputs of the node the test computes from
    each joint state, ``make(msg)`` giving the message (the node's desired pose, for one);
    ``{}``: none, the joint states alone. The test publishes them, then forwards the joint
    state to the node, which listens on ``joint_states_forwarded``: the node always has the
    inputs of a state before the state. The node's commands come back through the test too
    (``effort_commands_node``), one per state forwarded, and before the simulation starts the
    test primes the node (:meth:`_prime`): the loop is the same however slowly the node starts
    or loads its kernels, and however the processes are scheduled.

    ``settle``: ``(message type, topic)`` the node answers a state on once its output is the
    one of the run (``~/task_error``: the task-space law, not the gravity compensation it
    gives while that law's kernels load); with ``stream`` only.
    """

    def __init__(self, ns, node_params, sim_params=None, trajectory=None, observer=None,
                 record=None, stream=None, settle=None, gravity=False):
        forwarding = stream is not None
        self._keep_gravity = gravity
        if trajectory and forwarding:
            raise ValueError('a loop forwards the joint states from the trajectory publisher '
                             'or from the test, not both')
        # the loop starts once the test's own subscriber (and the node or the trajectory
        # publisher, and the observer) listen to the simulated joint states; a forwarding
        # test is the node's only way to the joint states
        sim = {'lockstep': True, 'rate': RATE, 'initial_positions': Q0.tolist(), 'joints': JOINTS,
               'wait_for_subscribers': (1 if forwarding else 2) + (1 if observer else 0)}
        sim.update(sim_params or {})
        with open(demo_urdf_path()) as source:
            urdf = source.read()
        params = {'use_sim_time': True, 'joints': JOINTS, 'desired_timeout': 0.05,
                  'robot_description': urdf}
        params.update(node_params)
        remap = ['-r', '~/effort_commands:=%s/effort_commands%s'
                 % (ns, '_node' if forwarding else '')]
        if trajectory:
            # the node sees each joint state after the trajectory publisher has answered it
            remap += ['-r', '~/desired_state:=%s/desired_state' % ns]
        if trajectory or forwarding:
            remap += ['-r', 'joint_states:=%s/joint_states_forwarded' % ns]
        self.procs = [NodeProcess(sim, ns, command=SIM),
                      NodeProcess(params, ns, extra_args=remap)]
        if observer:
            self.procs.append(NodeProcess(
                dict(observer, use_sim_time=True, joints=JOINTS, robot_description=urdf), ns,
                extra_args=['-r', '__node:=observer']))
        if trajectory:
            self.procs.append(NodeProcess(dict(trajectory, joints=JOINTS, use_sim_time=True,
                                               forward_joint_states=True),
                                          ns, command=TRAJECTORY))
        try:
            self._connect(ns, sim, observer, record, stream, settle, bool(trajectory))
        except BaseException:  # (a failed start leaves no process behind)
            for proc in self.procs:
                proc.stop()
            raise

    def _connect(self, ns, sim, observer, record, stream, settle, trajectory):
        """Match the test's side with the processes (and prime the node when forwarding)."""
        forwarding = stream is not None
        if not rclpy.ok():
            rclpy.init()
        self.peer = rclpy.create_node('closed_loop_peer', namespace=ns)
        # one executor for the whole run: it serves every ready subscription in turn
        self.executor = rclpy.executors.SingleThreadedExecutor()
        self.executor.add_node(self.peer)
        self.states, self.gravity, self.observed = [], [], []
        self._batched = []  # (subscription, list): the recorded outputs (keep_messages)
        if observer:
            # matched with the observer's output before the test's joint-state subscription
            # exists, and so before the simulation can start
            observed = self.keep_messages(JointState, 'observer/gravity_compensation',
                                          self.observed, 5000)
            assert spin_until(self.executor, lambda: observed.get_publisher_count() > 0, 120.0,
                              0.05, self._alive), self.logs()
        self.recorded = {}
        subscriptions = []
        for name, (kind, topic, qos) in (record or {}).items():
            self.recorded[name] = []
            subscriptions.append(self.keep_messages(kind, topic, self.recorded[name], qos))
        # deep enough that a late node still gets every input in order
        self.streams = [(self.peer.create_publisher(kind, topic, 100), make)
                        for topic, (kind, make) in (stream or {}).items()]
        self._forwarded = None  # (stamp, monotonic time) of the last joint state forwarded
        self._awaiting = False  # a forwarded state's command has not come back yet
        self._priming = forwarding
        self._probe_answers = []
        self.dropped = 0  # commands beyond one per forwarded state (none, once primed)
        publishers = list(self.streams)
        # The joint states (and, forwarding, the node's commands) are taken on threads of
        # their own, outside the executor: rclpy's executor costs a few hundred microseconds
        # of a core per message, a thousand times a second, and the processes of the loop
        # (two loops at once, on two workers) wait for the cores this process takes.
        if forwarding:
            self.streams.append((self.peer.create_publisher(
                JointState, 'joint_states_forwarded', 100), lambda msg: msg))
            self._relay = self.peer.create_publisher(Float64MultiArray, 'effort_commands', 10)
            publishers += [self.streams[-1], (self._relay, None)]
            subscriptions.append(self._subscribe(Float64MultiArray, 'effort_commands_node',
                                                 self._on_command, 100))
        self._settled = []
        if settle is not None:
            subscriptions.append(self.peer.create_subscription(
                settle[0], settle[1], self._settled.append, 100))
        assert spin_until(self.executor,
                          lambda: all(s.get_publisher_count() > 0 for s in subscriptions)
                          and all(p.get_subscription_count() > 0 for p, _ in publishers),
                          120.0, 0.05, self._alive), self.logs()
        if forwarding:
            self._prime(sim, settle)
            for recorded in self.recorded.values():
                recorded.clear()  # the answers to the probes
        else:
            self._await_answering(ns, trajectory)
        self._subscribe(JointState, 'joint_states', self._on_state, 5000)
        if self._keep_gravity:
            self.keep_messages(JointState, 'rbd_dynamics/gravity_compensation', self.gravity, 100)

    def keep_messages(self, kind, topic, kept, depth):
        """
        Keep every message of ``topic`` in the list ``kept``.

        Through the executor, and in batches while :meth:`run_until` runs (:meth:`_take`).
        """
        subscription = self.peer.create_subscription(kind, topic, kept.append, depth)
        self._batched.append((subscription, kept))
        return subscription

    def _await_answering(self, ns, trajectory):
        """
        Wait until the node can answer the driver's first state.

        The driver publishes it once this test's joint-state subscription listens (the last
        of ``wait_for_subscribers``), and again only after a second without a command
        (:data:`rbd_dynamics.ros.sim_driver.INITIAL_REPEAT`): the node is to have its model by
        then and, with the trajectory publisher between them, the two are to be connected.
        """
        node = self.procs[1]
        links = ('%s/joint_states_forwarded' % ns, '%s/desired_state' % ns) if trajectory \
            else ()
        assert spin_until(self.executor, lambda: "model '" in node.log() and all(
            self.peer.count_publishers(topic) and self.peer.count_subscribers(topic)
            for topic in links), 120.0, 0.05, self._alive), self.logs()

    def _subscribe(self, kind, topic, callback, depth):
        """Subscribe with ``callback(msg)`` called on a thread of the subscription's own."""
        return subscribe_on_thread(self.peer, kind, topic, callback, depth)

    def _alive(self):
        return all(p.alive() for p in self.procs)

    def _prime(self, sim, settle, timeout=300.0):
        """
        Have the node answer the simulation's first state, with the run's output, before it runs.

        The node takes joint states before its compiled path is in use (answering on the NumPy
        path) and, with ``settle``, before the kernels of that output are loaded (answering
        otherwise meanwhile). The test sends it the simulation's first state (the driver's
        initial positions at rest, stamped 0; the driver does not run yet, its commands do not
        reach it) until the node's log says the compiled path is settled, in use or not, and an
        answer came on ``settle``; then until no answer is on its way.
        """
        probe = JointState(name=list(sim['joints']), position=list(sim['initial_positions']),
                           velocity=[0.0] * len(sim['joints']), effort=[0.0] * len(sim['joints']))
        answers = []
        self._probe_answers = answers
        settled = self._settled
        end = time.monotonic() + timeout
        node = self.procs[1]
        while True:
            assert time.monotonic() < end and self._alive(), \
                'the node did not settle: %s' % self.logs()
            compiled = 'compiled path ' in node.log()
            count = (len(answers), len(settled))
            for publisher, make in self.streams:
                publisher.publish(make(probe))
            spin_until(self.executor, lambda: len(answers) > count[0]
                       and (settle is None or len(settled) > count[1]), ATTEMPT, 0.01)
            if compiled and len(answers) > count[0] and (settle is None
                                                         or len(settled) > count[1]):
                break
            spin_until(self.executor, lambda: False, 0.05, 0.01)
        # no answer on its way any more
        while spin_until(self.executor, lambda: len(answers) > count[0], 0.3, 0.01):
            count = (len(answers), len(settled))
        self._priming = False

    def _on_command(self, msg):
        if self._priming:
            self._probe_answers.append(msg)
        elif self._awaiting:
            self._awaiting = False
            self._relay.publish(msg)
        else:
            self.dropped += 1

    def _on_state(self, msg):
        self.states.append(msg)
        if not self.streams:
            return
        # Until its first command the lockstep driver repeats its first state (every second): a
        # repeat goes on only when the node has not answered for ATTEMPT (a lost message).
        now = time.monotonic()
        when = self.stamp(msg)
        if self._forwarded is not None and when <= self._forwarded[0] \
                and (not self._awaiting or now - self._forwarded[1] < ATTEMPT):
            return
        self._forwarded = (when, now)
        self._awaiting = True
        for publisher, make in self.streams:  # the joint state itself last
            publisher.publish(make(msg))

    def run_until(self, sim_time, timeout=120.0):
        """
        Run until a joint state at or after ``sim_time``: ``(t, q)`` arrays, model order.

        The states come on their own thread. The recorded outputs are taken here, every
        :data:`BATCH` s, all that are queued at once: the executor takes one message per
        wake-up, at a few hundred microseconds of a core each, and at 1 kHz that is CPU the
        loop's processes wait for. The executor then serves what else is ready.
        """
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            time.sleep(BATCH)
            self._take()
            self.executor.spin_once(timeout_sec=0.0)
            if self.states and self.stamp(self.states[-1]) >= sim_time:
                break
            if not all(p.alive() for p in self.procs):
                break
        self._take()
        states = list(self.states)
        t = np.array([self.stamp(m) for m in states])
        index = [list(states[0].name).index(n) for n in JOINTS] if states else []
        q = np.array([np.asarray(m.position)[index] for m in states])
        return t, q

    def _take(self):
        """Take every queued message of the recorded outputs, in order, into their lists."""
        for subscription, kept in self._batched:
            with subscription.handle:
                kept.extend(queued_messages(subscription))

    @staticmethod
    def stamp(msg):
        return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec

    def logs(self):
        return '\n'.join(p.log()[-2000:] for p in self.procs)

    def close(self):
        stop_threads(self.peer)
        self.executor.remove_node(self.peer)
        self.peer.destroy_node()
        codes = [p.stop() for p in self.procs]
        return codes
