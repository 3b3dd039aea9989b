"""
Joint models: one ``jcalc`` routine for every supported joint type (Featherstone Table 4.1).

A joint connects a predecessor frame J (the joint frame: the parent link frame moved by the joint
origin) to the successor frame C (the child link frame). ``jcalc`` returns, in C coordinates,

- ``XJ``: the motion transform ``C_X_J`` (6x6),
- ``S``: the motion subspace (6 x nv), so that the joint velocity is ``vJ = S qd``,
- ``vJ``: the joint velocity ``S qd``,
- ``cJ``: the velocity-product term ``dS/dt qd`` (apparent derivative in C, Eq. 4.16).

Coordinates (``q`` layout / ``qd`` layout, public order):

============  ====  ====  ============================================================
type          nq    nv    meaning
============  ====  ====  ============================================================
revolute      1     1     angle about ``axis`` [rad]
continuous    1     1     angle about ``axis`` [rad] (no limits)
prismatic     1     1     displacement along ``axis`` [m]
helical       1     1     angle about ``axis``; translation ``pitch * angle`` along it
spherical     4     3     q: quaternion [x y z w]; qd: angular velocity in C
floating      7     6     q: [x y z] position of C in J, then quaternion [x y z w];
                          qd: [vx vy vz wx wy wz], velocity of C's origin and angular
                          velocity, both in C coordinates
planar        3     3     q: [x, y, theta]: translation along two in-plane axes of J, then a
                          rotation theta about ``axis`` (the plane normal); qd = d/dt q
fixed         0     0     no motion (merged into the parent body when a model is built)
============  ====  ====  ============================================================

For ``planar`` the in-plane axes are ``e1``: the component of J's x axis orthogonal to ``axis``
(J's y axis if ``axis`` is along x), and ``e2 = axis x e1``; for ``axis = z`` they are x and y.
"""

import numpy as np

from .spatial import axis_angle_to_matrix, quaternion_to_matrix, skew

#: (nq, nv) of every joint type ``jcalc`` knows.
JOINT_DOFS = {
    'revolute': (1, 1),
    'continuous': (1, 1),
    'prismatic': (1, 1),
    'helical': (1, 1),
    'spherical': (4, 3),
    'floating': (7, 6),
    'planar': (3, 3),
    'fixed': (0, 0),
}

SUPPORTED_JOINT_TYPES = tuple(JOINT_DOFS)

#: The joint types a URDF may name (``helical`` and ``spherical`` are code-only).
URDF_JOINT_TYPES = ('revolute', 'continuous', 'prismatic', 'fixed', 'floating', 'planar')


def check_joint_type(jtype, where='joint', urdf=False, error=ValueError):
    """
    Raise ``error`` naming the supported joint types unless ``jtype`` is one of them.

    Parameters
    ----------
    jtype
        the joint type to check.
    where
        what the message starts with (e.g. ``"joint 'elbow'"``).
    urdf
        check against :data:`URDF_JOINT_TYPES` instead of :data:`SUPPORTED_JOINT_TYPES`.
    error
        the exception class to raise (a ``ValueError``; the parsers raise ``UrdfError``).

    """
    supported = URDF_JOINT_TYPES if urdf else SUPPORTED_JOINT_TYPES
    if jtype not in supported:
        raise error('%s: unknown joint type %r; supported %sjoint types: %s'
                    % (where, jtype, 'URDF ' if urdf else '', ', '.join(supported)))


class JointModel:
    """
    Type and constant parameters of one joint.

    Attributes
    ----------
    jtype
        one of :data:`SUPPORTED_JOINT_TYPES`.
    axis
        ``(3,)`` unit axis in the joint frame.
    pitch
        helical pitch [m/rad] (0 for the other types).
    nq
        number of position coordinates.
    nv
        number of velocity coordinates.
    plane
        ``(3, 2)`` in-plane unit axes ``[e1, e2]`` of a planar joint (its position
        coordinates move along them); ``None`` for the other types.

    """

    __slots__ = ('jtype', 'axis', 'pitch', 'nq', 'nv', 'plane')

    def __init__(self, jtype, axis=(1.0, 0.0, 0.0), pitch=0.0):
        check_joint_type(jtype)
        axis = np.asarray(axis, dtype=float).reshape(3)
        norm = np.linalg.norm(axis)
        if not np.isfinite(norm) or norm < 1e-12:
            raise ValueError('joint axis %s must be a finite, non-zero vector' % axis.tolist())
        self.jtype = jtype
        self.axis = axis / norm
        self.pitch = float(pitch)
        self.nq, self.nv = JOINT_DOFS[jtype]
        self.plane = _plane_axes(self.axis) if jtype == 'planar' else None

    def __repr__(self):
        return 'JointModel(%r, axis=%s)' % (self.jtype, self.axis.tolist())


