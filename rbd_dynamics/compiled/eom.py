"""
The equations of motion's kernels: mass matrix, Coriolis matrix, Jacobian and regressor.

They work in world (root link) coordinates, as Pinocchio does: there the motion subspace
column of a joint is the same for every body beyond it and composite inertias are plain sums,
so each entry is a dot product. The Jacobian walks from its link to the root in link
coordinates. Single-state entry points (:func:`mass1`, :func:`coriolis1`, :func:`jacobian1`,
:func:`regressor1`) return :data:`~.layout.OK` or :data:`~.layout.BAD_SIZES`.
"""

import numpy as np

from .algebra import (add, cross, dot, dot6, force_cross, inertia_product, matmul, matmul_t,
                      motion_cross, motion_transform, put3, put9, rotate, rotate_t, row3, row9,
                      scale, sub)
from .frames import acceleration1, pose1
from .jit import eom_layout_of, kernel, layout_of
from .kinematics import (add_joint_motion, joint_transform, multi_dof_transform, parent_motion,
                         positions, rates, store_motion, turned_transform)
from .layout import (B_AXIS, B_FLOATS, B_Q, B_SA, B_SL, BAD_SIZES, BI_JTYPE, BI_PARENT, BI_Q_START,
                     BI_V_START, C_S, C_SD, EOM_ACCELERATION, EOM_CORIOLIS, EOM_JACOBIAN, EOM_MASS,
                     EOM_POSE, H_NB, H_NQ, H_NV, IN_H, IN_MASS, IN_ROT, INERTIA_FLOATS,
                     JT_FLOATING, JT_PLANAR, JT_PRISMATIC, JT_REVOLUTE, L_BODY, L_E, L_R, OK,
                     ONE_DOF, P_BC, P_E0, P_IC, P_R0, P_V, P_W, W_AL, W_AW, W_V, W_W)


# The equations of motion, one state at a time, in world (root link) coordinates: there a
# joint's column S_j is the same for every body beyond it, composite inertias are sums,
# and each entry of M, C and Y is a dot product of a column with a composite quantity
# (the world-frame forms of Featherstone's CRBA, Table 6.2, and of the factorisation of
# Echeandia & Wensing, J. Comput. Nonlinear Dyn. 2021, as Pinocchio computes them). Every
# state kernel reads the coordinates from qf, vf, af and adds its result into ``out`` with
# the mimic map (``out`` in independent coordinates: M = G^T Mf G, C = G^T Cf G,
# J = Jf G, Y = G^T Yf).


@kernel(inline='always')
def _dofs(jt):
    """Return the number of velocities of a joint type."""
    if jt <= ONE_DOF:
        return 1
    return 6 if jt == JT_FLOATING else 3


@kernel(inline='always')
def _packed_column(layout, i, jt, k):
    """Column ``k`` of body ``i``'s motion subspace, packed body coordinates."""
    if jt <= ONE_DOF:
        return (0.0, 0.0, layout.body[i, B_SA]), (0.0, 0.0, layout.body[i, B_SL])
    return row3(layout.subspace, k, 0), row3(layout.subspace, k, 3)


@kernel(inline='always')
def _world_pose(layout, eom, i, E, r, jt, nj):
    """
    Store body ``i``'s pose and its joint's columns in world coordinates; return the pose.

    After the parent's: ``0_X_i^-1`` from ``E0 = E E0_parent``, ``r0 = r0_parent +
    E0_parent^T r``; a column ``(w, v)`` of the body is ``(E0^T w, E0^T v + r0 x E0^T w)``.
    """
    pose, col = eom.pose, eom.column
    p = layout.body_ints[i, BI_PARENT]
    if p < 0:
        E0, r0 = E, r
    else:
        Ep = row9(pose, p, P_E0)
        E0 = matmul(E, Ep)
        r0 = add(row3(pose, p, P_R0), rotate_t(Ep, r))
    put9(pose, i, P_E0, E0)
    put3(pose, i, P_R0, r0)
    vs = layout.body_ints[i, BI_V_START]
    if jt <= ONE_DOF:  # S = [0 0 sa 0 0 sl]: the body's z axis in world coordinates
        z = (E0[6], E0[7], E0[8])
        ww = scale(layout.body[i, B_SA], z)
        put3(col, vs, C_S, ww)
        put3(col, vs, C_S + 3, add(scale(layout.body[i, B_SL], z), cross(r0, ww)))
    else:
        for k in range(vs, vs + nj):
            ww = rotate_t(E0, row3(layout.subspace, k, 0))
            put3(col, k, C_S, ww)
            put3(col, k, C_S + 3, add(rotate_t(E0, row3(layout.subspace, k, 3)),
                                      cross(r0, ww)))
    return E0, r0


