"""
``rbd_dynamics_sim``: a simulated robot driver on MuJoCo, for closed-loop tests and the demo.

It plays the part of a robot driver with a ros2_control effort ``forward_command_controller``:
it publishes ``joint_states`` (with ``effort`` the motor torque it applies, as a driver
reports it), takes ``effort_commands`` (``std_msgs/Float64MultiArray`` in
``joints`` order) and publishes a wrist force/torque reading as ``geometry_msgs/WrenchStamped``
in the ``applied_on_robot`` convention (the wrench the links beyond the sensor frame apply on
the arm, in the sensor frame, about its origin). A scripted push can act on a link.

The physics is :func:`rbd_dynamics.sim.mujoco_model.mjcf_from_urdf`: the URDF's rigid bodies, no
damping, friction, limits or contacts unless asked for. With ``lockstep`` the simulation
advances one control period per command, so tests are deterministic on a loaded machine;
otherwise a timer steps it at ``rate``. ``/clock`` carries the simulated time.

What a real arm adds, each off by default so the ideal robot stays the default: links that
differ from the description (``true_arm.*``: mass and inertia scaled, centre of mass moved;
the node and the tools keep the description as given), the drive
(viscous and Coulomb friction, rotor inertia: ``drive.*``), effort limits that clamp the
commands (``effort_limits``), a payload grasped at a given time (``payload.*``), an untared
force/torque sensor (``wrench_bias``), and a JointTrajectoryController stand-in on an effort
interface in place of the forward command controller (``controller: joint_trajectory``, see
:mod:`rbd_dynamics.sim.joint_trajectory_controller`).

Like a driver, it reports on ``/diagnostics`` once a second: simulated time, commands taken,
refused and clamped (with the joints clamped), the payload and the sensor bias.
"""

import math
import threading
import time

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import WrenchStamped
import numpy as np
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory

from .executor import run, stop_threads, subscribe_on_thread
from ..control.joint_trajectory import check_points, FIELDS
from ..parsers.urdf import parse_urdf
from ..resources import demo_urdf_path
from ..sim import mujoco_model
from ..sim.joint_trajectory_controller import Pid, Trajectory
from ..sim.true_arm import changed_description

CONTROLLERS = ('forward_command', 'joint_trajectory')
DIAGNOSTIC_PERIOD = 1.0  # s, wall clock
#: Lockstep: how long [s, wall clock] the driver waits for the first command before it
#: publishes its initial state again. A controller answers each state it receives, and every
#: answer steps the simulation: an answer to a second copy of the initial state would leave a
#: command in flight for the whole run (each command applied a step late). So the copy goes
#: out only after a silence much longer than an answer takes: the first state was lost, or
#: the controller was not ready to answer it.
INITIAL_REPEAT = 1.0


def per_joint(name, values, joints, default):
    """
    Read a parameter given per joint (or one value for all) as ``(n,)`` floats.

    Parameters
    ----------
    name
        parameter name, for the message.
    values
        the parameter's list: empty (``default``), one value, or one per joint.
    joints
        the joint names, in order.
    default
        ``(n,)`` values used when ``values`` is empty.

    Raises
    ------
    ValueError
        another length, or a value that is not finite.

    """
    if len(values) == 0:
        return np.array(default, dtype=float)
    if len(values) not in (1, len(joints)):
        raise ValueError('%s has %d entries; give one, or one per joint (%d: %s)'
                         % (name, len(values), len(joints), ', '.join(joints)))
    out = np.broadcast_to(np.asarray(values, dtype=float), (len(joints),)).copy()
    if not np.all(np.isfinite(out)):
        raise ValueError('%s must be finite, got %s' % (name, list(values)))
    return out


