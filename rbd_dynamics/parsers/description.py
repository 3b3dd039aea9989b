"""
A robot description as links and joints: what a URDF says, or what code builds.

:class:`Description` is the input of :meth:`rbd_dynamics.Model.from_description`. The URDF parser
fills one; code that builds models without a URDF (for example with ``helical`` or ``spherical``
joints, which URDF lacks) fills one with :meth:`Description.add_link` and
:meth:`Description.add_joint`. Every value is checked when it is added, and the error names the
element.
"""

import math

import numpy as np

from ..joints import check_joint_type, URDF_JOINT_TYPES

#: Moments of inertia below ``-NEGATIVE_INERTIA_TOLERANCE`` [kg m^2] are errors; smaller negative
#: values are rounding noise that real descriptions contain (talos: -5.4e-20), loaded with a
#: warning.
NEGATIVE_INERTIA_TOLERANCE = 1e-9


class UrdfError(ValueError):
    """The robot description cannot be used; the message names the element and the problem."""


class Link:
    """
    A link and its inertial parameters (all in the link frame).

    Attributes
    ----------
    name
        link name.
    mass
        [kg].
    com
        ``(3,)`` centre of mass [m].
    inertia
        ``(3, 3)`` rotational inertia about the centre of mass, in link axes [kg m^2].

    """

    __slots__ = ('name', 'mass', 'com', 'inertia')

    def __init__(self, name, mass, com, inertia):
        self.name = name
        self.mass = mass
        self.com = com
        self.inertia = inertia


class Joint:
    """
    A joint between two links.

    Attributes
    ----------
    name, jtype, parent, child
        joint name, type and the two link names.
    xyz, rpy
        ``(3,)`` origin of the joint frame in the parent link frame.
    axis
        ``(3,)`` unit axis in the joint frame.
    pitch
        helical pitch [m/rad].
    mimic
        ``None`` or ``(master joint name, multiplier, offset)``.
    effort
        ``<limit effort>`` [N m or N], ``inf`` when absent or 0 (unlimited).
    damping
        ``<dynamics damping>`` [N m s/rad or N s/m], 0 when absent.
    friction
        ``<dynamics friction>`` (Coulomb) [N m or N], 0 when absent.
    lower, upper
        ``<limit lower upper>`` position limits [rad or m], ``-inf`` / ``inf`` when absent.

    """

    __slots__ = ('name', 'jtype', 'parent', 'child', 'xyz', 'rpy', 'axis', 'pitch', 'mimic',
                 'effort', 'damping', 'friction', 'lower', 'upper')

    def __init__(self, name, jtype, parent, child, xyz, rpy, axis, pitch, mimic,
                 effort=math.inf, damping=0.0, friction=0.0, lower=-math.inf, upper=math.inf):
        self.name = name
        self.jtype = jtype
        self.parent = parent
        self.child = child
        self.xyz = xyz
        self.rpy = rpy
        self.axis = axis
        self.pitch = pitch
        self.mimic = mimic
        self.effort = effort
        self.damping = damping
        self.friction = friction
        self.lower = lower
        self.upper = upper


