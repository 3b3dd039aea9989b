"""
A link's frame in the root link's frame: its pose, and the classical acceleration of its origin.

What a task-space law needs beside :func:`~rbd_dynamics.jacobian`: where the link is, and
``J̇ q̇`` (the link's acceleration at ``qdd = 0``). Both are batched like
:func:`~rbd_dynamics.jacobian` (any leading dimensions), read ``model.runtime`` once and hand
states to the compiled path (:mod:`rbd_dynamics.compiled.frames`) as it does. The NumPy
references walk from the link's body to the root (Featherstone's ``i_X_parent`` chain): the pose is
``root_X_link``; the velocity and acceleration are the forward pass's (Table 5.1, without
gravity), carried to the link's frame, and the classical linear acceleration of its origin is
the spatial one plus ``ω × v`` (Featherstone sec. 2.11), turned into the root's axes.
"""

import numpy as np

from .compiled.layout import EOM_ACCELERATION, EOM_POSE, OK
from .dispatch import compiled_batch, one_state
from .dynamics import as_batch, broadcast_states, full_coordinates, full_positions
from .joints import jcalc
from .spatial import cross_motion, plux_parts


_POSE = (4, 4)
_ACCELERATION = (6,)


def _chain(model, link):
    """Return the bodies from the root to ``link``'s body, in that order."""
    model.check_link(link)
    path = []
    j = model.link_body[link]
    while j >= 0:
        path.append(j)
        j = model.parent[j]
    return path[::-1]


def _root_to_link(model, qf, link, qdf=None, qddf=None):
    """
    Return ``link_X_root`` ``(B, 6, 6)``, and the link's velocity and acceleration.

    The velocity and (gravity-free) acceleration are spatial vectors in the link's
    coordinates, ``(B, 6)`` each, ``None`` where ``qdf`` / ``qddf`` are ``None``.
    """
    count = qf.shape[0]
    X = np.broadcast_to(np.eye(6), (count, 6, 6))
    v = None if qdf is None else np.zeros((count, 6))
    a = None if qddf is None else np.zeros((count, 6))
    for j in _chain(model, link):
        joint = model.joints[j]
        qs, vs = model.q_start[j], model.v_start[j]
        qd_j = np.zeros((count, joint.nv)) if qdf is None else qdf[:, vs:vs + joint.nv]
        XJ, S, vJ, cJ = jcalc(joint, qf[:, qs:qs + joint.nq], qd_j)
        Xup = XJ @ model.Xtree[j]
        X = Xup @ X
        if v is not None:
            v = np.einsum('bij,bj->bi', Xup, v) + vJ
            if a is not None:
                a = np.einsum('bij,bj->bi', Xup, a) + cross_motion(v, vJ) + cJ + \
                    np.einsum('bij,bj->bi', S, qddf[:, vs:vs + joint.nv])
    to_link = model.link_X[link]
    X = to_link @ X
    if v is not None:
        v = v @ to_link.T
    if a is not None:
        a = a @ to_link.T
    return X, v, a


def link_pose(model, q, link):
    """
    Pose of a link's frame in the root link's frame.

    Parameters
    ----------
    model
        the model.
    q
        ``(nq,)`` or ``(..., nq)`` joint positions.
    link
        a link of the model (a fixed-joint child too).

    Returns
    -------
    ``(..., 4, 4)`` homogeneous transforms ``root_T_link``: the rotation's columns are the
    link's axes in root coordinates, the last column its origin [m].

    Raises
    ------
    UnknownLinkError
        ``link`` is not a link of the model.
    ValueError
        ``q`` has the wrong size.

    """
    packed = model.runtime.eom_packed
    if packed is not None:
        code = packed.link_index.get(link) if isinstance(link, str) else None
        if code is not None:
            T = one_state(_POSE, None, q)
            if T is not None and packed.pose1(packed.blob, q, code, T) == OK:
                return T
    model.check_link(link)
    q = as_batch('q', q, model.nq)
    shape = q.shape[:-1]
    q = q.reshape(-1, model.nq)
    if packed is not None:
        return compiled_batch(packed, EOM_POSE, q, None, None, (4, 4), None,
                              packed.link_index[link]).reshape(shape + (4, 4))
    return link_pose_reference(model, q, link).reshape(shape + (4, 4))


def link_pose_reference(model, q, link):
    """Return ``root_T_link`` ``(B, 4, 4)`` of checked ``(B, nq)`` positions (NumPy path)."""
    X, _, _ = _root_to_link(model, full_positions(model, q), link)
    E, r = plux_parts(X)  # root -> link axes, the link's origin in the root frame
    T = np.zeros((len(q), 4, 4))
    T[:, :3, :3] = np.swapaxes(E, -1, -2)
    T[:, :3, 3] = r
    T[:, 3, 3] = 1.0
    return T


def link_acceleration(model, q, qd, qdd, link):
    """
    Classical acceleration of a link's origin, linear first, in the root link's axes.

    ``J q̈ + J̇ q̇`` for :func:`~rbd_dynamics.jacobian` ``J`` (``frame='world'``): with
    ``qdd = 0`` it is ``J̇ q̇``, the term a task-space law subtracts. The linear part is the
    second derivative of the origin's position (Pinocchio's
    ``getFrameClassicalAcceleration`` with ``LOCAL_WORLD_ALIGNED``); gravity is not in it.

    Parameters
    ----------
    model
        the model.
    q
        ``(nq,)`` or ``(..., nq)`` joint positions.
    qd, qdd
        ``(nv,)`` or ``(..., nv)`` joint velocities and accelerations.
    link
        a link of the model (a fixed-joint child too).

    Returns
    -------
    ``(..., 6)``: linear [m/s^2] then angular [rad/s^2] acceleration.

    Raises
    ------
    UnknownLinkError
        ``link`` is not a link of the model.
    ValueError
        an array has the wrong size.

    """
    packed = model.runtime.eom_packed
    if packed is not None:
        code = packed.link_index.get(link) if isinstance(link, str) else None
        if code is not None:
            a = one_state(_ACCELERATION, None, q, qd, qdd)
            if a is not None and packed.acceleration1(packed.blob, q, qd, qdd, code, a) == OK:
                return a
    model.check_link(link)
    q, qd, qdd, shape = broadcast_states(model, q, qd, qdd)
    if packed is not None:
        return compiled_batch(packed, EOM_ACCELERATION, q, qd, qdd, (1, 6), None,
                              packed.link_index[link]).reshape(shape + (6,))
    return link_acceleration_reference(model, q, qd, qdd, link).reshape(shape + (6,))


def link_acceleration_reference(model, q, qd, qdd, link):
    """Return the classical accelerations ``(B, 6)`` of checked ``(B, n)`` states (NumPy)."""
    qf, qdf, qddf = full_coordinates(model, q, qd, qdd)
    X, v, a = _root_to_link(model, qf, link, qdf, qddf)
    linear = a[:, 3:] + np.cross(v[:, :3], v[:, 3:])
    R = np.swapaxes(X[:, :3, :3], -1, -2)  # link -> root axes
    return np.concatenate((np.einsum('bij,bj->bi', R, linear),
                           np.einsum('bij,bj->bi', R, a[:, :3])), axis=-1)
