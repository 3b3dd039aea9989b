"""
What the node publishes: the torques of a joint state, the observer's outputs, the diagnostics.

:class:`Outputs` holds the node's publishers and the messages reused on every joint state, and
answers a complete joint state (:meth:`Outputs.publish`): the torque law's outputs first
(``~/feedforward``, ``~/gravity_compensation``, ``~/effort_commands``, ``~/task_error``), which
a controller waits for, then the momentum observer's (``~/external_effort``,
``~/external_wrench``, the latched ``~/contact``). It also publishes the trajectories with
their efforts and the ``/diagnostics`` status. :class:`LogRateLimit` keeps the repeated
warnings of the node to one per :data:`LOG_PERIOD`.
"""

import threading
import time

from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import TwistStamped, WrenchStamped
import numpy as np
from rbd_dynamics.control import base, task
from rbd_dynamics.control.observer import wrench_at
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message
try:
    from rclpy.event_handler import PublisherEventCallbacks
except ImportError:  # Humble
    from rclpy.qos_event import PublisherEventCallbacks
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool, Float64MultiArray
from trajectory_msgs.msg import JointTrajectory

from .conversions import JointStateBytes, to_float_array
from .diagnostics import base_values, ComputeTimes, dynamics_status, observer_values, \
    task_values, vector_text

LOG_PERIOD = 2.0  # s, the rate limit of repeated warnings
# The robot description and ~/contact: reliable, the last message kept for late subscribers.
LATCHED_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)


#: How long :class:`Listened` keeps a publisher's answer [ns].
LISTENED_PERIOD_NS = 100_000_000


def joint_state_bytes(names):
    """
    Return a :class:`~.conversions.JointStateBytes` of ``names``, or ``None``.

    ``None`` where the middleware does not read its bytes as the message they stand for (a
    serialization other than plain little-endian CDR): the messages are then published as
    objects.
    """
    names = list(names)
    effort = np.arange(len(names), dtype=float) - 0.5
    serialized = JointStateBytes(names)
    try:
        msg = deserialize_message(serialized.serialized(7, 11, effort), JointState)
    except Exception:  # (any refusal of the bytes: the objects' way)
        return None
    if msg.name != names or list(msg.effort) != effort.tolist() or msg.position.tolist() or \
            msg.velocity.tolist() or msg.header.frame_id or \
            (msg.header.stamp.sec, msg.header.stamp.nanosec) != (7, 11):
        return None
    return serialized


class LogRateLimit:
    """
    Say whether a rate-limited log line is due (once per ``LOG_PERIOD``).

    rclpy's own ``throttle_duration_sec`` inspects the caller's frame (its source file on disk)
    on every call, before it decides to skip: some hundred microseconds, paid on each joint
    state while a command saturates. Here a skipped line costs a clock read.
    """

    def __init__(self):
        self._logged = {}  # rate-limited log line -> when it was last written

    def due(self, key):
        """Say whether the line ``key`` is due, and if so count it as written now."""
        now = time.monotonic()
        last = self._logged.get(key)
        if last is not None and now - last < LOG_PERIOD:
            return False
        self._logged[key] = now
        return True


class Listened:
    """
    Say whether a publisher has subscribers, asking the middleware at most once a period.

    The period is :data:`LISTENED_PERIOD_NS`, per publisher. Asking costs a few microseconds
    each time (more while another thread holds the node's handles), three or more per joint
    state; a subscriber that comes or goes is seen within the period, well within the time DDS
    takes to discover it.
    """

    def __init__(self):
        self._asked = {}  # publisher -> (when it was asked [ns, monotonic], whether any)

    def __call__(self, publisher):
        """Say whether ``publisher`` had subscribers when last asked."""
        now = time.monotonic_ns()
        asked = self._asked.get(publisher)
        if asked is None or now - asked[0] > LISTENED_PERIOD_NS:
            asked = (now, publisher.get_subscription_count() > 0)
            self._asked[publisher] = asked
        return asked[1]