@kernel(inline='always')
def _world_inertia(layout, eom, i, E0, r0):
    """
    Store body ``i``'s inertia in world coordinates as its composite inertia's start.

    Rotated, ``h' = E0^T h`` and ``Ibar' = E0^T Ibar E0``; moved from the body origin
    ``p = r0`` to the world origin, ``h = h' + m p`` and ``Ibar = Ibar' + (2 h'.p + m p.p)
    1 - (h' p^T + p h'^T + m p p^T)`` (the second moment of mass grows by the bracket).
    """
    inertia, pose = layout.inertia, eom.pose
    m = inertia[i, IN_MASS]
    h = rotate_t(E0, row3(inertia, i, IN_H))
    o = IN_ROT
    xx, xy, xz, yy, yz, zz = inertia[i, o], inertia[i, o + 1], inertia[i, o + 2], \
        inertia[i, o + 3], inertia[i, o + 4], inertia[i, o + 5]
    R = matmul_t(E0, matmul((xx, xy, xz, xy, yy, yz, xz, yz, zz), E0))
    p = r0
    t = 2.0 * dot(h, p) + m * dot(p, p)
    mp = scale(m, p)
    pose[i, P_IC + IN_MASS] = m
    put3(pose, i, P_IC + IN_H, add(h, mp))
    o = P_IC + IN_ROT
    pose[i, o] = R[0] + t - 2.0 * h[0] * p[0] - mp[0] * p[0]
    pose[i, o + 1] = R[1] - h[0] * p[1] - p[0] * h[1] - mp[0] * p[1]
    pose[i, o + 2] = R[2] - h[0] * p[2] - p[0] * h[2] - mp[0] * p[2]
    pose[i, o + 3] = R[4] + t - 2.0 * h[1] * p[1] - mp[1] * p[1]
    pose[i, o + 4] = R[5] - h[1] * p[2] - p[1] * h[2] - mp[1] * p[2]
    pose[i, o + 5] = R[8] + t - 2.0 * h[2] * p[2] - mp[2] * p[2]


@kernel(inline='always')
def _world_b(pose, i, w, v):
    """
    Store ``B`` of body ``i`` in world coordinates (inertia, velocity ``w``, ``v``).

    Echeandia & Wensing's ``B = (v x* I - I v x + crf_bar(I v)) / 2`` in world coordinates
    (Pinocchio's form; in body coordinates ``+ I v x``), with ``crf_bar(g) u = u x* g``:
    ``B v = v x* I v`` and ``B + B^T = v x* I - I v x``, the rate of change of the world
    inertia. With ``W = [w]x``, ``I v = (n, f)`` and ``[a]x [b]x = b a^T - (a.b) 1`` its
    blocks are ``B11 = Sym - [n / 2]x``, ``Sym = (W Ibar + (W Ibar)^T - h v^T - v h^T) / 2
    + (v.h) 1``, ``B12 = [beta]x``, ``beta = (w x h + m v - f) / 2``, ``B21 = [gamma]x``,
    ``gamma = -(w x h + m v + f) / 2``, ``B22 = 0``: fifteen numbers, stored as ``Sym``,
    ``n / 2``, ``beta``, ``gamma`` (sums of them are the composite's).
    """
    m = pose[i, P_IC + IN_MASS]
    h = row3(pose, i, P_IC + IN_H)
    o = P_IC + IN_ROT
    xx, xy, xz, yy, yz, zz = pose[i, o], pose[i, o + 1], pose[i, o + 2], pose[i, o + 3], \
        pose[i, o + 4], pose[i, o + 5]
    n, f = inertia_product(pose, i, P_IC, w, v)
    # the columns of W Ibar: w x (each column of Ibar)
    c0, c1, c2 = cross(w, (xx, xy, xz)), cross(w, (xy, yy, yz)), cross(w, (xz, yz, zz))
    vh = dot(v, h)
    b = P_BC
    pose[i, b] = c0[0] - h[0] * v[0] + vh
    pose[i, b + 1] = 0.5 * (c1[0] + c0[1]) - 0.5 * (h[0] * v[1] + v[0] * h[1])
    pose[i, b + 2] = 0.5 * (c2[0] + c0[2]) - 0.5 * (h[0] * v[2] + v[0] * h[2])
    pose[i, b + 3] = c1[1] - h[1] * v[1] + vh
    pose[i, b + 4] = 0.5 * (c2[1] + c1[2]) - 0.5 * (h[1] * v[2] + v[1] * h[2])
    pose[i, b + 5] = c2[2] - h[2] * v[2] + vh
    put3(pose, i, b + 6, scale(0.5, n))
    wh_mv = add(cross(w, h), scale(m, v))
    put3(pose, i, b + 9, scale(0.5, sub(wh_mv, f)))
    put3(pose, i, b + 12, scale(-0.5, add(wh_mv, f)))


