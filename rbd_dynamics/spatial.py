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

A body's ten inertial parameters ``[m, m cx, m cy, m cz, ixx, ixy, ixz, iyy, iyz, izz]`` (mass,
first moment and rotational inertia about its frame's origin, in its axes) are the columns of
:func:`rbd_dynamics.regressor`; :meth:`rbd_dynamics.Model.inertial_parameters` reads them with
:func:`parameters_from_spatial`. The 4x4 pseudo-inertia is positive semi-definite exactly when
the parameters are those of a physical body (:func:`consistency_margin`); :func:`link_inertial`
gives the mass, centre of mass and inertia about it that a URDF ``<inertial>`` holds.
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


def quaternion_of_rows(R):
    """
    Return ``(x, y, z, w)`` of a rotation matrix given as rows (3×3 nested sequences), floats.

    Shepperd's method (the largest of the four squares first), and ``w >= 0``: the shortest
    rotation. A matrix that is no rotation (all four squares zero) gives the identity.
    """
    (r00, r01, r02), (r10, r11, r12), (r20, r21, r22) = R
    trace = r00 + r11 + r22
    squares = (1 + trace, 1 + 2 * r00 - trace, 1 + 2 * r11 - trace, 1 + 2 * r22 - trace)
    k = squares.index(max(squares))
    s = 2.0 * math.sqrt(max(squares[k], 0.0))
    if not s > 0.0:
        return 0.0, 0.0, 0.0, 1.0
    if k == 0:
        w, x, y, z = s / 4, (r21 - r12) / s, (r02 - r20) / s, (r10 - r01) / s
    elif k == 1:
        w, x, y, z = (r21 - r12) / s, s / 4, (r01 + r10) / s, (r02 + r20) / s
    elif k == 2:
        w, x, y, z = (r02 - r20) / s, (r01 + r10) / s, s / 4, (r12 + r21) / s
    else:
        w, x, y, z = (r10 - r01) / s, (r02 + r20) / s, (r12 + r21) / s, s / 4
    if w < 0.0:
        w, x, y, z = -w, -x, -y, -z
    return x, y, z, w


def matrix_to_quaternion(R):
    """Return the unit quaternion ``[x, y, z, w]`` of a rotation matrix (3×3), ``w >= 0``."""
    return np.array(quaternion_of_rows(np.asarray(R, dtype=float).tolist()))


def rotation_vector_of_rows(R):
    """:func:`rotation_vector` of a matrix given as rows (nested sequences), as floats."""
    x, y, z, w = quaternion_of_rows(R)
    v = math.sqrt(x * x + y * y + z * z)
    if v == 0.0:
        return 0.0, 0.0, 0.0
    scale = 2.0 * math.atan2(v, w) / v
    return scale * x, scale * y, scale * z


def rotation_vector(R):
    """Return the rotation vector of a rotation matrix (3×3): the shortest, angle in [0, π]."""
    return np.array(rotation_vector_of_rows(np.asarray(R, dtype=float).tolist()))


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


def plux_parts(X):
    """
    Return ``(E, r)`` of Plücker transforms ``X = rot(E) @ xlt(r)`` (the inverse of :func:`plux`).

    ``X`` is ``(..., 6, 6)``; ``E`` ``(..., 3, 3)``, ``r`` ``(..., 3)``: with ``X = [[E, 0],
    [-E [r]x, E]]``, ``[r]x = -E^T X[3:, :3]``.
    """
    X = np.asarray(X, dtype=float)
    E = X[..., :3, :3]
    rx = -np.swapaxes(E, -1, -2) @ X[..., 3:, :3]
    return E, np.stack((rx[..., 2, 1], rx[..., 0, 2], rx[..., 1, 0]), axis=-1)


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


def motion_cross_matrix(v):
    """Return motion cross-product matrices ``v x`` ``(B, 6, 6)`` of ``v`` ``(B, 6)``."""
    w, u = skew(v[:, :3]), skew(v[:, 3:])
    out = np.zeros(v.shape[:-1] + (6, 6))
    out[:, :3, :3] = w
    out[:, 3:, 3:] = w
    out[:, 3:, :3] = u
    return out


def force_cross_matrix(v):
    """Return the force cross-product matrices ``v x*`` ``(B, 6, 6)``: ``-(v x)^T`` (Eq. 2.32)."""
    return -np.swapaxes(motion_cross_matrix(v), -1, -2)


def force_cross_bar(f):
    """
    Return the matrices ``(B, 6, 6)`` of the force ``f`` ``(B, 6)`` with ``crf_bar(f) u = u x* f``.

    ``[[-[n]x, -[f]x], [-[f]x, 0]]`` for ``f = [n; f]``: skew-symmetric.
    """
    n, lin = skew(f[:, :3]), skew(f[:, 3:])
    out = np.zeros(f.shape[:-1] + (6, 6))
    out[:, :3, :3] = -n
    out[:, :3, 3:] = -lin
    out[:, 3:, :3] = -lin
    return out


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


def inertia_problem(inertia):
    """
    Say why a rotational inertia ``(3, 3)`` (symmetric) is not a body's, or return ``''``.

    A body's principal moments are ``>= 0`` and none is larger than the sum of the other two
    (the triangle inequality); both within a rounding tolerance relative to the largest entry.
    """
    scale = max(1.0, float(np.abs(inertia).max()))
    moments = np.linalg.eigvalsh(inertia)
    if moments[0] < -1e-12 * scale:
        return 'is not positive semi-definite (principal moments %s)' % moments.tolist()
    a, b, c = moments
    if c > a + b + 1e-9 * scale:
        return ('breaks the triangle inequality (principal moments %s: the largest exceeds the '
                'sum of the others)' % moments.tolist())
    return ''


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


