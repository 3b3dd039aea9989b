"""
The task-space scene of the demo arm: the hand's circle, the push on it, and their figures.

The hand's tool centre point (:data:`LINK`) starts at rest at its pose on ``Q0`` and follows a
circle of :data:`RADIUS` at :data:`FREQUENCY` in a plane tilted by :data:`TILT` from the
horizontal (:class:`Circle`), its orientation held; or, held where it starts, it is pushed by
a constant force (:data:`PUSH`). :func:`pose_message` and :func:`twist_message` give the node's
``~/desired_pose`` and ``~/desired_twist`` of a time; :class:`InProcess` runs the same scene
with the library's law (:func:`rbd_dynamics.control.task.task_torques`) against MuJoCo in this
process, without ROS. The closed-loop test (``test/loops/test_task_loop.py``) and the demo
(``scripts/task_demo.py``) share all of it.
"""

import math

from geometry_msgs.msg import PoseStamped, TwistStamped
import numpy as np
import rbd_dynamics as rbd
from rbd_dynamics import spatial
from rbd_dynamics.control import task
from rbd_dynamics.ros.demo_setup import JOINTS, Q0
from rbd_dynamics.sim import mujoco_model

#: The controlled link: the hand's tool centre point.
LINK = 'tool_center_point'
#: When the scene starts [s]: the circle, or the push; the hand is held where it starts until
#: then.
SCENE_START = 0.2
#: The node's output on which it answers with the task-space law (:class:`support.sim.Loop`'s
#: ``settle``: not the gravity compensation it gives while that law's kernels load).
SETTLE = (TwistStamped, 'rbd_dynamics/task_error')
#: The circle: radius [m], frequency [Hz], tilt of its plane from the horizontal [rad] (about
#: the root's y axis) and the time its angular rate takes to rise from rest [s].
RADIUS, FREQUENCY, TILT, RAMP = 0.1, 0.2, math.radians(30.0), 0.5
#: The static push on the hand: force at its origin [N], root axes, from ``PUSH_START`` [s].
PUSH = np.array([8.0, -6.0, 6.0])
PUSH_START = SCENE_START

# Impedance: the stiffness differs per axis, so that an axis mixed up shows. The damping is
# chosen for the 1 kHz loop rather than taken as its default 2 sqrt(K): J^T D J puts the
# rotational damping on the wrist, whose last joint has an inertia of 1.1e-3 kg m^2, and a
# damping held over one period is stable only below 2 inertia / period (2.2 N m s/rad here;
# 2 sqrt(30) = 11 is not); 0.5 N m s/rad keeps the margin. 200 N s/m is about critical for
# the hand's effective mass at the start (4 to 10 kg along the axes). A null-space stiffness
# toward the start's posture, projected into the null space of the hand (dynamically
# consistent), so that it takes none of the push: the displacement stays K^-1 F exactly at
# rest (unprojected it would be J (J^T K J + k_n I)^-1 J^T F, short of K^-1 F), and its
# damping 2 sqrt(k_n) acts on the arm's self-motion only, not on the light wrist.
#: The impedance's stiffness [N/m ×3, N m/rad ×3] and the node's parameters.
IMPEDANCE_STIFFNESS = np.array([600.0, 900.0, 1200.0, 30.0, 30.0, 30.0])
IMPEDANCE = {'command_output': 'task', 'task.link': LINK, 'task.mode': 'impedance',
             'task.stiffness': IMPEDANCE_STIFFNESS.tolist(),
             'task.damping': [200.0] * 3 + [0.5] * 3, 'task.nullspace_stiffness': 5.0}
# Operational space: each axis of the hand's error is then a unit mass with e'' + D e' + K e =
# x_d'' (x_d'' is not an input of the node), so the circle's centripetal acceleration
# (2 pi 0.2 Hz)^2 0.1 m = 0.158 m/s^2 leaves an error of 0.158 / |K - w^2 + j D w| = 0.26 mm
# at K = 600 1/s^2 and the default critical D = 2 sqrt(K): 2 mm holds with a margin of 7,
# and a stiffer K would only shrink it. The rise of the circle's speed over its first 0.5 s
# adds a transient of at most 0.65 mm. k_n = 50 N m/rad: the arm's posture error in the null
# space of the hand stays below 0.05 rad, where it drifts by 0.6 rad without it (the
# projection keeps the posture term's damping off the light wrist).
#: The node's parameters for the circle.
OPERATIONAL_SPACE = {'command_output': 'task', 'task.link': LINK,
                     'task.mode': 'operational_space',
                     'task.stiffness': [600.0] * 3 + [30.0] * 3,
                     'task.nullspace_stiffness': 50.0}
#: The arm's joints (the posture figures leave the gripper's finger out: it moves no link of
#: the hand's pose, and its unit is metres).
ARM = slice(0, 7)


