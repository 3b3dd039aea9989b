"""
The joint-space mass matrix ``M(q)``: the composite-rigid-body algorithm (Featherstone Table 6.2).

See :mod:`rbd_dynamics.eom` for the conventions every term shares.
"""

import numpy as np

from .compiled.layout import EOM_MASS, OK
from .dispatch import batch_result, checked_out, compiled_batch, one_state, state_count
from .dynamics import as_batch, fold_matrix, forward_pass, full_positions, velocity_block

_F8 = np.dtype(np.float64)
#: ``np.empty`` and ``np.ndarray`` as globals of this module, for the inline gate
_empty = np.empty
_ndarray = np.ndarray


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
        bi = velocity_block(model, i)
        F = Ic[i] @ S[i]
        Mf[:, bi, bi] = np.swapaxes(S[i], -1, -2) @ F
        j = i
        while model.parent[j] >= 0:
            F = np.swapaxes(Xup[j], -1, -2) @ F
            j = model.parent[j]
            bj = velocity_block(model, j)
            Mf[:, bi, bj] = np.swapaxes(F, -1, -2) @ S[j]
            Mf[:, bj, bi] = np.swapaxes(Mf[:, bi, bj], -1, -2)
    M = fold_matrix(model, Mf)
    # exactly symmetric (a multi-DoF joint's block and the mimic fold round either side apart)
    return 0.5 * (M + np.swapaxes(M, -1, -2))
