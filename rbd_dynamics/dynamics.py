"""
Inverse dynamics: the recursive Newton-Euler algorithm with external wrenches (Table 5.1).

This module is the reference implementation: NumPy, shaped like the book, vectorised over a batch
of states. ``rnea``, ``gravity_torques`` and ``payload_wrench`` hand states to the compiled path
(:mod:`rbd_dynamics.compiled`) when it is available; both give the same numbers.

Each call reads ``model.runtime`` (the payload-dependent part of the model, see
:mod:`rbd_dynamics.model`) once and computes with that state alone. A single state of float64
vectors goes straight to a compiled entry point when
:func:`~rbd_dynamics.compiled.packed.single_state_forces` accepts it; everything else
(batches, lists, other dtypes, bad sizes) takes the general way, which converts, validates and
reports errors.
"""

import numpy as np

from . import compiled
from .compiled.layout import F8, MODE_FULL, MODE_STATIC, OK, rot6, SWAP
from .joints import jcalc
from .spatial import cross_force, cross_motion, from_public, to_public

# The compiled kernels import numba, which takes a few tenths of a second: they are imported
# when a model first compiles (Model.compile calls use_compiled_path), not by ``import
# rbd_dynamics``, so a program that stays on the NumPy path (a one-shot command) starts without
# numba. These names are read only where a model has a packed model, that is after that.
single_state_forces = rnea_batch = None


def use_compiled_path():
    """Return :mod:`rbd_dynamics.compiled`; where it can compile, bind what the calls use."""
    global single_state_forces, rnea_batch
    if rnea_batch is None and compiled.AVAILABLE:
        from .compiled.batch import rnea_batch as batch
        from .compiled.packed import single_state_forces
        rnea_batch = batch
    return compiled


#: ``np.empty`` as a global of this module: the single-state calls take about a microsecond,
#: and an attribute lookup fewer is measurable there.
_empty = np.empty


def as_batch(name, value, size):
    """``value`` as a float array ``(..., size)``; ``ValueError`` naming the expected size."""
    arr = np.asarray(value, dtype=float)
    if arr.ndim == 0 or arr.shape[-1] != size:
        got = 'a scalar' if arr.ndim == 0 else '%d entries' % arr.shape[-1]
        raise ValueError('%s has %s, model expects %d (shape (..., %d))'
                         % (name, got, size, size))
    return arr


def broadcast_states(model, q, qd, qdd):
    """Check sizes, broadcast the batch and flatten it: arrays ``(B, n)`` and the batch shape."""
    q = as_batch('q', q, model.nq)
    qd = as_batch('qd', qd, model.nv)
    qdd = as_batch('qdd', qdd, model.nv)
    try:
        shape = np.broadcast_shapes(q.shape[:-1], qd.shape[:-1], qdd.shape[:-1])
    except ValueError:
        raise ValueError('batch shapes of q %s, qd %s and qdd %s do not broadcast'
                         % (q.shape, qd.shape, qdd.shape)) from None
    count = int(np.prod(shape, dtype=np.int64))
    q = np.broadcast_to(q, shape + (model.nq,)).reshape(count, model.nq)
    qd = np.broadcast_to(qd, shape + (model.nv,)).reshape(count, model.nv)
    qdd = np.broadcast_to(qdd, shape + (model.nv,)).reshape(count, model.nv)
    return q, qd, qdd, shape


