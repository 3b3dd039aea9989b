"""
The task-space laws: Cartesian impedance and operational-space control of one link.

Arrays in, torques out, no ROS; the node's joint-space law (:mod:`.law`) sits beside it. With
``e`` the pose error, ``ė`` the twist error, ``J`` the link's Jacobian (``frame='world'``,
linear first), ``Λ = (J M⁻¹ Jᵀ)⁻¹`` and ``C q̇ + g`` from the model (payloads and measured
wrenches included, as :func:`~rbd_dynamics.rnea` takes them):

- ``impedance``: ``τ = Jᵀ (K e + D ė) + C q̇ + g + Nᵀ τ_null``;
- ``operational_space``: ``τ = Jᵀ Λ (ẍ_d + K e + D ė − J̇ q̇) + C q̇ + g + Nᵀ τ_null``;

``N`` the dynamically consistent null-space projector ``I − M⁻¹ Jᵀ Λ J`` and ``τ_null = k_n
(q_posture − q) − 2 √k_n q̇``. The caller adds the drive's friction. The projection takes out
of the posture term every part that would act at the link: the posture neither accelerates the
link nor, at rest, pushes on it, so a wrench ``F`` at the link displaces it by ``K⁻¹ F`` in
impedance whatever ``k_n`` (exactly where ``Λ`` is not damped, below). ``M`` includes the
drive's armature where the caller gives it; the kinematic projector ``I − J⁺ J`` would give the
same statics, and this one also leaves the link's acceleration alone and shares the
operational-space law's ``Λ``.

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

from ..compiled.layout import (G_D, G_DAMPING, G_HEAD, G_K, G_KN, G_MODE, G_THRESHOLD, GAINS,
                               OK, TASK_OUT_EXTRA, TASK_WORK_ROWS)
from ..dynamics import rnea
from ..eom import jacobian, mass_matrix
from ..frames import link_acceleration, link_pose
from ..spatial import quaternion_to_matrix, rotation_vector_of_rows

#: The task-space laws.
MODES = ('impedance', 'operational_space')
#: ``K`` when none is given: N/m ×3, N m/rad ×3.
DEFAULT_STIFFNESS = (600.0, 600.0, 600.0, 30.0, 30.0, 30.0)
#: The compiled kernels the laws call (:func:`rbd_dynamics.compiled.prepare`): the law's own
#: kernel, the pose the law holds when it starts, and what the NumPy path of a model with a
#: massless joint calls (so that no call waits for a build).
KERNELS = ('task_law', 'link_pose', 'jacobian', 'mass_matrix', 'link_acceleration')
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
    norm = math.nan
    if quaternion.shape == (4,):
        x, y, z, w = quaternion.tolist()
        norm = math.sqrt(x * x + y * y + z * z + w * w)
    if not (math.isfinite(norm) and abs(norm - 1.0) <= 1e-6):
        raise ValueError('the orientation must be a unit quaternion [x, y, z, w], got %s '
                         '(norm %.6g)' % (quaternion.tolist(), norm))
    return quaternion_to_matrix(quaternion)


def pose_error(T, position, quaternion):
    """
    Return the pose error ``(6,)`` of a link at ``T`` (4×4) from a desired pose.

    Position error ``position − p`` [m] then the rotation vector of ``R_d Rᵀ`` [rad], both in
    the root link's axes.
    """
    return _pose_error(T, np.asarray(position, dtype=float), quaternion_matrix(quaternion))


def _pose_error(T, position, R_d):
    """:func:`pose_error` with the desired orientation as its rotation matrix ``R_d``."""
    e = np.empty(6)
    e[:3] = position - T[:3, 3]
    e[3:] = rotation_vector_of_rows((R_d @ T[:3, :3].T).tolist())
    return e


def damped_inverse(A, threshold=DAMPING_THRESHOLD, damping=DAMPING):
    """Return the inverse of symmetric ``A``, damped where an eigenvalue is below ``threshold``."""
    lam, V = np.linalg.eigh(A)  # (reads one triangle: A's rounding asymmetry does not matter)
    gain = []
    for value in lam.tolist():
        if value >= threshold:
            gain.append(1.0 / value)
        elif value <= 0.0:
            gain.append(0.0)  # a direction the joints cannot move the link in
        else:
            gain.append(value / (value * value
                                 + damping * damping * (1.0 - (value / threshold) ** 2)))
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
    K = np.asarray(DEFAULT_STIFFNESS if stiffness is None else stiffness, dtype=float)
    D = 2.0 * np.sqrt(K) if damping is None or len(damping) == 0 else \
        np.asarray(damping, dtype=float)
    if nullspace_stiffness > 0.0 and posture is not None and model.nq != model.nv:
        raise ValueError('a posture needs one position per velocity; this model has '
                         'spherical or floating joints')
    k_n = float(nullspace_stiffness)
    return _law(model, np.asarray(q, dtype=float), np.asarray(qd, dtype=float), link,
                np.asarray(position, dtype=float), quaternion_matrix(quaternion), mode, K, D,
                _vector(twist), _vector(acceleration), k_n, _vector(posture), f_ext,
                _vector(armature))


def _vector(values):
    """Return ``values`` as a float array, or ``None``."""
    return None if values is None else np.asarray(values, dtype=float)


def law_head(mode, K, D, k_n):
    """Return the first :data:`~rbd_dynamics.compiled.layout.G_HEAD` of the kernel's ``gains``."""
    head = np.empty(G_HEAD)
    head[G_MODE] = MODES.index(mode)
    head[G_THRESHOLD] = DAMPING_THRESHOLD
    head[G_DAMPING] = DAMPING
    head[G_K:G_K + 6] = K
    head[G_D:G_D + 6] = D
    head[G_KN] = k_n
    return head


