"""
The joint models (jcalc) and the forward pass's pieces: the RNEA's and the equations of motion's.

Body coordinates. The packed model turns the frame of every body with a 1-DoF joint (revolute,
continuous, prismatic, helical) by a constant rotation ``Q`` so that the joint axis becomes the
body's z axis: ``S`` is then ``[0 0 sa 0 0 sl]`` (``sa, sl`` = 1, 0 revolute; 0, 1 prismatic;
1, pitch helical), the joint rotation touches two rows of ``E`` and every product with ``S``
or ``vJ`` is a handful of terms (body coordinates are ours to choose, Featherstone sec. 4.4).
Bodies of multi-DoF joints keep their frame. ``Q`` is folded into the tree transforms and the
inertias once (:class:`~.packed.PackedModel`).
"""

import numpy as np

from .algebra import (add, cross, matmul, motion_cross, motion_transform, put3, put9, rotate,
                      rotate_t, row3, row9, scale, sub, subspace_product)
from .jit import kernel
from .layout import (B_AXIS, B_E1, B_E2, B_ET, B_RT, B_SA, B_SL, BI_JTYPE, BI_PARENT, BI_Q_START,
                     BI_V_START, FLOATING_QUATERNION, JT_FLOATING, JT_PLANAR, JT_PRISMATIC,
                     JT_REVOLUTE, ONE_DOF, W_AL, W_AW, W_E, W_R, W_V, W_W)


# Joint models (jcalc): the transform of each body from its parent, E = EJ Et and
# r = rt + Et^T rJ, with the tree part Et, rt from the body columns.


@kernel()
def axis_rotation(angle, axis):
    """
    Return the coordinate transform of a turn about a unit axis.

    ``R(axis, angle)^T``: the rotation of a turn by ``angle`` about the unit ``axis``,
    as a coordinate transform.
    """
    ax, ay, az = axis
    c = np.cos(angle)
    s = np.sin(angle)
    t = 1.0 - c
    return (c + t * ax * ax, t * ax * ay + s * az, t * ax * az - s * ay,
            t * ax * ay - s * az, c + t * ay * ay, t * ay * az + s * ax,
            t * ax * az + s * ay, t * ay * az - s * ax, c + t * az * az)


@kernel()
def quaternion_rotation(x, y, z, qw):
    """``R(quaternion [x y z w])^T`` (the quaternion need not be normalised)."""
    n = np.sqrt(x * x + y * y + z * z + qw * qw)
    if not n > 1e-9:
        raise ValueError('quaternion [x, y, z, w] must have a finite, non-zero norm')
    x /= n
    y /= n
    z /= n
    qw /= n
    return (1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y + z * qw), 2.0 * (x * z - y * qw),
            2.0 * (x * y - z * qw), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z + x * qw),
            2.0 * (x * z + y * qw), 2.0 * (y * z - x * qw), 1.0 - 2.0 * (x * x + y * y))


@kernel(inline='always')
def one_dof_transform(body, i, jt, x):
    """
    Return ``E``, ``r`` of a body whose 1-DoF joint moves about / along z.

    ``E``, ``r`` of body ``i``, whose joint moves about / along z by ``x``:
    ``E = Rz(x)^T Et`` (two rows turn), ``r = rt + Et^T z sl x``.
    """
    c = s = 0.0
    if jt != JT_PRISMATIC:
        c = np.cos(x)
        s = np.sin(x)
    return turned_transform(body, i, jt, x, c, s)


@kernel(inline='always')
def turned_transform(body, i, jt, x, c, s):
    """
    :func:`one_dof_transform` with the joint's ``c = cos(x)`` and ``s = sin(x)`` given.

    (Not read for a prismatic joint.) For a walk that takes every cosine and sine first: a
    loop without calls keeps its values in registers, where around each call of ``cos`` and
    ``sin`` it saves and reloads them.
    """
    Et = row9(body, i, B_ET)
    rt = row3(body, i, B_RT)
    if jt == JT_PRISMATIC:
        E = Et
    else:
        E = (c * Et[0] + s * Et[3], c * Et[1] + s * Et[4], c * Et[2] + s * Et[5],
             c * Et[3] - s * Et[0], c * Et[4] - s * Et[1], c * Et[5] - s * Et[2],
             Et[6], Et[7], Et[8])
    if jt == JT_REVOLUTE:
        r = rt
    else:
        r = add(rt, scale(body[i, B_SL] * x, (Et[6], Et[7], Et[8])))
    return E, r


@kernel()
def multi_dof_transform(body, S, i, jt, qf, qi, vi):
    """
    Return ``E``, ``r`` and the motion subspace of a multi-DoF joint.

    ``E``, ``r`` and the number of columns of ``S`` of body ``i``, whose spherical,
    floating or planar joint has coordinates ``qf[qi:]``; writes those columns into rows
    ``vi...`` of ``S``.
    """
    zero = (0.0, 0.0, 0.0)
    if jt == JT_PLANAR:  # q = [x y theta]: along e1, along e2, about the axis
        axis = row3(body, i, B_AXIS)
        e1 = row3(body, i, B_E1)
        e2 = row3(body, i, B_E2)
        EJ = axis_rotation(qf[qi + 2], axis)
        rJ = add(scale(qf[qi], e1), scale(qf[qi + 1], e2))
        put3(S, vi, 0, zero)
        put3(S, vi, 3, rotate(EJ, e1))
        put3(S, vi + 1, 0, zero)
        put3(S, vi + 1, 3, rotate(EJ, e2))
        put3(S, vi + 2, 0, axis)
        put3(S, vi + 2, 3, zero)
        nj = 3
    else:
        qo = qi + FLOATING_QUATERNION if jt == JT_FLOATING else qi
        EJ = quaternion_rotation(qf[qo], qf[qo + 1], qf[qo + 2], qf[qo + 3])
        nj = 6 if jt == JT_FLOATING else 3
        for k in range(nj):
            for c in range(6):
                S[vi + k, c] = 0.0
        if jt == JT_FLOATING:  # qd = [v; w] of the child frame
            rJ = (qf[qi], qf[qi + 1], qf[qi + 2])
            for k in range(3):
                S[vi + k, 3 + k] = 1.0
                S[vi + 3 + k, k] = 1.0
        else:  # qd = w
            rJ = zero
            for k in range(3):
                S[vi + k, k] = 1.0
    Et = row9(body, i, B_ET)
    return matmul(EJ, Et), add(row3(body, i, B_RT), rotate_t(Et, rJ)), nj


