"""
A MuJoCo model of a URDF robot with the same rigid-body dynamics as :class:`Model`.

The MJCF is written from the parsed description rather than by MuJoCo's URDF importer, so
nothing is merged or rebalanced behind our back: every link is a body (fixed-joint children
too, welded to their parent), inertias are taken as written, mimic joints become joint equality
constraints ``q_mimic = offset + multiplier * q_master``, and damping, friction, joint limits,
armature and contacts are all off unless asked for. Needs the optional ``mujoco`` package.

The drive of a joint maps onto MuJoCo's joint attributes: viscous friction on ``damping``
(a passive force ``-damping * qd``), Coulomb friction on ``frictionloss`` (a dry-friction
constraint rather than a smooth sign, see below) and the reflected rotor inertia on
``armature`` (added to the diagonal of the mass matrix). A mimic joint keeps its own URDF
damping and friction on itself: through the equality constraint the master feels
``multiplier^2`` times the damping and ``|multiplier|`` times the friction, which is what
:attr:`rbd_dynamics.Model.damping` and :attr:`~rbd_dynamics.Model.friction` fold onto the
master.

MuJoCo solves friction loss as a soft constraint. With its default softness the friction of a
light link acts partly as viscous damping and partly as a force that depends on the torques
applied, not on the velocity alone, so that no model of the drive predicts it. With
``hard_friction`` the constraint is made nearly rigid (reference time two physics steps,
impedance 0.99 to 0.999): a moving joint then feels its Coulomb friction as ``coulomb *
sign(qd)`` and a joint at rest sticks until the torque on it exceeds the friction, as a geared
drive does.

A payload can be put in the hand while the simulation runs: ``payload_link`` adds a massless
body welded to that link, and :func:`set_payload` gives it mass, centre of mass and inertia.

With ``floating`` the root link is a body of its own on a free joint named
:data:`~rbd_dynamics.tree.BASE_JOINT`, the dynamics of a model built with ``floating_base=True``.
MuJoCo's free joint has the same orientation (quaternion ``[w x y z]`` against the model's
``[x y z w]``) and angular velocity (base frame), but its linear velocity and force are in the
world's axes where the model's are in the base's. A robot on a floor: :mod:`.standing`.
"""

import xml.etree.ElementTree as ET

import numpy as np

from ..parsers.urdf import parse_urdf
from ..spatial import inertia_problem, inertia_tensor, matrix_to_quaternion, rpy_to_matrix
from ..tree import BASE_JOINT

#: Name of the body that carries the payload (see :func:`set_payload`).
PAYLOAD_BODY = 'rbd_payload'

#: Mass and inertia given to massless links that carry a joint (MuJoCo refuses a moving body
#: without inertia); small enough to change no torque at the tolerances the tests use.
TINY_MASS = 1e-9

_JOINT_TYPES = {'revolute': 'hinge', 'continuous': 'hinge', 'prismatic': 'slide'}


def _quat(rpy):
    """Convert a URDF roll-pitch-yaw to a MuJoCo quaternion ``[w x y z]``."""
    return np.roll(matrix_to_quaternion(rpy_to_matrix(rpy)), 1)


def _numbers(values):
    return ' '.join('%.17g' % float(v) for v in values)


#: MuJoCo's solref and solimp of friction loss with ``hard_friction``: the reference time in
#: physics steps, and the impedance (see the module's description).
HARD_FRICTION_STEPS = 2.0
HARD_FRICTION_IMPEDANCE = (0.99, 0.999, 0.001, 0.5, 2.0)


