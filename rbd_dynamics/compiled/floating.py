"""
A floating base's torques at one state, in one kernel (:mod:`rbd_dynamics.floating`).

:func:`floating1` does, as ``what`` asks (the ``FB_`` bits of :mod:`.layout`):

1. ``FB_MOTION``: the IMU's reading moved to the base (``base_motion_from_imu``): with the base
   at rest, the link's pose, velocity and classical acceleration relative to the base give
   the base's angular velocity and acceleration, orientation (or odometry's) and proper
   acceleration, and the proper acceleration of the base at rest in that orientation
   (``base_at_rest``).
2. ``FB_MOVING``: the RNEA (Table 5.1) of the state, the base turning and accelerating as
   ``base`` says (gravity in its proper acceleration), with the sensors' wrenches; ``w_base``
   without them (``FB_SENSED``: a second RNEA).
3. ``FB_REST``: the RNEA with the joints and the base at rest, the sensors' wrenches at rest.
4. The contacts' share of what is left of the base wrench, by weighted minimum norm through the
   normal equations ``A Aᵀ y = b`` (6×6, Cholesky), for both states at once, and the joint
   torques less the contacts' ``J_cᵀ λ``.

The NumPy reference is :mod:`rbd_dynamics.floating`; this kernel computes the same numbers.
Where ``A Aᵀ`` is singular to :data:`~.layout.FB_PIVOT` (point contacts on a line) it returns
:data:`~.layout.NOT_POSITIVE` and the caller takes the reference, whose least squares keep what
the contacts can carry. The kernel calls the single-state entry points (``rnea1``,
``jacobian1``, ``pose1``, ``acceleration1``), compiled before it for their own signatures
(:data:`~.warm_up.CALLS`): inlined, their code would cost it a minute of compilation.
"""

import numpy as np

from .algebra import cholesky, cross, quaternion_of, rotate, sub
from .eom import jacobian1
from .frames import acceleration1, pose1
from .jit import eom_layout_of, kernel, layout_of
from .layout import (BAD_SIZES, BASE, BASE_ALPHA, BASE_OMEGA, BASE_ORIENTATION, BASE_PROPER,
                     BASE_REST, BI_JTYPE, FB_ALPHA, FB_GRAVITY, FB_LINK, FB_MOTION, FB_MOVING,
                     FB_ODO_ALPHA, FB_ODO_OMEGA, FB_ODO_ORIENTATION, FB_ODOMETRY, FB_OMEGA,
                     FB_ORIENTATION, FB_PIVOT, FB_PROPER, FB_REST, FB_SENSED, H_NB, H_NQ, H_NV,
                     JT_FLOATING, L_BODY, NOT_POSITIVE, OK)
from .rnea import rnea1


@kernel(inline='always')
def _vector(a, at):
    """``a[at:at + 3]`` of a 1-D array, as a 3-tuple."""
    return a[at], a[at + 1], a[at + 2]


@kernel(inline='always')
def _compose(a, b):
    """Return the quaternion ``a b⁻¹`` (``[x y z w]`` tuples, ``b`` unit) with ``w >= 0``."""
    x1, y1, z1, w1 = a
    x2, y2, z2, w2 = -b[0], -b[1], -b[2], b[3]
    x = w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2
    y = w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2
    z = w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2
    w = w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2
    if w < 0.0:
        return -x, -y, -z, -w
    return x, y, z, w


