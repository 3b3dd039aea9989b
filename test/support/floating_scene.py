"""
The Unitree G1 standing in MuJoCo under joint PD, with and without the torque law's feedforward.

The scene of ``scripts/floating_demo.py`` and ``test/loops/test_floating_loop.py``: the G1 of
example-robot-data (29 joints) stands on a floor (:mod:`rbd_dynamics.sim.standing`), every
joint held by PD with a real G1's kind of gains (legs stiff enough to stand, arms soft). After
:data:`HOLD` s of standing still, the shoulders raise the arms forward and lower them again
while the waist leans the torso forward and back (:class:`Motion`, one cycle every
:data:`PERIOD` s).

The runs (:data:`RUNS`) differ only in the torque added to the PD:

- ``pd``: none (what a whole-body stack that sends zero feedforward does);
- ``contacts``: the torque law's gravity compensation (:class:`rbd_dynamics.control.law.Controller`
  in this process, the node's ``~/gravity_compensation``: the torques that hold the posture on
  the contacts), from the pelvis IMU simulated by MuJoCo (orientation, gyro, accelerometer, as
  a driver publishes them), both feet as surface contacts;
- ``sensors``: the same with the feet's force/torque sensors (simulated at the ankle roll
  links' origins, between the ankle and the foot: the foot's own weight and inertia are
  compensated) instead of contacts, their wrenches low-passed at :data:`WRENCH_CUTOFF`.

Two inputs close a loop through a standing robot (:func:`run`'s arguments show it): the base's
measured acceleration in the feedforward (the torques make the acceleration the next step
measures), and a stance foot's wrench in the legs' torques (the floor returns any torque the
legs add, which the next step adds again: an integrator). The feedforward from the measured
acceleration runs away within milliseconds; the stance feet's raw wrenches drift, and
low-passed slowly they stand.
"""

import os
import time
import warnings

import numpy as np

import rbd_dynamics as rbd
from rbd_dynamics.control.config import Config
from rbd_dynamics.control.desired import Desired
from rbd_dynamics.control.law import Controller
from rbd_dynamics.control.sensors import Sensor
from rbd_dynamics.control.setup import Setup
from rbd_dynamics.sim.standing import Standing
from support.robots import robots_directory

DESCRIPTION = 'g1_description/urdf/g1_29dof_rev_1_0.urdf'
FEET = ('left_ankle_roll_link', 'right_ankle_roll_link')
#: The G1's soles: its description's four contact spheres (radius 5 mm at x -0.05 and 0.12 m,
#: y about +-0.03 m, z -0.03 m in the ankle roll link) as one box.
SOLE = ((0.035, 0.0, -0.03), (0.085, 0.03, 0.005))
IMU_LINK = 'imu_in_pelvis'
TORSO = 'torso_link'
NS = 1_000_000_000
TIMESTEP = 0.001  # s; the law answers every step (1 kHz)

#: ``(kp [N m/rad], kd [N m s/rad])`` by joint group: the legs stiffer than a G1's (nothing
#: balances the robot here: the body is an inverted pendulum of m g h ~ 210 N m/rad on hips,
#: knees and ankles in series), the waist firm, the arms soft as a G1's arms run.
GAINS = (('hip', 800.0, 10.0), ('knee', 800.0, 10.0), ('ankle', 800.0, 10.0),
         ('waist', 200.0, 4.0), ('wrist', 20.0, 0.5), ('shoulder', 40.0, 1.0),
         ('elbow', 40.0, 1.0))

#: The standing posture (other joints 0): knees bent, feet flat, pelvis upright; arms hanging a
#: little forward and out, elbows bent.
POSTURE = {'hip_pitch': -0.2, 'knee': 0.42, 'ankle_pitch': -0.22, 'shoulder_pitch': 0.2,
           'shoulder_roll': 0.2, 'elbow': 0.8}

HOLD = 0.5  # s standing still before the motion
PERIOD = 4.0  # s of one raise-and-lower of the arms and lean of the torso
RAISE = -0.8  # rad of the shoulders' pitch at the top (forward)
ELBOW = -0.5  # rad of the elbows at the top (the forearms nearer horizontal)
LEAN = 0.1  # rad of the waist's pitch at the deepest (forward)

#: The law's output added to the PD (``gravity``: ``~/gravity_compensation``, or
#: ``feedforward``), and the force/torque sensors' low-pass cutoff [Hz] (None: raw).
OUTPUT = 'gravity'
WRENCH_CUTOFF = 0.2
#: A feedforward beyond this [N m] has run away (a G1's joints give at most 139 N m).
FALLEN_TORQUE = 500.0

#: The runs: label -> what is added to the PD.
RUNS = {'pd': 'PD alone (feedforward 0)',
        'contacts': "PD + the node's %s, feet as contacts",
        'sensors': "PD + the node's %s, feet's F/T sensors"}
