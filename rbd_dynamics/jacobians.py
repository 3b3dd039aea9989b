"""
The geometric Jacobian of a link frame's origin, linear part first, in world or link axes.

See :mod:`rbd_dynamics.eom` for the conventions every term shares.
"""

import numpy as np

from .compiled.layout import EOM_JACOBIAN, OK
from .dispatch import batch_result, checked_out, compiled_batch, one_state, state_count
from .dynamics import as_batch, full_positions, mimic_matrix, velocity_block
from .joints import jcalc

_FRAMES = ('world', 'local')
_F8 = np.dtype(np.float64)
#: ``np.empty`` and ``np.ndarray`` as globals of this module, for :func:`jacobian`'s inline gate
_empty = np.empty
_ndarray = np.ndarray


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
        Jf[:, :, velocity_block(model, j)] = X @ S
        X = X @ XJ @ model.Xtree[j]
        j = model.parent[j]
    if frame == 'world':
        # X is now link_X_root; its rotation block maps root axes to link axes
        R = np.swapaxes(X[:, :3, :3], -1, -2)
        Jf = np.concatenate((R @ Jf[:, :3], R @ Jf[:, 3:]), axis=1)
    Jf = np.concatenate((Jf[:, 3:], Jf[:, :3]), axis=1)  # linear first
    G = mimic_matrix(model)
    if G is not None:
        Jf = Jf @ G
    return Jf