class Outputs:
    """
    The node's publishers, and what a joint state is answered with.

    Threads: :meth:`publish` runs on the joint-state path; :meth:`publish_contact` also on the
    executor thread (``~/reset_contact``), under a lock of its own so that each change of the
    contact state is published once and in order; :meth:`publish_trajectory` and
    :meth:`publish_diagnostics` on the executor thread.
    """

    def __init__(self, node, controller, source, transaction, counts, last_errors, log_due):
        """
        Make the publishers on ``node``, and publish the contact state.

        Parameters
        ----------
        node
            the rclpy node (its publishers, logger, clock, name and failure counter).
        controller
            the :class:`~rbd_dynamics.control.law.Controller`.
        source
            the :class:`~rbd_dynamics.ros.model_source.ModelSource` (its kernels built on
            demand, its status).
        transaction
            the :class:`~rbd_dynamics.ros.parameter_transaction.ParameterTransaction` (the
            parameters, the sensors, its counters).
        counts
            the node's counters by name (``outputs``, ``saturated_cycles`` and
            ``non_finite_outputs`` are counted here).
        last_errors
            input kind -> the reason its last message was refused (the node's).
        log_due
            ``(key) -> bool``: whether the rate-limited line ``key`` is due.

        """
        self._log = node.get_logger()
        self._clock = node.get_clock
        self._now_ns = node.now_ns
        self._listened = Listened()
        self._name = '%s: dynamics' % node.get_fully_qualified_name()
        self._failures = node.callback_failures
        self._controller = controller
        self._source = source
        self._transaction = transaction
        self._counts = counts
        self._last_errors = last_errors
        self._log_due = log_due
        self._saturated = ()
        self._last_joint_state_ns = None
        self._compute = ComputeTimes()
        # The outputs leave the report of an incompatible QoS to their subscribers: rclpy's
        # executor visits every QoS event handler of the node on each wake-up.
        quiet = PublisherEventCallbacks(use_default_callbacks=False)
        create = node.create_publisher
        self._pub_ff = create(JointState, '~/feedforward', 10, event_callbacks=quiet)
        self._pub_g = create(JointState, '~/gravity_compensation', 10, event_callbacks=quiet)
        self._pub_cmd = create(Float64MultiArray, '~/effort_commands', 10, event_callbacks=quiet)
        self._pub_diag = create(DiagnosticArray, '/diagnostics', 10, event_callbacks=quiet)
        self._pub_trajectory = create(JointTrajectory, '~/trajectory_with_effort', 10,
                                      event_callbacks=quiet)
        self._pub_external = create(JointState, '~/external_effort', 10, event_callbacks=quiet)
        self._pub_wrench = create(WrenchStamped, '~/external_wrench', 10, event_callbacks=quiet)
        self._pub_task_error = create(TwistStamped, '~/task_error', 10, event_callbacks=quiet)
        self._quiet = quiet
        self._create = create
        self._pub_base_wrench = None  # ~/base_wrench and ~/contact_wrench/<link>: a floating
        self._pub_contacts = {}  # base's, made with its first setup
        self.unbalanced = None  # the last unbalanced base wrench (6,), for the diagnostics
        params = transaction.params
        self._base_topics = tuple(node.resolve_topic_name(params[name]) if params[name] else ''
                                  for name in ('base.imu.topic', 'base.odometry.topic'))
        self._msg_task_error = TwistStamped()
        self._msg_ff = JointState()
        self._torques_bytes = None  # the torques' messages serialized by hand, where it works
        self._msg_g = JointState()
        self._msg_cmd = Float64MultiArray()
        self._msg_external = JointState()
        self._named = None  # the setup whose joint names the output messages carry
        self._pub_contact = create(Bool, '~/contact', LATCHED_QOS)
        self._contact_lock = threading.Lock()  # one ~/contact message per change, in order
        self._contact_published = None
        self._wrench_rank = None  # rank of J^T of the last wrench estimate
        self._task_noted = None  # the task note last logged
        self.publish_contact()

    # Torques ------------------------------------------------------------------------------------

    def publish(self, setup, merger, stamp):
        """
        Answer the complete joint state of ``merger``: the torques, then the observer's outputs.

        The time it takes and when it was answered go to the diagnostics.
        """
        start = time.perf_counter_ns()
        now = self._now_ns()
        self._last_joint_state_ns = now
        q, qd = merger.position, merger.velocity
        effort = merger.effort if merger.effort_fresh else None
        stamp_ns = stamp.sec * 1_000_000_000 + stamp.nanosec
        # (with task.link set, built ahead of command_output task)
        task_ready = setup.task is None or self._source.kernels_ready(
            setup.model, 'task', task.KERNELS, 'task.link',
            'with command_output task, ~/effort_commands carry the gravity compensation '
            'until then')
        if setup.floating:  # built on a thread of their own; the NumPy path answers meanwhile
            self._source.kernels_ready(setup.model, 'floating', base.KERNELS, 'base.type floating',
                                       'the NumPy path answers until then')
        # the observer's step (where no torque depends on it) after the torques are out
        out = self._controller.compute(setup, q, qd, now, effort, stamp_ns, task_ready,
                                       observe_later=True,
                                       gravity=not setup.floating
                                       or self._listened(self._pub_g))
        if out is None and setup.floating:
            # no IMU, or a stale one: nothing that could be wrong for a robot that may be
            # falling, not even zeros
            self._counts['floating_base_unpublished'] += 1
            if self._log_due('floating'):
                self._log.warning('floating base: no torques published: %s'
                                  % self._controller.base_problem)
        elif out is None:
            self._counts['non_finite_outputs'] += 1
            if self._log_due('non-finite'):
                self._log.error('non-finite torque computed (q=%s, qd=%s); publishing nothing '
                                'this cycle' % (q.tolist(), qd.tolist()))
        else:
            try:
                self._publish_torques(setup, out, stamp)
            finally:
                # the observer's step even when a publish failed: its integral takes every state
                self._controller.observe_pending(out)
            if out.step is not None:  # after the torques, which a controller waits for
                self._publish_observer(setup, q, out, stamp)
            if out.floating is not None:
                self._publish_floating(setup, out.floating, stamp)
        self._compute.add(time.perf_counter_ns() - start)

    def _publish_torques(self, setup, out, stamp):
        """Publish the torques of ``out`` (and the task law's error) on their topics."""
        if out.saturated:
            self._counts['saturated_cycles'] += 1
            self._saturated = out.saturated
            if self._log_due('saturated'):
                self._log.warning(
                    'command over the effort limit of %s%s' % (', '.join(out.saturated),
                                                               ' (clamped)' if setup.config.clamp
                                                               else ''))
        if self._named is not setup:
            self._msg_ff.name = list(setup.joints)
            self._msg_g.name = list(setup.joints)
            self._torques_bytes = joint_state_bytes(setup.joints)
            self._msg_external.name = list(setup.joints)
            self._msg_task_error.header.frame_id = setup.model.root_link
            self._named = setup
            note = setup.task.note if setup.task is not None else ''
            if note and note != self._task_noted:
                self._log.warning('task.link %s' % note)
            self._task_noted = note
        # A topic nobody subscribes to is skipped: turning the message into its C form is a
        # large part of a publish, and DDS would discard it anyway.
        serialized = self._torques_bytes
        for pub, msg, tau in ((self._pub_ff, self._msg_ff, out.feedforward),
                              (self._pub_g, self._msg_g, out.gravity)):
            if tau is not None and self._listened(pub):
                if serialized is not None:
                    pub.publish(serialized.serialized(stamp.sec, stamp.nanosec, tau))
                else:
                    msg.header.stamp = stamp
                    msg.effort = to_float_array(tau)
                    pub.publish(msg)
        if self._listened(self._pub_cmd):
            command = out.command / setup.command_scale if setup.scaled else out.command
            self._msg_cmd.data = to_float_array(command)
            self._pub_cmd.publish(self._msg_cmd)
        self._counts['outputs'] += 1
        if out.task_error is not None and self._listened(self._pub_task_error):
            msg = self._msg_task_error
            msg.header.stamp = stamp
            lin, ang = msg.twist.linear, msg.twist.angular
            lin.x, lin.y, lin.z, ang.x, ang.y, ang.z = (float(v) for v in out.task_error)
            self._pub_task_error.publish(msg)

    def _publish_floating(self, setup, result, stamp):
        """Publish a floating base's wrenches: ``~/base_wrench``, ``~/contact_wrench/<link>``."""
        self.unbalanced = result.unbalanced
        if self._pub_base_wrench is None:
            self._pub_base_wrench = self._create(WrenchStamped, '~/base_wrench', 10,
                                                 event_callbacks=self._quiet)
        wrenches = [(self._pub_base_wrench, setup.model.base_link, result.base_wrench)]
        for link, wrench in result.contact_wrenches.items():
            if link not in self._pub_contacts:
                try:
                    self._pub_contacts[link] = self._create(
                        WrenchStamped, '~/contact_wrench/%s' % link, 10,
                        event_callbacks=self._quiet)
                except Exception as exc:  # a link name that is no valid topic name
                    self._pub_contacts[link] = None
                    self._log.error('contact %s: no ~/contact_wrench topic (%s)' % (link, exc))
            pub = self._pub_contacts[link]
            if pub is not None:
                wrenches.append((pub, link, wrench))
        for pub, frame, wrench in wrenches:
            if self._listened(pub):
                msg = WrenchStamped()
                msg.header.stamp = stamp
                msg.header.frame_id = frame
                f, n = msg.wrench.force, msg.wrench.torque
                f.x, f.y, f.z, n.x, n.y, n.z = (float(v) for v in wrench)
                pub.publish(msg)

    def publish_trajectory(self, msg):
        """Publish a trajectory with its efforts on ``~/trajectory_with_effort``."""
        self._pub_trajectory.publish(msg)

    # Contact ------------------------------------------------------------------------------------

    def _publish_observer(self, setup, q, out, stamp):
        """Publish the residual, the wrench at ``contact.wrench_link`` and a contact change."""
        if self._listened(self._pub_external):
            msg = self._msg_external
            msg.header.stamp = stamp
            msg.effort = to_float_array(out.external)
            self._pub_external.publish(msg)
        link = setup.wrench_link
        if link and self._listened(self._pub_wrench) and self._source.kernels_ready(
                setup.model, 'wrench', ('jacobian',), 'contact.wrench_link',
                '~/external_wrench starts when it is ready'):
            w, self._wrench_rank = wrench_at(setup.model, q, link, out.step.residual)
            if np.isfinite(w).all():
                msg = WrenchStamped()
                msg.header.stamp = stamp
                msg.header.frame_id = link
                f, n = msg.wrench.force, msg.wrench.torque
                f.x, f.y, f.z, n.x, n.y, n.z = (float(v) for v in w)
                self._pub_wrench.publish(msg)
        if out.step.changed:
            names = [setup.model.joint_names[i] for i in out.step.joints]
            self._log.warning(
                'contact detected on %s (external torque %s over the threshold %s)%s'
                % (', '.join(names), vector_text(out.external), vector_text(setup.threshold),
                   '; ~/effort_commands carry the gravity compensation until ~/reset_contact'
                   if setup.react else ''))
            self.publish_contact()

    def publish_contact(self):
        """Publish the latched contact state on ``~/contact`` if it changed."""
        with self._contact_lock:
            contact = self._controller.observer.contact
            if contact != self._contact_published:
                self._pub_contact.publish(Bool(data=contact))
                self._contact_published = contact

    # Diagnostics --------------------------------------------------------------------------------

    def publish_diagnostics(self, active, own_thread):
        """
        Publish the ``/diagnostics`` status of now.

        Parameters
        ----------
        active
            the :class:`~rbd_dynamics.ros.model_source.ModelInUse`, or ``None``.
        own_thread
            joint states are taken on a thread of their own (else: the executor).

        """
        now = self._clock().now()
        setup = active.setup if active is not None else None
        controller = self._controller
        source = self._source
        desired = controller.desired
        last_errors = dict(self._last_errors)
        if source.last_rejection:
            last_errors['description'] = source.last_rejection
        status = dynamics_status(
            self._name, now.nanoseconds, active, source.status(),
            description_updates=self._transaction.params['description_updates'],
            counts=dict(self._counts, **source.counts, **self._transaction.counts),
            callback_failures=self._failures.count,
            last_joint_state_ns=self._last_joint_state_ns,
            desired_ns=desired.arrival_ns if desired else None,
            sensors=self._transaction.sensors, compute=self._compute, saturated=self._saturated,
            own_thread=own_thread, last_errors=last_errors,
            observer=observer_values(setup, controller.observer, self._wrench_rank,
                                     source.warm_up_note('wrench')),
            task=task_values(setup, controller, source.warm_up_note('task')),
            base=base_values(setup, controller, self._base_topics, self.unbalanced,
                             now.nanoseconds))
        msg = DiagnosticArray()
        msg.header.stamp = now.to_msg()
        msg.status = [status]
        self._pub_diag.publish(msg)
