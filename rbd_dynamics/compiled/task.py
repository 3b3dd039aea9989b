"""
The task-space laws of :mod:`rbd_dynamics.control.task` at one state, in one kernel.

:func:`task1` computes the link's Jacobian (root axes) and pose, the mass matrix where the
law needs ``Λ`` (operational space, and impedance with a posture term) and ``J̇ q̇`` for
operational space, calling the entry points of :mod:`.eom` and :mod:`.frames`, then the
law's algebra: the pose error, ``M⁻¹ Jᵀ`` by a Cholesky factorisation of ``M`` (with the
drive's armature), ``Λ`` from the eigen-decomposition of ``J M⁻¹ Jᵀ`` by cyclic Jacobi
rotations (6×6; converged to rounding), each eigenvalue inverted or damped as
:func:`rbd_dynamics.control.task.damped_inverse` does, and the torques. The NumPy reference is
``rbd_dynamics.control.task``'s law; this kernel computes the same numbers.

The law's constants and desired values come packed in ``gains`` (:data:`~.layout.G_MODE` and
the other offsets of :mod:`.layout`), so that a call passes few arrays. ``C q̇ + g``
(``bias``) comes from the caller, which has it from the RNEA with the measured wrenches.
"""

import math

from .algebra import cholesky, quaternion_of
from .eom import jacobian1, mass1
from .frames import acceleration1, pose1
from .jit import eom_layout_of, kernel, layout_of
from .layout import (BAD_SIZES, G_ACCELERATION, G_D, G_DAMPING, G_K, G_KN, G_MODE, G_POSITION,
                     G_ROTATION, G_THRESHOLD, G_TWIST, GAINS, H_NQ, H_NV, NOT_POSITIVE, OK,
                     TASK_OUT_EXTRA, TASK_WORK_ROWS)

#: The most Jacobi sweeps (6×6 converges in fewer than ten).
_SWEEPS = 50


@kernel(inline='always')
def _pose_error(gains, T, out, at):
    """Write ``p_d − p`` and the rotation vector of ``R_d Rᵀ`` into ``out[at:at + 6]``."""
    for k in range(3):
        out[at + k] = gains[G_POSITION + k] - T[k, 3]
    # R_d R^T, element (i, j) = sum_k R_d[i, k] R[j, k]
    e00 = e01 = e02 = e10 = e11 = e12 = e20 = e21 = e22 = 0.0
    for k in range(3):
        d0, d1, d2 = gains[G_ROTATION + k], gains[G_ROTATION + 3 + k], \
            gains[G_ROTATION + 6 + k]
        t0, t1, t2 = T[0, k], T[1, k], T[2, k]
        e00 += d0 * t0
        e01 += d0 * t1
        e02 += d0 * t2
        e10 += d1 * t0
        e11 += d1 * t1
        e12 += d1 * t2
        e20 += d2 * t0
        e21 += d2 * t1
        e22 += d2 * t2
    # the shortest rotation (w >= 0); not a rotation: no error rather than a division by zero
    x, y, z, w = quaternion_of((e00, e01, e02, e10, e11, e12, e20, e21, e22))
    v = math.sqrt(x * x + y * y + z * z)
    scale = 0.0 if v == 0.0 else 2.0 * math.atan2(v, w) / v
    out[at + 3] = scale * x
    out[at + 4] = scale * y
    out[at + 5] = scale * z


@kernel(inline='always')
def _solve_columns(L, n, J, X):
    """Write ``X = M⁻¹ Jᵀ`` ``(n, 6)`` from ``L`` (``M = L Lᵀ``) into the first ``n`` rows."""
    for c in range(6):
        for i in range(n):  # L y = J[c]
            s = J[c, i]
            for k in range(i):
                s -= L[i, k] * X[k, c]
            X[i, c] = s / L[i, i]
        for i in range(n - 1, -1, -1):  # L^T x = y
            s = X[i, c]
            for k in range(i + 1, n):
                s -= L[k, i] * X[k, c]
            X[i, c] = s / L[i, i]