def quaternion_of(R):
    """Return the unit quaternion ``[x, y, z, w]`` of a rotation matrix ``R`` (3×3)."""
    return spatial.matrix_to_quaternion(np.asarray(R, dtype=float))


class Circle:
    """
    The hand's desired path: a circle through its start, from rest at ``begin``.

    ``position(t)`` is ``center + radius (cos φ u + sin φ w)`` with ``u``, ``w`` spanning the
    plane (tilted by ``tilt`` about the root's y axis) and ``φ = 0`` at the start; from
    ``begin`` on, ``φ̇`` rises from 0 to ``2π frequency`` over ``ramp`` as
    ``(1 − cos(π (t − begin) / ramp)) / 2``, so the desired velocity starts at zero and the
    acceleration stays bounded. The orientation stays the start's.
    """

    def __init__(self, model, q0=Q0, link=LINK, radius=RADIUS, frequency=FREQUENCY, tilt=TILT,
                 ramp=RAMP, begin=SCENE_START):
        self.begin = begin
        T0 = rbd.link_pose(model, np.asarray(q0, dtype=float), link)
        self.start, self.quaternion = T0[:3, 3].copy(), quaternion_of(T0[:3, :3])
        self.radius, self.rate, self.ramp = radius, 2.0 * math.pi * frequency, ramp
        self.normal = np.array([math.sin(tilt), 0.0, math.cos(tilt)])
        self.u = np.cross([0.0, 1.0, 0.0], self.normal)
        self.w = np.cross(self.normal, self.u)
        self.center = self.start - radius * self.u

    def phase(self, t):
        """Return ``(φ, φ̇)`` at ``t`` [s] (scalar or ``(n,)``)."""
        t = np.maximum(np.asarray(t, dtype=float) - self.begin, 0.0)
        rising = t < self.ramp  # (at rest before the beginning: 0, then rising)
        tr = np.minimum(t, self.ramp)
        rise = math.pi * tr / self.ramp
        phi = self.rate * (tr / 2.0 - self.ramp / (2.0 * math.pi) * np.sin(rise))
        phi = phi + self.rate * np.maximum(t - self.ramp, 0.0)
        rate = np.where(rising, self.rate * 0.5 * (1.0 - np.cos(rise)), self.rate)
        return phi, rate

    def at(self, t):
        """Return the desired position and velocity at ``t``: ``(3,)`` or ``(n, 3)`` [m, m/s]."""
        phi, rate = self.phase(t)
        c, s = np.cos(phi)[..., None], np.sin(phi)[..., None]
        position = self.center + self.radius * (c * self.u + s * self.w)
        velocity = self.radius * rate[..., None] * (-s * self.u + c * self.w)
        return position, velocity


def stamp(msg):
    """Return the header stamp of a message [s]."""
    return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec


def pose_message(header_stamp, position, quaternion):
    """Return the node's ``~/desired_pose``: ``position`` [m] and ``quaternion`` in the root."""
    msg = PoseStamped()
    msg.header.stamp = header_stamp
    p, o = msg.pose.position, msg.pose.orientation
    p.x, p.y, p.z = (float(v) for v in position)
    o.x, o.y, o.z, o.w = (float(v) for v in quaternion)
    return msg


def twist_message(header_stamp, twist):
    """Return the node's ``~/desired_twist``: ``(6,)`` linear first [m/s, rad/s], root axes."""
    msg = TwistStamped()
    msg.header.stamp = header_stamp
    lin, ang = msg.twist.linear, msg.twist.angular
    lin.x, lin.y, lin.z, ang.x, ang.y, ang.z = (float(v) for v in twist)
    return msg


def twist_of(msg):
    """Return a ``TwistStamped``'s twist ``(6,)``, linear first."""
    lin, ang = msg.twist.linear, msg.twist.angular
    return np.array([lin.x, lin.y, lin.z, ang.x, ang.y, ang.z])


def circle_stream(circle):
    """
    Return the ``stream`` of :class:`support.sim.Loop` that has the node follow ``circle``.

    Each joint state gets the desired pose and twist of its own stamp.
    """
    def pose(msg):
        position, _ = circle.at(stamp(msg))
        return pose_message(msg.header.stamp, position, circle.quaternion)

    def twist(msg):
        _, velocity = circle.at(stamp(msg))
        return twist_message(msg.header.stamp, np.concatenate([velocity, np.zeros(3)]))

    return {'rbd_dynamics/desired_pose': (PoseStamped, pose),
            'rbd_dynamics/desired_twist': (TwistStamped, twist)}


def hand_positions(model, q, link=LINK):
    """Return the link's origin ``(n, 3)`` [m] at the positions ``q`` ``(n, nq)``."""
    return rbd.link_pose(model, np.asarray(q, dtype=float), link)[..., :3, 3]