def mjcf_from_urdf(urdf_text, gravity=(0.0, 0.0, -9.81), timestep=0.001, damping=False,
                   limits=False, sensor_frame=None, drive=None, payload_link=None,
                   hard_friction=False, floating=False):
    """
    MJCF text for the robot of ``urdf_text`` (fixed to the world at its root link).

    Parameters
    ----------
    urdf_text
        the URDF.
    gravity
        ``(3,)`` gravity in the root link frame [m/s^2].
    timestep
        integration step [s].
    damping
        use the URDF's ``<dynamics damping friction>`` on every joint, mimic joints
        included (default: none).
    limits
        enforce the URDF's position limits (default: none).
    sensor_frame
        link at which to place a force/torque sensor pair (``ft_force``,
        ``ft_torque``): the wrench the parent applies on the links at and beyond it, in
        its frame, about its origin (what :func:`rbd_dynamics.payload_wrench` computes).
    drive
        joint name -> ``(viscous, coulomb, armature)`` [N m s/rad, N m, kg m^2; N s/m,
        N, kg for prismatic joints], replacing what ``damping`` gives that joint.
    payload_link
        link that gets a massless welded body :data:`PAYLOAD_BODY` for
        :func:`set_payload` (default: none).
    hard_friction
        Coulomb friction as a nearly rigid constraint rather than MuJoCo's default soft one
        (see the module's description).
    floating
        the root link moves: a body on a free joint :data:`~rbd_dynamics.tree.BASE_JOINT`
        (see the module's description); ``gravity`` is then in the world's axes.

    Returns
    -------
    ``(mjcf_text, mimic)`` with ``mimic`` mapping mimic joints to ``(master, mult, off)``.

    """
    desc = parse_urdf(urdf_text)
    drive = dict(drive or {})
    unknown = sorted(set(drive) - set(desc.joints))
    if unknown:
        raise ValueError('drive names unknown joints %s (joints: %s)'
                         % (unknown, ', '.join(desc.joints)))
    if payload_link is not None and payload_link not in desc.links:
        raise ValueError('payload_link %r is not a link (links: %s)'
                         % (payload_link, ', '.join(desc.links)))
    children = {}
    has_parent = set()
    for joint in desc.joints.values():
        children.setdefault(joint.parent, []).append(joint)
        has_parent.add(joint.child)
    roots = [name for name in desc.links if name not in has_parent]
    if len(roots) != 1:
        raise ValueError('the description has %d root links (%s); the simulated robot needs '
                         'exactly one' % (len(roots), ', '.join(roots) or 'none'))
    root = roots[0]

    mujoco = ET.Element('mujoco', model=desc.name or 'robot')
    ET.SubElement(mujoco, 'compiler', angle='radian', inertiafromgeom='false',
                  balanceinertia='false', boundmass='0', boundinertia='0', autolimits='true')
    option = ET.SubElement(mujoco, 'option', timestep=repr(float(timestep)),
                           gravity=_numbers(gravity), integrator='RK4')
    ET.SubElement(option, 'flag', contact='disable')
    worldbody = ET.SubElement(mujoco, 'worldbody')

    def add_inertial(body, link_name, moving):
        link = desc.links[link_name]
        if link.mass > 0.0:
            inertia = link.inertia
            ET.SubElement(body, 'inertial', pos=_numbers(link.com), mass=repr(float(link.mass)),
                          fullinertia=_numbers([inertia[0, 0], inertia[1, 1], inertia[2, 2],
                                                inertia[0, 1], inertia[0, 2], inertia[1, 2]]))
        elif moving:
            ET.SubElement(body, 'inertial', pos='0 0 0', mass=repr(TINY_MASS),
                          diaginertia=_numbers([TINY_MASS] * 3))

    def add_body(parent_element, joint):
        body = ET.SubElement(parent_element, 'body', name=joint.child,
                             pos=_numbers(joint.xyz), quat=_numbers(_quat(joint.rpy)))
        moving = joint.jtype != 'fixed'
        if moving:
            if joint.jtype not in _JOINT_TYPES:
                raise ValueError('joint %r: type %s is not simulated (revolute, continuous and '
                                 'prismatic are)' % (joint.name, joint.jtype))
            attrs = {'name': joint.name, 'type': _JOINT_TYPES[joint.jtype],
                     'axis': _numbers(joint.axis), 'armature': '0', 'damping': '0',
                     'frictionloss': '0'}
            if damping:
                attrs['damping'] = repr(float(joint.damping))
                attrs['frictionloss'] = repr(float(joint.friction))
            if joint.name in drive:
                viscous, coulomb, armature = (float(v) for v in drive[joint.name])
                if not all(np.isfinite([viscous, coulomb, armature])) or \
                        min(viscous, coulomb, armature) < 0.0:
                    raise ValueError('drive of joint %r: viscous, coulomb and armature must be '
                                     'finite and >= 0, got %r'
                                     % (joint.name, (viscous, coulomb, armature)))
                attrs.update(damping=repr(viscous), frictionloss=repr(coulomb),
                             armature=repr(armature))
            if hard_friction and float(attrs['frictionloss']) > 0.0:
                attrs['solreffriction'] = _numbers([HARD_FRICTION_STEPS * timestep, 1.0])
                attrs['solimpfriction'] = _numbers(HARD_FRICTION_IMPEDANCE)
            if limits and joint.jtype != 'continuous' \
                    and np.isfinite([joint.lower, joint.upper]).all():
                attrs['range'] = _numbers([joint.lower, joint.upper])
                attrs['limited'] = 'true'
            ET.SubElement(body, 'joint', **attrs)
        add_inertial(body, joint.child, moving)
        if joint.child == payload_link:
            ET.SubElement(body, 'body', name=PAYLOAD_BODY, pos='0 0 0')
        if joint.child == sensor_frame:
            ET.SubElement(body, 'site', name='ft_site', pos='0 0 0', size='0.005')
        for child in children.get(joint.child, []):
            add_body(body, child)

    top = worldbody
    if floating:
        top = ET.SubElement(worldbody, 'body', name=root, pos='0 0 0')
        ET.SubElement(top, 'freejoint', name=BASE_JOINT)
        add_inertial(top, root, True)
    for joint in children.get(root, []):
        add_body(top, joint)

    mimic = {}
    equality = None
    for joint in desc.joints.values():
        if joint.mimic is None:
            continue
        master, mult, off = joint.mimic
        mimic[joint.name] = (master, mult, off)
        if equality is None:
            equality = ET.SubElement(mujoco, 'equality')
        ET.SubElement(equality, 'joint', joint1=joint.name, joint2=master,
                      polycoef=_numbers([off, mult, 0, 0, 0]), solref='0.002 1')
    if sensor_frame is not None:
        if sensor_frame not in desc.links or sensor_frame == root:
            raise ValueError('sensor_frame %r is not a non-root link' % sensor_frame)
        sensor = ET.SubElement(mujoco, 'sensor')
        ET.SubElement(sensor, 'force', name='ft_force', site='ft_site')
        ET.SubElement(sensor, 'torque', name='ft_torque', site='ft_site')
    return ET.tostring(mujoco, encoding='unicode'), mimic


