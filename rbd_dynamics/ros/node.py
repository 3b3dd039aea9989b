"""The ``rbd_dynamics`` node: feedforward and gravity-compensation torques over ROS 2.

Inputs: the robot description (parameter or latched topic), ``joint_states`` (merged by name),
the desired state or accelerations, and any number of force/torque sensor wrenches. On every
joint state that completes the robot's state it runs the recursive Newton-Euler algorithm twice
and publishes ``~/feedforward``, ``~/gravity_compensation`` and ``~/effort_commands``.

Threads: joint states are taken and turned into torques on a thread of their own
(:class:`~rbd_dynamics.ros.spinning.SubscriptionThread`; parameter ``joint_states_thread``), every
other callback runs on the executor thread, and a new description is parsed and compiled on a
worker thread. What the joint-state path reads is swapped in whole by the others: the model,
index maps and gains as one immutable :class:`_Setup`, the desired input and each wrench reading
as one tuple; so it never waits for a model build and always sees a consistent set.
"""

import concurrent.futures
import gc
import math
import threading
import time
import warnings

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import WrenchStamped
from rcl_interfaces.msg import (FloatingPointRange, IntegerRange, ParameterDescriptor,
                                SetParametersResult)
from rclpy.exceptions import (InvalidParameterTypeException, InvalidParameterValueException,
                              ParameterUninitializedException)
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
try:
    from rclpy.event_handler import PublisherEventCallbacks, SubscriptionEventCallbacks
except ImportError:  # Humble
    from rclpy.qos_event import PublisherEventCallbacks, SubscriptionEventCallbacks
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectory

import rbd_dynamics as rbd
from .spinning import run, SubscriptionThread
from .conversions import (CONVENTIONS, desired_from_array, desired_from_trajectory,
                          JointStateMerger, to_float_array, wrap_angle, wrench_to_array)

NODE_NAME = 'rbd_dynamics'
COMMAND_OUTPUTS = ('feedforward', 'gravity_compensation')
LOG_PERIOD = 2.0  # s, the rate limit of repeated warnings
DIAGNOSTIC_PERIOD = 1.0  # s
# While the compiled path is being built, torques come from the (slow) NumPy path, for the
# newest joint state only, with this pause after each: the compilation needs the interpreter.
NUMPY_PATH_PAUSE = 0.05  # s
MAX_TIMEOUT = 3600.0  # s
NS = 1e9
# Joint states and F/T readings: best effort, volatile, the newest 10 kept. This is the sensor
# data QoS robot_state_publisher subscribes to joint_states with: reliable and best-effort
# publishers both match it, so no QoS can be incompatible.
STREAM_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT,
                        durability=DurabilityPolicy.VOLATILE)


class _Setup:
    """Everything derived from one model and the joint parameters; replaced, never mutated.

    Attributes:
        model: the :class:`rbd_dynamics.Model`.
        joints: output order (the ``joints`` parameter, or the model's joints).
        rows: ``(len(joints),)`` model index of each output joint.
        index: independent joint name -> model index.
        kp, kd: ``(nv,)`` gains in model order, zero for joints outside ``joints``.
        continuous: ``(nv,)`` bool, joints whose position error wraps around.
        merger: the joint-state merger for this model.
    """

    def __init__(self, model, joints, kp, kd, previous=None):
        self.model = model
        self.index = {name: i for i, name in enumerate(model.joint_names)}
        self.joints = tuple(joints) if joints else model.joint_names
        unknown = [name for name in self.joints if name not in self.index]
        if unknown:
            mimic = [name for name in unknown if name in model.mimic]
            raise ValueError('joints names %s, not independent joints of the model%s '
                             '(joints of the model: %s)'
                             % (', '.join(unknown),
                                ' (%s follow a mimic master)' % ', '.join(mimic) if mimic else '',
                                ', '.join(model.joint_names)))
        if len(set(self.joints)) != len(self.joints):
            raise ValueError('joints lists a joint more than once')
        self.rows = np.array([self.index[name] for name in self.joints], dtype=np.intp)
        # model torques -> output order; None when that is the model order
        self.reorder = (None if np.array_equal(self.rows, np.arange(model.nv)) else self.rows)
        n = model.nv
        self.kp = np.zeros(n)
        self.kd = np.zeros(n)
        for name, gains, out in (('kp', kp, self.kp), ('kd', kd, self.kd)):
            if len(gains) not in (0, len(self.joints)):
                raise ValueError('%s has %d entries, joints has %d'
                                 % (name, len(gains), len(self.joints)))
            if len(gains):
                out[self.rows] = gains
        self.continuous = np.array([t == 'continuous' for t in model.joint_types], dtype=bool)
        self.has_continuous = bool(self.continuous.any())
        self.zero = np.zeros(n)
        self.merger = JointStateMerger(model.joint_names,
                                       [j for j, t in zip(model.joint_names, model.joint_types)
                                        if t == 'continuous'])
        if previous is not None:
            self.merger.adopt(previous.merger)


