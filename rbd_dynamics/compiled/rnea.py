"""
The RNEA's kernels (Featherstone Table 5.1): one state, gravity alone, a body's force, batches.

The single-state entry points (:func:`rnea1`, :func:`gravity1`, :func:`body_force1`) check
sizes themselves and return a status, :data:`~.layout.OK` or :data:`~.layout.BAD_SIZES`.
Static states have their own kernel: with zero velocity and acceleration every angular
acceleration is zero, so the forward pass carries only the linear acceleration.
"""


from .algebra import (add, cross, dot, force_cross, inertia_product, put3, rotate, row3, row9,
                      scale, sub, transpose_force_transform)
from .jit import kernel, layout_of
from .kinematics import (add_joint_motion, joint_transform, parent_motion, positions, rates,
                         store_motion)
from .layout import (B_SA, B_SL, BAD_SIZES, BI_JTYPE, BI_PARENT, BI_V_START, H_NB, H_NQ, H_NV,
                     IN_H, IN_MASS, JT_FLOATING, MODE_STATIC, OK, ONE_DOF, W_AL, W_E, W_F, W_N,
                     W_R)


# The RNEA's forward pass for body ``i`` (Table 5.1) is these three calls. Each is inlined
# on its own: numba older than 0.57 inlines a function by copying its IR one statement at
# a time, each copy with the function's whole scope, so its cost grows with the square of
# the function's size (inlined calls included). The forward pass inlined as one function
# (some 1,250 statements) took more than half of rnea1's compilation on numba 0.55; in
# small pieces, a small part. Compiled, both forms are the same code.
#
# The state kernels take the blob and read its layout themselves: a call passes every field of
# every array it is given, and the layout's views as arguments (some 140 words) cost a 7-DoF
# arm's rnea1 about a tenth of its time, a 32-DoF tree's more.


@kernel()
def _rnea_state(blob, q, qd, qdd, fext, tau):
    """RNEA for one state; body forces stay in the work rows (columns ``W_N``, ``W_F``)."""
    layout = layout_of(blob)
    inertia, wb = layout.inertia, layout.work
    positions(layout, q)
    rates(layout, qd, qdd)
    for i in range(layout.header[H_NB]):
        E, r, nj = joint_transform(layout, i)
        w, v, aw, al = parent_motion(layout, i, E, r)
        w, v, aw, al = add_joint_motion(layout, i, nj, w, v, aw, al)
        store_motion(layout, i, w, v, aw, al)
        # f = I a + v x* I v - f_ext (Eq. 5.9)
        n, f = inertia_product(inertia, i, 0, aw, al)
        mw, mv = inertia_product(inertia, i, 0, w, v)
        bn, bf = force_cross(w, v, mw, mv)
        put3(wb, i, W_N, sub(add(n, bn), row3(fext, i, 0)))
        put3(wb, i, W_F, sub(add(f, bf), row3(fext, i, 3)))
    for i in range(layout.header[H_NB] - 1, -1, -1):  # backward pass
        n, f = row3(wb, i, W_N), row3(wb, i, W_F)
        joint_torque(layout, i, n, f)
        carry_force(layout, i, n, f)
    fold_torques(layout, tau)


@kernel()
def _static_state(blob, q, fext, tau):
    """
    Run the forward pass of a static state.

    RNEA with zero velocity and acceleration: only linear accelerations (gravity)
    propagate, ``n = h x a``, ``f = m a`` (``a`` linear).
    """
    layout = layout_of(blob)
    bi, inertia, wb = layout.body_ints, layout.inertia, layout.work
    g = layout.gravity
    positions(layout, q)
    for i in range(layout.header[H_NB]):
        p = bi[i, BI_PARENT]
        pal = (-g[0], -g[1], -g[2]) if p < 0 else row3(wb, p, W_AL)
        E, r, nj = joint_transform(layout, i)
        al = rotate(E, pal)
        put3(wb, i, W_AL, al)
        put3(wb, i, W_N, sub(cross(row3(inertia, i, IN_H), al), row3(fext, i, 0)))
        put3(wb, i, W_F, sub(scale(inertia[i, IN_MASS], al), row3(fext, i, 3)))
    for i in range(layout.header[H_NB] - 1, -1, -1):  # backward pass
        n, f = row3(wb, i, W_N), row3(wb, i, W_F)
        joint_torque(layout, i, n, f)
        carry_force(layout, i, n, f)
    fold_torques(layout, tau)


# The backward pass (Table 5.1), in the state kernels' own loop over the bodies: three
# small inline functions rather than one large one (see _rnea_state on numba's cost of
# inlining).