@kernel(inline='always')
def _b_product(pose, i, w, v, transpose):
    """
    Multiply ``[w; v]`` by the (composite) ``B`` of body ``i``, or by its transpose.

    ``B [w; v] = (Sym w - n/2 x w + beta x v, gamma x w)``; ``B^T [w; v] = (Sym w +
    n/2 x w - gamma x v, -beta x w)`` (see :func:`_world_b`).
    """
    b = P_BC
    xx, xy, xz, yy, yz, zz = pose[i, b], pose[i, b + 1], pose[i, b + 2], pose[i, b + 3], \
        pose[i, b + 4], pose[i, b + 5]
    sym = (xx * w[0] + xy * w[1] + xz * w[2], xy * w[0] + yy * w[1] + yz * w[2],
           xz * w[0] + yz * w[1] + zz * w[2])
    half_n = row3(pose, i, b + 6)
    beta = row3(pose, i, b + 9)
    gamma = row3(pose, i, b + 12)
    if transpose:
        return sub(add(sym, cross(half_n, w)), cross(gamma, v)), cross(w, beta)
    return add(sub(sym, cross(half_n, w)), cross(beta, v)), cross(gamma, w)


@kernel(inline='always')
def _add_pair(out, src, mult, a, c, value):
    """Add ``value`` at full ``(a, c)`` and, for ``a != c``, at ``(c, a)``, folded."""
    x = mult[a] * mult[c] * value
    out[src[a], src[c]] += x
    if a != c:
        out[src[c], src[a]] += x


@kernel(inline='always')
def _zero(out):
    for r in range(out.shape[0]):
        for c in range(out.shape[1]):
            out[r, c] = 0.0


@kernel(inline='always')
def _accumulate(pose, bi, nb, col, size):
    """Add the columns ``col:col + size`` of every body's pose row into its parent's."""
    for i in range(nb - 1, -1, -1):
        p = bi[i, BI_PARENT]
        if p >= 0:
            for k in range(col, col + size):
                pose[p, k] += pose[i, k]


@kernel(inline='always')
def _mass_state(layout, eom, out):
    """
    Compute ``M`` of the positions in ``qf`` into ``out`` ``(nv, nv)``.

    CRBA in world coordinates: ``Ic_i`` is the sum of the world inertias beyond body
    ``i``, and for a column ``a`` of body ``i`` and ``c`` on its way to the root
    (``column_parent``), ``Mf[a, c] = (Ic_i s_a) . s_c``.
    """
    bi, pose, col = layout.body_ints, eom.pose, eom.column
    nb = layout.header[H_NB]
    for i in range(nb):
        E, r, nj = joint_transform(layout, i)
        E0, r0 = _world_pose(layout, eom, i, E, r, bi[i, BI_JTYPE], nj)
        _world_inertia(layout, eom, i, E0, r0)
    _accumulate(pose, bi, nb, P_IC, INERTIA_FLOATS)
    _zero(out)
    src, mult, parent, owner = (layout.v_src, layout.v_mult, eom.column_parent,
                                eom.column_body)
    for a in range(col.shape[0]):
        uw, uv = inertia_product(pose, owner[a], P_IC, row3(col, a, C_S),
                                 row3(col, a, C_S + 3))
        c = a
        while c >= 0:
            _add_pair(out, src, mult, a, c, dot6(uw, uv, row3(col, c, C_S),
                                                 row3(col, c, C_S + 3)))
            c = parent[c]