@kernel(inline='always')
def _base_motion(blob, qf, vf, af, base, link, J, T, acc):
    """
    Write the base's motion (``BASE_*``) of the IMU's reading in ``base`` (``FB_*``).

    ``vf``, ``af``: the joints' rates with the base at rest; ``J``, ``T``, ``acc`` workspace.
    Returns the status of the kernels it calls.
    """
    status = pose1(blob, qf, link, T)
    if status == OK:
        status = jacobian1(blob, qf, 2 * link, J)
    if status == OK:
        status = acceleration1(blob, qf, vf, af, link, acc)
    if status != OK:
        return status
    # relative to the base, in its axes: the link's rotation R (root_T_link's), its origin r,
    # that origin's velocity and classical acceleration, the link's angular velocity and
    # acceleration
    R = (T[0, 0], T[0, 1], T[0, 2], T[1, 0], T[1, 1], T[1, 2], T[2, 0], T[2, 1], T[2, 2])
    r = (T[0, 3], T[1, 3], T[2, 3])
    v_rel = _product(J, 0, vf)
    w_rel = _product(J, 3, vf)
    a_rel, alpha_rel = _vector(acc, 0), _vector(acc, 3)
    if base[FB_ODOMETRY] == 0.0:
        w = sub(rotate(R, _vector(base, FB_OMEGA)), w_rel)
        alpha = sub(sub(rotate(R, _vector(base, FB_ALPHA)), alpha_rel), cross(w, w_rel))
        x, y, z, qw = _compose((base[FB_ORIENTATION], base[FB_ORIENTATION + 1],
                                base[FB_ORIENTATION + 2], base[FB_ORIENTATION + 3]),
                               quaternion_of(R))
    else:
        w, alpha = _vector(base, FB_ODO_OMEGA), _vector(base, FB_ODO_ALPHA)
        x, y, z, qw = base[FB_ODO_ORIENTATION], base[FB_ODO_ORIENTATION + 1], \
            base[FB_ODO_ORIENTATION + 2], base[FB_ODO_ORIENTATION + 3]
    norm = x * x + y * y + z * z + qw * qw
    if not norm > 0.0:  # no orientation (the NumPy path says what is wrong)
        return BAD_SIZES
    wr = cross(w, r)
    proper = sub(sub(sub(rotate(R, _vector(base, FB_PROPER)), cross(alpha, r)),
                     cross(w, (wr[0] + 2.0 * v_rel[0], wr[1] + 2.0 * v_rel[1],
                               wr[2] + 2.0 * v_rel[2]))), a_rel)
    base[BASE_ORIENTATION] = x
    base[BASE_ORIENTATION + 1] = y
    base[BASE_ORIENTATION + 2] = z
    base[BASE_ORIENTATION + 3] = qw
    for k in range(3):
        base[BASE_OMEGA + k] = w[k]
        base[BASE_ALPHA + k] = alpha[k]
        base[BASE_PROPER + k] = proper[k]
    # at rest: the world's up in base coordinates (the last row of the rotation), g long
    gravity = base[FB_GRAVITY]
    base[BASE_REST] = 2.0 * (x * z - y * qw) * gravity / norm
    base[BASE_REST + 1] = 2.0 * (y * z + x * qw) * gravity / norm
    base[BASE_REST + 2] = (1.0 - 2.0 * (x * x + y * y) / norm) * gravity
    return OK


@kernel(inline='always')
def _product(J, at, x):
    """Return rows ``at:at + 3`` of ``J x`` as a 3-tuple."""
    a = b = c = 0.0
    for k in range(x.shape[0]):
        a += J[at, k] * x[k]
        b += J[at + 1, k] * x[k]
        c += J[at + 2, k] * x[k]
    return a, b, c


@kernel(inline='always')
def _solve6(L, y):
    """Solve ``L Lᵀ x = y`` in place (``L`` the lower triangle of a 6×6, ``y`` ``(6,)``)."""
    for i in range(6):
        s = y[i]
        for k in range(i):
            s -= L[i, k] * y[k]
        y[i] = s / L[i, i]
    for i in range(5, -1, -1):
        s = y[i]
        for k in range(i + 1, 6):
            s -= L[k, i] * y[k]
        y[i] = s / L[i, i]


@kernel(inline='always')
def _share(J, nc, rows, weights, tau, y, out, lam, unbalanced, torques):
    """
    Write a state's contact wrenches, unbalanced wrench and joint torques into ``out``.

    ``tau``: the state's RNEA; ``y`` its solution of ``A Aᵀ y = b``.
    """
    nv = J.shape[2]
    for c in range(nc):
        for k in range(rows):
            s = 0.0
            for i in range(6):
                s += J[c, k, i] * y[i]
            out[lam + c * rows + k] = s / weights[c]
    if unbalanced >= 0:
        for i in range(6):
            s = tau[i]
            for c in range(nc):
                for k in range(rows):
                    s -= J[c, k, i] * out[lam + c * rows + k]
            out[unbalanced + i] = s
    for j in range(6, nv):
        s = tau[j]
        for c in range(nc):
            for k in range(rows):
                s -= J[c, k, j] * out[lam + c * rows + k]
        out[torques + j - 6] = s