_ZERO6 = np.zeros(6)


def _compiled_law(packed, q, qd, link, position, R_d, head, twist, acceleration, posture,
                  armature, bias):
    """
    Evaluate the law with the compiled kernel: a :class:`TaskResult`, or ``None``.

    ``None`` where the kernel does not take the arguments (then the NumPy path checks them and
    says what is wrong) or where ``M`` is not positive definite.
    """
    try:
        code = packed.link_index.get(link)
    except TypeError:  # (an unhashable link: the NumPy path says what is wrong)
        return None
    if code is None or not (q.__class__ is np.ndarray and q.dtype == np.float64
                            and qd.__class__ is np.ndarray and qd.dtype == np.float64
                            and (posture is None or posture.dtype == np.float64)
                            and (armature is None or armature.dtype == np.float64)):
        return None
    nv = packed.nv
    gains = np.concatenate((head, position, R_d.reshape(9),
                            _ZERO6 if twist is None else twist,
                            _ZERO6 if acceleration is None else acceleration))
    if gains.shape != (GAINS,):
        return None
    if posture is None:
        gains[G_KN] = 0.0
        posture = qd  # (not read)
    J = np.empty((6, nv))
    out = np.empty(nv + TASK_OUT_EXTRA)
    status = packed.task1(packed.blob, q, qd, code, gains, bias, posture,
                          packed.zero_v if armature is None else armature, J,
                          np.empty((nv, nv)), np.empty((nv + TASK_WORK_ROWS, 6)),
                          np.empty((4, 4)), np.empty(6), out)
    if status != OK:
        return None
    return TaskResult(out[:nv], out[nv:nv + 6], out[nv + 6:nv + 12], J)


def _law(model, q, qd, link, position, R_d, mode, K, D, twist, acceleration, k_n, posture,
         f_ext, armature, head=None, bias=None):
    """
    :func:`task_torques` on checked arguments, the desired orientation as ``R_d`` (3×3).

    ``twist``, ``acceleration``, ``posture`` and ``armature`` float arrays or ``None``;
    ``head`` :func:`law_head` of ``mode``, ``K``, ``D``, ``k_n`` and ``bias`` ``C q̇ + g``
    with ``f_ext``, if already computed. On the compiled path
    (:mod:`rbd_dynamics.compiled.task`) where the model has it.
    """
    if bias is None:
        bias = rnea(model, q, qd, np.zeros(model.nv), f_ext)  # C qd + g, wrenches included
    packed = model.runtime.eom_packed
    if packed is not None:
        result = _compiled_law(packed, q, qd, link, position, R_d,
                               law_head(mode, K, D, k_n) if head is None else head, twist,
                               acceleration, posture, armature, bias)
        if result is not None:
            return result
    J = jacobian(model, q, link)
    e = _pose_error(link_pose(model, q, link), position, R_d)
    e_dot = -(J @ qd)
    if twist is not None:
        e_dot += twist
    null = None
    if k_n > 0.0 and posture is not None:
        null = k_n * (posture - q) - 2.0 * math.sqrt(k_n) * qd
    if mode == 'impedance':
        tau = J.T @ (K * e + D * e_dot) + bias
        if null is not None:
            tau += _projected(null, J, *_inverse_inertias(model, q, J, armature))
        return TaskResult(tau, e, e_dot, J)
    M_inv_Jt, Lam = _inverse_inertias(model, q, J, armature)
    jdot_qd = link_acceleration(model, q, qd, np.zeros(model.nv), link)
    a = K * e + D * e_dot - jdot_qd
    if acceleration is not None:
        a += acceleration
    tau = J.T @ (Lam @ a) + bias
    if null is not None:
        tau += _projected(null, J, M_inv_Jt, Lam)
    return TaskResult(tau, e, e_dot, J)


def _inverse_inertias(model, q, J, armature):
    """Return ``M⁻¹ Jᵀ`` and ``Λ`` (damped where ``J M⁻¹ Jᵀ`` loses rank), armature in ``M``."""
    M = mass_matrix(model, q)
    if armature is not None:
        M.flat[::len(M) + 1] += armature
    try:
        M_inv_Jt = np.linalg.solve(M, J.T)
    except np.linalg.LinAlgError:  # a joint that moves no mass (a link without <inertial>)
        M_inv_Jt = np.linalg.pinv(M) @ J.T
    return M_inv_Jt, damped_inverse(J @ M_inv_Jt)


