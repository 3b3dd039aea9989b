"""
Spatial (6-D) vector algebra in Featherstone's conventions.

Inside the library every spatial vector is ordered angular part first:
a motion vector is ``[wx, wy, wz, vx, vy, vz]`` (angular velocity, then the linear velocity of the
point at the frame origin) and a force vector is ``[nx, ny, nz, fx, fy, fz]`` (moment about the
frame origin, then force). The public API orders 6-vectors like ``geometry_msgs/Wrench`` (linear
part first); :func:`to_public` and :func:`from_public` swap the halves.

A Plücker transform ``B_X_A`` maps motion vectors from A coordinates to B coordinates. For a frame
B whose origin sits at ``r`` (in A coordinates) and whose axes are the columns of ``R`` (in A
coordinates), ``B_X_A = rot(R.T) @ xlt(r)`` (Featherstone Eq. 2.28). Forces transform with
``B_X_A* = B_X_A^-T``; a force in B coordinates goes back to A with ``B_X_A.T``.

Every function accepts leading batch dimensions (``(..., 3)``, ``(..., 3, 3)``).
"""

import math

import numpy as np


def skew(p):
    """
    Return the cross-product matrix ``[p]x`` of ``p``, so that ``[p]x u = p x u``.

    Parameters
    ----------
    p
        vectors ``(..., 3)``.

    Returns
    -------
    ``(..., 3, 3)`` skew-symmetric matrices.

    """
    p = np.asarray(p, dtype=float)
    out = np.zeros(p.shape[:-1] + (3, 3))
    out[..., 0, 1] = -p[..., 2]
    out[..., 0, 2] = p[..., 1]
    out[..., 1, 0] = p[..., 2]
    out[..., 1, 2] = -p[..., 0]
    out[..., 2, 0] = -p[..., 1]
    out[..., 2, 1] = p[..., 0]
    return out


def rpy_to_matrix(rpy):
    """
    Rotation matrix of URDF roll-pitch-yaw angles: ``Rz(yaw) @ Ry(pitch) @ Rx(roll)``.

    Parameters
    ----------
    rpy
        ``(..., 3)`` roll, pitch, yaw [rad] about the fixed x, y, z axes.

    Returns
    -------
    ``(..., 3, 3)`` rotation whose columns are the rotated frame's axes in the original frame.

    """
    rpy = np.asarray(rpy, dtype=float)
    cr, sr = np.cos(rpy[..., 0]), np.sin(rpy[..., 0])
    cp, sp = np.cos(rpy[..., 1]), np.sin(rpy[..., 1])
    cy, sy = np.cos(rpy[..., 2]), np.sin(rpy[..., 2])
    out = np.empty(rpy.shape[:-1] + (3, 3))
    out[..., 0, 0] = cy * cp
    out[..., 0, 1] = cy * sp * sr - sy * cr
    out[..., 0, 2] = cy * sp * cr + sy * sr
    out[..., 1, 0] = sy * cp
    out[..., 1, 1] = sy * sp * sr + cy * cr
    out[..., 1, 2] = sy * sp * cr - cy * sr
    out[..., 2, 0] = -sp
    out[..., 2, 1] = cp * sr
    out[..., 2, 2] = cp * cr
    return out


def matrix_to_rpy(R):
    """
    URDF roll-pitch-yaw angles of a rotation matrix: the inverse of :func:`rpy_to_matrix`.

    ``(3, 3)`` -> ``(3,)``; pitch in ``[-pi/2, pi/2]`` (at +-pi/2 roll is taken as 0).
    """
    R = np.asarray(R, dtype=float)
    pitch = np.arctan2(-R[2, 0], np.hypot(R[0, 0], R[1, 0]))
    if np.hypot(R[0, 0], R[1, 0]) < 1e-12:  # gimbal lock: yaw and roll turn about one axis
        return np.array([0.0, pitch, np.arctan2(-R[0, 1], R[1, 1])])
    return np.array([np.arctan2(R[2, 1], R[2, 2]), pitch, np.arctan2(R[1, 0], R[0, 0])])


def axis_angle_to_matrix(axis, angle):
    """
    Rotation by ``angle`` about the unit vector ``axis`` (Rodrigues' formula).

    Parameters
    ----------
    axis
        unit vector ``(3,)``.
    angle
        angles ``(...)`` [rad].

    Returns
    -------
    ``(..., 3, 3)`` rotation matrices.

    """
    angle = np.asarray(angle, dtype=float)
    k = skew(axis)
    s = np.sin(angle)[..., None, None]
    c = np.cos(angle)[..., None, None]
    return np.eye(3) + s * k + (1.0 - c) * (k @ k)