def external_forces(model, f_ext, shape):
    """
    Sum public-convention link wrenches into body forces.

    Parameters
    ----------
    model
        the model.
    f_ext
        ``None`` or ``{link: (..., 6)}``, force first, in the link frame, about its origin,
        applied on the link by the environment.
    shape
        batch shape.

    Returns
    -------
    ``None`` or ``(nb, B, 6)`` forces in body coordinates, Featherstone order.

    Raises
    ------
    UnknownLinkError
        a key is not a link of the model.
    ValueError
        a wrench does not have 6 entries or its batch shape does not fit.

    """
    if not f_ext:
        return None
    count = int(np.prod(shape, dtype=np.int64))
    out = np.zeros((model.nb, count, 6))
    for link, wrench in f_ext.items():
        model.check_link(link)
        body = model.link_body[link]
        wrench = as_batch('f_ext[%r]' % (link,), wrench, 6)
        try:
            wrench = np.broadcast_to(wrench, shape + (6,)).reshape(count, 6)
        except ValueError:
            raise ValueError('f_ext[%r] has batch shape %s, which does not fit the batch %s'
                             % (link, wrench.shape[:-1], shape)) from None
        if body < 0:
            continue  # on the base: carried by the world, no joint torque
        out[body] += from_public(wrench) @ model.link_force_to_body[link].T
    return out


def full_positions(model, q):
    """Full positions ``(B, nqf)`` of checked ``(B, nq)`` ones (mimic joints follow)."""
    if not model.has_mimic:
        return q
    return q[:, model.q_src] * model.q_mult + model.q_off


def full_velocities(model, v):
    """Full velocities or accelerations ``(B, nvf)`` of ``(B, nv)`` ones: ``vf = G v``."""
    if not model.has_mimic:
        return v
    return v[:, model.v_src] * model.v_mult


def full_coordinates(model, q, qd, qdd):
    """Expand independent coordinates to one entry per body joint (mimic joints follow)."""
    return (full_positions(model, q), full_velocities(model, qd),
            full_velocities(model, qdd))


def fold_torques(model, tauf):
    """Fold mimic joint torques into their masters: ``tau = G^T tauf`` with ``vf = G v``."""
    if not model.has_mimic:
        return tauf
    tau = np.zeros((tauf.shape[0], model.nv))
    np.add.at(tau.T, model.v_src, (tauf * model.v_mult).T)
    return tau


def mimic_matrix(model):
    """Return ``G`` ``(nvf, nv)`` with ``vf = G v``, or ``None`` without mimic joints."""
    if not model.has_mimic:
        return None
    G = np.zeros((model.nvf, model.nv))
    G[np.arange(model.nvf), model.v_src] = model.v_mult
    return G


def velocity_block(model, i):
    """Return the slice of body ``i``'s joint in the full velocity vector."""
    start = model.v_start[i]
    return slice(start, start + model.joints[i].nv)


def fold_matrix(model, Af):
    """``G^T Af G`` of ``(B, nvf, nvf)`` matrices."""
    G = mimic_matrix(model)
    return Af if G is None else G.T @ Af @ G


def forward_pass(model, qf, qdf=None, qddf=None):
    """
    Forward pass over the bodies (the first loop of Table 5.1), batched.

    Parameters
    ----------
    model
        the model.
    qf, qdf, qddf
        ``(B, nqf)`` positions; ``(B, nvf)`` velocities and accelerations or ``None``
        (velocities ``None``: kinematics only; accelerations ``None``: no accelerations).

    Returns
    -------
    ``(Xup, S, vJ, v, a)``: transforms ``i_X_parent`` ``(nb, B, 6, 6)``; lists of the motion
    subspaces ``(B, 6, nv_i)`` and joint velocities ``(B, 6)``; body velocities and
    accelerations ``(nb, B, 6)`` (``None`` where not asked for), body coordinates. The
    accelerations include gravity as the fictitious base acceleration ``a_0 = -a_g``.

    """
    count = qf.shape[0]
    nb = model.nb
    Xup = np.empty((nb, count, 6, 6))
    S = [None] * nb
    vJ = [None] * nb
    v = None if qdf is None else np.empty((nb, count, 6))
    a = None if qddf is None else np.empty((nb, count, 6))
    a_base = np.zeros((count, 6))
    a_base[:, 3:] = -model.gravity  # a_0 = -a_g: gravity as a fictitious base acceleration
    for i in range(nb):
        joint = model.joints[i]
        qs = model.q_start[i]
        vs = model.v_start[i]
        block = slice(vs, vs + joint.nv)
        qd_i = np.zeros((count, joint.nv)) if qdf is None else qdf[:, block]
        XJ, S[i], vJ[i], cJ = jcalc(joint, qf[:, qs:qs + joint.nq], qd_i)
        Xup[i] = XJ @ model.Xtree[i]
        p = model.parent[i]
        if v is not None:
            v[i] = vJ[i] if p < 0 else np.einsum('bij,bj->bi', Xup[i], v[p]) + vJ[i]
        if a is not None:
            if p < 0:
                a[i] = np.einsum('bij,bj->bi', Xup[i], a_base)
            else:
                a[i] = np.einsum('bij,bj->bi', Xup[i], a[p]) + cross_motion(v[i], vJ[i])
            a[i] += np.einsum('bij,bj->bi', S[i], qddf[:, block]) + cJ
    return Xup, S, vJ, v, a