@kernel()
def _coriolis_state(layout, eom, out):
    """
    Compute ``C`` of the state in ``qf``, ``vf`` into ``out`` ``(nv, nv)``.

    In world coordinates, with body velocities ``v_i``, columns ``s`` and their rates
    ``sd = v_i x s`` (plus the planar joint's own), the composites ``Ic`` and ``Bc`` of the
    bodies beyond body ``i`` (see :func:`_world_b`): for a column ``a`` of body ``i`` and
    ``c`` on its way to the root (``column_parent``), ``Cf[a, c] = (Ic s_a) . sd_c +
    (Bc^T s_a) . s_c`` and ``Cf[c, a] = s_c . (Ic sd_a + Bc s_a)``.
    """
    bi, body, pose, col, vf = (layout.body_ints, layout.body, eom.pose, eom.column,
                               layout.vf)
    nb = layout.header[H_NB]
    zero = (0.0, 0.0, 0.0)
    for i in range(nb):
        jt = bi[i, BI_JTYPE]
        E, r, nj = joint_transform(layout, i)
        E0, r0 = _world_pose(layout, eom, i, E, r, jt, nj)
        p = bi[i, BI_PARENT]
        w, v = (zero, zero) if p < 0 else (row3(pose, p, P_W), row3(pose, p, P_V))
        vs = bi[i, BI_V_START]
        for k in range(vs, vs + nj):
            w = add(w, scale(vf[k], row3(col, k, C_S)))
            v = add(v, scale(vf[k], row3(col, k, C_S + 3)))
        put3(pose, i, P_W, w)
        put3(pose, i, P_V, v)
        for k in range(vs, vs + nj):
            dw, dv = motion_cross(w, v, row3(col, k, C_S), row3(col, k, C_S + 3))
            if jt == JT_PLANAR and k < vs + 2:
                # the planar joint's S turns with theta: d/dt S_lin = -(axis theta_dot) x S_lin
                turn = scale(-vf[vs + 2], cross(row3(body, i, B_AXIS),
                                                row3(layout.subspace, k, 3)))
                dv = add(dv, rotate_t(E0, turn))
            put3(col, k, C_SD, dw)
            put3(col, k, C_SD + 3, dv)
        _world_inertia(layout, eom, i, E0, r0)
        _world_b(pose, i, w, v)
    _accumulate(pose, bi, nb, P_IC, INERTIA_FLOATS + B_FLOATS)
    _zero(out)
    src, mult, parent, owner = (layout.v_src, layout.v_mult, eom.column_parent,
                                eom.column_body)
    for a in range(col.shape[0]):
        i = owner[a]
        sw, sv = row3(col, a, C_S), row3(col, a, C_S + 3)
        uw, uv = inertia_product(pose, i, P_IC, sw, sv)
        bw, bv = _b_product(pose, i, sw, sv, True)
        zw, zv = _b_product(pose, i, sw, sv, False)
        dw, dv = inertia_product(pose, i, P_IC, row3(col, a, C_SD),
                                 row3(col, a, C_SD + 3))
        zw, zv = add(zw, dw), add(zv, dv)
        out[src[a], src[a]] += mult[a] * mult[a] * (
            dot6(uw, uv, row3(col, a, C_SD), row3(col, a, C_SD + 3))
            + dot6(bw, bv, sw, sv))
        c = parent[a]
        while c >= 0:
            cw, cv = row3(col, c, C_S), row3(col, c, C_S + 3)
            m = mult[a] * mult[c]
            out[src[a], src[c]] += m * (
                dot6(uw, uv, row3(col, c, C_SD), row3(col, c, C_SD + 3))
                + dot6(bw, bv, cw, cv))
            out[src[c], src[a]] += m * dot6(cw, cv, zw, zv)
            c = parent[c]


@kernel(inline='always')
def _unit_cross(k, u):
    """``e_k x u`` for the unit vector ``e_k`` along axis ``k``."""
    if k == 0:
        return 0.0, -u[2], u[1]
    if k == 1:
        return u[2], 0.0, -u[0]
    return -u[1], u[0], 0.0