# The forward pass's pieces (Table 5.1), one body at a time on the named views of a blob;
# the RNEA and the equations of motion share them.


@kernel(inline='always')
def positions(layout, q):
    """``qf``: a coordinate per body joint coordinate (mimic joints follow their masters)."""
    qf, src, mult, off = layout.qf, layout.q_src, layout.q_mult, layout.q_off
    for k in range(qf.shape[0]):
        qf[k] = q[src[k]] * mult[k] + off[k]


@kernel(inline='always')
def rates(layout, qd, qdd):
    """``vf``, ``af``: a velocity and an acceleration per body joint velocity."""
    vf, af, src, mult = layout.vf, layout.af, layout.v_src, layout.v_mult
    for k in range(vf.shape[0]):
        vf[k] = qd[src[k]] * mult[k]
        af[k] = qdd[src[k]] * mult[k]


@kernel(inline='always')
def joint_transform(layout, i):
    """
    Return ``E``, ``r`` of body ``i`` and the number of its joint's velocities.

    ``E`` and ``r`` are also stored in the work row for the backward pass; ``S`` of a
    multi-DoF joint is written.
    """
    bi = layout.body_ints
    jt = bi[i, BI_JTYPE]
    if jt <= ONE_DOF:
        E, r = one_dof_transform(layout.body, i, jt, layout.qf[bi[i, BI_Q_START]])
        nj = 1
    else:
        E, r, nj = multi_dof_transform(layout.body, layout.subspace, i, jt, layout.qf,
                                       bi[i, BI_Q_START], bi[i, BI_V_START])
    put9(layout.work, i, W_E, E)
    put3(layout.work, i, W_R, r)
    return E, r, nj


@kernel(inline='always')
def add_one_dof_motion(body, i, w, v, aw, al, qd, qdd):
    """``v + vJ`` and ``a + S qdd + v x vJ`` for ``S = [0 0 sa 0 0 sl]``, ``vJ = S qd``."""
    sa = body[i, B_SA]
    sl = body[i, B_SL]
    dw = sa * qd
    dl = sl * qd
    # v x vJ with vJ along z: only the x and y rows
    aw = (aw[0] + w[1] * dw, aw[1] - w[0] * dw, aw[2] + sa * qdd)
    al = (al[0] + w[1] * dl + v[1] * dw, al[1] - w[0] * dl - v[0] * dw, al[2] + sl * qdd)
    return (w[0], w[1], w[2] + dw), (v[0], v[1], v[2] + dl), aw, al


@kernel(inline='always')
def parent_motion(layout, i, E, r):
    """
    Return body ``i``'s velocity and acceleration from its parent's, before its joint's.

    The parent's transformed into body coordinates; gravity is the base's acceleration
    ``-a_g``.
    """
    wb, g = layout.work, layout.gravity
    p = layout.body_ints[i, BI_PARENT]
    if p < 0:  # the base: v = 0, a = -a_g
        zero = (0.0, 0.0, 0.0)
        pw, pv, paw, pal = zero, zero, zero, (-g[0], -g[1], -g[2])
    else:
        pw, pv = row3(wb, p, W_W), row3(wb, p, W_V)
        paw, pal = row3(wb, p, W_AW), row3(wb, p, W_AL)
    w, v = motion_transform(E, r, pw, pv)
    aw, al = motion_transform(E, r, paw, pal)
    return w, v, aw, al


@kernel(inline='always')
def add_joint_motion(layout, i, nj, w, v, aw, al):
    """Add body ``i``'s joint's velocity ``S qd`` and acceleration ``S qdd + cJ + v x vJ``."""
    bi, body, vf, af = layout.body_ints, layout.body, layout.vf, layout.af
    vi = bi[i, BI_V_START]
    if bi[i, BI_JTYPE] <= ONE_DOF:
        return add_one_dof_motion(body, i, w, v, aw, al, vf[vi], af[vi])
    vjw, vjl = subspace_product(layout.subspace, vi, nj, vf)
    ajw, ajl = subspace_product(layout.subspace, vi, nj, af)
    if bi[i, BI_JTYPE] == JT_PLANAR:
        # cJ = -(axis theta_dot) x vJ_linear (apparent derivative of S in C)
        ajl = sub(ajl, scale(vf[vi + 2], cross(row3(body, i, B_AXIS), vjl)))
    w, v = add(w, vjw), add(v, vjl)
    cw, cl = motion_cross(w, v, vjw, vjl)
    return w, v, add(add(aw, ajw), cw), add(add(al, ajl), cl)


@kernel(inline='always')
def store_motion(layout, i, w, v, aw, al):
    """Keep body ``i``'s velocity and acceleration in its work row."""
    wb = layout.work
    put3(wb, i, W_W, w)
    put3(wb, i, W_V, v)
    put3(wb, i, W_AW, aw)
    put3(wb, i, W_AL, al)