def joint_drives(desc, joints, viscous=(), coulomb=(), armature=()):
    """
    Joint name -> ``(viscous, coulomb, armature)`` for the MuJoCo model.

    The lists are per joint of ``joints``, as the node's ``drive.*`` parameters are: a
    master's value is the whole drive of the master and its mimic joints, so it goes on the
    master and its mimic joints get none of that kind. Where a list is empty, every joint keeps
    its own URDF value (the equality constraint reflects a mimic's onto its master), and the
    armature is zero.

    Parameters
    ----------
    desc
        the parsed :class:`~rbd_dynamics.description.Description`.
    joints
        independent joints the lists follow.
    viscous, coulomb, armature
        empty, one value, or one per joint.

    Raises
    ------
    ValueError
        a list of another length, or a value that is not finite.

    """
    own = {n: (j.damping, j.friction) for n, j in desc.joints.items()}
    given = {'drive.viscous': viscous, 'drive.coulomb': coulomb, 'drive.armature': armature}
    values = [per_joint(name, given[name], joints, [own[n][k] if k < 2 else 0.0 for n in joints])
              for k, name in enumerate(given)]
    drive = {n: tuple(v[i] for v in values) for i, n in enumerate(joints)}
    for name, joint in desc.joints.items():
        if joint.mimic is not None and joint.mimic[0] in drive:
            drive[name] = (0.0 if len(viscous) else own[name][0],
                           0.0 if len(coulomb) else own[name][1], 0.0)
    return drive


