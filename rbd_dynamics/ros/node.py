"""
The ``rbd_dynamics`` node: feedforward and gravity-compensation torques over ROS 2.

Inputs: the robot description (parameter or latched topic), ``joint_states`` (merged by name),
the desired state or accelerations, any number of force/torque sensor wrenches and the payload
in the hand. On every joint state that completes the robot's state it asks the torque law
(:class:`rbd_dynamics.control.law.Controller`, no ROS in it) for the torques and publishes
``~/feedforward``, ``~/gravity_compensation`` and ``~/effort_commands`` (and, with
``contact.observer``, ``~/external_effort``, ``~/contact`` and ``~/external_wrench`` from the
measured efforts; with ``command_output: task``, ``~/task_error``, the command being the
task-space law toward ``~/desired_pose``). This module is wiring: subscriptions, services and
the callbacks that hand their messages on. The rest lives beside it:

- :mod:`rbd_dynamics.ros.parameter_transaction`: the parameters, declared from the table of
  :mod:`rbd_dynamics.ros.parameters`, and a change to them: checked (each value against its
  spec, then the whole configuration against the model in use), planned (what it changes,
  without touching anything) and committed under the setup lock, or refused whole with one
  reason;
- :mod:`rbd_dynamics.ros.model_source`: the model's lifecycle (the description from the parameter
  or the topic, the build worker, ``description_updates``, the announcement, payloads carried
  over onto a new model, the compiled path, the kernels built on demand for the wrench estimate
  and the task-space law);
- :mod:`rbd_dynamics.ros.diagnostics`: the ``/diagnostics`` status, from the counters and states
  the node hands it;
- :mod:`rbd_dynamics.ros.executor`: spinning that survives a failing callback (counted in the
  node's :class:`~rbd_dynamics.ros.executor.FailureCounter`) and the joint-state thread.

Threads: joint states are taken and turned into torques on a thread of their own
(:class:`~rbd_dynamics.ros.executor.SubscriptionThread`; parameter ``joint_states_thread``), every
other callback runs on the executor thread, and a new description is parsed and compiled on the
model source's worker thread. What the joint-state path reads is swapped in whole by the others:
the setup and joint-state merger as one :class:`~rbd_dynamics.ros.model_source.ModelInUse`
(replaced under the setup lock), the desired input, each sensor reading and bias, and the
model's inertias (:meth:`rbd_dynamics.Model.set_payload`); so it never waits for a model build
and always sees a consistent set.
"""

import array
import functools
import threading
import time
from typing import NamedTuple

from geometry_msgs.msg import InertiaStamped, PoseStamped, TwistStamped, WrenchStamped
import rbd_dynamics as rbd
from rbd_dynamics import compiled
from rbd_dynamics.control.law import Controller
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message
try:
    from rclpy.event_handler import SubscriptionEventCallbacks
except ImportError:  # Humble
    from rclpy.qos_event import SubscriptionEventCallbacks
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64MultiArray, Header, String
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory

from .conversions import (desired_from_array, desired_from_trajectory, imu_from_cdr,
                          JointStateReader, to_float_array, trajectory_to_arrays,
                          wrench_to_array)
from .diagnostics import COUNTS, payload_text, vector_text
from .executor import FailureCounter, run, stop_threads, SubscriptionThread, ThreadInput
from .model_source import ModelSource
from .outputs import LATCHED_QOS, LOG_PERIOD, LogRateLimit, Outputs
from .parameter_transaction import ParameterTransaction

NODE_NAME = 'rbd_dynamics'
DIAGNOSTIC_PERIOD = 1.0  # s
# While the compiled path is being built, torques come from the (slow) NumPy path, for the
# newest joint state only, with this pause after each: the compilation needs the interpreter.
NUMPY_PATH_PAUSE = 0.05  # s
# The node's own counters (its model source counts the descriptions, its parameter transaction
# the refused changes).
NODE_COUNTS = tuple(key for key in COUNTS if key not in ('descriptions', 'descriptions_rejected',
                                                         'rejected_parameters'))
# Joint states and F/T readings: best effort, volatile, the newest 10 kept. This is the sensor
# data QoS robot_state_publisher subscribes to joint_states with: reliable and best-effort
# publishers both match it, so no QoS can be incompatible.
STREAM_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT,
                        durability=DurabilityPolicy.VOLATILE)


class JointStateView(NamedTuple):
    """A joint state read from its bytes: the fields of a ``sensor_msgs/JointState`` it uses."""

    header: Header
    name: list
    position: array.array
    velocity: array.array
    effort: array.array