@kernel(inline='always')
def _jacobi(work, a, v):
    """
    Diagonalise the symmetric 6×6 in rows ``a``.. of ``work``, eigenvectors into rows ``v``...

    Cyclic Jacobi rotations until the off-diagonal part is below rounding of the whole.
    """
    total = 0.0
    for i in range(6):
        for j in range(6):
            total += work[a + i, j] * work[a + i, j]
            work[v + i, j] = 1.0 if i == j else 0.0
    for _ in range(_SWEEPS):
        off = 0.0
        for i in range(6):
            for j in range(i + 1, 6):
                off += work[a + i, j] * work[a + i, j]
        if off <= 1e-32 * total:
            return
        for p in range(5):
            for q in range(p + 1, 6):
                apq = work[a + p, q]
                if apq == 0.0:
                    continue
                theta = (work[a + q, q] - work[a + p, p]) / (2.0 * apq)
                t = 1.0 / (abs(theta) + math.sqrt(theta * theta + 1.0))
                if theta < 0.0:
                    t = -t
                c = 1.0 / math.sqrt(t * t + 1.0)
                s = t * c
                for k in range(6):  # A J, V J: the columns p and q
                    x, y = work[a + k, p], work[a + k, q]
                    work[a + k, p] = c * x - s * y
                    work[a + k, q] = s * x + c * y
                    x, y = work[v + k, p], work[v + k, q]
                    work[v + k, p] = c * x - s * y
                    work[v + k, q] = s * x + c * y
                for k in range(6):  # J^T (A J): the rows p and q
                    x, y = work[a + p, k], work[a + q, k]
                    work[a + p, k] = c * x - s * y
                    work[a + q, k] = s * x + c * y


@kernel(inline='always')
def _lambda_times(work, a, v, gains, x, at, out, to):
    """Write ``Λ x[at:at + 6]`` into ``out[to:to + 6]`` (eigenvalues on ``work``'s diagonal)."""
    threshold, damping = gains[G_THRESHOLD], gains[G_DAMPING]
    for k in range(6):
        out[to + k] = 0.0
    for m in range(6):
        lam = work[a + m, m]
        if lam <= 0.0:
            gain = 0.0  # a direction the joints cannot move the link in
        elif lam >= threshold:
            gain = 1.0 / lam
        else:
            ratio = lam / threshold
            gain = lam / (lam * lam + damping * damping * (1.0 - ratio * ratio))
        p = 0.0
        for k in range(6):
            p += work[v + k, m] * x[at + k]
        p *= gain
        for k in range(6):
            out[to + k] += work[v + k, m] * p


