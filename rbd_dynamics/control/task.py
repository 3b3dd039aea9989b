"""
The task-space laws: Cartesian impedance and operational-space control of one link.

Arrays in, torques out, no ROS; the node's joint-space law (:mod:`.law`) sits beside it. With
``e`` the pose error, ``ė`` the twist error, ``J`` the link's Jacobian (``frame='world'``,
linear first), ``Λ = (J M⁻¹ Jᵀ)⁻¹`` and ``C q̇ + g`` from the model (payloads and measured
wrenches included, as :func:`~rbd_dynamics.rnea` takes them):

- ``impedance``: ``τ = Jᵀ (K e + D ė) + C q̇ + g + τ_null``;
- ``operational_space``: ``τ = Jᵀ Λ (ẍ_d + K e + D ė − J̇ q̇) + C q̇ + g + Nᵀ τ_null``, ``N`` the
  dynamically consistent null-space projector ``I − M⁻¹ Jᵀ Λ J``;

and ``τ_null = k_n (q_posture − q) − 2 √k_n q̇``. The caller adds the drive's friction.

**The pose error** is the position error ``p_d − p`` and the rotation vector of
``R_d Rᵀ``, both in root axes. The rotation comes from the quaternion of ``R_d Rᵀ`` with a
non-negative scalar part: the shortest rotation, so that an error just past ±π does not turn
the long way round (it turns the other way, by less than π).

**Λ where J M⁻¹ Jᵀ loses rank.** ``A = J M⁻¹ Jᵀ`` (6×6, symmetric positive semi-definite)
is inverted on its eigenvectors, each eigenvalue ``λ`` as ``λ / (λ² + μ²)`` with
``μ² = μ₀² (1 − (λ/λ₀)²)`` below ``λ₀`` and 0 above (:data:`DAMPING_THRESHOLD` ``λ₀``,
:data:`DAMPING` ``μ₀``, in the units of ``A``: the inverse of an effective mass): full
inverse away from a singularity, fading continuously into a damped one near it, and 0 in a
direction the joints cannot move the link at all. A link whose path has fewer than six joints
gets the components it can reach; :func:`reachable` says which.
"""

import math

import numpy as np

from ..dynamics import rnea
from ..eom import jacobian, mass_matrix
from ..frames import link_acceleration, link_pose
from ..spatial import quaternion_to_matrix

#: The task-space laws.
MODES = ('impedance', 'operational_space')
#: Eigenvalue of ``J M⁻¹ Jᵀ`` [1/kg or 1/(kg m²)] below which Λ's inverse is damped.
DAMPING_THRESHOLD = 1e-2
#: The damping at a zero eigenvalue, in the same units.
DAMPING = 1e-2


def quaternion_matrix(quaternion):
    """
    Return the rotation matrix of a unit quaternion ``[x, y, z, w]``.

    Raises
    ------
    ValueError
        a quaternion that is not finite or not of unit length (within 1e-6).

    """
    quaternion = np.asarray(quaternion, dtype=float).reshape(-1)
    norm = float(np.linalg.norm(quaternion)) if quaternion.shape == (4,) else math.nan
    if not (math.isfinite(norm) and abs(norm - 1.0) <= 1e-6):
        raise ValueError('the orientation must be a unit quaternion [x, y, z, w], got %s '
                         '(norm %.6g)' % (quaternion.tolist(), norm))
    return quaternion_to_matrix(quaternion)


def rotation_vector(R):
    """Return the rotation vector of ``R`` (3×3), the shortest rotation (angle in [0, π])."""
    # the quaternion of R (Shepperd's method: the largest of its four squares first)
    trace = R[0, 0] + R[1, 1] + R[2, 2]
    squares = (1 + trace, 1 + 2 * R[0, 0] - trace, 1 + 2 * R[1, 1] - trace,
               1 + 2 * R[2, 2] - trace)
    k = int(np.argmax(squares))
    s = 2.0 * math.sqrt(max(squares[k], 0.0))
    if k == 0:
        w, x, y, z = s / 4, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, \
            (R[1, 0] - R[0, 1]) / s
    elif k == 1:
        w, x, y, z = (R[2, 1] - R[1, 2]) / s, s / 4, (R[0, 1] + R[1, 0]) / s, \
            (R[0, 2] + R[2, 0]) / s
    elif k == 2:
        w, x, y, z = (R[0, 2] - R[2, 0]) / s, (R[0, 1] + R[1, 0]) / s, s / 4, \
            (R[1, 2] + R[2, 1]) / s
    else:
        w, x, y, z = (R[1, 0] - R[0, 1]) / s, (R[0, 2] + R[2, 0]) / s, \
            (R[1, 2] + R[2, 1]) / s, s / 4
    if w < 0.0:  # the shortest rotation: the quaternion with a non-negative scalar part
        w, x, y, z = -w, -x, -y, -z
    v = math.sqrt(x * x + y * y + z * z)
    if v == 0.0:
        return np.zeros(3)
    return 2.0 * math.atan2(v, w) / v * np.array([x, y, z])


def pose_error(T, position, quaternion):
    """
    Return the pose error ``(6,)`` of a link at ``T`` (4×4) from a desired pose.

    Position error ``position − p`` [m] then the rotation vector of ``R_d Rᵀ`` [rad], both in
    the root link's axes.
    """
    R_d = quaternion_matrix(quaternion)
    e = np.empty(6)
    e[:3] = np.asarray(position, dtype=float) - T[:3, 3]
    e[3:] = rotation_vector(R_d @ T[:3, :3].T)
    return e