@kernel(inline='always')
def _rotational_column(p, w):
    """``Ibar_p w`` for the rotational inertia whose only parameter ``p`` (4-9) is 1."""
    if p == 4:  # ixx
        return w[0], 0.0, 0.0
    if p == 5:  # ixy
        return w[1], w[0], 0.0
    if p == 6:  # ixz
        return w[2], 0.0, w[0]
    if p == 7:  # iyy
        return 0.0, w[1], 0.0
    if p == 8:  # iyz
        return 0.0, w[2], w[1]
    return 0.0, 0.0, w[2]  # izz


@kernel(inline='always')
def _parameter_forces(forces, w, v, aw, al):
    """
    Write the body force ``I_p a + v x* I_p v`` of each inertial parameter into ``forces``.

    ``I_p``: the inertia whose only parameter ``p`` is 1 (Eq. 2.63: ``I u = (Ibar w + h x
    u_lin, m u_lin - h x w)``), velocity ``(w, v)`` and acceleration ``(aw, al)``; row ``p``
    gets ``(n, f)``. The mass: ``(0, al + w x v)``; a first moment along ``e_k``: ``(e_k x
    al, aw x e_k) + v x* (e_k x v, w x e_k)``; a rotational one: ``(Ibar_p aw + w x Ibar_p
    w, 0)``.
    """
    zero = (0.0, 0.0, 0.0)
    put3(forces, 0, 0, zero)
    put3(forces, 0, 3, add(al, cross(w, v)))
    for k in range(3):
        cn, cf = force_cross(w, v, _unit_cross(k, v), scale(-1.0, _unit_cross(k, w)))
        put3(forces, 1 + k, 0, add(_unit_cross(k, al), cn))
        put3(forces, 1 + k, 3, sub(cf, _unit_cross(k, aw)))
    for p in range(4, INERTIA_FLOATS):
        put3(forces, p, 0, add(_rotational_column(p, aw),
                               cross(w, _rotational_column(p, w))))
        put3(forces, p, 3, zero)


@kernel()
def _regressor_state(layout, eom, out):
    """
    Compute ``Y`` of the state in ``qf``, ``vf``, ``af`` into ``out`` ``(nv, 10 nb)``.

    Body ``i``'s force ``f_i = I_i a_i + v_i x* I_i v_i`` is linear in its parameters
    (model body coordinates: the packed motion turned by ``Q``); each of the ten columns
    goes to world coordinates, and ``Yf[a, 10 i + p]`` is its product with the world
    column ``s_a`` of every joint from the root to body ``i``.
    """
    bi, body, pose, col = layout.body_ints, layout.body, eom.pose, eom.column
    nb = layout.header[H_NB]
    for i in range(nb):
        E, r, nj = joint_transform(layout, i)
        w, v, aw, al = parent_motion(layout, i, E, r)
        w, v, aw, al = add_joint_motion(layout, i, nj, w, v, aw, al)
        store_motion(layout, i, w, v, aw, al)
        _world_pose(layout, eom, i, E, r, bi[i, BI_JTYPE], nj)
    _zero(out)
    src, mult, parent, wb, forces = (layout.v_src, layout.v_mult, eom.column_parent,
                                     layout.work, eom.forces)
    for i in range(nb):
        Q = row9(body, i, B_Q)
        to_model = matmul(Q, row9(pose, i, P_E0))  # world -> model body axes
        r0 = row3(pose, i, P_R0)
        w, v = rotate(Q, row3(wb, i, W_W)), rotate(Q, row3(wb, i, W_V))
        aw, al = rotate(Q, row3(wb, i, W_AW)), rotate(Q, row3(wb, i, W_AL))
        _parameter_forces(forces, w, v, aw, al)
        for p in range(INERTIA_FLOATS):  # to world coordinates (no linear force from 4 on)
            fw = rotate_t(to_model, row3(forces, p, 3)) if p < 4 else (0.0, 0.0, 0.0)
            put3(forces, p, 3, fw)
            put3(forces, p, 0, add(rotate_t(to_model, row3(forces, p, 0)),
                                   cross(r0, fw)))
        first = INERTIA_FLOATS * i
        a = bi[i, BI_V_START] + _dofs(bi[i, BI_JTYPE]) - 1  # the body's last column
        while a >= 0:
            sw, sv = row3(col, a, C_S), row3(col, a, C_S + 3)
            row = src[a]
            m = mult[a]
            for p in range(INERTIA_FLOATS):
                out[row, first + p] += m * (dot6(sw, sv, row3(forces, p, 0),
                                                 row3(forces, p, 3)))
            a = parent[a]


