"""``rbd_dynamics_sim``: a simulated robot driver on MuJoCo, for closed-loop tests and the demo.

It plays the part of a robot driver with a ros2_control effort ``forward_command_controller``:
it publishes ``joint_states``, takes ``effort_commands`` (``std_msgs/Float64MultiArray`` in
``joints`` order) and publishes a wrist force/torque reading as ``geometry_msgs/WrenchStamped``
in the ``applied_on_robot`` convention (the wrench the links beyond the sensor frame apply on
the arm, in the sensor frame, about its origin). A scripted push can act on a link.

The physics is :func:`rbd_dynamics.mujoco_model.mjcf_from_urdf`: the URDF's rigid bodies, no
damping, friction, limits or contacts unless asked for. With ``lockstep`` the simulation
advances one control period per command, so tests are deterministic on a loaded machine;
otherwise a timer steps it at ``rate``. ``/clock`` carries the simulated time.
"""

import math

import numpy as np
from geometry_msgs.msg import WrenchStamped
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from .. import mujoco_model
from ..resources import demo_urdf_path
from .spinning import run


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
        self.model, mimic = mujoco_model.load(
            urdf, gravity=p['gravity'], timestep=p['timestep'], damping=p['damping'],
            limits=p['limits'], sensor_frame=p['wrench_frame'] or None)
        self.data = mujoco.MjData(self.model)
        m = self.model
        names = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(m.njnt)]
        self.names = names
        self.qpos_adr = np.array([m.jnt_qposadr[j] for j in range(m.njnt)])
        self.dof_adr = np.array([m.jnt_dofadr[j] for j in range(m.njnt)])
        joints = p['joints'] or [n for n in names if n not in mimic]
        unknown = [n for n in joints if n not in names or n in mimic]
        if unknown:
            raise ValueError('joints %s are not independent joints of the model (%s)'
                             % (unknown, ', '.join(n for n in names if n not in mimic)))
        self.joints = joints
        self.command_dofs = np.array([self.dof_adr[names.index(n)] for n in joints])
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
        self._waiting = None

        self.pub_state = self.create_publisher(JointState, 'joint_states', 10)
        self.pub_clock = self.create_publisher(Clock, '/clock', 10)
        self.pub_wrench = (self.create_publisher(WrenchStamped, p['wrench_topic'], 10)
                           if self.wrench_frame else None)
        self.create_subscription(Float64MultiArray, 'effort_commands', self._on_command, 10)
        if self.lockstep:
            # until the first command, repeat the initial state so late subscribers get it
            self._waiting = self.create_timer(0.1, self._publish_initial)
        else:
            self.create_timer(self.period, self._tick)
        self.get_logger().info('simulating %d joints at %g Hz (%s), commands in order: %s'
                               % (len(names), 1.0 / self.period,
                                  'lockstep' if self.lockstep else 'timer', ', '.join(joints)))

    def _read_parameters(self):
        t = Parameter.Type
        spec = [
            ('robot_description', '', 'URDF text; empty: urdf_file'),
            ('urdf_file', '', 'URDF file; empty: the bundled demo arm'),
            ('joints', t.STRING_ARRAY, 'order of effort_commands; empty: independent joints'),
            ('initial_positions', t.DOUBLE_ARRAY, 'in joints order; empty: zeros'),
            ('gravity', [0.0, 0.0, -9.81], 'gravity in the root link frame [m/s^2]'),
            ('rate', 1000.0, 'control rate [Hz]'),
            ('timestep', 0.001, 'physics step [s]'),
            ('lockstep', False, 'advance one control period per command'),
            ('wait_for_subscribers', 0, 'lockstep: publish the first state only once '
             'joint_states has this many subscribers (so no observer misses the start)'),
            ('publish_clock', True, 'publish /clock with the simulated time'),
            ('damping', False, 'use the URDF joint damping and friction'),
            ('limits', False, 'enforce the URDF joint position limits'),
            ('wrench_frame', 'ft_frame', 'link of the simulated F/T sensor; empty: none'),
            ('wrench_topic', 'ft_sensor/wrench', 'topic of the F/T reading'),
            ('push_link', '', 'link pushed by a scripted external force; empty: none'),
            ('push_force', [0.0, 0.0, 0.0], 'push force at the link origin, world frame [N]'),
            ('push_start', 0.0, 'simulated time the push starts [s]'),
            ('push_duration', 0.0, 'push length [s]'),
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
        if self.pub_state.get_subscription_count() >= self.wait_for_subscribers:
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
        self.data.qfrc_applied[:] = 0.0
        self.data.qfrc_applied[self.command_dofs] = values
        self.commands += 1
        if self.lockstep:
            if self._waiting is not None:
                self._waiting.cancel()
                self._waiting = None
            self._tick()

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
        for _ in range(self.substeps):
            self._apply_push()
            mujoco.mj_step(self.model, self.data)
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
        msg = JointState()
        msg.header.stamp = stamp
        msg.name = self.names
        msg.position = d.qpos[self.qpos_adr].tolist()
        msg.velocity = d.qvel[self.dof_adr].tolist()
        msg.effort = d.qfrc_applied[self.dof_adr].tolist()
        self.pub_state.publish(msg)
        if self.pub_wrench is not None:
            # MuJoCo's force/torque sensors give the wrench the parent applies on the links
            # beyond the frame; the arm receives the opposite
            wrench = WrenchStamped()
            wrench.header.stamp = stamp
            wrench.header.frame_id = self.wrench_frame
            f = -d.sensor('ft_force').data
            n = -d.sensor('ft_torque').data
            w = wrench.wrench
            w.force.x, w.force.y, w.force.z = float(f[0]), float(f[1]), float(f[2])
            w.torque.x, w.torque.y, w.torque.z = float(n[0]), float(n[1]), float(n[2])
            self.pub_wrench.publish(wrench)


def main(args=None):
    run(SimDriver, args)


if __name__ == '__main__':
    main()