def parameters_from_spatial(inertia):
    """Ten parameters ``(..., 10)`` of spatial inertias ``(..., 6, 6)`` (Featherstone layout)."""
    inertia = np.asarray(inertia, dtype=float)
    out = np.empty(inertia.shape[:-2] + (10,))
    out[..., 0] = inertia[..., 3, 3]
    out[..., 1] = inertia[..., 2, 4]
    out[..., 2] = inertia[..., 0, 5]
    out[..., 3] = inertia[..., 1, 3]
    out[..., 4:] = inertia[..., (0, 0, 0, 1, 1, 2), (0, 1, 2, 1, 2, 2)]
    return out


def spatial_from_parameters(theta):
    """Spatial inertias ``(..., 6, 6)`` of parameters ``(..., 10)`` (inverse of the above)."""
    theta = np.asarray(theta, dtype=float)
    out = np.zeros(theta.shape[:-1] + (6, 6))
    out[..., :3, :3] = rotational_inertia(theta)
    hx, hy, hz = theta[..., 1], theta[..., 2], theta[..., 3]
    h = np.zeros(theta.shape[:-1] + (3, 3))          # skew(h) = m c x
    h[..., 0, 1], h[..., 0, 2], h[..., 1, 2] = -hz, hy, -hx
    h[..., 1, 0], h[..., 2, 0], h[..., 2, 1] = hz, -hy, hx
    out[..., :3, 3:] = h
    out[..., 3:, :3] = np.swapaxes(h, -1, -2)
    out[..., 3:, 3:] = theta[..., 0, None, None] * np.eye(3)
    return out


def parameter_map(X):
    """
    ``(10, 10)`` ``T`` with ``pi_B = T pi_A`` for one body's parameters in two frames.

    ``X`` is the motion transform from B's coordinates to A's (``v_A = X v_B``); then ``I_B =
    X^T I_A X``, linear in the parameters.
    """
    X = np.asarray(X, dtype=float)
    return np.stack([parameters_from_spatial(X.T @ spatial_from_parameters(e) @ X)
                     for e in np.eye(10)], axis=1)


def rotational_inertia(theta):
    """``(..., 3, 3)`` rotational inertia about the frame origin of parameters ``(..., 10)``."""
    theta = np.asarray(theta, dtype=float)
    ixx, ixy, ixz, iyy, iyz, izz = (theta[..., k] for k in range(4, 10))
    return np.stack([np.stack([ixx, ixy, ixz], -1), np.stack([ixy, iyy, iyz], -1),
                     np.stack([ixz, iyz, izz], -1)], -2)


def pseudo_inertia(theta):
    """
    4x4 pseudo-inertia ``[[Sigma, h], [h^T, m]]`` of parameters ``(..., 10)``.

    ``Sigma = tr(I) / 2 * 1 - I`` is the second moment of the mass distribution; the body is
    physically consistent (a mass distribution could have it) exactly when this is positive
    semi-definite (Wensing, Kim & Slotine, IEEE RA-L 2017).
    """
    theta = np.asarray(theta, dtype=float)
    inertia = rotational_inertia(theta)
    trace = np.trace(inertia, axis1=-2, axis2=-1)
    out = np.zeros(theta.shape[:-1] + (4, 4))
    out[..., :3, :3] = 0.5 * trace[..., None, None] * np.eye(3) - inertia
    out[..., :3, 3] = theta[..., 1:4]
    out[..., 3, :3] = theta[..., 1:4]
    out[..., 3, 3] = theta[..., 0]
    return out


def parameters_from_pseudo(J):
    """Ten parameters ``(..., 10)`` of pseudo-inertias ``(..., 4, 4)`` (inverse of the above)."""
    J = np.asarray(J, dtype=float)
    sigma = J[..., :3, :3]
    inertia = np.trace(sigma, axis1=-2, axis2=-1)[..., None, None] * np.eye(3) - sigma
    out = np.empty(J.shape[:-2] + (10,))
    out[..., 0] = J[..., 3, 3]
    out[..., 1:4] = J[..., :3, 3]
    out[..., 4:] = inertia[..., (0, 0, 0, 1, 1, 2), (0, 1, 2, 1, 2, 2)]
    return out


def consistency_margin(theta):
    """
    Smallest eigenvalue of the pseudo-inertia over its trace, per body: ``>= 0`` is consistent.

    ``theta`` is ``(..., 10)``; a body without mass gives 0.
    """
    J = pseudo_inertia(theta)
    scale = np.maximum(np.trace(J, axis1=-2, axis2=-1), 1e-300)
    return np.linalg.eigvalsh(J)[..., 0] / scale


def link_inertial(theta):
    """
    Mass, centre of mass and inertia about it of parameters ``(10,)`` about a link's origin.

    Returns
    -------
    ``(mass, com (3,), inertia (3, 3))``; a body without mass has its com at the origin.

    """
    theta = np.asarray(theta, dtype=float)
    mass = float(theta[0])
    com = theta[1:4] / mass if mass > 0 else np.zeros(3)
    inertia = rotational_inertia(theta)
    # parallel axes: I_origin = I_com + m (|c|^2 1 - c c^T)
    inertia = inertia - mass * (com @ com * np.eye(3) - np.outer(com, com))
    return mass, com, inertia