#: How the runs name the law's outputs.
OUTPUTS = {'gravity': 'gravity compensation', 'feedforward': 'feedforward'}


def description_path():
    """Return the G1's description, or ``None`` where example-robot-data is not installed."""
    root = robots_directory()
    path = None if root is None else os.path.join(root, DESCRIPTION)
    return path if path is not None and os.path.exists(path) else None


def load_model(text):
    """Return our floating-base model of the G1 (its description's warnings silenced)."""
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', rbd.DescriptionWarning)
        return rbd.Model.from_urdf(text, floating_base=True)


def joint_gains(joints):
    """Return ``{joint: (kp, kd)}`` from :data:`GAINS` (the first group in a joint's name)."""
    found = {}
    for name in joints:
        group = next(g for g in GAINS if g[0] in name)
        found[name] = group[1:]
    return found


def groups(joints, *words):
    """Return the indices of the joints whose name holds one of ``words``."""
    return np.array([k for k, name in enumerate(joints) if any(w in name for w in words)])


class Motion:
    """
    The desired joint motion: posture, then the arms raised and the torso leaned, cyclically.

    Each moving joint follows ``q0 + amplitude * (1 - cos(2 pi s / PERIOD)) / 2`` with ``s``
    the time since :data:`HOLD`.
    """

    def __init__(self, joints):
        """Set up the posture and the amplitudes of ``joints``."""
        self.joints = list(joints)
        self.q0 = np.zeros(len(joints))
        self.amplitude = np.zeros(len(joints))
        for k, name in enumerate(joints):
            side = -1.0 if name.startswith('right') else 1.0
            for key, value in POSTURE.items():
                if name.endswith(key + '_joint'):
                    self.q0[k] = side * value if key == 'shoulder_roll' else value
            if name.endswith('shoulder_pitch_joint'):
                self.amplitude[k] = RAISE
            elif name.endswith('elbow_joint'):
                self.amplitude[k] = ELBOW
            elif name == 'waist_pitch_joint':
                self.amplitude[k] = LEAN

    def at(self, t):
        """Return the desired ``(q, qd, qdd)`` at time ``t`` [s]."""
        if t <= HOLD:
            zero = np.zeros_like(self.q0)
            return self.q0.copy(), zero, zero.copy()
        w = 2.0 * np.pi / PERIOD
        phase = w * (t - HOLD)
        half = 0.5 * self.amplitude
        return (self.q0 + half * (1.0 - np.cos(phase)), half * w * np.sin(phase),
                half * w * w * np.cos(phase))


def sole_height(model, q):
    """Return the lowest sole corner's height with the base at the origin [m]."""
    qf = np.concatenate(([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0], q))
    (cx, cy, cz), (hx, hy, hz) = SOLE
    corners = np.array([[cx + sx * hx, cy + sy * hy, cz - hz, 1.0]
                        for sx in (-1, 1) for sy in (-1, 1)])
    return min((rbd.link_pose(model, qf, foot) @ corners.T)[2].min() for foot in FEET)


def pitch(rotation):
    """Return the pitch [rad] of a rotation matrix (about y, positive: the x axis down)."""
    return np.arctan2(-rotation[2, 0], np.hypot(rotation[0, 0], rotation[1, 0]))


class Result:
    """
    One run's record.

    Attributes
    ----------
    t
        ``(n,)`` [s].
    error
        ``(n, nv)`` desired minus measured joint positions [rad].
    torso, torso_desired
        ``(n,)`` the torso's pitch in the world and the desired one [rad].
    height
        ``(n,)`` the pelvis's height [m].
    torque
        ``(n, nv)`` the feedforward added to the PD [N m].
    unbalanced
        ``(n,)`` the norm of the law's unbalanced base wrench (NaN without the law).
    compute
        wall-clock seconds the law took, all steps together.

    """

    def __init__(self, label, t, error, torso, torso_desired, height, torque, unbalanced,
                 compute):
        self.label = label
        self.t = t
        self.error = error
        self.torso = torso
        self.torso_desired = torso_desired
        self.height = height
        self.torque = torque
        self.unbalanced = unbalanced
        self.compute = compute


class LowPass:
    """A first-order low-pass filter of a vector sampled every :data:`TIMESTEP` (None: off)."""

    def __init__(self, cutoff, start=None):
        """Filter at ``cutoff`` [Hz] from ``start`` (None: the first sample); ``None``: off."""
        self.gain = None if cutoff is None else 1.0 - np.exp(-2.0 * np.pi * cutoff * TIMESTEP)
        self.value = None if start is None else np.array(start, dtype=float)

    def __call__(self, sample):
        """Return the filtered value after ``sample``."""
        if self.gain is None:
            return sample
        if self.value is None:
            self.value = np.array(sample, dtype=float)
        else:
            self.value = self.value + self.gain * (sample - self.value)
        return self.value.copy()