@kernel()
def task1(blob, q, qd, link, gains, bias, posture, armature, J, M, work, T, jdot, out):
    """
    Evaluate the task-space law of ``gains`` at one state.

    Parameters
    ----------
    blob
        the packed model.
    q, qd, link
        the state and the link's row in the links (``PackedModel.link_index``).
    gains
        ``(GAINS,)``: the law, its gains and the desired values (see the module's offsets).
    bias, posture, armature
        ``(nv,)``: ``C q̇ + g``, ``q_posture`` (read where ``k_n > 0``; then ``nq == nv``) and
        the diagonal added to ``M``.
    J, M, work, T, jdot
        results and workspace: ``(6, nv)`` the Jacobian; ``(nv, nv)`` (``M``, then its
        factor); ``(nv + TASK_WORK_ROWS, 6)`` (``M⁻¹ Jᵀ``, then ``A`` and its eigenvectors);
        ``(4, 4)`` the pose; ``(6,)`` ``J̇ q̇`` (operational space).
    out
        ``(nv + TASK_OUT_EXTRA,)``: the torques, the pose error, the twist error, then workspace.

    Returns
    -------
    :data:`~.layout.OK`, :data:`~.layout.BAD_SIZES` (nothing computed) or
    :data:`NOT_POSITIVE` (the torques not computed).

    """
    layout = layout_of(blob)
    eom = eom_layout_of(blob)
    nv = layout.header[H_NV]
    k_n = gains[G_KN]
    if q.shape[0] != layout.header[H_NQ] or qd.shape[0] != nv or gains.shape[0] != GAINS or \
            bias.shape[0] != nv or posture.shape[0] != nv or armature.shape[0] != nv or \
            J.shape[0] != 6 or J.shape[1] != nv or M.shape[0] != nv or M.shape[1] != nv or \
            work.shape[0] != nv + TASK_WORK_ROWS or work.shape[1] != 6 or T.shape[0] != 4 or \
            T.shape[1] != 4 or jdot.shape[0] != 6 or out.shape[0] != nv + TASK_OUT_EXTRA or \
            not 0 <= link < eom.links.shape[0] or (k_n > 0.0 and q.shape[0] != nv):
        return BAD_SIZES
    # (the Jacobian's even code: in root axes)
    if jacobian1(blob, q, 2 * link, J) != OK or pose1(blob, q, link, T) != OK:
        return BAD_SIZES
    e, e_dot, scratch, f = nv, nv + 6, nv + 12, nv + 18
    _pose_error(gains, T, out, e)
    for r in range(6):
        s = gains[G_TWIST + r]
        for c in range(nv):
            s -= J[r, c] * qd[c]
        out[e_dot + r] = s
    root = math.sqrt(k_n)
    impedance = gains[G_MODE] == 0.0
    if impedance:  # tau = J^T (K e + D ė) + C q̇ + g + N^T τ_null
        for r in range(6):
            out[scratch + r] = gains[G_K + r] * out[e + r] + gains[G_D + r] * out[e_dot + r]
        for c in range(nv):
            s = bias[c]
            for r in range(6):
                s += J[r, c] * out[scratch + r]
            out[c] = s
        if k_n == 0.0:
            return OK
    if mass1(blob, q, M) != OK:
        return BAD_SIZES
    for c in range(nv):
        M[c, c] += armature[c]
    if not cholesky(M, nv, 0.0):
        return NOT_POSITIVE
    _solve_columns(M, nv, J, work)
    a, v = nv, nv + 6
    for i in range(6):  # A = J M^-1 J^T (the lower triangle, mirrored)
        for j in range(i + 1):
            s = 0.0
            for c in range(nv):
                s += J[i, c] * work[c, j]
            work[a + i, j] = s
            work[a + j, i] = s
    _jacobi(work, a, v)
    if not impedance:
        # J̇ q̇: the classical acceleration at zero joint acceleration
        if acceleration1(blob, q, qd, layout.zero_v, link, jdot) != OK:
            return BAD_SIZES
        for r in range(6):
            out[scratch + r] = gains[G_K + r] * out[e + r] + gains[G_D + r] * out[e_dot + r] \
                - jdot[r] + gains[G_ACCELERATION + r]
        # f = Λ (ẍ_d + K e + D ė − J̇ q̇)
        _lambda_times(work, a, v, gains, out, scratch, out, f)
        for c in range(nv):
            s = bias[c]
            for r in range(6):
                s += J[r, c] * out[f + r]
            out[c] = s
    if k_n > 0.0:
        # N^T τ_null = τ_null − J^T Λ (M^-1 J^T)^T τ_null: no acceleration of the link, and at
        # rest no wrench on it
        for r in range(6):
            s = 0.0
            for c in range(nv):
                s += work[c, r] * (k_n * (posture[c] - q[c]) - 2.0 * root * qd[c])
            out[scratch + r] = s
        _lambda_times(work, a, v, gains, out, scratch, out, f)
        for c in range(nv):
            s = k_n * (posture[c] - q[c]) - 2.0 * root * qd[c]
            for r in range(6):
                s -= J[r, c] * out[f + r]
            out[c] += s
    return OK