@kernel(inline='always')
def _fold_column(out, c, m, w, v):
    """Add ``m`` times the column ``(w, v)`` to column ``c`` of ``out``, linear rows first."""
    for row in range(3):
        out[row, c] += m * v[row]
        out[3 + row, c] += m * w[row]


@kernel(inline='always')
def _place_column(out, col, local, k, c, m, w, v):
    """
    Place the column ``(w, v)`` of velocity ``k`` (link coordinates).

    In the link's axes (``local``) it is folded into column ``c`` of ``out`` at once, times
    ``m``; otherwise it is kept in row ``k`` of ``col`` for the second walk.
    """
    if local:
        _fold_column(out, c, m, w, v)
    else:
        put3(col, k, C_S, w)
        put3(col, k, C_S + 3, v)


@kernel(inline='always')
def jacobian_state(layout, eom, code, out):
    """
    Compute a Jacobian at the positions in ``qf`` into ``out`` ``(6, nv)``.

    ``code``: twice the link's row in ``links``, plus one for the link's axes. Walks from
    the link's body to the root with ``X = link_X_j`` (the cosines and sines of its joints
    taken in a walk before, see :func:`~.kinematics.turned_transform`): the column of joint
    ``j`` is ``X S_j``, in link coordinates. In the link's axes each column is folded into ``out``
    (linear rows first) on the way; in world axes it is kept in the ``column`` rows and,
    along the same path again, turned by ``E^T`` of ``link_X_root`` and folded then.
    """
    bi, links, col = layout.body_ints, eom.links, eom.column
    src, mult = layout.v_src, layout.v_mult
    link = code // 2
    local = code % 2 == 1
    _zero(out)
    b = np.int64(links[link, L_BODY])
    if b < 0:
        return
    E = row9(links, link, L_E)
    r = row3(links, link, L_R)
    body = layout.body
    qf, cos, sin = layout.qf, layout.vf, layout.af
    # the cosines and sines of the path's turning joints first (in vf and af, by velocity;
    # a prismatic joint has none, as in one_dof_transform)
    j = b
    while j >= 0:
        jt = bi[j, BI_JTYPE]
        if jt <= ONE_DOF and jt != JT_PRISMATIC:
            x = qf[bi[j, BI_Q_START]]
            cos[bi[j, BI_V_START]] = np.cos(x)
            sin[bi[j, BI_V_START]] = np.sin(x)
        j = bi[j, BI_PARENT]
    j = b
    while j >= 0:
        jt = bi[j, BI_JTYPE]
        vs = bi[j, BI_V_START]
        if jt <= ONE_DOF:
            Ej, rj = turned_transform(body, j, jt, qf[bi[j, BI_Q_START]], cos[vs], sin[vs])
            # X S for S = (0 0 sa, 0 0 sl), written out: (sa E z, E (sl z - r x sa z)); for
            # the commonest joint (revolute: sa = 1, sl = 0) without the products by 1 and 0
            if jt == JT_REVOLUTE:
                w = (E[2], E[5], E[8])
                v = (E[1] * r[0] - E[0] * r[1], E[4] * r[0] - E[3] * r[1],
                     E[7] * r[0] - E[6] * r[1])
            else:
                sa, sl = body[j, B_SA], body[j, B_SL]
                w = (sa * E[2], sa * E[5], sa * E[8])
                v = rotate(E, (-sa * r[1], sa * r[0], sl))
            _place_column(out, col, local, vs, src[vs], mult[vs], w, v)
        else:
            Ej, rj, nj = multi_dof_transform(body, layout.subspace, j, jt, layout.qf,
                                             bi[j, BI_Q_START], vs)
            for k in range(vs, vs + nj):
                sw, sv = _packed_column(layout, j, jt, k)
                w, v = motion_transform(E, r, sw, sv)
                _place_column(out, col, local, k, src[k], mult[k], w, v)
        # link_X_parent = link_X_j j_X_parent: rot(E Ej) xlt(Ej^T r + rj)
        r = add(rotate_t(Ej, r), rj)
        E = matmul(E, Ej)
        j = bi[j, BI_PARENT]
    if local:
        return
    parent = eom.column_parent
    k = bi[b, BI_V_START] + _dofs(bi[b, BI_JTYPE]) - 1  # the body's last column
    while k >= 0:
        # E: root -> link axes
        _fold_column(out, src[k], mult[k], rotate_t(E, row3(col, k, C_S)),
                     rotate_t(E, row3(col, k, C_S + 3)))
        k = parent[k]


