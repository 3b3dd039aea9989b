"""
A floating-base robot standing on a floor in MuJoCo: joint PD, an IMU, force/torque sensors.

:func:`standing_mjcf` writes the robot of a URDF as
:func:`~.mujoco_model.mjcf_from_urdf` does with ``floating=True`` (a free joint
:data:`~rbd_dynamics.tree.BASE_JOINT` above the root link: the rigid-body dynamics of a model
built with ``floating_base=True``) and adds what standing needs:

- **a floor**, a plane at ``z = 0``, and **soles**: a box under each foot link, the robot's only
  collision geometry (its links touch nothing else, the feet not each other);
- **joint PD**: a position actuator on every joint, ``kp (ctrl - q) - kd qd``, with MuJoCo's
  ``implicitfast`` integrator, which integrates that damping implicitly: a light joint (a
  wrist, 1e-4 kg m^2) with a real robot's damping is stable at a 1 ms step, where explicit
  damping would need ten times smaller steps. What else drives a joint (the desired velocity's
  ``kd qd_d``, a feedforward torque) is a generalized force (:meth:`Standing.step`);
- **an IMU**: a site at a link's origin with ``framequat``, ``gyro`` and ``accelerometer``
  sensors: the link's orientation in the world, its angular velocity and its proper
  acceleration (``+9.81`` up at rest) in its frame, what ``sensor_msgs/Imu`` carries;
- **force/torque sensors**: a site at a link's origin with ``force`` and ``torque`` sensors: the
  wrench the parent applies on the link and the links beyond it, in its frame about its origin
  (:func:`~rbd_dynamics.payload_wrench` without contact). :meth:`Standing.wrench` turns it
  into the wrench applied on the robot at that link, as a sensor between the link and its
  parent reports it.

:class:`Standing` steps the simulation as a robot's loop sees it: the joints' state, the
orientation and the gyro are those of the instant the command is computed for; the
accelerometer and the force/torque sensors, which need the accelerations, are those of the
previous step (one step old, as a sampled sensor's).
"""

import xml.etree.ElementTree as ET

import numpy as np

from .mujoco_model import mjcf_from_urdf
from ..tree import BASE_JOINT

#: The friction of the soles on the floor (sliding, torsional, rolling).
FRICTION = (1.0, 0.02, 0.0001)
#: The site names of the IMU and of a force/torque sensor on ``link`` (``FT_SITE % link``).
IMU_SITE = 'imu_site'
FT_SITE = 'ft_%s'


def _numbers(values):
    return ' '.join('%.17g' % float(v) for v in values)