def load(urdf_text, **kwargs):
    """
    Build the MuJoCo model of a URDF.

    ``(mujoco.MjModel, mimic)`` for ``urdf_text`` (keyword arguments of
    :func:`mjcf_from_urdf`).
    """
    import mujoco
    text, mimic = mjcf_from_urdf(urdf_text, **kwargs)
    return mujoco.MjModel.from_xml_string(text), mimic


def set_payload(mj_model, mass, com=(0.0, 0.0, 0.0), inertia=(0.0,) * 6):
    """
    Give the payload body of ``mj_model`` (see ``payload_link``) a mass; 0 removes it.

    MuJoCo keeps a body's inertia as principal moments and the rotation of its principal axes,
    so the tensor is diagonalised here. The model's derived constants (subtree masses) are
    recomputed on a scratch ``MjData``: the simulation's own data is not touched, and the next
    step sees the payload.

    Parameters
    ----------
    mj_model
        a ``mujoco.MjModel`` written with ``payload_link``.
    mass
        [kg], finite and >= 0.
    com
        ``(3,)`` centre of mass in the link frame [m].
    inertia
        ``(6,)`` ``ixx, ixy, ixz, iyy, iyz, izz`` about the centre of mass in the
        link's axes [kg m^2].

    Raises
    ------
    ValueError
        the model has no payload body, or a value is negative, non-finite or of
        the wrong size.

    """
    import mujoco
    body = mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_BODY, PAYLOAD_BODY)
    if body < 0:
        raise ValueError('the model has no payload body: write it with payload_link')
    com = np.asarray(com, dtype=float).reshape(-1)
    inertia = np.asarray(inertia, dtype=float).reshape(-1)
    if com.size != 3 or inertia.size != 6:
        raise ValueError('payload com has %d entries (expected 3), inertia %d (expected 6)'
                         % (com.size, inertia.size))
    if not (np.isfinite(mass) and mass >= 0.0 and np.all(np.isfinite(com))
            and np.all(np.isfinite(inertia))):
        raise ValueError('payload mass must be finite and >= 0, com and inertia finite')
    tensor = inertia_tensor(inertia)
    problem = inertia_problem(tensor)
    if problem:
        raise ValueError('payload inertia %s' % problem)
    moments, axes = np.linalg.eigh(tensor)
    if np.linalg.det(axes) < 0.0:
        axes[:, 0] = -axes[:, 0]
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, axes.reshape(-1))
    mj_model.body_mass[body] = mass
    mj_model.body_ipos[body] = com
    mj_model.body_iquat[body] = quat
    mj_model.body_inertia[body] = np.maximum(moments, 0.0)
    mujoco.mj_setConst(mj_model, mujoco.MjData(mj_model))