def rnea_bodies(model, qf, qdf, qddf, fext=None, inertia=None):
    """
    RNEA over the bodies (Table 5.1), batched, in full coordinates.

    Parameters
    ----------
    model
        the model.
    qf, qdf, qddf
        ``(B, nqf)``, ``(B, nvf)``, ``(B, nvf)`` coordinates of every body joint.
    fext
        ``None`` or ``(nb, B, 6)`` external forces on the bodies, body coordinates.
    inertia
        ``(nb, 6, 6)`` body inertias to use instead of ``model.inertia``.

    Returns
    -------
    ``(tauf, f, Xup)``: joint forces ``(B, nvf)``; the body forces ``(nb, B, 6)`` after the
    backward pass (each body's force includes everything beyond it), body coordinates; the
    transforms ``i_X_parent`` ``(nb, B, 6, 6)``.

    """
    if inertia is None:
        inertia = model.runtime.inertia
    Xup, S, _, v, a = forward_pass(model, qf, qdf, qddf)
    f = np.empty_like(v)
    for i in range(model.nb):
        Iv = v[i] @ inertia[i].T
        f[i] = a[i] @ inertia[i].T + cross_force(v[i], Iv)
        if fext is not None:
            f[i] -= fext[i]
    tauf = np.empty((qf.shape[0], model.nvf))
    for i in range(model.nb - 1, -1, -1):
        vs = model.v_start[i]
        tauf[:, vs:vs + model.joints[i].nv] = np.einsum('bji,bj->bi', S[i], f[i])
        p = model.parent[i]
        if p >= 0:
            f[p] += np.einsum('bji,bj->bi', Xup[i], f[i])
    return tauf, f, Xup


def rnea(model, q, qd, qdd, f_ext=None):
    """
    Inverse dynamics: joint forces that produce ``qdd`` at state ``(q, qd)``.

    Parameters
    ----------
    model
        the model.
    q
        ``(nq,)`` or ``(..., nq)`` joint positions.
    qd
        ``(nv,)`` or ``(..., nv)`` joint velocities.
    qdd
        ``(nv,)`` or ``(..., nv)`` joint accelerations.
    f_ext
        ``None`` or ``{link name: (6,) or (..., 6)}``: wrench [N, N m], force first, in the
        link frame, torque about the link frame origin, applied on the link by the
        environment.

    Returns
    -------
    ``(..., nv)`` joint torques / forces [N m, N], in ``model.joint_names`` order; mimic joint
    torques are folded into their masters.

    Raises
    ------
    ValueError
        an array of the wrong size (the message names the expected size).
    UnknownLinkError
        an ``f_ext`` key that is not a link (a ``KeyError`` and ``ValueError``).

    """
    runtime = model.runtime
    packed = runtime.packed
    if packed is not None:
        if f_ext is None:  # the checks of single_state_forces, without its call
            try:
                fext = packed.zero_fext if (q.dtype is F8 and qd.dtype is F8 and qdd.dtype is F8
                                            and q.ndim == 1 and qd.ndim == 1
                                            and qdd.ndim == 1) else None
            except AttributeError:  # not an array
                fext = None
        elif qd is None or qdd is None:  # (the gate lets None by, as unused: not here)
            fext = None
        else:
            fext = single_state_forces(packed, f_ext, q, qd, qdd)
        if fext is not None:
            tau = _empty(packed.nv)
            if not packed.rnea1(packed.blob, q, qd, qdd, fext, tau):  # OK is 0
                return tau
    q, qd, qdd, shape = broadcast_states(model, q, qd, qdd)
    fext = external_forces(model, f_ext, shape)
    if packed is not None:
        tau = _compiled_batch(packed, q, qd, qdd, fext, MODE_FULL)
    else:
        tau = rnea_reference(model, q, qd, qdd, fext, runtime.inertia)
    return tau.reshape(shape + (model.nv,))