class _Sensor:
    """A configured force/torque sensor and its latest reading."""

    def __init__(self, name):
        self.name = name
        self.topic = ''
        self.frame = ''
        self.convention = CONVENTIONS[0]
        self.timeout_ns = int(0.1 * NS)
        self.compensate = False
        self.reading = None  # (arrival time [ns], link, (6,) wrench applied on the robot)
        self.received = 0


class DynamicsNode(Node):
    """Computed-torque feedforward and gravity compensation from a URDF, over ROS 2."""

    def __init__(self, node_name=NODE_NAME, **kwargs):
        super().__init__(node_name, **kwargs)
        self._setup = None
        self._setup_lock = threading.Lock()
        self._desired = None  # (setup, arrival [ns], Desired, kp or None, kd or None)
        self._generation = 0
        self._builder = concurrent.futures.ThreadPoolExecutor(max_workers=1)
        self._topic_description = None
        self._model_error = ''
        self._building = ''  # source of the description being built, if any
        self._model_source = ''
        self._model_built_at = None
        self._compiling = False
        self._counts = {key: 0 for key in (
            'joint_states', 'outputs', 'descriptions', 'descriptions_rejected',
            'rejected_joint_states', 'rejected_desired', 'rejected_wrench',
            'rejected_no_model', 'incomplete_joint_states', 'non_finite_outputs',
            'rejected_parameters', 'skipped_while_compiling')}
        self._last_error = {}
        self._last_joint_state_ns = None
        self._compute_ns = []
        self._compute_max_ns = 0

        if rbd._fast.numpy_path_note():
            self.get_logger().warning(rbd._fast.numpy_path_note())
        self._declare_parameters()
        self.add_on_set_parameters_callback(self._on_set_parameters)

        # rclpy's executor visits every QoS event handler of the node on each wake-up, that is
        # once per joint state; the default ones (two per publisher and subscription) would
        # cost the hot path more than its arithmetic. The streams below cannot meet an
        # incompatible QoS (best effort, volatile) and the outputs leave that report to their
        # subscribers; the reliable command inputs keep an incompatible-QoS warning, and the
        # latched description keeps rclpy's defaults.
        quiet_pub = PublisherEventCallbacks(use_default_callbacks=False)
        quiet_sub = SubscriptionEventCallbacks(use_default_callbacks=False)
        command_sub = SubscriptionEventCallbacks(incompatible_qos=self._on_incompatible_qos,
                                                 use_default_callbacks=False)
        self._pub_ff = self.create_publisher(JointState, '~/feedforward', 10,
                                             event_callbacks=quiet_pub)
        self._pub_g = self.create_publisher(JointState, '~/gravity_compensation', 10,
                                            event_callbacks=quiet_pub)
        self._pub_cmd = self.create_publisher(Float64MultiArray, '~/effort_commands', 10,
                                              event_callbacks=quiet_pub)
        self._pub_diag = self.create_publisher(DiagnosticArray, '/diagnostics', 10,
                                               event_callbacks=quiet_pub)
        self._msg_ff = JointState()
        self._msg_g = JointState()
        self._msg_cmd = Float64MultiArray()
        self._named = None  # the setup whose joint names the output messages carry

        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.create_subscription(String, 'robot_description', self._on_description, latched)
        self._joint_state_thread = None
        if self._p['joint_states_thread']:
            try:
                self._joint_state_thread = SubscriptionThread(self, 'joint_states')
            except RuntimeError as exc:
                self.get_logger().warning('joint_states_thread: %s; joint states go through '
                                          'the executor' % exc)
        group = self._joint_state_thread and self._joint_state_thread.callback_group
        joint_states = self.create_subscription(
            JointState, 'joint_states', self._on_joint_state, STREAM_QOS, callback_group=group,
            event_callbacks=quiet_sub)
        if self._joint_state_thread is not None:
            self._joint_state_thread.start(joint_states, self._on_joint_state)
        self.create_subscription(JointTrajectory, '~/desired_state', self._on_desired_state, 10,
                                 event_callbacks=command_sub)
        self.create_subscription(Float64MultiArray, '~/desired_accelerations',
                                 self._on_desired_accelerations, 10, event_callbacks=command_sub)
        for sensor in self._sensors:
            self.create_subscription(WrenchStamped, sensor.topic,
                                     lambda msg, s=sensor: self._on_wrench(s, msg), STREAM_QOS,
                                     event_callbacks=quiet_sub)
        self.create_timer(DIAGNOSTIC_PERIOD, self._publish_diagnostics)

        if self._p['robot_description']:
            self._request_model('the robot_description parameter')
        else:
            self.get_logger().info('waiting for the robot description on topic %s'
                                   % self.resolve_topic_name('robot_description'))

    def _on_incompatible_qos(self, event):
        self.get_logger().warning(
            'a publisher of a desired input offers an incompatible QoS (last policy kind %s); '
            'its messages do not reach this node: publish them reliable'
            % getattr(event, 'last_policy_kind', '?'), throttle_duration_sec=LOG_PERIOD)

    # Parameters ---------------------------------------------------------------------------------

    def _declare(self, name, default, description, ptype, read_only=False, constraints='',
                 float_range=None, int_range=None):
        descriptor = ParameterDescriptor(description=description, read_only=read_only,
                                         additional_constraints=constraints)
        if float_range is not None:
            descriptor.floating_point_range = [FloatingPointRange(
                from_value=float_range[0], to_value=float_range[1], step=0.0)]
        if int_range is not None:
            descriptor.integer_range = [IntegerRange(
                from_value=int_range[0], to_value=int_range[1], step=0)]
        # An empty list cannot carry its element type; declare the type instead (an unset
        # parameter reads as the empty list).
        initial = ptype if isinstance(default, list) and not default else default
        try:
            value = self.declare_parameter(name, initial, descriptor).value
        except (ParameterUninitializedException, InvalidParameterTypeException,
                InvalidParameterValueException) as exc:
            self.get_logger().error('parameter %s: %s; using the default %r'
                                    % (name, exc, default))
            value = self.declare_parameter(name, initial, descriptor,
                                           ignore_override=True).value
        if value is None:
            value = default
        elif isinstance(default, list):
            value = list(value)
        reason = self._check(name, value)
        if reason:
            self.get_logger().error('parameter %s: %s; using the default %r'
                                    % (name, reason, default))
            value = default
        self._p[name] = value

    def _declare_parameters(self):
        self._p = {}
        t = Parameter.Type
        self._declare('robot_description', '', 'URDF text of the robot; empty: subscribe to the '
                      'robot_description topic (latched, as robot_state_publisher publishes it)',
                      t.STRING)
        self._declare('root_link', '', 'root link of the model (a sub-tree of the URDF); '
                      'empty: the URDF root', t.STRING)
        self._declare('joints', [], 'output order of the torques and of desired_accelerations; '
                      'empty: every independent joint in model order', t.STRING_ARRAY)
        self._declare('gravity', [0.0, 0.0, -9.81], 'gravity acceleration in the root link '
                      'frame [m/s^2]', t.DOUBLE_ARRAY, constraints='3 finite numbers')
        self._declare('command_output', 'feedforward', 'torque published on ~/effort_commands',
                      t.STRING, constraints=' or '.join(COMMAND_OUTPUTS))
        self._declare('kp', [], 'position gains in joints order [1/s^2]; empty: zero',
                      t.DOUBLE_ARRAY, constraints='len(joints) finite numbers >= 0, or empty')
        self._declare('kd', [], 'velocity gains in joints order [1/s]; empty: zero',
                      t.DOUBLE_ARRAY, constraints='len(joints) finite numbers >= 0, or empty')
        self._declare('desired_timeout', 0.1, 'desired input older than this counts as zero '
                      'acceleration without PD terms [s]; 0: never expires', t.DOUBLE,
                      float_range=(0.0, MAX_TIMEOUT))
        self._declare('max_description_bytes', rbd.MAX_DESCRIPTION_BYTES, 'larger robot '
                      'descriptions are refused [bytes]', t.INTEGER, int_range=(1024, 2 ** 31 - 1))
        self._declare('joint_states_thread', True, 'take joint_states on a thread of its own '
                      '(the executor of rclpy costs more per message than the dynamics); '
                      'false: in the executor with every other callback', t.BOOL,
                      read_only=True)
        self._declare('wrench_sensors', [], 'names of the force/torque sensors; each has '
                      'wrench.<name>.topic, .frame, .convention, .timeout, .compensate_payload',
                      t.STRING_ARRAY, read_only=True)
        self._sensors = []
        for name in self._p['wrench_sensors']:
            sensor = _Sensor(name)
            prefix = 'wrench.%s.' % name
            self._declare(prefix + 'topic', name + '/wrench', 'geometry_msgs/WrenchStamped '
                          'topic of sensor %s' % name, t.STRING, read_only=True)
            self._declare(prefix + 'frame', '', 'link the wrench acts on, in whose frame it is '
                          'expressed; empty: the message header.frame_id', t.STRING)
            self._declare(prefix + 'convention', CONVENTIONS[0], 'applied_on_robot: the wrench '
                          'the environment applies on the link; exerted_by_robot: the opposite',
                          t.STRING, constraints=' or '.join(CONVENTIONS))
            self._declare(prefix + 'timeout', 0.1, 'older readings are dropped [s]; 0: never',
                          t.DOUBLE, float_range=(0.0, MAX_TIMEOUT))
            self._declare(prefix + 'compensate_payload', False, 'add the modelled wrench of the '
                          'links at and beyond the frame (the sensor measures their weight and '
                          'inertia too)', t.BOOL)
            self._sensors.append(sensor)
            self._apply_sensor(sensor)
        self._apply_hot_parameters()

    def _sensor_of(self, name):
        for sensor in self._sensors:
            if name.startswith('wrench.%s.' % sensor.name):
                return sensor
        return None

    def _apply_sensor(self, sensor):
        prefix = 'wrench.%s.' % sensor.name
        sensor.topic = self._p[prefix + 'topic']
        sensor.frame = self._p[prefix + 'frame']
        sensor.convention = self._p[prefix + 'convention']
        sensor.timeout_ns = int(self._p[prefix + 'timeout'] * NS)
        sensor.compensate = bool(self._p[prefix + 'compensate_payload'])

    def _apply_hot_parameters(self):
        self._feedforward_out = self._p['command_output'] == 'feedforward'
        self._desired_timeout_ns = int(self._p['desired_timeout'] * NS)

    def _check(self, name, value):
        """Why ``value`` is not acceptable for parameter ``name`` on its own, or ``''``."""
        if name == 'gravity':
            if len(value) != 3 or not all(math.isfinite(v) for v in value):
                return 'gravity must be 3 finite numbers, got %r' % (list(value),)
        elif name in ('kp', 'kd'):
            if not all(math.isfinite(v) and v >= 0.0 for v in value):
                return '%s must be finite and non-negative, got %r' % (name, list(value))
        elif name == 'command_output':
            if value not in COMMAND_OUTPUTS:
                return 'unknown command_output %r (use %s)' % (value, ' or '.join(COMMAND_OUTPUTS))
        elif name.endswith('.convention'):
            if value not in CONVENTIONS:
                return 'unknown convention %r (use %s)' % (value, ' or '.join(CONVENTIONS))
        elif name == 'desired_timeout' or name.endswith('.timeout'):
            if not (math.isfinite(value) and 0.0 <= value <= MAX_TIMEOUT):
                return '%s must be in [0, %g] s, got %r' % (name, MAX_TIMEOUT, value)
        elif name == 'joints':
            if len(set(value)) != len(value):
                return 'joints lists a joint more than once'
        elif name == 'max_description_bytes':
            if value < 1024:
                return 'max_description_bytes must be at least 1024'
        return ''

    def _on_set_parameters(self, params):
        pending = dict(self._p)
        for param in params:
            name = param.name
            if name == 'use_sim_time':
                continue
            if name not in pending:
                continue  # parameters of other layers (rclpy's own), not ours to judge
            value = param.value
            if value is None:
                value = [] if isinstance(pending[name], list) else value
            elif isinstance(pending[name], list):
                value = list(value)
            reason = self._check(name, value)
            if reason:
                return self._reject_parameters(reason)
            pending[name] = value
        changed = {name for name in pending if pending[name] != self._p[name]}
        if not changed:
            return SetParametersResult(successful=True)
        rebuild_model = changed & {'robot_description', 'root_link', 'gravity',
                                   'max_description_bytes'}
        with self._setup_lock:
            setup = self._setup
            if setup is not None and changed & {'joints', 'kp', 'kd'} and not rebuild_model:
                try:
                    new_setup = _Setup(setup.model, pending['joints'], pending['kp'],
                                       pending['kd'], previous=setup)
                except ValueError as exc:
                    return self._reject_parameters(str(exc))
            elif changed & {'joints', 'kp', 'kd'}:
                joints = pending['joints']
                count = len(joints) if joints else (setup.model.nv if setup else None)
                for gains in ('kp', 'kd'):
                    if count is not None and len(pending[gains]) not in (0, count):
                        return self._reject_parameters('%s has %d entries, joints has %d'
                                                       % (gains, len(pending[gains]), count))
                new_setup = None
            else:
                new_setup = None
            self._p = pending
            if new_setup is not None:
                self._setup = new_setup
        self._apply_hot_parameters()
        for sensor in self._sensors:
            if any(self._sensor_of(name) is sensor for name in changed):
                self._apply_sensor(sensor)
        if rebuild_model:
            self._request_model('a parameter change (%s)' % ', '.join(sorted(rebuild_model)))
        return SetParametersResult(successful=True)

    def _reject_parameters(self, reason):
        self._counts['rejected_parameters'] += 1
        self.get_logger().warning('parameter change rejected: %s' % reason)
        return SetParametersResult(successful=False, reason=reason)

    # Robot description ----------------------------------------------------------------------

    def _on_description(self, msg):
        self._counts['descriptions'] += 1
        self._topic_description = msg.data
        if self._p['robot_description']:
            self.get_logger().info('robot_description topic ignored: the robot_description '
                                   'parameter is set', throttle_duration_sec=LOG_PERIOD)
            return
        self._request_model('the robot_description topic')

    def _request_model(self, source):
        """Build the model of the current description on the worker thread."""
        text = self._p['robot_description'] or self._topic_description
        if text is None:
            return
        self._generation += 1
        self._building = source
        self._builder.submit(self._build_model, self._generation, source, text,
                             dict(self._p))

    def _build_model(self, generation, source, text, params):
        log = self.get_logger()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter('ignore', rbd.InertiaWarning)
                # compiled below, once the model is in use
                model = rbd.Model.from_urdf(text, gravity=params['gravity'],
                                            root_link=params['root_link'] or None,
                                            max_bytes=params['max_description_bytes'],
                                            compiled=False)
            multi = [(name, jtype) for name, jtype, nv in zip(
                model.joint_names, model.joint_types, model.joint_nv) if nv != 1]
            if multi:
                raise ValueError('joint %r is %s (%d coordinates), which joint_states cannot '
                                 'carry; set root_link to a link below it'
                                 % (multi[0][0], multi[0][1],
                                    model.joint_nq[model.joint_names.index(multi[0][0])]))
            with self._setup_lock:
                if generation != self._generation:
                    return  # a newer description is on its way
                # the joint parameters may have changed while the model was built
                setup = _Setup(model, self._p['joints'], self._p['kp'], self._p['kd'],
                               previous=self._setup)
                self._compiling = True  # (compiled below)
                self._setup = setup
        except Exception as exc:  # an unusable description must never stop the node
            self._counts['descriptions_rejected'] += 1
            self._model_error = '%s: %s' % (type(exc).__name__, exc)
            kept = ('; keeping the model of %s' % self._model_source if self._setup is not None
                    else '; no model yet, nothing is published')
            log.error('robot description from %s rejected: %s%s' % (source, exc, kept))
            return
        finally:
            if generation == self._generation:
                self._building = ''
        self._model_error = ''
        self._model_source = source
        self._model_built_at = time.time()
        for note in model.warnings:
            log.warning('robot description: %s (accepted)' % note)
        log.info('model %r from %s: %d joints, %d links; output joints: %s'
                 % (model.name, source, model.nv, len(model.link_names),
                    ', '.join(setup.joints)))
        # Torques flow from now on, on the NumPy path (the newest joint state, then a pause of
        # NUMPY_PATH_PAUSE); the compiled path takes over when it is built. Loaded from
        # numba's disk cache that is a fraction of a second; the first start on a machine
        # compiles for seconds, with exact torques published meanwhile.
        start = time.monotonic()
        try:
            compiled = model.compile()
        finally:
            self._compiling = False
        log.info('compiled path %s (%.2f s)'
                 % ('in use' if compiled else 'unavailable: NumPy path',
                    time.monotonic() - start))
        # Move everything alive now (numba, the model) out of the collector's reach: a full
        # collection over those objects would otherwise pause the joint-state path for
        # milliseconds every so often.
        gc.collect()
        gc.freeze()

    # Inputs -------------------------------------------------------------------------------------

    def _reject(self, kind, reason):
        self._counts['rejected_' + kind] += 1
        self._last_error[kind] = reason
        self.get_logger().warning('%s rejected: %s' % (kind.replace('_', ' '), reason),
                                  throttle_duration_sec=LOG_PERIOD)

    def _on_desired_state(self, msg):
        setup = self._setup
        if setup is None:
            return self._reject('desired', 'no model yet')
        try:
            desired = desired_from_trajectory(msg, setup.index, setup.model.nv, setup.joints)
        except ValueError as exc:
            return self._reject('desired', str(exc))
        self._store_desired(setup, desired)

    def _on_desired_accelerations(self, msg):
        setup = self._setup
        if setup is None:
            return self._reject('desired', 'no model yet')
        try:
            desired = desired_from_array(msg, setup.rows, setup.model.nv)
        except ValueError as exc:
            return self._reject('desired', str(exc))
        self._store_desired(setup, desired)

    def _store_desired(self, setup, desired):
        """Keep a desired input with its PD gains: zero outside the joints it covers, ``None``
        without a reference (or without gains)."""
        kp = setup.kp * desired.mask if desired.q is not None and setup.kp.any() else None
        kd = setup.kd * desired.mask if desired.qd is not None and setup.kd.any() else None
        self._desired = (setup, self.get_clock().now().nanoseconds, desired, kp, kd)

    def _on_wrench(self, sensor, msg):
        try:
            wrench = wrench_to_array(msg, sensor.convention)
        except ValueError as exc:
            return self._reject('wrench', 'sensor %s: %s' % (sensor.name, exc))
        link = sensor.frame or msg.header.frame_id
        if not link:
            return self._reject('wrench', 'sensor %s: empty header.frame_id and no '
                                'wrench.%s.frame override' % (sensor.name, sensor.name))
        setup = self._setup
        if setup is not None and link not in setup.model.link_body:
            return self._reject('wrench', 'sensor %s: frame %r is not a link of the model'
                                % (sensor.name, link))
        sensor.received += 1
        sensor.reading = (self.get_clock().now().nanoseconds, link, wrench)

    def _on_joint_state(self, msg, newer=False):
        """Merge a joint state and answer it (``newer``: a newer one is already waiting)."""
        self._counts['joint_states'] += 1
        setup = self._setup
        if setup is None:
            self._counts['rejected_no_model'] += 1
            if self._building:
                why = 'building the model of %s' % self._building
            else:
                why = self._model_error or 'waiting for the robot_description topic'
            self.get_logger().warning('no usable robot description yet (%s); publishing nothing'
                                      % why, throttle_duration_sec=LOG_PERIOD)
            return
        merger = setup.merger
        try:
            if not merger.update(msg):
                return  # none of this model's joints
        except ValueError as exc:
            return self._reject('joint_states', str(exc))
        if merger.missing_count:
            self._counts['incomplete_joint_states'] += 1
            self.get_logger().warning('waiting for joint_states of %s'
                                      % ', '.join(merger.missing()),
                                      throttle_duration_sec=LOG_PERIOD)
            return
        numpy_path = self._compiling and setup.model.packed is None
        if numpy_path and newer:
            # the compiled path is being built: answer the newest state only
            self._counts['skipped_while_compiling'] += 1
            return
        start = time.perf_counter_ns()
        now = self.get_clock().now().nanoseconds
        self._last_joint_state_ns = now
        self._compute(setup, merger.position, merger.velocity, now, msg.header.stamp)
        spent = time.perf_counter_ns() - start
        self._compute_ns.append(spent)
        if spent > self._compute_max_ns:
            self._compute_max_ns = spent
        if numpy_path:
            time.sleep(NUMPY_PATH_PAUSE)  # leave the interpreter to the compilation

    # Torques ------------------------------------------------------------------------------------

    def _desired_acceleration(self, setup, q, qd, now):
        """Commanded acceleration: desired plus PD terms, or zero when stale or absent."""
        entry = self._desired
        if entry is None or entry[0] is not setup:
            return setup.zero
        if self._desired_timeout_ns and now - entry[1] > self._desired_timeout_ns:
            return setup.zero
        _, _, desired, kp, kd = entry
        qdd = desired.qdd
        if kp is not None:
            error = desired.q - q
            if setup.has_continuous:
                error[setup.continuous] = wrap_angle(error[setup.continuous])
            qdd = qdd + kp * error
        if kd is not None:
            qdd = qdd + kd * (desired.qd - qd)
        return qdd

    def _wrenches(self, setup, now):
        """Fresh readings: ``[(link, wrench, compensate)]``."""
        out = []
        link_body = setup.model.link_body
        for sensor in self._sensors:
            reading = sensor.reading
            if reading is None:
                continue
            if sensor.timeout_ns and now - reading[0] > sensor.timeout_ns:
                continue
            if reading[1] not in link_body:
                continue  # the model changed under the reading
            out.append((reading[1], reading[2], sensor.compensate))
        return out

    def _compute(self, setup, q, qd, now, stamp):
        model = setup.model
        qdd = self._desired_acceleration(setup, q, qd, now)
        f_ff = f_g = None
        readings = self._wrenches(setup, now) if self._sensors else ()
        if readings:
            f_ff, f_g = {}, {}
            for link, wrench, compensate in readings:
                w_ff = w_g = wrench
                if compensate:
                    # the sensor also carries the modelled links beyond it; their wrench at
                    # the state of each torque turns the reading into the contact wrench
                    w_ff = wrench + rbd.payload_wrench(model, link, q, qd, qdd)
                    w_g = wrench + rbd.payload_wrench(model, link, q)
                f_ff[link] = f_ff[link] + w_ff if link in f_ff else w_ff
                f_g[link] = f_g[link] + w_g if link in f_g else w_g
        tau_ff = rbd.rnea(model, q, qd, qdd, f_ff)
        tau_g = rbd.gravity_torques(model, q, f_g)
        if setup.reorder is not None:
            tau_ff = tau_ff[setup.reorder]
            tau_g = tau_g[setup.reorder]
        if not (np.isfinite(tau_ff).all() and np.isfinite(tau_g).all()):
            self._counts['non_finite_outputs'] += 1
            self.get_logger().error('non-finite torque computed (q=%s, qd=%s, qdd=%s); '
                                    'publishing nothing this cycle'
                                    % (q.tolist(), qd.tolist(), qdd.tolist()),
                                    throttle_duration_sec=LOG_PERIOD)
            return
        if self._named is not setup:
            self._msg_ff.name = list(setup.joints)
            self._msg_g.name = list(setup.joints)
            self._named = setup
        # A topic nobody subscribes to is skipped: turning the message into its C form is a
        # large part of a publish, and DDS would discard it anyway.
        for pub, msg, tau in ((self._pub_ff, self._msg_ff, tau_ff),
                              (self._pub_g, self._msg_g, tau_g)):
            if pub.get_subscription_count():
                msg.header.stamp = stamp
                msg.effort = to_float_array(tau)
                pub.publish(msg)
        if self._pub_cmd.get_subscription_count():
            self._msg_cmd.data = to_float_array(tau_ff if self._feedforward_out else tau_g)
            self._pub_cmd.publish(self._msg_cmd)
        self._counts['outputs'] += 1

    # Diagnostics --------------------------------------------------------------------------------

    def _publish_diagnostics(self):
        now = self.get_clock().now()
        now_ns = now.nanoseconds
        setup = self._setup
        status = DiagnosticStatus(name='%s: dynamics' % self.get_fully_qualified_name(),
                                  hardware_id=setup.model.name if setup else '')
        values = []

        def add(key, value):
            values.append(KeyValue(key=key, value=str(value)))

        def age(stamp_ns):
            return 'never' if stamp_ns is None else '%.3f' % ((now_ns - stamp_ns) / NS)

        if setup is None:
            status.level = DiagnosticStatus.ERROR
            status.message = ('no model: %s' % self._model_error if self._model_error
                              else 'waiting for the robot description')
        else:
            missing = setup.merger.missing()
            if missing:
                status.level = DiagnosticStatus.WARN
                status.message = 'waiting for joint_states of %s' % ', '.join(missing)
            elif self._model_error:
                status.level = DiagnosticStatus.WARN
                status.message = 'new description rejected, previous model in use'
            elif self._last_joint_state_ns is None:
                status.level = DiagnosticStatus.WARN
                status.message = 'no joint_states yet'
            else:
                status.level = DiagnosticStatus.OK
                status.message = 'publishing torques'
            add('model', '%s (%d joints, from %s)'
                % (setup.model.name, setup.model.nv, self._model_source))
            add('compiled path', 'in use' if setup.model.packed is not None else
                'compiling' if self._compiling else 'unavailable: %s (NumPy path)'
                % (rbd._fast.UNAVAILABLE_REASON or 'the kernels could not be built'))
            add('joints', ', '.join(setup.joints))
        add('model error', self._model_error or 'none')
        add('joint_states age [s]', age(self._last_joint_state_ns))
        desired = self._desired
        add('desired age [s]', age(desired[1] if desired else None))
        for sensor in self._sensors:
            reading = sensor.reading
            add('wrench %s age [s]' % sensor.name, age(reading[0] if reading else None))
        samples = self._compute_ns
        self._compute_ns = []
        if samples:
            add('compute time mean [us]', '%.1f' % (sum(samples) / len(samples) / 1e3))
        add('compute time max [us]', '%.1f' % (self._compute_max_ns / 1e3))
        for key, count in self._counts.items():
            add(key, count)
        add('callback_failures', getattr(self, 'callback_failures', 0))
        add('joint_states taken on', 'a thread of their own' if self._joint_state_thread
            else 'the executor')
        for kind, reason in self._last_error.items():
            add('last %s rejection' % kind, reason)
        status.values = values
        msg = DiagnosticArray()
        msg.header.stamp = now.to_msg()
        msg.status = [status]
        self._pub_diag.publish(msg)

    def destroy_node(self):
        if self._joint_state_thread is not None:
            self._joint_state_thread.stop()
        self._builder.shutdown(wait=False)
        return super().destroy_node()


def main(args=None):
    run(DynamicsNode, args)


if __name__ == '__main__':
    main()