def run(label, text, model, seconds, output=OUTPUT, wrench_cutoff=WRENCH_CUTOFF):
    """
    Simulate the scene for ``seconds`` with the run ``label`` of :data:`RUNS`.

    Returns
    -------
    a :class:`Result`.

    Raises
    ------
    RuntimeError
        the law answered a state with nothing (its reason).

    """
    if label not in RUNS:
        raise ValueError('run %r: one of %s' % (label, ', '.join(RUNS)))
    joints = model.joint_names[1:]
    sim = Standing(text, joints, FEET, SOLE, joint_gains(joints), imu_link=IMU_LINK,
                   ft_links=FEET, timestep=TIMESTEP)
    motion = Motion(joints)
    sim.place([0.0, 0.0, -sole_height(model, motion.q0)], [0.0, 0.0, 0.0, 1.0], motion.q0)
    controller = setup = sensors = None
    if label != 'pd':
        sensors = [Sensor(foot, compensate=True) for foot in FEET] if label == 'sensors' \
            else []
        setup = Setup(model, Config(imu_frame=IMU_LINK,
                                    contacts_links=list(FEET) if label == 'contacts' else []))
        controller = Controller(sensors)
        wrench_filters = [LowPass(wrench_cutoff) for _ in sensors]
    torso_body = sim.mujoco.mj_name2id(sim.mj_model, sim.mujoco.mjtObj.mjOBJ_BODY, TORSO)
    waist = joints.index('waist_pitch_joint')
    steps = int(round(seconds / TIMESTEP))
    n = len(joints)
    t = np.zeros(steps)
    error, torque = np.zeros((steps, n)), np.zeros((steps, n))
    torso, torso_desired, height = np.zeros(steps), np.zeros(steps), np.zeros(steps)
    unbalanced = np.full(steps, np.nan)
    compute = 0.0
    feedforward = np.zeros(n)
    for k in range(steps):
        sim.start_step()
        now = sim.time
        now_ns = int(round(now * NS))
        q, qd = sim.joint_state()
        q_d, qd_d, qdd_d = motion.at(now)
        if controller is not None:
            started = time.perf_counter()
            quaternion, gyro, accel = sim.imu()
            controller.base.receive_imu(model, '', now_ns, now_ns, IMU_LINK, quaternion, gyro,
                                        accel)
            for sensor, wrench_filter in zip(sensors, wrench_filters):
                sensor.receive(now_ns, sensor.name, wrench_filter(sim.wrench(sensor.name)))
            controller.set_desired(model, Desired(qdd_d, q_d, qd_d, np.ones(n, bool)), now_ns)
            out = controller.compute(setup, q, qd, now_ns)
            compute += time.perf_counter() - started
            if out is None:
                raise RuntimeError('%s: no torques at t = %.3f s: %s'
                                   % (label, now, controller.base_problem))
            feedforward = out.gravity if output == 'gravity' else out.feedforward
            if not np.abs(feedforward).max() < FALLEN_TORQUE:
                raise RuntimeError('%s: the %s ran away at t = %.3f s (%.3g N m)'
                                   % (label, output, now, np.abs(feedforward).max()))
            unbalanced[k] = np.linalg.norm(out.floating.unbalanced)
        t[k] = now
        error[k] = q_d - q
        torque[k] = feedforward
        torso[k] = pitch(sim.data.xmat[torso_body].reshape(3, 3))
        torso_desired[k] = q_d[waist]
        height[k] = sim.base_pose()[0][2]
        sim.step(q_d, qd_d, feedforward)
    return Result(label, t, error, torso, torso_desired, height, torque, unbalanced, compute)


class Figures:
    """
    The figures of a run: arm tracking, torso lean, standing, the law's balance.

    Attributes
    ----------
    arm_rms, arm_max
        the arm joints' tracking error, RMS over joints and time, and largest [rad].
    torso_rms, torso_max
        the torso's pitch error in the world, RMS and largest [rad].
    height_min
        the pelvis's lowest height [m].
    unbalanced_rms
        the RMS norm of the law's unbalanced base wrench (NaN without the law).
    torque_max
        the largest feedforward torque [N m].
    finite
        every recorded number is finite where it should be.

    """

    def __init__(self, result, joints):
        """Compute the figures of ``result`` (joints: the model's ``joint_names[1:]``)."""
        arms = groups(joints, 'shoulder', 'elbow', 'wrist')
        error = result.error[:, arms]
        self.arm_rms = float(np.sqrt(np.mean(error ** 2)))
        self.arm_max = float(np.abs(error).max())
        lean = result.torso - result.torso_desired
        self.torso_rms = float(np.sqrt(np.mean(lean ** 2)))
        self.torso_max = float(np.abs(lean).max())
        self.height_min = float(result.height.min())
        self.unbalanced_rms = float(np.sqrt(np.mean(result.unbalanced ** 2)))
        self.torque_max = float(np.abs(result.torque).max())
        self.finite = bool(np.isfinite(result.torque).all() and np.isfinite(result.error).all())
