"""
The equations of motion term by term: ``M(q) qdd + C(q, qd) qd + g(q) = tau``.

NumPy reference implementations, batched over any leading dimensions like
:func:`~rbd_dynamics.rnea`, which hand states to the compiled path
(:mod:`rbd_dynamics.compiled`, the same algorithms in world coordinates) when the model has one,
as :func:`~rbd_dynamics.rnea` does: a single state of float64 vectors goes straight to a
compiled entry point, everything else takes the general way, which converts, validates and
reports errors. Both paths give the same numbers:

- :func:`mass_matrix`: the composite-rigid-body algorithm (Featherstone Table 6.2);
- :func:`coriolis_matrix`: the factorisation of Echeandia & Wensing (2021), the one Pinocchio's
  ``computeCoriolisMatrix`` uses, written in body coordinates;
- :func:`jacobian`: the geometric Jacobian of a link frame's origin, linear part first;
- :func:`regressor`: the torques as a linear function of the inertial parameters
  (:meth:`~rbd_dynamics.Model.inertial_parameters`).

Every function works in full coordinates (one entry per body joint, mimic joints included) and
folds the result with the mimic map ``vf = G v`` (``G`` from ``model.v_src``, ``model.v_mult``):
``M = G^T Mf G``, ``C = G^T Cf G``, ``J = Jf G``, ``Y = G^T Yf``. Each call reads
``model.runtime`` once, so payloads count and a payload changed meanwhile on another thread is
seen wholly or not at all.

Notation: in body coordinates, body ``i`` moves with ``v_i = J_i vf``, where the body Jacobian
``J_i`` ``(6, nvf)`` holds ``i_X_j S_j`` in the columns of every joint ``j`` on the path from the
root to ``i`` (Eq. 3.6 in Featherstone's chapter 3, written per body).
"""

import numpy as np

from .compiled.layout import EOM_CORIOLIS, EOM_JACOBIAN, EOM_MASS, EOM_REGRESSOR, OK
from .dispatch import batch_result, checked_out, compiled_batch, one_state, state_count
from .dynamics import as_batch, broadcast_states, forward_pass, full_positions, full_velocities
from .joints import jcalc
from .spatial import skew

#: Batch chunk for the per-body Jacobians of :func:`coriolis_matrix`: about this many floats.
_CHUNK_FLOATS = 4_000_000

_FRAMES = ('world', 'local')
_F8 = np.dtype(np.float64)
#: ``np.empty`` and ``np.ndarray`` as globals of this module, for :func:`jacobian`'s inline gate
_empty = np.empty
_ndarray = np.ndarray


# Shared pieces --------------------------------------------------------------------------------

def _mimic_map(model):
    """Return ``G`` ``(nvf, nv)`` with ``vf = G v``, or ``None`` without mimic joints."""
    if not model.has_mimic:
        return None
    G = np.zeros((model.nvf, model.nv))
    G[np.arange(model.nvf), model.v_src] = model.v_mult
    return G


def _block(model, i):
    """Slice of body ``i``'s joint in the full velocity vector."""
    start = model.v_start[i]
    return slice(start, start + model.joints[i].nv)


def _s_dot(joint, S, qd):
    """
    Time derivative of the motion subspace in the child frame, ``(B, 6, nv)``.

    Only the planar joint's subspace moves with its coordinate (see ``jcalc``, whose ``cJ`` is
    this times ``qd``); every other type has a constant one.
    """
    Sd = np.zeros_like(S)
    if joint.jtype == 'planar':
        omega = joint.axis * qd[:, 2:3]
        Sd[:, 3:, :2] = -np.cross(omega[:, :, None], S[:, 3:, :2], axis=1)
    return Sd


def _crm(v):
    """Motion cross-product matrices ``v x`` ``(B, 6, 6)`` of motion vectors ``(B, 6)``."""
    w, u = skew(v[:, :3]), skew(v[:, 3:])
    out = np.zeros(v.shape[:-1] + (6, 6))
    out[:, :3, :3] = w
    out[:, 3:, 3:] = w
    out[:, 3:, :3] = u
    return out


def _crf(v):
    """Force cross-product matrices ``v x*`` ``(B, 6, 6)``: ``-(v x)^T`` (Eq. 2.32)."""
    return -np.swapaxes(_crm(v), -1, -2)