class SimDriver(Node):
    """MuJoCo robot: effort commands in, joint states and F/T readings out."""

    def __init__(self, **kwargs):
        super().__init__('rbd_dynamics_sim', **kwargs)
        import mujoco
        self._mujoco = mujoco
        p = self._read_parameters()
        urdf = p['robot_description']
        if not urdf:
            with open(p['urdf_file'] or demo_urdf_path()) as stream:
                urdf = stream.read()
        if isinstance(urdf, bytes):
            urdf = urdf.decode('utf-8')
        if p['true_arm.links']:
            urdf = changed_description(urdf, p['true_arm.links'], p['true_arm.mass_scale'],
                                       p['true_arm.com_shift'])
            self.get_logger().info('the simulated arm differs from its description: links %s '
                                   '(mass times %s, centre of mass moved by %s m)'
                                   % (', '.join(p['true_arm.links']), p['true_arm.mass_scale'],
                                      p['true_arm.com_shift']))
        desc = parse_urdf(urdf)
        mimic = {n: j.mimic for n, j in desc.joints.items() if j.mimic is not None}
        moving = [n for n, j in desc.joints.items() if j.jtype != 'fixed']
        joints = p['joints'] or [n for n in moving if n not in mimic]
        unknown = [n for n in joints if n not in moving or n in mimic]
        if unknown:
            raise ValueError('joints %s are not independent joints of the model (%s)'
                             % (unknown, ', '.join(n for n in moving if n not in mimic)))
        self.joints = joints
        self.payload = None
        self.payload_note = 'none'
        if p['payload.link']:
            self.payload = (p['payload.mass'], p['payload.com'], p['payload.inertia'])
            self.payload_link = p['payload.link']
            self.payload_note = '%g kg on %s at t = %g s (not yet)' % (
                p['payload.mass'], p['payload.link'], p['payload.attach_time'])
            self.payload_time = p['payload.attach_time']
        self.model, _ = mujoco_model.load(
            urdf, gravity=p['gravity'], timestep=p['timestep'],
            damping=p['damping'] or p['drive.enabled'], limits=p['limits'],
            sensor_frame=p['wrench_frame'] or None,
            drive=joint_drives(desc, joints, p['drive.viscous'], p['drive.coulomb'],
                               p['drive.armature']) if p['drive.enabled'] else None,
            payload_link=p['payload.link'] or None, hard_friction=p['drive.hard_friction'])
        if self.payload is not None:
            # check the numbers now, not when the payload is attached
            mujoco_model.set_payload(self.model, *self.payload)
            mujoco_model.set_payload(self.model, 0.0)
        self.data = mujoco.MjData(self.model)
        self._attach_payload()
        m = self.model
        names = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(m.njnt)]
        self.names = names
        self.qpos_adr = np.array([m.jnt_qposadr[j] for j in range(m.njnt)])
        self.dof_adr = np.array([m.jnt_dofadr[j] for j in range(m.njnt)])
        self.command_dofs = np.array([self.dof_adr[names.index(n)] for n in joints])
        self.command_qpos = np.array([self.qpos_adr[names.index(n)] for n in joints])
        self._configure_limits_and_controller(p, desc)
        # a driver that speaks current: efforts out and commands in are in its unit
        self.effort_scale = per_joint('drive.effort_scale', p['drive.effort_scale'], joints,
                                      np.ones(len(joints)))
        if np.any(self.effort_scale == 0.0):
            raise ValueError('drive.effort_scale must not be 0, got %s'
                             % list(p['drive.effort_scale']))
        self.state_scale = np.array([self.effort_scale[joints.index(n)] if n in joints else 1.0
                                     for n in names])
        initial = p['initial_positions']
        if initial:
            if len(initial) != len(joints):
                raise ValueError('initial_positions has %d entries, joints has %d'
                                 % (len(initial), len(joints)))
            for name, value in zip(joints, initial):
                self.data.qpos[self.qpos_adr[names.index(name)]] = value
        for name, (master, mult, off) in mimic.items():
            self.data.qpos[self.qpos_adr[names.index(name)]] = (
                off + mult * self.data.qpos[self.qpos_adr[names.index(master)]])
        mujoco.mj_forward(m, self.data)

        self.substeps = max(1, int(round(1.0 / (p['rate'] * p['timestep']))))
        self.period = self.substeps * p['timestep']
        self.lockstep = p['lockstep']
        self.wait_for_subscribers = p['wait_for_subscribers']
        self.publish_clock = p['publish_clock']
        self.wrench_frame = p['wrench_frame']
        self.push_body = -1
        if p['push_link']:
            self.push_body = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, p['push_link'])
            if self.push_body < 0:
                raise ValueError('push_link %r is not a body' % p['push_link'])
        self.push_force = np.array(p['push_force'], dtype=float)
        self.push_start = p['push_start']
        self.push_end = p['push_start'] + p['push_duration']
        self.commands = 0
        self.rejected = 0
        self.clamped = 0
        self.clamped_joints = set()  # since the last diagnostics report
        self.reported = (0, 0)  # (clamped, rejected) counts at the last report
        self.trajectories = 0
        self.trajectories_rejected = 0
        self._waiting = None
        # held while the simulation steps or publishes and while the diagnostics read its
        # counts: in lockstep, commands step it on their own thread, while the executor may
        # still publish the initial state and reports the diagnostics
        self._step_lock = threading.Lock()
        self.trajectory = Trajectory.hold(self.data.time, self.data.qpos[self.command_qpos])

        self.pub_state = self.create_publisher(JointState, 'joint_states', 10)
        self.pub_clock = self.create_publisher(Clock, '/clock', 10)
        self.pub_diag = self.create_publisher(DiagnosticArray, '/diagnostics', 10)
        self.pub_wrench = (self.create_publisher(WrenchStamped, p['wrench_topic'], 10)
                           if self.wrench_frame else None)
        if self.trajectory_control:
            self.create_subscription(JointTrajectory, 'joint_trajectory', self._on_trajectory,
                                     10)
        else:
            self._subscribe_commands()
        if self.lockstep:
            # until the first command (or trajectory): the initial state once
            # wait_for_subscribers listen, again after INITIAL_REPEAT without a command
            self._initial_sent = None  # monotonic time of the last initial state
            self._waiting = self.create_timer(0.1, self._publish_initial)
        else:
            self.create_timer(self.period, self._tick)
        self.create_timer(DIAGNOSTIC_PERIOD, self._publish_diagnostics)
        self.get_logger().info(
            'simulating %d joints at %g Hz (%s, %s), commands in order: %s'
            % (len(names), 1.0 / self.period, 'lockstep' if self.lockstep else 'timer',
               p['controller'], ', '.join(joints)))

    def _subscribe_commands(self):
        """
        Take ``effort_commands``: in lockstep on a thread of its own, else in the executor.

        In lockstep each command steps the simulation and publishes the next state; on the
        thread a command costs no executor wake-up (several times the step itself), which
        sets how fast a lockstep loop runs. The executor then only runs the timers.
        """
        if self.lockstep:
            subscribe_on_thread(self, Float64MultiArray, 'effort_commands', self._on_command, 10)
        else:
            self.create_subscription(Float64MultiArray, 'effort_commands', self._on_command, 10)

    def destroy_node(self):
        stop_threads(self)
        return super().destroy_node()

    def _configure_limits_and_controller(self, p, desc):
        """Effort limits, F/T bias and the controller from the parameters ``p``."""
        joints = self.joints
        limits = per_joint('limits.effort', p['limits.effort'], joints,
                           [desc.joints[n].effort for n in joints])
        self.effort_limits = (np.where(limits > 0.0, np.abs(limits), np.inf)
                              if p['effort_limits'] else np.full(len(joints), np.inf))
        self.wrench_bias = np.array(p['wrench_bias'], dtype=float)
        if self.wrench_bias.shape != (6,) or not np.all(np.isfinite(self.wrench_bias)):
            raise ValueError('wrench_bias needs 6 finite numbers (force, then torque), got %s'
                             % p['wrench_bias'])
        if p['controller'] not in CONTROLLERS:
            raise ValueError('controller %r is not one of %s'
                             % (p['controller'], ', '.join(CONTROLLERS)))
        self.trajectory_control = p['controller'] == 'joint_trajectory'
        zeros = np.zeros(len(joints))
        self.pid = Pid(*(per_joint(name, p[name], joints, zeros)
                         for name in ('jtc.p', 'jtc.i', 'jtc.d')), i_clamp=p['jtc.i_clamp'])

    def _read_parameters(self):
        t = Parameter.Type
        spec = [
            ('robot_description', '', 'URDF text; empty: urdf_file'),
            ('urdf_file', '', 'URDF file; empty: the bundled demo arm'),
            ('true_arm.links', t.STRING_ARRAY, 'links whose inertials the simulated arm has '
             'changed from the description (the node keeps its own); empty: none'),
            ('true_arm.mass_scale', t.DOUBLE_ARRAY, 'true_arm: mass and inertia factor, one or '
             'per link'),
            ('true_arm.com_shift', t.DOUBLE_ARRAY, 'true_arm: centre of mass moved by x y z per '
             'link [m]; empty: not moved'),
            ('joints', t.STRING_ARRAY, 'order of effort_commands; empty: independent joints'),
            ('initial_positions', t.DOUBLE_ARRAY, 'in joints order; empty: zeros'),
            ('gravity', [0.0, 0.0, -9.81], 'gravity in the root link frame [m/s^2]'),
            ('rate', 1000.0, 'control rate [Hz]'),
            ('timestep', 0.001, 'physics step [s]'),
            ('lockstep', False, 'advance one control period per command'),
            ('wait_for_subscribers', 0, 'lockstep: publish the first state only once '
             'joint_states has this many subscribers (so no observer misses the start); '
             'again after 1 s without a command'),
            ('publish_clock', True, 'publish /clock with the simulated time'),
            ('damping', False, 'use the URDF joint damping and friction (as drive.enabled '
             'with empty drive lists)'),
            ('drive.enabled', False, 'simulate the drives: viscous and Coulomb friction, '
             'armature'),
            ('drive.viscous', t.DOUBLE_ARRAY, 'per joint of joints [N m s/rad]; empty: '
             'the URDF damping'),
            ('drive.coulomb', t.DOUBLE_ARRAY, 'per joint of joints [N m]; empty: the URDF '
             'friction'),
            ('drive.armature', t.DOUBLE_ARRAY, 'per joint of joints [kg m^2]; empty: zeros'),
            ('drive.hard_friction', False, 'Coulomb friction as a nearly rigid constraint: a '
             'moving joint feels exactly drive.coulomb, a joint at rest sticks (default: '
             "MuJoCo's soft friction loss)"),
            ('drive.effort_scale', t.DOUBLE_ARRAY, 'per joint of joints: joint torque per unit '
             'of the effort this driver reports and takes, as a driver that speaks motor '
             'current [N m per unit]; empty: 1 (N m)'),
            ('effort_limits', False, 'clamp the commands to the effort limits'),
            ('limits.effort', t.DOUBLE_ARRAY, 'per joint of joints [N m]; empty: the URDF '
             '<limit effort>; 0: unlimited'),
            ('limits', False, 'enforce the URDF joint position limits'),
            ('wrench_frame', 'ft_frame', 'link of the simulated F/T sensor; empty: none'),
            ('wrench_topic', 'ft_sensor/wrench', 'topic of the F/T reading'),
            ('push_link', '', 'link pushed by a scripted external force; empty: none'),
            ('push_force', [0.0, 0.0, 0.0], 'push force at the link origin, world frame [N]'),
            ('push_start', 0.0, 'simulated time the push starts [s]'),
            ('push_duration', 0.0, 'push length [s]'),
            ('wrench_bias', [0.0] * 6, 'added to every F/T reading: force, then torque '
             '[N, N m]'),
            ('payload.link', '', 'link that grasps a payload; empty: none'),
            ('payload.mass', 0.0, 'payload mass [kg]'),
            ('payload.com', [0.0] * 3, 'payload centre of mass in the link frame [m]'),
            ('payload.inertia', [0.0] * 6, 'ixx ixy ixz iyy iyz izz about the centre of mass, '
             'link axes [kg m^2]'),
            ('payload.attach_time', 0.0, 'simulated time the payload is grasped [s]'),
            ('controller', 'forward_command', 'forward_command (effort_commands) or '
             'joint_trajectory (a JointTrajectoryController stand-in on joint_trajectory)'),
            ('jtc.p', t.DOUBLE_ARRAY, 'joint_trajectory: proportional gain, one or per joint'),
            ('jtc.i', t.DOUBLE_ARRAY, 'joint_trajectory: integral gain, one or per joint'),
            ('jtc.d', t.DOUBLE_ARRAY, 'joint_trajectory: derivative gain, one or per joint'),
            ('jtc.i_clamp', 0.0, 'joint_trajectory: bound of the integral term [N m]; 0: none'),
        ]
        out = {}
        for name, default, text in spec:
            value = self.declare_parameter(name, default,
                                           ParameterDescriptor(description=text)).value
            if isinstance(default, t):
                value = list(value) if value is not None else []
            elif isinstance(default, list):
                value = list(value)
            out[name] = value
        return out

    def _publish_initial(self):
        with self._step_lock:
            now = time.monotonic()
            if self._waiting is not None \
                    and self.pub_state.get_subscription_count() >= self.wait_for_subscribers \
                    and (self._initial_sent is None
                         or now - self._initial_sent >= INITIAL_REPEAT):
                self._initial_sent = now
                self._publish()

    def _on_command(self, msg):
        values = np.asarray(msg.data, dtype=float)
        if values.shape != (len(self.joints),) or not np.all(np.isfinite(values)):
            self.rejected += 1
            self.get_logger().warning('effort command refused: %d values (expected %d in the '
                                      'order %s) or not finite'
                                      % (len(values), len(self.joints), ', '.join(self.joints)),
                                      throttle_duration_sec=2.0)
            return
        with self._step_lock:
            self._apply(values * self.effort_scale)
            self.commands += 1
            if self.lockstep:
                self._stop_waiting()
                self._tick()

    def _stop_waiting(self):
        if self._waiting is not None:
            self._waiting.cancel()
            self._waiting = None
            return True
        return False

    def _apply(self, values):
        """Apply ``values`` (``joints`` order), clamped to the effort limits."""
        clamped = np.clip(values, -self.effort_limits, self.effort_limits)
        if np.any(clamped != values):
            self.clamped += 1
            over = [n for n, a, b in zip(self.joints, clamped, values) if a != b]
            self.clamped_joints.update(over)
            self.get_logger().warning('effort clamped to the limits on %s (%d commands so '
                                      'far)' % (', '.join(over), self.clamped),
                                      throttle_duration_sec=2.0)
        self.data.qfrc_applied[:] = 0.0
        self.data.qfrc_applied[self.command_dofs] = clamped

    def _on_trajectory(self, msg):
        d = self.data
        q, qd = d.qpos[self.command_qpos], d.qvel[self.command_dofs]
        try:
            self.trajectory = self._trajectory(msg, d.time, q, qd)
        except ValueError as exc:
            self.trajectories_rejected += 1
            self.get_logger().warning('trajectory refused: %s' % exc,
                                      throttle_duration_sec=2.0)
            return
        self.trajectories += 1
        if self.lockstep and self._stop_waiting():
            # the clock starts with the first trajectory
            self.create_timer(self.period, self._tick)

    def _trajectory(self, msg, now, q, qd):
        """
        Build the trajectory of a message over every joint.

        The :class:`Trajectory` of ``msg`` over every joint of ``joints``: joints the
        message leaves out hold their position at receipt.
        """
        points = msg.points
        times = [p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec for p in points]
        fields = check_points(msg.joint_names,
                              {field: [getattr(point, field) for point in points]
                               for field in FIELDS},
                              required=('positions',), known=self.joints, what='trajectory')
        index = [self.joints.index(n) for n in msg.joint_names]

        def full(values, fill):
            if values is None:
                return None
            out = np.tile(fill, (len(points), 1))
            out[:, index] = values
            return out

        zeros = np.zeros(len(self.joints))
        stamp = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
        return Trajectory(stamp if stamp > 0.0 else now, times, full(fields['positions'], q),
                          full(fields['velocities'], zeros),
                          full(fields['accelerations'], zeros), full(fields['effort'], zeros),
                          now=now, q=q, qd=qd)

    def _publish_diagnostics(self):
        """One status: WARN while commands are clamped or refused, OK otherwise."""
        with self._step_lock:  # counts of whole commands (a lockstep command has its thread)
            array = self._diagnostics()
        self.pub_diag.publish(array)

    def _diagnostics(self):
        refused = self.rejected + self.trajectories_rejected
        clamped, rejected = self.clamped - self.reported[0], refused - self.reported[1]
        self.reported = (self.clamped, refused)
        clamped_joints = ', '.join(n for n in self.joints if n in self.clamped_joints)
        self.clamped_joints = set()
        status = DiagnosticStatus(name='%s: simulation' % self.get_fully_qualified_name(),
                                  hardware_id='mujoco')
        problems = []
        if clamped:
            problems.append('%d commands clamped to the effort limits (%s)'
                            % (clamped, clamped_joints))
        if rejected:
            problems.append('%d commands refused' % rejected)
        status.level = DiagnosticStatus.WARN if problems else DiagnosticStatus.OK
        status.message = '; '.join(problems) or 'running'
        values = [
            ('simulated time', '%.3f s' % self.data.time),
            ('effort commands', str(self.commands)),
            ('refused commands', str(self.rejected)),
            ('clamped commands', str(self.clamped)),
            ('joints clamped since the last report', clamped_joints or 'none'),
            ('trajectories', str(self.trajectories)),
            ('refused trajectories', str(self.trajectories_rejected)),
            ('payload', self.payload_note),
            ('wrench bias', ' '.join('%g' % v for v in self.wrench_bias)),
        ]
        status.values = [KeyValue(key=k, value=v) for k, v in values]
        array = DiagnosticArray(status=[status])
        array.header.stamp = self.get_clock().now().to_msg()
        return array

    def _control(self):
        """Apply the trajectory controller's effort for the current state."""
        d = self.data
        q_ref, qd_ref, _, effort = self.trajectory.sample(d.time)
        error = q_ref - d.qpos[self.command_qpos]
        error_rate = qd_ref - d.qvel[self.command_dofs]
        # the trajectory's effort in the driver's unit; the PID's gains give N m
        self._apply(self.pid(error, error_rate, self.period) + effort * self.effort_scale)
        self.commands += 1

    def _attach_payload(self):
        if self.payload is not None and self.data.time >= self.payload_time - 1e-9:
            mujoco_model.set_payload(self.model, *self.payload)
            self.payload_note = '%g kg on %s since t = %.3f s' % (
                self.payload[0], self.payload_link, self.data.time)
            self.get_logger().info('payload of %g kg attached at t = %.3f s'
                                   % (self.payload[0], self.data.time))
            self.payload = None

    def _apply_push(self):
        if self.push_body < 0:
            return
        xfrc = self.data.xfrc_applied[self.push_body]
        t = self.data.time
        if self.push_start <= t < self.push_end:
            # applied at the body's centre of mass: carry the moment of a force at the origin
            arm = self.data.xpos[self.push_body] - self.data.xipos[self.push_body]
            xfrc[:3] = self.push_force
            xfrc[3:] = np.cross(arm, self.push_force)
        else:
            xfrc[:] = 0.0

    def _tick(self):
        mujoco = self._mujoco
        if self.trajectory_control:
            self._control()
        for _ in range(self.substeps):
            self._apply_push()
            mujoco.mj_step(self.model, self.data)
            self._attach_payload()
        # sensors and positions of the new state, with the current forces
        mujoco.mj_forward(self.model, self.data)
        self._publish()

    def _publish(self):
        d = self.data
        if self.publish_clock:
            sec = int(math.floor(d.time))
            nsec = int(round((d.time - sec) * 1e9))
            if nsec >= 1000000000:
                sec, nsec = sec + 1, nsec - 1000000000
            clock = Clock()
            clock.clock.sec, clock.clock.nanosec = sec, nsec
            self.pub_clock.publish(clock)
            stamp = clock.clock
        else:
            stamp = self.get_clock().now().to_msg()
        if self.pub_wrench is not None:
            # MuJoCo's force/torque sensors give the wrench the parent applies on the links
            # beyond the frame; the arm receives the opposite. Published before the joint
            # state of the same instant, which it then answers with (the node hands on an
            # input published after a joint state only once that state is answered)
            wrench = WrenchStamped()
            wrench.header.stamp = stamp
            wrench.header.frame_id = self.wrench_frame
            f = self.wrench_bias[:3] - d.sensor('ft_force').data
            n = self.wrench_bias[3:] - d.sensor('ft_torque').data
            w = wrench.wrench
            w.force.x, w.force.y, w.force.z = float(f[0]), float(f[1]), float(f[2])
            w.torque.x, w.torque.y, w.torque.z = float(n[0]), float(n[1]), float(n[2])
            self.pub_wrench.publish(wrench)
        msg = JointState()
        msg.header.stamp = stamp
        msg.name = self.names
        msg.position = d.qpos[self.qpos_adr].tolist()
        msg.velocity = d.qvel[self.dof_adr].tolist()
        msg.effort = (d.qfrc_applied[self.dof_adr] / self.state_scale).tolist()
        self.pub_state.publish(msg)


def main(args=None):
    run(SimDriver, args)


if __name__ == '__main__':
    main()