@kernel()
def mass1(blob, q, out):
    """``M`` of one state into ``out``: :data:`OK`, or :data:`BAD_SIZES` (nothing done)."""
    layout = layout_of(blob)
    eom = eom_layout_of(blob)
    hdr = layout.header
    nv = hdr[H_NV]
    if q.shape[0] != hdr[H_NQ] or out.shape[0] != nv or out.shape[1] != nv:
        return BAD_SIZES
    positions(layout, q)
    _mass_state(layout, eom, out)
    return OK


@kernel()
def coriolis1(blob, q, qd, out):
    """``C`` of one state into ``out``: :data:`OK` or :data:`BAD_SIZES`."""
    layout = layout_of(blob)
    eom = eom_layout_of(blob)
    hdr = layout.header
    nv = hdr[H_NV]
    if q.shape[0] != hdr[H_NQ] or qd.shape[0] != nv or out.shape[0] != nv or \
            out.shape[1] != nv:
        return BAD_SIZES
    positions(layout, q)
    rates(layout, qd, qd)
    _coriolis_state(layout, eom, out)
    return OK


@kernel()
def jacobian1(blob, q, code, out):
    """
    Compute the Jacobian of :data:`PackedModel.jacobian_codes` ``code``.

    Returns :data:`OK` or :data:`BAD_SIZES`.
    """
    layout = layout_of(blob)
    eom = eom_layout_of(blob)
    hdr = layout.header
    if q.shape[0] != hdr[H_NQ] or out.shape[0] != 6 or out.shape[1] != hdr[H_NV] or \
            not 0 <= code < 2 * eom.links.shape[0]:
        return BAD_SIZES
    positions(layout, q)
    jacobian_state(layout, eom, code, out)
    return OK


@kernel()
def regressor1(blob, q, qd, qdd, out):
    """``Y`` of one state into ``out``: :data:`OK` or :data:`BAD_SIZES`."""
    layout = layout_of(blob)
    eom = eom_layout_of(blob)
    hdr = layout.header
    nv = hdr[H_NV]
    if q.shape[0] != hdr[H_NQ] or qd.shape[0] != nv or qdd.shape[0] != nv or \
            out.shape[0] != nv or out.shape[1] != INERTIA_FLOATS * hdr[H_NB]:
        return BAD_SIZES
    positions(layout, q)
    rates(layout, qd, qdd)
    _regressor_state(layout, eom, out)
    return OK


@kernel(nogil=True)
def eom_range(blob, what, q, qd, qdd, code, out, start, stop):
    """
    Compute the states ``start:stop`` of an equations-of-motion batch into ``out (B, ., .)``.

    ``what``: an ``EOM_`` code. Each state is a call of the single-state entry point, frozen
    with its one signature before this compiles (:func:`~.warm_up.warm_up_eom`): one
    compilation of each state's code serves both. Without the GIL: ranges run on threads side
    by side (:func:`~.batch.eom_batch`), each on its own copy of the blob (the workspace).
    Returns the number of states an entry point refused (:data:`BAD_SIZES`).
    """
    refused = 0
    for s in range(start, stop):
        if what == EOM_MASS:
            status = mass1(blob, q[s], out[s])
        elif what == EOM_CORIOLIS:
            status = coriolis1(blob, q[s], qd[s], out[s])
        elif what == EOM_JACOBIAN:
            status = jacobian1(blob, q[s], code, out[s])
        elif what == EOM_POSE:
            status = pose1(blob, q[s], code, out[s])
        elif what == EOM_ACCELERATION:
            status = acceleration1(blob, q[s], qd[s], qdd[s], code, out[s, 0])
        else:
            status = regressor1(blob, q[s], qd[s], qdd[s], out[s])
        if status != OK:
            refused += 1
    return refused


#: The state kernels the entry points call (frozen by the warm-up).
STATE_KERNELS = (_coriolis_state, _regressor_state)