def _crf_bar(f):
    """
    Matrices ``(B, 6, 6)`` of the force ``f`` ``(B, 6)`` with ``crf_bar(f) u = u x* f``.

    ``[[-[n]x, -[f]x], [-[f]x, 0]]`` for ``f = [n; f]``: skew-symmetric.
    """
    n, lin = skew(f[:, :3]), skew(f[:, 3:])
    out = np.zeros(f.shape[:-1] + (6, 6))
    out[:, :3, :3] = -n
    out[:, :3, 3:] = -lin
    out[:, 3:, :3] = -lin
    return out


# The mass matrix ----------------------------------------------------------------------------

def mass_matrix(model, q, out=None):
    """
    Joint-space inertia matrix by the composite-rigid-body algorithm (Table 6.2).

    Parameters
    ----------
    model
        the model (its payloads count).
    q
        ``(nq,)`` or ``(..., nq)`` joint positions.
    out
        ``None``, or a writable C-contiguous float64 array of the result's shape to write it
        into (saves the allocation of a single-state call).

    Returns
    -------
    ``(..., nv, nv)`` symmetric positive definite ``M(q)`` [kg m^2, kg], rows and columns in
    ``model.joint_names`` order, mimic joints folded into their masters; ``rnea(q, 0, qdd) -
    gravity_torques(q) == M qdd``.

    Raises
    ------
    ValueError
        ``q`` has the wrong size (the message names the expected size), or ``out`` does not
        fit.

    """
    runtime = model.runtime
    packed = runtime.eom_packed
    if packed is not None:
        # the gate written out for the commonest call, as in jacobian (which says why)
        try:
            if out is None and q.dtype is _F8 and q.ndim == 1:
                M = _empty(packed.square_shape)
                if not packed.mass1(packed.blob, q, M):  # OK is 0
                    return M
            else:
                M = one_state(packed.square_shape, out, q)
                if M is not None and packed.mass1(packed.blob, q, M) == OK:
                    return M
        except (AttributeError, TypeError):
            if q.__class__ is _ndarray:
                raise  # not a refusal of q (e.g. compiling the entry point failed)
    q = as_batch('q', q, model.nq)
    shape = q.shape[:-1] + (model.nv, model.nv)
    q = q.reshape(state_count(shape), model.nq)
    if out is not None:
        checked_out(out, shape)
    if packed is not None:
        M = compiled_batch(packed, EOM_MASS, q, None, None, shape[-2:], out)
    else:
        M = mass_matrix_reference(model, q, runtime.inertia)
    return batch_result(M, out, shape)


def mass_matrix_reference(model, q, inertia):
    """``M`` ``(B, nv, nv)`` of checked ``(B, nq)`` positions on the NumPy path."""
    count = q.shape[0]
    qf = full_positions(model, q)
    Xup, S, _, _, _ = forward_pass(model, qf)
    nb = model.nb
    # composite inertias, accumulated from the leaves: Ic_p += p_X_i^* Ic_i i_X_p
    Ic = np.array(np.broadcast_to(inertia[:, None], (nb, count, 6, 6)))
    for i in range(nb - 1, -1, -1):
        p = model.parent[i]
        if p >= 0:
            Ic[p] += np.swapaxes(Xup[i], -1, -2) @ Ic[i] @ Xup[i]
    Mf = np.zeros((count, model.nvf, model.nvf))
    for i in range(nb):
        bi = _block(model, i)
        F = Ic[i] @ S[i]
        Mf[:, bi, bi] = np.swapaxes(S[i], -1, -2) @ F
        j = i
        while model.parent[j] >= 0:
            F = np.swapaxes(Xup[j], -1, -2) @ F
            j = model.parent[j]
            bj = _block(model, j)
            Mf[:, bi, bj] = np.swapaxes(F, -1, -2) @ S[j]
            Mf[:, bj, bi] = np.swapaxes(Mf[:, bi, bj], -1, -2)
    M = _fold_matrix(model, Mf)
    # exactly symmetric (a multi-DoF joint's block and the mimic fold round either side apart)
    return 0.5 * (M + np.swapaxes(M, -1, -2))


def _fold_matrix(model, Af):
    """``G^T Af G`` of ``(B, nvf, nvf)`` matrices."""
    G = _mimic_map(model)
    return Af if G is None else G.T @ Af @ G


# The Coriolis matrix --------------------------------------------------------------------------