def quaternion_to_matrix(quat):
    """
    Rotation matrix of quaternions ``[x, y, z, w]`` (normalised here).

    Parameters
    ----------
    quat
        ``(..., 4)`` quaternions, scalar part last.

    Returns
    -------
    ``(..., 3, 3)`` rotation matrices.

    Raises
    ------
    ValueError
        a quaternion has (near) zero norm or is not finite.

    """
    quat = np.asarray(quat, dtype=float)
    if quat.shape == (4,):
        # one quaternion in floats (a sixth of the arrays' cost; the same operations in the
        # same order, so the same bits): the task law's desired pose calls it per message
        x, y, z, w = quat.tolist()
        norm = math.sqrt(x * x + y * y + z * z + w * w)
        if not norm > 1e-9:
            raise ValueError(_BAD_QUATERNION)
        return np.array(_rotation_rows(x / norm, y / norm, z / norm, w / norm))
    norm = np.sqrt(np.sum(quat * quat, axis=-1))
    if not np.all(norm > 1e-9):
        raise ValueError(_BAD_QUATERNION)
    out = np.empty(quat.shape[:-1] + (3, 3))
    for i, row in enumerate(_rotation_rows(*np.moveaxis(quat / norm[..., None], -1, 0))):
        for j, value in enumerate(row):
            out[..., i, j] = value
    return out


_BAD_QUATERNION = 'quaternion [x, y, z, w] must have a finite, non-zero norm'


def _rotation_rows(x, y, z, w):
    """Rows of the rotation of the unit quaternion ``(x, y, z, w)``: floats or arrays alike."""
    return ((1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)),
            (2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)),
            (2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)))


def plux(E, r):
    """
    Plücker transform ``rot(E) @ xlt(r)`` = ``[[E, 0], [-E [r]x, E]]`` (Eq. 2.28).

    Parameters
    ----------
    E
        ``(..., 3, 3)`` rotation from A coordinates to B coordinates (B axes as rows).
    r
        ``(..., 3)`` position of B's origin in A coordinates [m].

    Returns
    -------
    ``(..., 6, 6)`` motion transform ``B_X_A``.

    """
    E = np.asarray(E, dtype=float)
    r = np.asarray(r, dtype=float)
    shape = np.broadcast_shapes(E.shape[:-2], r.shape[:-1])
    out = np.zeros(shape + (6, 6))
    out[..., :3, :3] = E
    out[..., 3:, 3:] = E
    out[..., 3:, :3] = -E @ skew(r)
    return out


def frame_transform(R, p):
    """
    Motion transform into a frame placed at ``p`` with axes ``R`` (both in the old frame).

    This is how URDF origins read: ``<origin xyz=p rpy=...>`` places the new frame at ``p`` with
    axes ``R = rpy_to_matrix(rpy)``; the result maps motion vectors from old to new coordinates.
    """
    return plux(np.swapaxes(np.asarray(R, dtype=float), -1, -2), p)


def cross_motion(v, m):
    """``v x m`` for motion vectors, without building matrices. Shapes ``(..., 6)``."""
    w, u = v[..., :3], v[..., 3:]
    return np.concatenate(
        (np.cross(w, m[..., :3]), np.cross(w, m[..., 3:]) + np.cross(u, m[..., :3])), axis=-1)


def cross_force(v, f):
    """``v x* f`` for a motion vector ``v`` and a force ``f``. Shapes ``(..., 6)``."""
    w, u = v[..., :3], v[..., 3:]
    return np.concatenate(
        (np.cross(w, f[..., :3]) + np.cross(u, f[..., 3:]), np.cross(w, f[..., 3:])), axis=-1)


def inertia_tensor(moments):
    """
    Return the ``(3, 3)`` rotational inertia of its six URDF values.

    Parameters
    ----------
    moments
        ``(6,)`` ``ixx, ixy, ixz, iyy, iyz, izz`` [kg m^2], the order of URDF's ``<inertia>``
        and of ``geometry_msgs/Inertia``.

    """
    xx, xy, xz, yy, yz, zz = np.asarray(moments, dtype=float).reshape(6)
    return np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])


def spatial_inertia(mass, com, inertia_com):
    """
    Spatial inertia ``mcI`` of a rigid body (Eq. 2.63).

    Parameters
    ----------
    mass
        mass [kg].
    com
        ``(3,)`` centre of mass in the body frame [m].
    inertia_com
        ``(3, 3)`` rotational inertia about the centre of mass, in body-frame axes
        [kg m^2].

    Returns
    -------
    ``(6, 6)`` spatial inertia about the body-frame origin, angular first.

    """
    c = skew(com)
    out = np.zeros((6, 6))
    out[:3, :3] = np.asarray(inertia_com, dtype=float) + mass * (c @ c.T)
    out[:3, 3:] = mass * c
    out[3:, :3] = mass * c.T
    out[3:, 3:] = mass * np.eye(3)
    return out


def to_public(vec):
    """Swap halves: Featherstone ``[angular, linear]`` to public ``[linear, angular]``."""
    vec = np.asarray(vec)
    return np.concatenate((vec[..., 3:], vec[..., :3]), axis=-1)


def from_public(vec):
    """Swap halves: public ``[linear, angular]`` (force first) to ``[angular, linear]``."""
    return to_public(vec)
