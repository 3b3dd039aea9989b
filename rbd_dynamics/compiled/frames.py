"""
A link's frame: its pose in the root link's frame, and the classical acceleration of its origin.

:func:`pose1` walks from the link's body to the root composing the joint transforms
(``link_X_root``); :func:`acceleration1` runs the forward pass (Table 5.1, with gravity as the
base's acceleration) over the bodies up to the link's, composes ``link_X_root`` from the
transforms it stored, and takes gravity out at the end: it enters every body's acceleration as
a field, ``-a_g`` in root axes, so in the link's frame turned back to root axes it is ``-a_g``
again. Both return :data:`~.layout.OK` or :data:`~.layout.BAD_SIZES`.
"""

import numpy as np

from .algebra import add, cross, matmul, motion_transform, rotate_t, row3, row9
from .jit import eom_layout_of, kernel, layout_of
from .kinematics import (add_joint_motion, joint_transform, multi_dof_transform,
                         one_dof_transform, parent_motion, positions, rates, store_motion)
from .layout import (BAD_SIZES, BI_JTYPE, BI_PARENT, BI_Q_START, BI_V_START, H_NQ, H_NV, L_BODY,
                     L_E, L_R, OK, ONE_DOF, W_AL, W_AW, W_E, W_V, W_W)


@kernel(inline='always')
def _link_frame(eom, link):
    """Return the link's body and ``E``, ``r`` of ``link_X_body`` (base links: ``link_X_root``)."""
    links = eom.links
    return np.int64(links[link, L_BODY]), row9(links, link, L_E), row3(links, link, L_R)


@kernel()
def pose_state(layout, eom, link, out):
    """Write ``root_T_link`` ``(4, 4)`` of the positions in ``qf`` into ``out``."""
    bi, body = layout.body_ints, layout.body
    b, E, r = _link_frame(eom, link)
    j = b
    while j >= 0:
        jt = bi[j, BI_JTYPE]
        if jt <= ONE_DOF:
            Ej, rj = one_dof_transform(body, j, jt, layout.qf[bi[j, BI_Q_START]])
        else:
            Ej, rj, _ = multi_dof_transform(body, layout.subspace, j, jt, layout.qf,
                                            bi[j, BI_Q_START], bi[j, BI_V_START])
        # link_X_parent = link_X_j j_X_parent: rot(E Ej) xlt(Ej^T r + rj)
        r = add(rotate_t(Ej, r), rj)
        E = matmul(E, Ej)
        j = bi[j, BI_PARENT]
    # E: root -> link axes; r: the link's origin in root coordinates
    for row in range(3):
        for col in range(3):
            out[row, col] = E[3 * col + row]
        out[row, 3] = r[row]
        out[3, row] = 0.0
    out[3, 3] = 1.0


@kernel()
def acceleration_state(layout, eom, link, out):
    """Write the classical acceleration ``(6,)`` of the link's origin, linear first, root axes."""
    bi, wb = layout.body_ints, layout.work
    b, El, rl = _link_frame(eom, link)
    if b < 0:  # on the base: at rest
        for k in range(6):
            out[k] = 0.0
        return
    for i in range(b + 1):  # the forward pass; bodies after b are not on its path
        E, r, nj = joint_transform(layout, i)
        w, v, aw, al = parent_motion(layout, i, E, r)
        w, v, aw, al = add_joint_motion(layout, i, nj, w, v, aw, al)
        store_motion(layout, i, w, v, aw, al)
    # the body's motion in the link's frame
    w, v = motion_transform(El, rl, row3(wb, b, W_W), row3(wb, b, W_V))
    aw, al = motion_transform(El, rl, row3(wb, b, W_AW), row3(wb, b, W_AL))
    # link_X_root's rotation, from the transforms the forward pass stored
    E = El
    j = b
    while j >= 0:
        E = matmul(E, row9(wb, j, W_E))
        j = bi[j, BI_PARENT]
    linear = rotate_t(E, add(al, cross(w, v)))  # classical: a + w x v (Featherstone 2.11)
    angular = rotate_t(E, aw)
    g = layout.gravity
    for k in range(3):
        out[k] = linear[k] + g[k]  # gravity entered as -a_g
        out[3 + k] = angular[k]


#: The state kernels the entry points call (frozen by the warm-up).
STATE_KERNELS = (pose_state, acceleration_state)


@kernel()
def pose1(blob, q, link, out):
    """Write ``root_T_link`` of one state into ``out`` ``(4, 4)``: OK or BAD_SIZES."""
    layout = layout_of(blob)
    eom = eom_layout_of(blob)
    if q.shape[0] != layout.header[H_NQ] or out.shape[0] != 4 or out.shape[1] != 4 or \
            not 0 <= link < eom.links.shape[0]:
        return BAD_SIZES
    positions(layout, q)
    pose_state(layout, eom, link, out)
    return OK


@kernel()
def acceleration1(blob, q, qd, qdd, link, out):
    """Write the link origin's classical acceleration into ``out`` ``(6,)``: OK or BAD_SIZES."""
    layout = layout_of(blob)
    eom = eom_layout_of(blob)
    nv = layout.header[H_NV]
    if q.shape[0] != layout.header[H_NQ] or qd.shape[0] != nv or qdd.shape[0] != nv or \
            out.shape[0] != 6 or not 0 <= link < eom.links.shape[0]:
        return BAD_SIZES
    positions(layout, q)
    rates(layout, qd, qdd)
    acceleration_state(layout, eom, link, out)
    return OK
