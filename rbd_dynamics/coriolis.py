"""
The Coriolis matrix ``C(q, qd)``: the factorisation of Echeandia & Wensing (2021).

The one Pinocchio's ``computeCoriolisMatrix`` uses, written in body coordinates; see
:mod:`rbd_dynamics.eom` for the conventions every term shares.
"""

import numpy as np

from .compiled.layout import EOM_CORIOLIS, OK
from .dispatch import batch_result, checked_out, compiled_batch, one_state
from .dynamics import broadcast_states, fold_matrix, forward_pass, full_positions, \
    full_velocities, velocity_block
from .joints import subspace_rate
from .spatial import force_cross_bar, force_cross_matrix, motion_cross_matrix

#: Batch chunk for the per-body Jacobians of :func:`coriolis_matrix`: about this many floats.
_CHUNK_FLOATS = 4_000_000


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
    return fold_matrix(model, Cf)


def _coriolis_full(model, qf, qdf, inertia):
    """``C`` in full coordinates ``(B, nvf, nvf)`` (see :func:`coriolis_matrix`)."""
    count = qf.shape[0]
    Xup, S, vJ, v, _ = forward_pass(model, qf, qdf)
    J = np.zeros((model.nb, count, 6, model.nvf))
    Jdot = np.zeros_like(J)
    Cf = np.zeros((count, model.nvf, model.nvf))
    for i in range(model.nb):
        joint = model.joints[i]
        bi = velocity_block(model, i)
        p = model.parent[i]
        if p >= 0:
            # J_i = i_X_p J_p + S_i;  d/dt i_X_p = -(vJ_i x) i_X_p
            J[i] = Xup[i] @ J[p]
            Jdot[i] = Xup[i] @ Jdot[p] - motion_cross_matrix(vJ[i]) @ J[i]
        J[i][:, :, bi] = S[i]
        Jdot[i][:, :, bi] = subspace_rate(joint, S[i], qdf[:, bi])
        inertia_i = inertia[i]
        h = v[i] @ inertia_i.T
        B = 0.5 * (force_cross_matrix(v[i]) @ inertia_i + inertia_i @ motion_cross_matrix(v[i])
                   + force_cross_bar(h))
        Cf += np.swapaxes(J[i], -1, -2) @ (inertia_i @ Jdot[i] + B @ J[i])
    return Cf
