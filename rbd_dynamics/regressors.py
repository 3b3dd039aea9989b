"""
The regressor: the joint torques as a linear function of the inertial parameters.

The columns are those of :meth:`~rbd_dynamics.Model.inertial_parameters`; see
:mod:`rbd_dynamics.eom` for the conventions every term shares.
"""

import numpy as np

from .compiled.layout import EOM_REGRESSOR, OK
from .dispatch import batch_result, checked_out, compiled_batch, one_state
from .dynamics import broadcast_states, forward_pass, full_positions, full_velocities, \
    mimic_matrix, velocity_block
from .spatial import force_cross_matrix, skew


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
    return _inertia_times(a) + force_cross_matrix(v) @ _inertia_times(v)


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
            Yf[:, velocity_block(model, j), columns] = np.swapaxes(S[j], -1, -2) @ F
            if model.parent[j] < 0:
                break
            F = np.swapaxes(Xup[j], -1, -2) @ F
            j = model.parent[j]
    G = mimic_matrix(model)
    if G is not None:
        Yf = G.T @ Yf
    return Yf