@kernel()
def floating1(blob, q, qd, qdd, base, what, fext, frest, zero, contacts, point, weights, qf,
              rows, J, T, work, out):
    """
    Compute a floating base's motion and torques at one state, as ``what`` asks.

    Parameters
    ----------
    blob
        the packed model, its first body the floating base.
    q, qd, qdd
        ``(nq - 7,)``, ``(nv - 6,)`` twice: the joints' state, without the base's.
    base
        ``(BASE,)``: the IMU's reading in, the base's motion out (``FB_MOTION``), or in.
    what
        the ``FB_`` bits.
    fext, frest, zero
        ``(nb, 6)`` body forces (packed coordinates): the sensors' at the state and at rest,
        and zeros.
    contacts, point, weights
        ``(nc,)`` the contact links' rows in ``links``; whether they are points (a force, 3
        rows) or surfaces (a wrench, 6); ``(nc,)`` their weights.
    qf, rows, J, T, work
        workspace: ``(nq,)``; ``(7, nv)`` (the velocities, accelerations, accelerations at rest,
        zeros, then three RNEAs' torques); ``(nc + 1, 6, nv)`` the contacts' Jacobians in their
        own frames, then the IMU's; ``(4, 4)``; ``(8, 6)``.
    out
        ``(2 (nv - 6) + 12 + 2 m,)`` (``m`` the contacts' rows): the joint torques, those at
        rest, ``w_base``, the unbalanced wrench, the contact wrenches ``λ`` (one after the
        other), those at rest.

    Returns
    -------
    :data:`OK`, :data:`BAD_SIZES` (nothing computed) or :data:`NOT_POSITIVE` (the contacts'
    ``A Aᵀ`` singular: the base's motion written, no torque).

    """
    layout = layout_of(blob)
    eom = eom_layout_of(blob)
    nb, nq, nv = layout.header[H_NB], layout.header[H_NQ], layout.header[H_NV]
    nc = contacts.shape[0]
    width = 3 if point else 6
    m = width * nc
    n = nv - 6
    if layout.body_ints[0, BI_JTYPE] != JT_FLOATING or q.shape[0] != nq - 7 or \
            qd.shape[0] != n or qdd.shape[0] != n or base.shape[0] != BASE or \
            fext.shape[0] != nb or frest.shape[0] != nb or zero.shape[0] != nb or \
            weights.shape[0] != nc or qf.shape[0] != nq or rows.shape[0] != 7 or \
            rows.shape[1] != nv or J.shape[0] != nc + 1 or J.shape[1] != 6 or \
            J.shape[2] != nv or work.shape[0] != 8 or work.shape[1] != 6 or \
            out.shape[0] != 2 * n + 12 + 2 * m:
        return BAD_SIZES
    links = eom.links
    for c in range(nc):
        if not 0 <= contacts[c] < links.shape[0] or not weights[c] > 0.0:
            return BAD_SIZES
    vf, af, ar, still = rows[0], rows[1], rows[2], rows[3]
    for k in range(nq):
        qf[k] = 0.0 if k < 7 else q[k - 7]
    qf[6] = 1.0
    for k in range(nv):
        vf[k] = 0.0 if k < 6 else qd[k - 6]
        af[k] = 0.0 if k < 6 else qdd[k - 6]
        ar[k] = 0.0
        still[k] = 0.0
    if what & FB_MOTION:
        link = base[FB_LINK]
        if not (0.0 <= link < links.shape[0] and links[np.int64(link), L_BODY] >= 0):
            return BAD_SIZES
        status = _base_motion(blob, qf, vf, af, base, np.int64(link), J[nc], T, work[6])
        if status != OK:
            return status
    g = layout.gravity
    for k in range(3):
        vf[3 + k] = base[BASE_OMEGA + k]
        af[k] = base[BASE_PROPER + k] + g[k]
        af[3 + k] = base[BASE_ALPHA + k]
        ar[k] = base[BASE_REST + k] + g[k]
    moving, rest = what & FB_MOVING, what & FB_REST
    if not (moving or rest):
        return OK
    tau, bare, tau_rest = rows[4], rows[5], rows[6]
    if moving:
        if rnea1(blob, qf, vf, af, fext, tau) != OK:
            return BAD_SIZES
        if what & FB_SENSED:
            if rnea1(blob, qf, vf, af, zero, bare) != OK:
                return BAD_SIZES
            for k in range(6):
                out[2 * n + k] = bare[k]
        else:
            for k in range(6):
                out[2 * n + k] = tau[k]
    if rest and rnea1(blob, qf, still, ar, frest, tau_rest) != OK:
        return BAD_SIZES
    if nc == 0:
        for j in range(nv):
            if moving:
                out[j - 6 if j >= 6 else 2 * n + 6 + j] = tau[j]
            if rest and j >= 6:
                out[n + j - 6] = tau_rest[j]
        return OK
    for c in range(nc):
        if jacobian1(blob, qf, 2 * contacts[c] + 1, J[c]) != OK:
            return BAD_SIZES
    # A A^T = sum_c J_c,base^T J_c,base / w_c (lower triangle), and b of both states
    for i in range(6):
        for j in range(i + 1):
            s = 0.0
            for c in range(nc):
                for k in range(width):
                    s += J[c, k, i] * J[c, k, j] / weights[c]
            work[i, j] = s
        work[6, i] = tau[i] if moving else 0.0
        work[7, i] = tau_rest[i] if rest else 0.0
    if not cholesky(work, 6, FB_PIVOT):
        return NOT_POSITIVE
    lam = 2 * n + 12
    if moving:
        _solve6(work, work[6])
        _share(J, nc, width, weights, tau, work[6], out, lam, 2 * n + 6, 0)
    if rest:
        _solve6(work, work[7])
        _share(J, nc, width, weights, tau_rest, work[7], out, lam + m, -1, n)
    return OK


#: The state kernels the entry point calls (none but the entry points of :data:`CALLS`).
STATE_KERNELS = ()