def _compiled_batch(packed, q, qd, qdd, fext, mode):
    """
    Run the compiled kernels on checked ``(B, n)`` arrays: ``(B, nv)`` torques.

    ``fext``: ``None`` or ``(nb, B, 6)`` forces in model body coordinates.
    """
    tau = np.empty((q.shape[0], packed.nv))
    if fext is None:
        fext = np.zeros((1, packed.nb, 6))
    else:
        fext = packed.forces_in(fext.transpose(1, 0, 2))
    # One array type for every batch (contiguous and writable, copied where an input is a
    # read-only broadcast): the batch kernels then need one variant of the single-state
    # kernels, which warm_up may already have frozen.
    q, qd, qdd = (np.require(x, np.float64, ('C', 'W')) for x in (q, qd, qdd))
    rnea_batch(packed, q, qd, qdd, fext, tau, mode)
    return tau


def rnea_reference(model, q, qd, qdd, fext=None, inertia=None):
    """
    Run the NumPy RNEA on checked ``(B, n)`` arrays: ``(B, nv)`` torques (no compiled path).

    ``inertia``: ``(nb, 6, 6)`` body inertias, ``None`` for the model's current ones.
    """
    qf, qdf, qddf = full_coordinates(model, q, qd, qdd)
    return fold_torques(model, rnea_bodies(model, qf, qdf, qddf, fext, inertia)[0])


def gravity_torques(model, q, f_ext=None):
    """
    Compute static joint torques: ``rnea(model, q, 0, 0, f_ext)``.

    Parameters
    ----------
    model
        the model.
    q
        ``(nq,)`` or ``(..., nq)`` joint positions.
    f_ext
        as for :func:`rnea`.

    Returns
    -------
    ``(..., nv)`` torques that hold the robot still against gravity and ``f_ext``.

    """
    runtime = model.runtime
    packed = runtime.packed
    if packed is not None:
        if f_ext is None:  # as in rnea
            try:
                fext = packed.zero_fext if q.dtype is F8 and q.ndim == 1 else None
            except AttributeError:
                fext = None
        else:
            fext = single_state_forces(packed, f_ext, q)
        if fext is not None:
            tau = _empty(packed.nv)
            if not packed.gravity1(packed.blob, q, fext, tau):
                return tau
    q = as_batch('q', q, model.nq)
    shape = q.shape[:-1]
    count = int(np.prod(shape, dtype=np.int64))
    q = q.reshape(count, model.nq)
    zeros = np.zeros((count, model.nv))
    fext = external_forces(model, f_ext, shape)
    if packed is not None:
        tau = _compiled_batch(packed, q, zeros, zeros, fext, MODE_STATIC)
    else:
        tau = rnea_reference(model, q, zeros, zeros, fext, runtime.inertia)
    return tau.reshape(shape + (model.nv,))