def coriolis_matrix(model, q, qd, out=None):
    """
    Coriolis and centrifugal matrix ``C(q, qd)`` with ``Mdot = C + C^T``.

    The factorisation of Echeandia & Wensing, "Numerical methods to compute the Coriolis
    matrix and Christoffel symbols for rigid-body systems" (J. Comput. Nonlinear Dyn., 2021),
    which Pinocchio's ``computeCoriolisMatrix`` uses. In body coordinates, with the body
    Jacobians ``J_i`` (``v_i = J_i qd``) and their time derivatives ``Jdot_i`` (so that
    ``a_i = J_i qdd + Jdot_i qd``),

        ``C = sum_i J_i^T (I_i Jdot_i + B_i J_i)``,
        ``B_i = (v_i x* I_i + I_i v_i x + crf_bar(I_i v_i)) / 2``,

    where ``crf_bar(h) u = u x* h``. ``B_i v_i = v_i x* I_i v_i``, so ``C qd`` is the RNEA's
    velocity product term; ``B_i`` is skew-symmetric, so ``C + C^T = sum_i (Jdot_i^T I_i J_i +
    J_i^T I_i Jdot_i) = Mdot``. (Pinocchio's world-frame ``B`` moved into body coordinates.)

    Parameters
    ----------
    model
        the model (its payloads count).
    q
        ``(nq,)`` or ``(..., nq)`` joint positions.
    qd
        ``(nv,)`` or ``(..., nv)`` joint velocities.
    out
        as for :func:`mass_matrix`.

    Returns
    -------
    ``(..., nv, nv)`` ``C`` [kg m^2/s, ...], ``model.joint_names`` order, mimic joints folded:
    ``C qd == rnea(q, qd, 0) - gravity_torques(q)``.

    Raises
    ------
    ValueError
        an array of the wrong size (the message names the expected size), or ``out`` does not
        fit.

    """
    runtime = model.runtime
    packed = runtime.eom_packed
    if packed is not None:
        C = one_state(packed.square_shape, out, q, qd)
        if C is not None and packed.coriolis1(packed.blob, q, qd, C) == OK:
            return C
    q, qd, _, shape = broadcast_states(model, q, qd, np.zeros(model.nv))
    shape = shape + (model.nv, model.nv)
    if out is not None:
        checked_out(out, shape)
    if packed is not None:
        C = compiled_batch(packed, EOM_CORIOLIS, q, qd, None, shape[-2:], out)
    else:
        C = coriolis_matrix_reference(model, q, qd, runtime.inertia)
    return batch_result(C, out, shape)