def standing_mjcf(urdf_text, feet, sole, gains, imu_link=None, ft_links=(),
                  timestep=0.001, gravity=(0.0, 0.0, -9.81)):
    """
    MJCF text of the robot of ``urdf_text`` on a free joint above a floor.

    Parameters
    ----------
    urdf_text
        the URDF (no mimic joints).
    feet
        the links that get a sole box.
    sole
        ``(centre, half_sizes)`` of the sole box in the foot's frame [m], or ``{foot:
        (centre, half_sizes)}``.
    gains
        joint name -> ``(kp, kd)`` [N m/rad, N m s/rad] of its position actuator (named as the
        joint); every moving joint needs one.
    imu_link
        the link of the IMU (sensors ``imu_quat``, ``imu_gyro``, ``imu_accel``), or ``None``.
    ft_links
        links with a force/torque sensor at their origin (``ft_<link>_force``,
        ``ft_<link>_torque``).
    timestep
        [s].
    gravity
        ``(3,)`` [m/s^2] in the world.

    Returns
    -------
    ``(mjcf_text, mimic)`` as :func:`~.mujoco_model.mjcf_from_urdf`.

    Raises
    ------
    ValueError
        a foot, the IMU's link or a sensor's link is not a link, a moving joint has no gains
        (or gains name no joint), or a gain is negative or not finite.

    """
    text, mimic = mjcf_from_urdf(urdf_text, gravity=gravity, timestep=timestep, floating=True)
    root = ET.fromstring(text)
    bodies = {body.get('name'): body for body in root.iter('body')}
    joints = [j.get('name') for j in root.iter('joint')]
    for what, names in (('feet', feet), ('ft_links', ft_links),
                        ('imu_link', [] if imu_link is None else [imu_link])):
        unknown = [name for name in names if name not in bodies]
        if unknown:
            raise ValueError('%s: %s are not links of the description' % (what, unknown))
    missing = sorted(set(joints) - set(gains))
    extra = sorted(set(gains) - set(joints))
    if missing or extra:
        raise ValueError('gains: joints without gains %s, gains of no joint %s'
                         % (missing, extra))
    values = np.array([gains[name] for name in joints], dtype=float).reshape(-1, 2)
    if not (np.isfinite(values).all() and (values >= 0.0).all()):
        raise ValueError('gains must be finite and >= 0')

    option = root.find('option')
    option.set('integrator', 'implicitfast')
    option.remove(option.find('flag'))  # contacts on
    worldbody = root.find('worldbody')
    worldbody.insert(0, ET.Element('geom', name='floor', type='plane', size='0 0 1',
                                   contype='0', conaffinity='1', friction=_numbers(FRICTION)))
    for foot in feet:
        centre, half = sole[foot] if isinstance(sole, dict) else sole
        # (no inertia from the geometry: the foot's stays the description's)
        ET.SubElement(bodies[foot], 'geom', name='sole_%s' % foot, type='box',
                      pos=_numbers(centre), size=_numbers(half), contype='1',
                      conaffinity='0', condim='3', friction=_numbers(FRICTION))
    sensors = ET.SubElement(root, 'sensor')
    if imu_link is not None:
        ET.SubElement(bodies[imu_link], 'site', name=IMU_SITE, pos='0 0 0', size='0.005')
        ET.SubElement(sensors, 'framequat', name='imu_quat', objtype='site', objname=IMU_SITE)
        ET.SubElement(sensors, 'gyro', name='imu_gyro', site=IMU_SITE)
        ET.SubElement(sensors, 'accelerometer', name='imu_accel', site=IMU_SITE)
    for link in ft_links:
        site = FT_SITE % link
        ET.SubElement(bodies[link], 'site', name=site, pos='0 0 0', size='0.005')
        ET.SubElement(sensors, 'force', name=site + '_force', site=site)
        ET.SubElement(sensors, 'torque', name=site + '_torque', site=site)
    actuators = ET.SubElement(root, 'actuator')
    for name, (kp, kd) in zip(joints, values):
        ET.SubElement(actuators, 'position', name=name, joint=name, kp=repr(float(kp)),
                      kv=repr(float(kd)))
    return ET.tostring(root, encoding='unicode'), mimic


