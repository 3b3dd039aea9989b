"""
``rbd_dynamics_trajectory``: smooth desired states for the demo and the closed-loop tests.

On every ``joint_states`` message it publishes ``desired_state`` (one
``trajectory_msgs/JointTrajectory`` point with positions, velocities and accelerations) for the
message's stamp plus ``lead``: ``q_d = center + amplitude (1 - cos(2 pi frequency t))``
(:func:`rbd_dynamics.ros.demo_setup.swing`), which starts at rest on ``center``, so a robot
held there starts on the trajectory. Driven by the joint-state stamps, it follows simulated
time without a clock of its own. ``center`` and ``amplitude`` may change while it runs (one
``set_parameters_atomically`` request changes both together); ``t`` stays the stamp, so the new
swing starts at rest on its centre only with ``amplitude`` 0 or at a whole period.
"""

import math

from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
from rclpy.node import Node
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from .demo_setup import swing
from .executor import run, stop_threads, subscribe_on_thread


class TrajectoryPublisher(Node):

    def __init__(self, **kwargs):
        super().__init__('rbd_dynamics_trajectory', **kwargs)
        t = Parameter.Type

        def declare(name, default, text, read_only=True):
            value = self.declare_parameter(name, default, ParameterDescriptor(
                description=text, read_only=read_only)).value
            return [] if value is None else value

        self.joints = list(declare('joints', t.STRING_ARRAY, 'joints of the trajectory'))
        center = list(declare('center', t.DOUBLE_ARRAY, 'start and centre [rad or m]; may '
                              'change while it runs', read_only=False))
        amplitude = list(declare('amplitude', t.DOUBLE_ARRAY, 'half the swing; may change '
                                 'while it runs', read_only=False))
        self.frequency = declare('frequency', 0.5, 'frequency [Hz]')
        self.lead = declare('lead', 0.0, 'publish the state this far ahead of the stamp [s]')
        self.forward = declare('forward_joint_states', False, 'after each desired state, '
                               'republish the joint state on joint_states_forwarded (a '
                               'controller listening there always has the matching desired '
                               'state first)')
        for name, value in (('center', center), ('amplitude', amplitude)):
            if len(value) != len(self.joints):
                raise ValueError('%s has %d entries, joints has %d'
                                 % (name, len(value), len(self.joints)))
        # (center, amplitude): they may change while it runs, from the next joint state on (a
        # test brings the desired state to where a held arm is before it lets the arm go); the
        # other parameters are read-only
        self._shape = (center, amplitude)
        self.add_on_set_parameters_callback(self._on_set)
        self.pub = self.create_publisher(JointTrajectory, 'desired_state', 10)
        # built once: each joint state only changes the stamp and the numbers
        self._out = JointTrajectory(joint_names=self.joints, points=[JointTrajectoryPoint()])
        self.pub_forward = (self.create_publisher(JointState, 'joint_states_forwarded', 10)
                            if self.forward else None)
        # every joint state is answered, on a thread of its own (with /clock, on simulated
        # time): through the executor each would cost a wake-up several times the answer
        subscribe_on_thread(self, JointState, 'joint_states', self._on_state, 10, clock=True)

    def destroy_node(self):
        stop_threads(self)
        return super().destroy_node()

    def desired(self, t):
        """``(q, qd, qdd)`` at time ``t`` [s]."""
        center, amplitude = self._shape
        return tuple(values.tolist() for values in swing(t, center, amplitude, self.frequency))

    def _on_set(self, params):
        changes = {}
        for param in params:
            if param.name not in ('center', 'amplitude'):
                continue
            value = [float(v) for v in param.value or []]
            if len(value) != len(self.joints) or not all(map(math.isfinite, value)):
                return SetParametersResult(
                    successful=False, reason='%s must be %d finite numbers (one per joint), '
                    'got %s' % (param.name, len(self.joints), value))
            changes[param.name] = value
        if changes:
            # one request that sets both (set_parameters_atomically) changes them together: a
            # joint state sees the old pair or the new one
            center, amplitude = self._shape
            self._shape = (changes.get('center', center), changes.get('amplitude', amplitude))
        return SetParametersResult(successful=True)

    def _on_state(self, msg):
        t = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec + self.lead
        out = self._out
        point = out.points[0]
        point.positions, point.velocities, point.accelerations = self.desired(t)
        out.header.stamp = msg.header.stamp
        self.pub.publish(out)
        if self.pub_forward is not None:
            self.pub_forward.publish(msg)


def main(args=None):
    run(TrajectoryPublisher, args)


if __name__ == '__main__':
    main()