class _Beyond:
    """
    The bodies at and beyond a link, for :func:`payload_wrench`.

    One per link and :class:`~rbd_dynamics.runtime.RuntimeState`, cached in its ``beyond``.

    Attributes
    ----------
    inertia
        ``(nb, 6, 6)`` inertias of only the links at and beyond the link (payloads
        included), model body coordinates; the other bodies are massless.
    base
        ``(6, 6)`` inertia of the links beyond it that are fixed to the base.
    body
        the body the link belongs to (-1: the base).
    to_link
        ``(6, 6)`` body force -> force in link coordinates, ``X^-T`` (Featherstone
        order).
    packed
        the state's packed model with those inertias (compiled path, moving bodies), or
        ``None``.
    packed_to_public
        ``(6, 6)`` packed body force -> public wrench in link coordinates.

    """

    def __init__(self, model, link, runtime):
        self.inertia = np.zeros_like(runtime.inertia)
        self.base = np.zeros((6, 6))
        for name in model.subtree_links(link):
            body = model.link_body[name]
            if body >= 0:
                self.inertia[body] += runtime.link_inertia[name]
            else:
                self.base += runtime.link_inertia[name]
        self.body = model.link_body[link]
        self.to_link = np.linalg.inv(model.link_X[link]).T
        self.packed = None
        self.packed_to_public = None
        packed = runtime.packed
        if packed is not None and self.body >= 0:
            self.packed_to_public = (SWAP @ self.to_link
                                     @ rot6(packed.rotation[self.body]))
            self.packed = packed.with_inertia(self.inertia)


def _beyond(model, runtime, link):
    """Return the :class:`_Beyond` of ``link`` for the state ``runtime`` (cached in it)."""
    beyond = runtime.beyond.get(link)
    if beyond is None:
        beyond = runtime.beyond[link] = _Beyond(model, link, runtime)
    return beyond


def payload_wrench(model, link, q, qd=None, qdd=None):
    """
    Wrench that carries the bodies at and beyond ``link`` at state ``(q, qd, qdd)``.

    The bodies beyond a link are the link itself and everything attached below it, through any
    joint, with the payloads they hold (:meth:`~rbd_dynamics.Model.set_payload`). The result is
    the wrench the rest of the robot applies on them at ``link``: gravity plus their rate of
    change of momentum. A force/torque sensor mounted at ``link`` that reports
    the wrench applied on the robot by the distal side reads ``contact - payload_wrench``; when
    the payload is part of the model, the contact wrench on it is therefore
    ``reading + payload_wrench``.

    Parameters
    ----------
    model
        the model.
    link
        a link of the model.
    q
        ``(nq,)`` or ``(..., nq)`` joint positions.
    qd
        velocities like ``q``'s batch, ``None`` for zero.
    qdd
        accelerations, ``None`` for zero.

    Returns
    -------
    ``(..., 6)`` wrench [N, N m], force first, in the link frame, about its origin.

    Raises
    ------
    UnknownLinkError
        ``link`` is not a link of the model.
    ValueError
        an array of the wrong size.

    """
    model.check_link(link)
    runtime = model.runtime
    beyond = _beyond(model, runtime, link)
    body = beyond.body
    packed = beyond.packed
    if packed is not None:
        fext = single_state_forces(packed, None, q, qd, qdd)
        if fext is not None:
            out = np.empty(6)
            zero = packed.zero_v
            if packed.body_force1(packed.blob, q, zero if qd is None else qd,
                                  zero if qdd is None else qdd, fext,
                                  qd is None and qdd is None, body, out) == OK:
                return beyond.packed_to_public @ out
    q = as_batch('q', q, model.nq)
    zeros = np.zeros(q.shape[:-1] + (model.nv,))
    q, qd, qdd, shape = broadcast_states(model, q, zeros if qd is None else qd,
                                         zeros if qdd is None else qdd)
    qf, qdf, qddf = full_coordinates(model, q, qd, qdd)
    _, f, Xup = rnea_bodies(model, qf, qdf, qddf, None, beyond.inertia)
    if body >= 0:
        wrench = f[body]
    else:
        # the link is fixed to the base: the static links beyond it, plus what the root bodies
        # beyond it pass on to the base
        wrench = np.zeros((q.shape[0], 6))
        wrench[:, 3:] = -model.gravity
        wrench = wrench @ beyond.base.T
        for b in np.flatnonzero(model.parent < 0):
            wrench += np.einsum('bji,bj->bi', Xup[b], f[b])
    return to_public(wrench @ beyond.to_link.T).reshape(shape + (6,))