@kernel(inline='always')
def joint_torque(layout, i, n, f):
    """``tau_i = S_i^T f_i`` into ``tauf``, for the force ``(n, f)`` of body ``i``."""
    bi, tauf = layout.body_ints, layout.tauf
    vi = bi[i, BI_V_START]
    jt = bi[i, BI_JTYPE]
    if jt <= ONE_DOF:
        tauf[vi] = layout.body[i, B_SA] * n[2] + layout.body[i, B_SL] * f[2]
    else:
        S = layout.subspace
        for k in range(vi, vi + (6 if jt == JT_FLOATING else 3)):
            tauf[k] = dot(row3(S, k, 0), n) + dot(row3(S, k, 3), f)


@kernel(inline='always')
def carry_force(layout, i, n, f):
    """``f_parent += X^T f_i`` for the force ``(n, f)`` of body ``i``."""
    wb = layout.work
    p = layout.body_ints[i, BI_PARENT]
    if p >= 0:
        pn, pf = transpose_force_transform(row9(wb, i, W_E), row3(wb, i, W_R), n, f)
        put3(wb, p, W_N, add(row3(wb, p, W_N), pn))
        put3(wb, p, W_F, add(row3(wb, p, W_F), pf))


@kernel(inline='always')
def fold_torques(layout, tau):
    """``tau`` from ``tauf``: mimic joints folded into their masters."""
    tauf = layout.tauf
    for k in range(tau.shape[0]):
        tau[k] = 0.0
    src, mult = layout.v_src, layout.v_mult
    for k in range(tauf.shape[0]):
        tau[src[k]] += mult[k] * tauf[k]


@kernel()
def rnea1(blob, q, qd, qdd, fext, tau):
    """One state: :data:`OK`, or :data:`BAD_SIZES` (nothing computed)."""
    layout = layout_of(blob)
    hdr = layout.header
    nv = hdr[H_NV]
    if q.shape[0] != hdr[H_NQ] or qd.shape[0] != nv or qdd.shape[0] != nv or \
            tau.shape[0] != nv or fext.shape[0] != hdr[H_NB]:
        return BAD_SIZES
    _rnea_state(blob, q, qd, qdd, fext, tau)
    return OK


@kernel()
def gravity1(blob, q, fext, tau):
    """One static state (zero velocity and acceleration): :data:`OK` or :data:`BAD_SIZES`."""
    layout = layout_of(blob)
    hdr = layout.header
    if q.shape[0] != hdr[H_NQ] or tau.shape[0] != hdr[H_NV] or fext.shape[0] != hdr[H_NB]:
        return BAD_SIZES
    _static_state(blob, q, fext, tau)
    return OK


@kernel()
def body_force1(blob, q, qd, qdd, fext, static, body, out):
    """
    Compute the force that carries ``body`` and everything beyond it.

    One state (static: ``qd``, ``qdd`` unused); ``out`` gets the force ``[n, f]`` of
    ``body`` after the backward pass, everything beyond it included. Returns :data:`OK`
    or :data:`BAD_SIZES`.
    """
    layout = layout_of(blob)
    hdr = layout.header
    nv = hdr[H_NV]
    if q.shape[0] != hdr[H_NQ] or fext.shape[0] != hdr[H_NB] or out.shape[0] != 6 or \
            not 0 <= body < hdr[H_NB]:
        return BAD_SIZES
    if static:
        _static_state(blob, q, fext, layout.spare)
    else:
        if qd.shape[0] != nv or qdd.shape[0] != nv:
            return BAD_SIZES
        _rnea_state(blob, q, qd, qdd, fext, layout.spare)
    for k in range(6):
        out[k] = layout.work[body, W_N + k]
    return OK


@kernel(inline='always')
def _batch_state(blob, q, qd, qdd, fext, tau, mode, s):
    """State ``s`` of a batch; ``fext`` is ``(B, nb, 6)`` or ``(1, nb, 6)`` (shared)."""
    f = fext[0 if fext.shape[0] == 1 else s]
    if mode == MODE_STATIC:
        _static_state(blob, q[s], f, tau[s])
    else:
        _rnea_state(blob, q[s], qd[s], qdd[s], f, tau[s])


@kernel(nogil=True)
def serial_batch(blob, q, qd, qdd, fext, tau, mode, start, stop):
    """
    Run the single-state kernels over the states ``start:stop`` of ``q (B, nq)``.

    Without the GIL: ranges run on threads side by side (:func:`~.batch.rnea_batch`), each on
    its own copy of the blob (and so of the workspace).
    """
    for s in range(start, stop):
        _batch_state(blob, q, qd, qdd, fext, tau, mode, s)


#: The state kernels the entry points and the batch kernel call (frozen by the warm-up).
STATE_KERNELS = (_rnea_state, _static_state)