class Standing:
    """
    The simulation of :func:`standing_mjcf`, in the joint order of a floating-base model.

    Parameters
    ----------
    joints
        the joint names of the controller's vectors (a floating-base model's
        ``joint_names[1:]``).
    urdf_text, feet, sole, gains, ...
        as :func:`standing_mjcf` (keyword arguments passed on).

    Attributes
    ----------
    mj_model, data
        MuJoCo's model and data.
    time
        the simulated time [s].

    """

    def __init__(self, urdf_text, joints, feet, sole, gains, **kwargs):
        """Build the MuJoCo model; the robot at the origin, joints at zero, at rest."""
        import mujoco
        self.mujoco = mujoco
        text, mimic = standing_mjcf(urdf_text, feet, sole, gains, **kwargs)
        if mimic:
            raise ValueError('mimic joints are not simulated standing: %s' % sorted(mimic))
        self.mj_model = mujoco.MjModel.from_xml_string(text)
        self.data = mujoco.MjData(self.mj_model)
        m = self.mj_model
        ids = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, name) for name in joints]
        if min(ids) < 0 or len(ids) != m.njnt - 1:
            raise ValueError('joints %s are not the simulated joints' % list(joints))
        self.qpos = m.jnt_qposadr[ids]
        self.dofs = m.jnt_dofadr[ids]
        self.actuators = np.array([mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_ACTUATOR, name)
                                   for name in joints])
        base = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, BASE_JOINT)
        self.base_qpos = m.jnt_qposadr[base]
        self.base_dof = m.jnt_dofadr[base]
        self.kd = m.actuator_biasprm[self.actuators, 2] * -1.0

    @property
    def time(self):
        """Return the simulated time [s]."""
        return self.data.time

    def place(self, position, quaternion, q):
        """
        Put the robot at rest: base ``position``, ``quaternion`` ``[x y z w]``, joints ``q``.

        The actuators' targets are set to ``q``; the sensors read that state at rest.
        """
        d = self.data
        d.qpos[:] = self.mj_model.qpos0
        d.qvel[:] = 0.0
        d.qpos[self.base_qpos:self.base_qpos + 3] = position
        d.qpos[self.base_qpos + 3:self.base_qpos + 7] = np.roll(quaternion, 1)
        d.qpos[self.qpos] = q
        d.ctrl[self.actuators] = q
        self.mujoco.mj_forward(self.mj_model, d)
        self.mujoco.mj_rnePostConstraint(self.mj_model, d)
        self.mujoco.mj_sensorAcc(self.mj_model, d)

    def start_step(self):
        """
        Compute the current state's positions and velocities (``mj_step1``).

        Then :meth:`joint_state`, :meth:`imu` and :meth:`wrench` read what a robot's loop reads
        now; :meth:`step` applies the command and advances.
        """
        self.mujoco.mj_step1(self.mj_model, self.data)

    def joint_state(self):
        """Return the joints' ``(q, qd)`` (copies)."""
        return self.data.qpos[self.qpos].copy(), self.data.qvel[self.dofs].copy()

    def base_pose(self):
        """Return the base's position ``(3,)`` and quaternion ``[x y z w]`` (copies)."""
        qpos = self.data.qpos[self.base_qpos:self.base_qpos + 7]
        return qpos[:3].copy(), np.roll(qpos[3:], -1)

    def imu(self):
        """Return the IMU's orientation ``[x y z w]``, angular velocity, proper acceleration."""
        d = self.data
        return (np.roll(d.sensor('imu_quat').data, -1), d.sensor('imu_gyro').data.copy(),
                d.sensor('imu_accel').data.copy())

    def wrench(self, link):
        """
        Return the wrench ``(6,)`` on the robot at ``link``'s sensor, force first.

        In the link's frame about its origin, the ``applied_on_robot`` convention of a sensor
        between the link and its parent: what the link's side applies on the parent's side
        (the negative of what MuJoCo's sensor reads). Without contact it is
        ``-payload_wrench(link)``.
        """
        d = self.data
        site = FT_SITE % link
        return -np.concatenate((d.sensor(site + '_force').data, d.sensor(site + '_torque').data))

    def step(self, q_desired, qd_desired, torque):
        """
        Apply ``kp (q_d - q) + kd (qd_d - qd) + torque`` on the joints and advance one step.

        ``kp (q_d - q) - kd qd`` is the actuators' (implicit damping); ``kd qd_d + torque`` a
        generalized force. Call after :meth:`start_step`.
        """
        d = self.data
        d.ctrl[self.actuators] = q_desired
        d.qfrc_applied[:] = 0.0
        d.qfrc_applied[self.dofs] = self.kd * qd_desired + torque
        self.mujoco.mj_step2(self.mj_model, d)

    def actuator_torques(self):
        """Return the actuators' torques of the last step ``(n,)``, joint order."""
        return self.data.actuator_force[self.actuators].copy()