def finite_vector(value, size, what):
    """``value`` as a float array of ``size`` finite entries, or :class:`UrdfError`."""
    try:
        arr = np.array(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise UrdfError('%s: %r is not a list of %d numbers' % (what, value, size)) from None
    if arr.size != size:
        raise UrdfError('%s: expected %d numbers, got %d' % (what, size, arr.size))
    if not np.all(np.isfinite(arr)):
        raise UrdfError('%s: values must be finite, got %s' % (what, arr.tolist()))
    return arr


def finite_number(value, what):
    """``value`` as a finite float, or :class:`UrdfError`."""
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise UrdfError('%s: %r is not a number' % (what, value)) from None
    if not math.isfinite(out):
        raise UrdfError('%s: value must be finite, got %r' % (what, value))
    return out


class Description:
    """
    Links and joints of a robot, in the order they were added (document order for a URDF).

    Attributes
    ----------
    name
        robot name.
    links
        ``dict`` link name -> :class:`Link`, insertion ordered.
    joints
        ``dict`` joint name -> :class:`Joint`, insertion ordered.

    """

    #: Joint types a URDF may name (``rbd_dynamics.joints.URDF_JOINT_TYPES``).
    URDF_JOINT_TYPES = URDF_JOINT_TYPES

    def __init__(self, name=''):
        self.name = name
        self.links = {}
        self.joints = {}

    def add_link(self, name, mass=0.0, com=(0.0, 0.0, 0.0), inertia=None):
        """
        Add a link.

        Parameters
        ----------
        name
            unique link name.
        mass
            [kg], finite and >= 0.
        com
            ``(3,)`` centre of mass in the link frame [m].
        inertia
            ``(3, 3)`` rotational inertia about the centre of mass in link axes
            [kg m^2], or ``None`` for zero. Finite, symmetric, no negative moment (beyond
            rounding noise).
            A tensor that is not positive semi-definite or breaks the triangle inequality is
            accepted: the model builder warns about it.

        Raises
        ------
        UrdfError
            a duplicate name or an unusable value.

        """
        if not isinstance(name, str) or not name:
            raise UrdfError('link: a non-empty name is required, got %r' % (name,))
        if name in self.links:
            raise UrdfError('link %r: defined twice' % name)
        where = 'link %r' % name
        mass = finite_number(mass, where + ' mass')
        if mass < 0.0:
            raise UrdfError('%s: mass must not be negative, got %r' % (where, mass))
        com = finite_vector(com, 3, where + ' inertial origin xyz')
        if inertia is None:
            inertia = np.zeros((3, 3))
        else:
            inertia = finite_vector(inertia, 9, where + ' inertia').reshape(3, 3)
        if not np.allclose(inertia, inertia.T, rtol=0.0, atol=1e-12 * (1 + abs(inertia).max())):
            raise UrdfError('%s: inertia must be symmetric' % where)
        if np.any(np.diag(inertia) < -NEGATIVE_INERTIA_TOLERANCE):
            raise UrdfError('%s: inertia has a negative moment of inertia (ixx, iyy, izz = %s)'
                            % (where, np.diag(inertia).tolist()))
        self.links[name] = Link(name, mass, com, inertia)

    def add_joint(self, name, jtype, parent, child, xyz=(0.0, 0.0, 0.0), rpy=(0.0, 0.0, 0.0),
                  axis=(1.0, 0.0, 0.0), pitch=0.0, mimic=None, effort=None, damping=0.0,
                  friction=0.0, lower=None, upper=None):
        """
        Add a joint.

        Parameters
        ----------
        name
            unique joint name.
        jtype
            one of ``rbd_dynamics.joints.SUPPORTED_JOINT_TYPES``.
        parent
            parent link name (may be added later).
        child
            child link name (may be added later).
        xyz
            ``(3,)`` joint frame origin in the parent link frame [m].
        rpy
            ``(3,)`` joint frame roll, pitch, yaw relative to the parent link frame [rad].
        axis
            ``(3,)`` joint axis in the joint frame, any non-zero length.
        pitch
            helical pitch [m/rad].
        mimic
            ``None`` or ``(master joint name, multiplier, offset)``: this joint's position
            is ``multiplier * master + offset``.
        effort
            effort limit [N m or N], ``None`` or 0 for unlimited (URDF ``<limit>``).
        damping
            viscous friction coefficient [N m s/rad or N s/m], >= 0 (URDF
            ``<dynamics>``).
        friction
            Coulomb friction [N m or N], >= 0 (URDF ``<dynamics>``).
        lower, upper
            position limits [rad or m], ``None`` where absent (URDF ``<limit>``).

        Raises
        ------
        UrdfError
            a duplicate name or an unusable value.

        """
        if not isinstance(name, str) or not name:
            raise UrdfError('joint: a non-empty name is required, got %r' % (name,))
        if name in self.joints:
            raise UrdfError('joint %r: defined twice' % name)
        where = 'joint %r' % name
        check_joint_type(jtype, where, error=UrdfError)
        for role, link in (('parent', parent), ('child', child)):
            if not isinstance(link, str) or not link:
                raise UrdfError('%s: a %s link name is required' % (where, role))
        if parent == child:
            raise UrdfError('%s: parent and child are the same link %r' % (where, parent))
        xyz = finite_vector(xyz, 3, where + ' origin xyz')
        rpy = finite_vector(rpy, 3, where + ' origin rpy')
        axis = finite_vector(axis, 3, where + ' axis')
        norm = float(np.linalg.norm(axis))
        if norm < 1e-12 and jtype != 'fixed':
            raise UrdfError('%s: axis must not be zero' % where)
        if norm >= 1e-12:
            axis = axis / norm
        pitch = finite_number(pitch, where + ' pitch')
        if mimic is not None:
            master, multiplier, offset = mimic
            if not isinstance(master, str) or not master:
                raise UrdfError('%s: mimic needs the name of the joint it follows' % where)
            mimic = (master, finite_number(multiplier, where + ' mimic multiplier'),
                     finite_number(offset, where + ' mimic offset'))
        drive = {}
        for key, value in (('effort', 0.0 if effort is None else effort),
                           ('damping', damping), ('friction', friction)):
            value = finite_number(value, '%s %s' % (where, key))
            if value < 0.0:
                raise UrdfError('%s: %s must not be negative, got %r' % (where, key, value))
            drive[key] = value
        lower = -math.inf if lower is None else finite_number(lower, where + ' limit lower')
        upper = math.inf if upper is None else finite_number(upper, where + ' limit upper')
        self.joints[name] = Joint(name, jtype, parent, child, xyz, rpy, axis, pitch, mimic,
                                  effort=drive['effort'] or math.inf, damping=drive['damping'],
                                  friction=drive['friction'], lower=lower, upper=upper)