def _plane_axes(normal):
    """``(3, 2)`` in-plane unit axes ``[e1, e2]`` for a planar joint with this normal."""
    ref = np.array([1.0, 0.0, 0.0])
    if abs(normal @ ref) > 1.0 - 1e-9:
        ref = np.array([0.0, 1.0, 0.0])
    e1 = ref - (ref @ normal) * normal
    e1 /= np.linalg.norm(e1)
    return np.stack((e1, np.cross(normal, e1)), axis=-1)


def jcalc(joint, q, qd):
    """
    Joint transform, motion subspace and velocity terms (Featherstone's ``jcalc``).

    Parameters
    ----------
    joint
        the joint model.
    q
        ``(B, nq)`` joint positions for a batch of B states.
    qd
        ``(B, nv)`` joint velocities.

    Returns
    -------
    ``(XJ, S, vJ, cJ)`` with shapes ``(B, 6, 6)``, ``(B, 6, nv)``, ``(B, 6)``, ``(B, 6)``, in
    the child frame, angular part first.

    """
    batch = q.shape[0]
    jtype = joint.jtype
    a = joint.axis
    XJ = np.zeros((batch, 6, 6))
    S = np.zeros((batch, 6, joint.nv))
    cJ = np.zeros((batch, 6))
    if jtype in ('revolute', 'continuous', 'helical'):
        E = np.swapaxes(axis_angle_to_matrix(a, q[:, 0]), -1, -2)
        XJ[:, :3, :3] = E
        XJ[:, 3:, 3:] = E
        S[:, :3, 0] = a
        if jtype == 'helical':
            # C sits at pitch * q along the axis; the axis is invariant under E, so
            # -E [r]x = -[r]x E with r = pitch * q * a.
            XJ[:, 3:, :3] = -skew(joint.pitch * q[:, :1] * a) @ E
            S[:, 3:, 0] = joint.pitch * a
    elif jtype == 'prismatic':
        XJ[:, :3, :3] = np.eye(3)
        XJ[:, 3:, 3:] = np.eye(3)
        XJ[:, 3:, :3] = -skew(q[:, :1] * a)
        S[:, 3:, 0] = a
    elif jtype == 'spherical':
        E = np.swapaxes(quaternion_to_matrix(q), -1, -2)
        XJ[:, :3, :3] = E
        XJ[:, 3:, 3:] = E
        S[:, :3, :] = np.eye(3)
    elif jtype == 'floating':
        E = np.swapaxes(quaternion_to_matrix(q[:, 3:7]), -1, -2)
        XJ[:, :3, :3] = E
        XJ[:, 3:, 3:] = E
        XJ[:, 3:, :3] = -E @ skew(q[:, :3])
        # qd = [v; w] in C, spatial order is [w; v].
        S[:, 3:, :3] = np.eye(3)
        S[:, :3, 3:] = np.eye(3)
    elif jtype == 'planar':
        E = np.swapaxes(axis_angle_to_matrix(a, q[:, 2]), -1, -2)
        r = q[:, :2] @ joint.plane.T
        XJ[:, :3, :3] = E
        XJ[:, 3:, 3:] = E
        XJ[:, 3:, :3] = -E @ skew(r)
        # x, y translate along the plane axes of J, seen from the rotated frame C.
        S[:, 3:, :2] = E @ joint.plane
        S[:, :3, 2] = a
    else:  # fixed
        XJ[:] = np.eye(6)
    vJ = np.einsum('bij,bj->bi', S, qd)
    if jtype == 'planar':
        # S depends on theta: its apparent derivative in C is -(a theta_dot) x S_xy (Eq. 4.16).
        cJ[:, 3:] = -np.cross(a * qd[:, 2:3], vJ[:, 3:])
    return XJ, S, vJ, cJ


def subspace_rate(joint, S, qd):
    """
    Return the time derivative of the motion subspace in the child frame, ``(B, 6, nv)``.

    Only the planar joint's subspace moves with its coordinate (see ``jcalc``, whose ``cJ`` is
    this times ``qd``); every other type has a constant one.
    """
    Sd = np.zeros_like(S)
    if joint.jtype == 'planar':
        omega = joint.axis * qd[:, 2:3]
        Sd[:, 3:, :2] = -np.cross(omega[:, :, None], S[:, 3:, :2], axis=1)
    return Sd