def _projected(null, J, M_inv_Jt, Lam):
    """
    Return ``Nᵀ τ_null = τ_null − Jᵀ Λ J M⁻¹ τ_null``, the dynamically consistent projection.

    It moves the link not at all (``J M⁻¹ Nᵀ = 0``) and, where ``Λ`` is not damped, ``Jᵀ x +
    Nᵀ y = 0`` only with ``Jᵀ x = 0``: at rest it exerts no wrench at the link, so that a wrench
    ``F`` there is met by the task stiffness alone.
    """
    return null - J.T @ (Lam @ (M_inv_Jt.T @ null))


def _gains(name, values, count):
    """Return ``values`` as ``(6,)`` finite numbers >= 0 (``count`` 0: also empty, ``None``)."""
    values = np.asarray(values, dtype=float).reshape(-1)
    if count == 0 and values.size == 0:
        return None
    if values.shape != (6,) or not (np.isfinite(values).all() and (values >= 0.0).all()):
        raise ValueError('%s must be 6 finite numbers >= 0 (3 linear, then 3 angular)%s, got %s'
                         % (name, ', or empty' if count == 0 else '', values.tolist()))
    return values


class TaskSettings:
    """
    One task-space configuration checked against a model (the node's ``task.*``).

    Attributes
    ----------
    link, mode
        the controlled link and one of :data:`MODES`.
    stiffness, damping
        ``(6,)`` ``K`` and ``D`` (``D``: ``2 √K`` where none is given).
    nullspace_stiffness
        ``k_n`` [N m/rad].
    dof
        the number of independent joint coordinates that move the link.
    note
        ``''``, or why the link cannot be moved in every direction (fewer than six joint
        coordinates on its path): the law then acts on the components they reach.

    """

    __slots__ = ('link', 'mode', 'stiffness', 'damping', 'nullspace_stiffness', 'dof', 'note',
                 '_head')

    def __init__(self, model, link, mode='impedance', stiffness=DEFAULT_STIFFNESS, damping=(),
                 nullspace_stiffness=0.0):
        """
        Check the settings against ``model``.

        Raises
        ------
        ValueError
            an unknown mode or link, gains that are not 6 finite numbers >= 0, a negative
            null-space stiffness or one on a model with spherical or floating joints.

        """
        if mode not in MODES:
            raise ValueError('task.mode: unknown value %r (use %s)' % (mode, ' or '.join(MODES)))
        if link not in model.link_body:
            raise ValueError('task.link %r is not a link of the model (links: %s)'
                             % (link, ', '.join(sorted(model.link_body))))
        self.link = link
        self.mode = mode
        self.stiffness = _gains('task.stiffness', stiffness, 6)
        damping = _gains('task.damping', damping, 0)
        self.damping = 2.0 * np.sqrt(self.stiffness) if damping is None else damping
        k_n = float(nullspace_stiffness)
        if not (math.isfinite(k_n) and k_n >= 0.0):
            raise ValueError('task.nullspace_stiffness must be a finite number >= 0, got %r'
                             % (nullspace_stiffness,))
        if k_n > 0.0 and model.nq != model.nv:
            raise ValueError('task.nullspace_stiffness needs one position per velocity; this '
                             'model has spherical or floating joints')
        self.nullspace_stiffness = k_n
        # the independent coordinates of the joints on the link's path: a mimic joint's are
        # its master's, wherever the master is
        columns = set()
        body = model.link_body[link]
        while body >= 0:
            start = model.v_start[body]
            columns.update(model.v_src[start:start + model.joints[body].nv].tolist())
            body = model.parent[body]
        self.dof = len(columns)
        self.note = '' if self.dof >= 6 else (
            '%s is moved by %d joint coordinate%s (fewer than 6): the law acts on the '
            'components they reach' % (link, self.dof, '' if self.dof == 1 else 's'))
        self._head = law_head(mode, self.stiffness, self.damping, k_n)

    def torques(self, model, q, qd, position, rotation, twist=None, posture=None, f_ext=None,
                armature=None, bias=None):
        """
        Evaluate the law at the measured state (:func:`task_torques` with these settings).

        ``position`` ``(3,)`` and ``rotation`` (3×3) are the desired pose; ``q``, ``qd``,
        ``twist``, ``posture`` and ``armature`` float arrays of their sizes (or ``None``);
        ``bias`` ``C q̇ + g`` with ``f_ext`` where the caller has it already, or ``None``.
        """
        return _law(model, q, qd, self.link, position, rotation, self.mode, self.stiffness,
                    self.damping, twist, None, self.nullspace_stiffness, posture, f_ext,
                    armature, self._head, bias)