class DynamicsNode(Node):
    """Computed-torque feedforward and gravity compensation from a URDF, over ROS 2."""

    def __init__(self, node_name=NODE_NAME, **kwargs):
        super().__init__(node_name, **kwargs)
        self._active = None  # the ModelInUse
        self._setup_lock = threading.Lock()  # held while _active or the model in use changes
        self._counts = dict.fromkeys(NODE_COUNTS, 0)
        self.callback_failures = FailureCounter()  # counted by rbd_dynamics.ros.executor
        self._last_error = {}
        self._log_due = LogRateLimit().due  # (key) -> whether a repeated warning is due

        if compiled.numpy_path_note():
            self.get_logger().warning(compiled.numpy_path_note())
        self._transaction = ParameterTransaction(self, self._setup_lock, self._in_use,
                                                 self._put_active)
        self._sensors = self._transaction.sensors
        self._controller = Controller(self._sensors)
        self._source = ModelSource(self.get_logger(), self._setup_lock, self._in_use,
                                   self._put_active, self._transaction.params,
                                   self._transaction.config)
        self._transaction.attach(self._source)
        self.add_on_set_parameters_callback(self._transaction.on_set_parameters)

        # rclpy's executor visits every QoS event handler of the node on each wake-up, that is
        # once per joint state; the default ones (two per publisher and subscription) would
        # cost the hot path more than its arithmetic. The streams below cannot meet an
        # incompatible QoS (best effort, volatile) and the outputs (Outputs) leave that report
        # to their subscribers; the reliable command inputs keep an incompatible-QoS warning,
        # and the latched description keeps rclpy's defaults.
        quiet_sub = SubscriptionEventCallbacks(use_default_callbacks=False)
        command_sub = SubscriptionEventCallbacks(incompatible_qos=self._on_incompatible_qos,
                                                 use_default_callbacks=False)
        self._outputs = Outputs(self, self._controller, self._source, self._transaction,
                                self._counts, self._last_error, self._log_due)
        self.create_service(Trigger, '~/reset_contact', self._on_reset_contact)
        self.create_subscription(String, 'robot_description',
                                 lambda msg: self._source.receive_description(msg.data),
                                 LATCHED_QOS)
        self._joint_state_thread = None
        self._joint_state_reader = JointStateReader()
        if self._transaction.params['joint_states_thread']:
            try:
                self._joint_state_thread = SubscriptionThread(
                    self, 'joint_states', inputs=7 + len(self._sensors))
            except RuntimeError as exc:
                self.get_logger().warning('joint_states_thread: %s; joint states go through '
                                          'the executor' % exc)
        # The inputs a joint state is answered with are taken on the joint-state thread too:
        # the simulated clock (use_sim_time), the four desired inputs (state, accelerations,
        # pose, twist) and the F/T readings. One published before a joint state answers it,
        # even when the executor thread runs late (one published after the newest joint state
        # of a wake-up is handed on after it is answered); and none of them wakes the
        # executor, whose wake-up costs several times the dynamics of a joint state (at
        # 1 kHz, the clock and a sensor would take a core).
        group = self._joint_state_thread and self._joint_state_thread.callback_group
        joint_states = self.create_subscription(
            JointState, 'joint_states', self._on_joint_state, STREAM_QOS, callback_group=group,
            event_callbacks=quiet_sub, raw=True)
        desired = [
            ThreadInput(self.create_subscription(
                JointTrajectory, '~/desired_state', self._on_desired_state, 10,
                callback_group=group, event_callbacks=command_sub), self._on_desired_state),
            ThreadInput(self.create_subscription(
                Float64MultiArray, '~/desired_accelerations', self._on_desired_accelerations, 10,
                callback_group=group, event_callbacks=command_sub),
                self._on_desired_accelerations),
            ThreadInput(self.create_subscription(
                PoseStamped, '~/desired_pose', self._on_desired_pose, 10, callback_group=group,
                event_callbacks=command_sub), self._on_desired_pose),
            ThreadInput(self.create_subscription(
                TwistStamped, '~/desired_twist', self._on_desired_twist, 10,
                callback_group=group, event_callbacks=command_sub), self._on_desired_twist)]
        readings = []
        for sensor in self._sensors:
            callback = functools.partial(self._on_wrench, sensor)
            readings.append(ThreadInput(self.create_subscription(
                WrenchStamped, sensor.topic, callback, STREAM_QOS, callback_group=group,
                event_callbacks=quiet_sub), callback))
        readings += self._base_inputs(group, quiet_sub)
        if self._joint_state_thread is not None:
            self._joint_state_thread.start(joint_states, self._on_joint_state,
                                           self._joint_state_thread.adopt_clock() + desired
                                           + readings)
        self.create_subscription(InertiaStamped, '~/payload', self._on_payload, 10,
                                 event_callbacks=command_sub)
        self.create_subscription(JointTrajectory, '~/trajectory', self._on_trajectory, 10,
                                 event_callbacks=command_sub)
        for sensor in self._sensors:
            self.create_service(Trigger, '~/%s/tare' % sensor.name,
                                lambda req, res, s=sensor: self._on_tare(s, res))
            self.create_service(Trigger, '~/%s/clear_tare' % sensor.name,
                                lambda req, res, s=sensor: self._on_clear_tare(s, res))
        self.create_timer(DIAGNOSTIC_PERIOD, self._publish_diagnostics)

        if self._transaction.params['robot_description']:
            self._source.request('the robot_description parameter')
        else:
            self.get_logger().info('waiting for the robot description on topic %s'
                                   % self.resolve_topic_name('robot_description'))

    def _base_inputs(self, group, events):
        """Subscribe to a floating base's IMU and odometry (``base.*.topic``): ThreadInputs."""
        inputs = []
        params = self._transaction.params
        if params['base.imu.topic']:
            inputs.append(ThreadInput(self.create_subscription(
                Imu, params['base.imu.topic'], self._on_imu, STREAM_QOS, callback_group=group,
                event_callbacks=events, raw=True), self._on_imu))
        if params['base.odometry.topic']:
            try:
                from nav_msgs.msg import Odometry
            except ImportError:
                self.get_logger().error('base.odometry.topic is set but nav_msgs is not '
                                        'installed (ros-<distro>-nav-msgs): no odometry')
                return inputs
            inputs.append(ThreadInput(self.create_subscription(
                Odometry, params['base.odometry.topic'], self._on_odometry, STREAM_QOS,
                callback_group=group, event_callbacks=events), self._on_odometry))
        elif params['base.type'] == 'floating' and not params['base.imu.topic']:
            self.get_logger().error('base.type floating needs base.imu.topic: no torque will '
                                    'be published')
        return inputs

    def _on_incompatible_qos(self, event):
        self.get_logger().warning(
            'a publisher of a command input (desired state, pose or twist, payload) offers an '
            'incompatible QoS (last policy kind %s); its messages do not reach this node: '
            'publish them reliable' % getattr(event, 'last_policy_kind', '?'),
            throttle_duration_sec=LOG_PERIOD)

    @property
    def _setup(self):
        active = self._active
        return active.setup if active is not None else None

    def _in_use(self):
        return self._active

    def _put_active(self, active):
        """Put a new :class:`~rbd_dynamics.ros.model_source.ModelInUse` (under the setup lock)."""
        self._active = active

    # Payloads -----------------------------------------------------------------------------------

    def _on_payload(self, msg):
        active = self._active
        if active is None:
            return self._reject('payload', 'no model yet')
        model = active.setup.model
        link = msg.header.frame_id
        inertia = msg.inertia
        com = inertia.com
        try:
            if not link:
                raise ValueError('empty header.frame_id: name the link that holds the payload')
            model.check_link(link)
            payload = rbd.Payload(inertia.m, (com.x, com.y, com.z),
                                  (inertia.ixx, inertia.ixy, inertia.ixz, inertia.iyy,
                                   inertia.iyz, inertia.izz))
        except ValueError as exc:  # (UnknownLinkError is one too)
            return self._reject('payload', str(exc))
        if not self._source.receive_payload(model, link, payload):
            return self._reject('payload', 'the model changed while it arrived')
        self.get_logger().info('payload on %s: %s' % (link, payload_text(payload))
                               if payload.mass else 'payload on %s removed' % link)

    # Trajectories -----------------------------------------------------------------------------

    def _on_trajectory(self, msg):
        """Fill every point's efforts and forward the trajectory, or refuse it whole."""
        active = self._active
        if active is None:
            return self._reject('trajectory', 'no model yet')
        setup = active.setup
        merger = active.merger
        model = setup.model
        if setup.floating:
            return self._reject('trajectory', 'the efforts of a trajectory on a floating base '
                                "are not available yet (they depend on the base's motion)")
        try:
            rows, q, qd, qdd = trajectory_to_arrays(msg, setup.index)
            named = set(rows.tolist())
            unmeasured = [name for i, name in enumerate(model.joint_names)
                          if i not in named and not merger.has_position[i]]
            if unmeasured:
                raise ValueError('joints the trajectory does not name are held at their measured '
                                 'position, and %s have no joint_states yet'
                                 % ', '.join(unmeasured))
            efforts, exceeded = self._controller.trajectory_efforts(
                setup, rows, q, qd, qdd, merger.position.copy())
        except ValueError as exc:
            return self._reject('trajectory', str(exc))
        if exceeded is not None:
            point, column = exceeded
            stamp = msg.points[point].time_from_start
            joint = msg.joint_names[column]
            return self._reject(
                'trajectory', 'effort of %s at time_from_start %.3f s is %.6g, over its limit '
                '%.6g (point %d); not forwarded'
                % (joint, stamp.sec + 1e-9 * stamp.nanosec, efforts[point, column],
                   setup.model_effort_limits[rows[column]], point))
        if setup.scaled:  # what the driver takes
            efforts = efforts / setup.effort_scale[rows]
        for point, effort in zip(msg.points, efforts):
            point.effort = to_float_array(effort)
        self._outputs.publish_trajectory(msg)
        self._counts['trajectories'] += 1

    # Tare ---------------------------------------------------------------------------------------

    def _on_tare(self, sensor, response):
        active = self._active
        setup = active.setup if active is not None else None
        merger = active.merger if active is not None else None
        q = merger.position.copy() if merger is not None and not merger.missing_count else None
        try:
            link, bias = self._controller.tare(sensor, setup, q,
                                               self.now_ns())
        except ValueError as exc:
            self._reject('tare', 'sensor %s: %s' % (sensor.name, exc))
            response.success = False
            response.message = 'tare of %s failed: %s' % (sensor.name, exc)
            return response
        response.success = True
        response.message = ('bias of %s in %s (force [N], torque [N m], applied on the robot): '
                            '%s' % (sensor.name, link, vector_text(bias)))
        self.get_logger().info(response.message)
        return response

    def _on_clear_tare(self, sensor, response):
        had = sensor.bias is not None
        sensor.bias = None
        response.success = True
        response.message = 'bias of %s cleared' % sensor.name if had else \
            'sensor %s had no bias' % sensor.name
        return response

    # Inputs -------------------------------------------------------------------------------------

    def _reject(self, kind, reason):
        self._counts['rejected_' + kind] += 1
        self._last_error[kind] = reason
        if self._log_due('rejected ' + kind):
            self.get_logger().warning('%s rejected: %s' % (kind.replace('_', ' '), reason))

    def _on_desired_state(self, msg):
        setup = self._setup
        if setup is None:
            return self._reject('desired', 'no model yet')
        try:
            desired = desired_from_trajectory(msg, setup.index, setup.nv, setup.joints)
        except ValueError as exc:
            return self._reject('desired', str(exc))
        self._controller.set_desired(setup.model, desired, self.now_ns())

    def _on_desired_accelerations(self, msg):
        setup = self._setup
        if setup is None:
            return self._reject('desired', 'no model yet')
        try:
            desired = desired_from_array(msg, setup.rows, setup.nv)
        except ValueError as exc:
            return self._reject('desired', str(exc))
        self._controller.set_desired(setup.model, desired, self.now_ns())

    def _on_desired_pose(self, msg):
        p, o = msg.pose.position, msg.pose.orientation
        self._keep_task_input(msg, 'desired_pose', self._controller.set_desired_pose,
                              (p.x, p.y, p.z), (o.x, o.y, o.z, o.w))

    def _on_desired_twist(self, msg):
        v, w = msg.twist.linear, msg.twist.angular
        self._keep_task_input(msg, 'desired_twist', self._controller.set_desired_twist,
                              (v.x, v.y, v.z, w.x, w.y, w.z))

    def _keep_task_input(self, msg, topic, keep, *values):
        """Keep a task-space input with ``keep`` if it is in the root link's frame and valid."""
        setup = self._setup
        if setup is None:
            return self._reject('desired', 'no model yet')
        frame, root = msg.header.frame_id, setup.model.root_link
        try:
            if frame not in ('', root):
                raise ValueError('header.frame_id %r: give it in the root link %r (or leave '
                                 'it empty)' % (frame, root))
            keep(setup.model, *values, self.now_ns())
        except ValueError as exc:
            return self._reject('desired', '%s: %s' % (topic, exc))

    def _on_wrench(self, sensor, msg):
        setup = self._setup
        try:
            wrench = wrench_to_array(msg, sensor.convention)
            link = self._controller.reading_link(sensor, msg.header.frame_id,
                                                 setup.model if setup is not None else None)
        except ValueError as exc:
            return self._reject('wrench', 'sensor %s: %s' % (sensor.name, exc))
        sensor.receive(self.now_ns(), link, wrench)

    def _on_imu(self, data):
        """Take an IMU reading, serialized (read without building the message where it can)."""
        setup = self._setup
        if setup is None:
            return self._reject('imu', 'no model yet')
        reading = imu_from_cdr(data)
        if reading is None:
            msg = deserialize_message(data, Imu)
            stamp = msg.header.stamp
            o, w, a = msg.orientation, msg.angular_velocity, msg.linear_acceleration
            reading = (stamp.sec * 1_000_000_000 + stamp.nanosec, msg.header.frame_id,
                       (o.x, o.y, o.z, o.w), (w.x, w.y, w.z), (a.x, a.y, a.z))
        try:
            self._controller.base.receive_imu(
                setup.model, setup.imu_frame, self.now_ns(), *reading)
        except ValueError as exc:
            return self._reject('imu', str(exc))

    def _on_odometry(self, msg):
        setup = self._setup
        if setup is None:
            return self._reject('odometry', 'no model yet')
        stamp = msg.header.stamp
        o, w = msg.pose.pose.orientation, msg.twist.twist.angular
        try:
            child = msg.child_frame_id
            if child not in ('', setup.model.base_link):
                raise ValueError('child_frame_id %r: give the twist in the base link %r'
                                 % (child, setup.model.base_link))
            self._controller.base.receive_odometry(
                self.now_ns(), stamp.sec * 1_000_000_000 + stamp.nanosec,
                (o.x, o.y, o.z, o.w), (w.x, w.y, w.z))
        except ValueError as exc:
            return self._reject('odometry', str(exc))

    def _on_joint_state(self, data, newer=False):
        """
        Merge a joint state and answer it (``newer``: a newer one is already waiting).

        ``data``: the message serialized, read from its bytes where it can be
        (:class:`~.conversions.JointStateReader`), else deserialized.
        """
        self._counts['joint_states'] += 1
        reading = self._joint_state_reader.read(data)
        if reading is None:
            msg = deserialize_message(data, JointState)
        else:
            sec, nanosec, frame_id, name, position, velocity, effort = reading
            header = Header(frame_id=frame_id)
            header.stamp.sec, header.stamp.nanosec = sec, nanosec
            msg = JointStateView(header, name, position, velocity, effort)
        active = self._active
        if active is None:
            self._counts['rejected_no_model'] += 1
            if self._log_due('no model'):
                self.get_logger().warning('no usable robot description yet (%s); publishing '
                                          'nothing' % self._source.waiting_reason())
            return
        setup = active.setup
        merger = active.merger
        try:
            if not merger.update(msg, setup.observer_on):
                return  # none of this model's joints
        except ValueError as exc:
            return self._reject('joint_states', str(exc))
        if merger.missing_count:
            self._counts['incomplete_joint_states'] += 1
            if self._log_due('incomplete'):
                self.get_logger().warning('waiting for joint_states of %s'
                                          % ', '.join(merger.missing()))
            return
        numpy_path = setup.model.packed is None and self._source.compiling
        if numpy_path and newer:
            # the compiled path is being built: answer the newest state only
            self._counts['skipped_while_compiling'] += 1
            return
        self._outputs.publish(setup, merger, msg.header.stamp)
        if numpy_path:  # leave the interpreter to the compilation
            if self._joint_state_thread is None:
                time.sleep(NUMPY_PATH_PAUSE)
            else:  # the thread waits once this state's later inputs are handled
                return NUMPY_PATH_PAUSE

    def _on_reset_contact(self, request, response):
        had = self._controller.observer.reset()
        self._outputs.publish_contact()
        response.success = True
        response.message = ('contact cleared; the observer restarts from the next joint state'
                            if had else 'no contact; the observer restarts from the next '
                            'joint state')
        self.get_logger().info(response.message)
        return response

    # Diagnostics --------------------------------------------------------------------------------

    def _publish_diagnostics(self):
        self._outputs.publish_diagnostics(self._active, self._joint_state_thread is not None)

    def now_ns(self):
        """
        Return the node's time [ns].

        rclpy's clock, read as the system's where no simulated time is active: the same number
        (both are ``CLOCK_REALTIME``), without building rclpy's ``Time`` (a thirtieth of the
        cost, and no wait on the clock's handle).
        """
        clock = self.get_clock()
        if clock.ros_time_is_active:
            return clock.now().nanoseconds
        return time.time_ns()

    def destroy_node(self):
        stop_threads(self)
        self._source.shutdown()
        return super().destroy_node()


def main(args=None):
    run(DynamicsNode, args)


if __name__ == '__main__':
    main()