def damped_inverse(A, threshold=DAMPING_THRESHOLD, damping=DAMPING):
    """Return ``A``'s inverse, damped where an eigenvalue falls below ``threshold``."""
    lam, V = np.linalg.eigh(0.5 * (A + A.T))
    lam = np.maximum(lam, 0.0)
    mu2 = np.where(lam < threshold, damping ** 2 * (1.0 - (lam / threshold) ** 2), 0.0)
    with np.errstate(divide='ignore', invalid='ignore'):
        gain = np.where(lam + mu2 > 0.0, lam / (lam ** 2 + mu2), 0.0)
    return (V * gain) @ V.T


def reachable(J, tol=1e-9):
    """Return which of the six components ``J`` (6×nv) moves at all (its non-zero rows)."""
    return np.abs(J).max(axis=1) > tol * max(1.0, np.abs(J).max())


class TaskResult:
    """
    One evaluation of a task-space law.

    Attributes
    ----------
    torque
        ``(nv,)`` joint torques (the drive's friction not included), model order.
    error
        ``(6,)`` pose error (position [m], rotation vector [rad]), root axes.
    twist_error
        ``(6,)`` ``ė``, root axes.
    jacobian
        ``(6, nv)`` the link's Jacobian.

    """

    __slots__ = ('torque', 'error', 'twist_error', 'jacobian')

    def __init__(self, torque, error, twist_error, J):
        self.torque, self.error, self.twist_error, self.jacobian = torque, error, twist_error, J


def task_torques(model, q, qd, link, position, quaternion, mode='impedance', stiffness=None,
                 damping=None, twist=None, acceleration=None, nullspace_stiffness=0.0,
                 posture=None, f_ext=None, armature=None):
    """
    Evaluate a task-space law at the measured state (see the module docstring).

    Parameters
    ----------
    model
        the model.
    q, qd
        ``(nq,)`` and ``(nv,)`` measured positions and velocities, model order.
    link
        the controlled link.
    position, quaternion
        the desired pose: ``(3,)`` origin [m] and unit quaternion ``[x, y, z, w]``, root frame.
    mode
        one of :data:`MODES`.
    stiffness, damping
        ``(6,)`` ``K`` and ``D`` (N/m ×3, N m/rad ×3; N s/m, N m s/rad); ``damping`` ``None``:
        ``2 √K``.
    twist, acceleration
        ``(6,)`` desired twist and (operational space) acceleration, linear first, root axes;
        ``None``: zero.
    nullspace_stiffness, posture
        ``k_n`` [N m/rad] and ``(nq,)`` ``q_posture`` (``None``: no null-space term); the
        posture term needs one position per velocity (no spherical or floating joint).
    f_ext
        measured wrenches, as :func:`~rbd_dynamics.rnea` takes them.
    armature
        ``(nv,)`` added to the mass matrix's diagonal (the drive's), or ``None``.

    Returns
    -------
    :class:`TaskResult`

    """
    if mode not in MODES:
        raise ValueError('mode must be one of %s, got %r' % (', '.join(MODES), mode))
    q = np.asarray(q, dtype=float)
    qd = np.asarray(qd, dtype=float)
    K = np.asarray(stiffness if stiffness is not None else [600.0] * 3 + [30.0] * 3,
                   dtype=float)
    D = 2.0 * np.sqrt(K) if damping is None or len(damping) == 0 else \
        np.asarray(damping, dtype=float)
    J = jacobian(model, q, link)
    e = pose_error(link_pose(model, q, link), position, quaternion)
    desired_twist = np.zeros(6) if twist is None else np.asarray(twist, dtype=float)
    e_dot = desired_twist - J @ qd
    bias = rnea(model, q, qd, np.zeros(model.nv), f_ext)  # C qd + g, wrenches included
    null = np.zeros(model.nv)
    if nullspace_stiffness > 0.0 and posture is not None:
        if model.nq != model.nv:
            raise ValueError('a posture needs one position per velocity; this model has '
                             'spherical or floating joints')
        null = nullspace_stiffness * (np.asarray(posture, dtype=float) - q) \
            - 2.0 * math.sqrt(nullspace_stiffness) * qd
    if mode == 'impedance':
        tau = J.T @ (K * e + D * e_dot) + bias + null
        return TaskResult(tau, e, e_dot, J)
    M = mass_matrix(model, q)
    if armature is not None:
        M = M + np.diag(np.asarray(armature, dtype=float))
    M_inv_Jt = np.linalg.solve(M, J.T)
    Lam = damped_inverse(J @ M_inv_Jt)
    desired_acc = np.zeros(6) if acceleration is None else np.asarray(acceleration, dtype=float)
    jdot_qd = link_acceleration(model, q, qd, np.zeros(model.nv), link)
    force = Lam @ (desired_acc + K * e + D * e_dot - jdot_qd)
    # N^T = I - J^T Λ J M^-1: the null-space torque leaves the link's acceleration alone
    null_projected = null - J.T @ (Lam @ (M_inv_Jt.T @ null))
    tau = J.T @ force + bias + null_projected
    return TaskResult(tau, e, e_dot, J)