def nullspace_error(model, q, posture, link=LINK):
    """
    Return how far the arm is from its posture within the null space of the hand, ``(n,)``.

    ``‖(I − J⁺ J)(q − q_posture)‖`` over the arm's joints [rad], ``J`` the link's Jacobian at
    each of ``q`` ``(n, nq)``: the part of the posture error that moves no component of the
    hand's pose, which is what the posture term alone holds. It is zero where the posture
    term is at rest (``Nᵀ k_n (q_posture − q) = 0`` exactly when ``q_posture − q`` lies in
    ``J``'s row space).
    """
    q = np.atleast_2d(np.asarray(q, dtype=float))
    J = rbd.jacobian(model, q, link)[..., ARM]
    dq = (q - np.asarray(posture, dtype=float))[:, ARM]
    row_space = np.einsum('nij,nj->ni', np.linalg.pinv(J), np.einsum('nij,nj->ni', J, dq))
    return np.linalg.norm(dq - row_space, axis=1)


def tracking_figures(t, error, start, end):
    """
    Return the tracking figures of a run: ``(rms, max)`` [m] of ``‖e‖`` over ``[start, end]``.

    ``t`` ``(n,)`` [s], ``error`` ``(n, 3)`` position errors [m].
    """
    window = (t >= start - 1e-9) & (t <= end + 1e-9)
    norm = np.linalg.norm(error[window], axis=1)
    return float(np.sqrt(np.mean(norm ** 2))), float(norm.max())


class InProcess:
    """
    The demo arm in MuJoCo driven by the library's task-space law, in this process.

    The simulated driver's physics (:func:`rbd_dynamics.sim.mujoco_model.load` of the same
    description: no friction, exact model) at ``rate``, each torque held over one period as
    the lockstep driver holds a command, and its push (a force at the link's origin, world
    axes). The law gets the desired pose and twist of each state's own time, as
    :func:`circle_stream` gives the node.
    """

    def __init__(self, urdf, model, rate=1000.0, q0=Q0, link=LINK):
        import mujoco
        self._mujoco = mujoco
        self.model, self.link = model, link
        self.sim, mimic = mujoco_model.load(urdf, timestep=0.001)
        self.data = mujoco.MjData(self.sim)
        m = self.sim
        names = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(m.njnt)]
        order = list(model.joint_names)
        if sorted(order) != sorted(JOINTS):
            raise ValueError("the model's joints %s are not the demo arm's %s" % (order, JOINTS))
        self.qpos = np.array([m.jnt_qposadr[names.index(n)] for n in order])
        self.dofs = np.array([m.jnt_dofadr[names.index(n)] for n in order])
        q0 = np.asarray(q0, dtype=float)[[JOINTS.index(n) for n in order]]
        self.data.qpos[self.qpos] = q0
        for name, (master, mult, offset) in mimic.items():
            self.data.qpos[m.jnt_qposadr[names.index(name)]] = (
                offset + mult * q0[order.index(master)])
        mujoco.mj_forward(m, self.data)
        self.body = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, link)
        self.substeps = max(1, int(round(1.0 / (rate * m.opt.timestep))))
        self.q0 = q0

    def run(self, seconds, desired, push=None, push_start=0.0, **law):
        """
        Run the law for ``seconds``: ``(t, q, error)``, ``q`` in model order.

        ``desired(t)`` gives ``(position, quaternion, twist)``; ``push`` ``(3,)`` [N] acts from
        ``push_start`` on; ``law`` goes to :func:`~rbd_dynamics.control.task.task_torques`
        (``posture`` defaults to the start).
        """
        mujoco, d = self._mujoco, self.data
        law.setdefault('posture', self.q0)
        ts, qs, errors = [], [], []
        while True:
            t, q, qd = d.time, d.qpos[self.qpos].copy(), d.qvel[self.dofs].copy()
            position, quaternion, twist = desired(t)
            result = task.task_torques(self.model, q, qd, self.link, position, quaternion,
                                       twist=twist, **law)
            ts.append(t)
            qs.append(q)
            errors.append(result.error)
            if t >= seconds - 1e-9:
                break
            d.qfrc_applied[:] = 0.0
            d.qfrc_applied[self.dofs] = result.torque
            for _ in range(self.substeps):
                xfrc = d.xfrc_applied[self.body]
                if push is not None and d.time >= push_start - 1e-9:
                    # at the body's centre of mass: carry the moment of a force at its origin
                    xfrc[:3] = push
                    xfrc[3:] = np.cross(d.xpos[self.body] - d.xipos[self.body], push)
                else:
                    xfrc[:] = 0.0
                mujoco.mj_step(self.sim, d)
        return np.array(ts), np.array(qs), np.array(errors)