def coriolis_matrix_reference(model, q, qd, inertia):
    """``C`` ``(B, nv, nv)`` of checked ``(B, nq)``, ``(B, nv)`` states on the NumPy path."""
    count = q.shape[0]
    Cf = np.empty((count, model.nvf, model.nvf))
    chunk = max(1, _CHUNK_FLOATS // max(1, 12 * model.nb * model.nvf))
    for start in range(0, count, chunk):
        rows = slice(start, min(count, start + chunk))
        Cf[rows] = _coriolis_full(model, full_positions(model, q[rows]),
                                  full_velocities(model, qd[rows]), inertia)
    return _fold_matrix(model, Cf)


def _coriolis_full(model, qf, qdf, inertia):
    """``C`` in full coordinates ``(B, nvf, nvf)`` (see :func:`coriolis_matrix`)."""
    count = qf.shape[0]
    Xup, S, vJ, v, _ = forward_pass(model, qf, qdf)
    J = np.zeros((model.nb, count, 6, model.nvf))
    Jdot = np.zeros_like(J)
    Cf = np.zeros((count, model.nvf, model.nvf))
    for i in range(model.nb):
        joint = model.joints[i]
        bi = _block(model, i)
        p = model.parent[i]
        if p >= 0:
            # J_i = i_X_p J_p + S_i;  d/dt i_X_p = -(vJ_i x) i_X_p
            J[i] = Xup[i] @ J[p]
            Jdot[i] = Xup[i] @ Jdot[p] - _crm(vJ[i]) @ J[i]
        J[i][:, :, bi] = S[i]
        Jdot[i][:, :, bi] = _s_dot(joint, S[i], qdf[:, bi])
        inertia_i = inertia[i]
        h = v[i] @ inertia_i.T
        B = 0.5 * (_crf(v[i]) @ inertia_i + inertia_i @ _crm(v[i]) + _crf_bar(h))
        Cf += np.swapaxes(J[i], -1, -2) @ (inertia_i @ Jdot[i] + B @ J[i])
    return Cf


# The Jacobian ---------------------------------------------------------------------------------

def jacobian(model, q, link, frame='world', out=None):
    """
    Geometric Jacobian of a link frame's origin, linear part first.

    Parameters
    ----------
    model
        the model.
    q
        ``(nq,)`` or ``(..., nq)`` joint positions.
    link
        any link of the model, fixed-joint children included.
    frame
        ``'world'``: the velocity in the root link's axes; ``'local'``: in the link's own axes.
    out
        as for :func:`mass_matrix`.

    Returns
    -------
    ``(..., 6, nv)`` ``J`` with ``J qd = [vx vy vz wx wy wz]``: the velocity [m/s] of the origin
    of ``link``'s frame and the link's angular velocity [rad/s]. Columns in
    ``model.joint_names`` order (a floating or planar joint: one column per velocity
    coordinate, as ``qd``), mimic joints folded into their masters. A link on the immobile base
    has a zero Jacobian.

    Raises
    ------
    UnknownLinkError
        ``link`` is not a link of the model (the message lists the links).
    ValueError
        ``q`` has the wrong size, ``frame`` is neither ``'world'`` nor ``'local'``, or ``out``
        does not fit.

    """
    packed = model.runtime.eom_packed
    if packed is not None:
        # the gate's checks written out: the Jacobian's call is the shortest of all (a few
        # hundred nanoseconds), and the gate's own call would be a tenth of it. What fails
        # here takes the general path, which says what is wrong: an unknown or unhashable
        # link or frame, a q without a float64 dtype and one dimension, or one with them
        # that is no NumPy array (the entry point refuses it with a TypeError before
        # reading it: that costs nothing where q is an array, a test of q's class would)
        code = None
        try:
            code = packed.jacobian_codes[frame][link]
            if out is None and q.dtype is _F8 and q.ndim == 1:
                J = _empty(packed.jacobian_shape)
                if not packed.jacobian1(packed.blob, q, code, J):  # OK is 0
                    return J
            else:
                J = one_state(packed.jacobian_shape, out, q)
                if J is not None and packed.jacobian1(packed.blob, q, code, J) == OK:
                    return J
        except (AttributeError, KeyError, TypeError):
            if code is not None and q.__class__ is _ndarray:
                raise  # none of the above (e.g. compiling the entry point failed)
    model.check_link(link)
    if frame not in _FRAMES:
        raise ValueError('frame %r is not one of %s' % (frame, ', '.join(map(repr, _FRAMES))))
    q = as_batch('q', q, model.nq)
    shape = q.shape[:-1] + (6, model.nv)
    q = q.reshape(state_count(shape), model.nq)
    if out is not None:
        checked_out(out, shape)
    if packed is not None:
        J = compiled_batch(packed, EOM_JACOBIAN, q, None, None, shape[-2:], out,
                           packed.jacobian_codes[frame][link])
    else:
        J = jacobian_reference(model, q, link, frame)
    return batch_result(J, out, shape)


def jacobian_reference(model, q, link, frame):
    """Return the Jacobian ``(B, 6, nv)`` of checked ``(B, nq)`` positions (NumPy path)."""
    count = q.shape[0]
    qf = full_positions(model, q)
    Jf = np.zeros((count, 6, model.nvf))
    body = model.link_body[link]
    # link_X_j: motion transform from body j's coordinates to the link's, along the path
    X = np.broadcast_to(model.link_X[link], (count, 6, 6))
    j = body
    while j >= 0:
        joint = model.joints[j]
        qs = model.q_start[j]
        XJ, S, _, _ = jcalc(joint, qf[:, qs:qs + joint.nq], np.zeros((count, joint.nv)))
        Jf[:, :, _block(model, j)] = X @ S
        X = X @ XJ @ model.Xtree[j]
        j = model.parent[j]
    if frame == 'world':
        # X is now link_X_root; its rotation block maps root axes to link axes
        R = np.swapaxes(X[:, :3, :3], -1, -2)
        Jf = np.concatenate((R @ Jf[:, :3], R @ Jf[:, 3:]), axis=1)
    Jf = np.concatenate((Jf[:, 3:], Jf[:, :3]), axis=1)  # linear first
    G = _mimic_map(model)
    if G is not None:
        Jf = Jf @ G
    return Jf


# The regressor --------------------------------------------------------------------------------

def _inertia_times(u):
    """
    ``(B, 6, 10)`` matrices ``A`` with ``I u = A pi`` for motion vectors ``u`` ``(B, 6)``.

    ``pi = [m, hx, hy, hz, ixx, ixy, ixz, iyy, iyz, izz]`` (``h = m c``, rotational inertia
    about the frame origin); ``I u = [Ibar w + h x u_lin; m u_lin + w x h]`` (Eq. 2.63).
    """
    w, lin = u[:, :3], u[:, 3:]
    A = np.zeros(u.shape[:-1] + (6, 10))
    A[:, :3, 1:4] = -skew(lin)
    wx, wy, wz = w[:, 0], w[:, 1], w[:, 2]
    A[:, 0, 4], A[:, 0, 5], A[:, 0, 6] = wx, wy, wz
    A[:, 1, 5], A[:, 1, 7], A[:, 1, 8] = wx, wy, wz
    A[:, 2, 6], A[:, 2, 8], A[:, 2, 9] = wx, wy, wz
    A[:, 3:, 0] = lin
    A[:, 3:, 1:4] = skew(w)
    return A


def regressor(model, q, qd, qdd, out=None):
    """
    Joint torques as a linear function of the inertial parameters.

    ``rnea(model, q, qd, qdd) == Y @ model.inertial_parameters()`` (no external wrench,
    gravity included), and for a model with the same kinematics and other inertias, ``Y``
    times its parameters is its ``rnea``. The body force ``f_i = I_i a_i + v_i x* I_i v_i`` is
    linear in body ``i``'s ten parameters (``f_i = A_i pi_i``); each ``6 x 10`` block
    ``A_i`` is carried to the root like the RNEA's backward pass (``lambda_X_i^*``) and
    projected on every joint on the way (``S_j^T``).

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
    out
        as for :func:`mass_matrix`: for large batches, a reused array of one chunk's results.

    Returns
    -------
    ``(..., nv, 10 * model.nb)`` ``Y``: rows in ``model.joint_names`` order (mimic joints
    folded into their masters), columns ten per body in the order of ``model.body_links`` (see
    :meth:`~rbd_dynamics.Model.inertial_parameters`).

    Raises
    ------
    ValueError
        an array of the wrong size (the message names the expected size), or ``out`` does not
        fit.

    """
    runtime = model.runtime
    packed = runtime.eom_packed
    if packed is not None:
        Y = one_state(packed.regressor_shape, out, q, qd, qdd)
        if Y is not None and packed.regressor1(packed.blob, q, qd, qdd, Y) == OK:
            return Y
    q, qd, qdd, shape = broadcast_states(model, q, qd, qdd)
    shape = shape + (model.nv, 10 * model.nb)
    if out is not None:
        checked_out(out, shape)
    if packed is not None:
        Y = compiled_batch(packed, EOM_REGRESSOR, q, qd, qdd, shape[-2:], out)
    else:
        Y = regressor_reference(model, q, qd, qdd)
    return batch_result(Y, out, shape)


def body_force_regressor(v, a):
    """
    ``(B, 6, 10)`` matrices ``F`` with ``I a + v x* I v = F pi`` (a body's Newton-Euler force).

    ``v``, ``a`` ``(B, 6)``: the body's spatial velocity and acceleration (gravity included as
    a fictitious base acceleration) in a frame fixed to it; ``pi`` its ten parameters about
    that frame's origin in its axes; the force [moment; force] in the same frame.
    """
    return _inertia_times(a) + _crf(v) @ _inertia_times(v)


def regressor_reference(model, q, qd, qdd):
    """``Y`` ``(B, nv, 10 nb)`` of checked ``(B, n)`` states on the NumPy path."""
    count = q.shape[0]
    qf = full_positions(model, q)
    Xup, S, _, v, a = forward_pass(model, qf, full_velocities(model, qd),
                                   full_velocities(model, qdd))
    Yf = np.zeros((count, model.nvf, 10 * model.nb))
    for i in range(model.nb):
        F = body_force_regressor(v[i], a[i])
        columns = slice(10 * i, 10 * i + 10)
        j = i
        while True:
            Yf[:, _block(model, j), columns] = np.swapaxes(S[j], -1, -2) @ F
            if model.parent[j] < 0:
                break
            F = np.swapaxes(Xup[j], -1, -2) @ F
            j = model.parent[j]
    G = _mimic_map(model)
    if G is not None:
        Yf = G.T @ Yf
    return Yf


__all__ = ['coriolis_matrix', 'jacobian', 'mass_matrix', 'regressor']
