"""
The way from a public call to the compiled path: the gate of a single state, the batch helper.

The single-state entry points of :mod:`rbd_dynamics.compiled` skip numba's type checks, so a
call reaches them only through :func:`one_state`, which lets float64 vectors by and sends
anything else the general way (converted, checked, errors said); the general way runs a batch
kernel with :func:`compiled_batch`. The public functions of :mod:`rbd_dynamics.eom` and
:mod:`rbd_dynamics.frames` are written on these.
"""

import numpy as np

_F8 = np.dtype(np.float64)
#: ``np.empty`` as a global of this module (see :mod:`rbd_dynamics.dynamics`).
_empty = np.empty


_ndarray = np.ndarray


def fits(out, shape):
    """
    Tell whether ``out`` may receive a result of ``shape`` from a compiled entry point.

    A writable C-contiguous float64 ndarray of that shape (the entry points skip numba's type
    checks).
    """
    if out.__class__ is not _ndarray or out.dtype is not _F8 or out.shape != shape:
        return False
    flags = out.flags
    return flags.c_contiguous and flags.writeable


def vectors(q, qd=None, qdd=None):
    """
    Say whether ``q``, ``qd``, ``qdd`` may reach a compiled entry point: float64 vectors.

    ``None`` (``qd``, ``qdd``): not used. Any strides: the entry points take them.
    """
    if q.__class__ is not _ndarray or q.dtype is not _F8 or q.ndim != 1:
        return False
    if qd is not None and (qd.__class__ is not _ndarray or qd.dtype is not _F8 or qd.ndim != 1):
        return False
    return qdd is None or (qdd.__class__ is _ndarray and qdd.dtype is _F8 and qdd.ndim == 1)


def one_state(shape, out, q, qd=None, qdd=None):
    """
    Return where a compiled entry point may write one state's result, or ``None``.

    The gate of every single-state call here: the entry points skip numba's type checks, so
    only float64 vectors ``q``, ``qd``, ``qdd`` (``None``: not used) reach them, and a result
    of ``shape`` that :func:`fits`: a new array, or ``out``. ``None`` sends the call the
    general way, which converts, checks and says what is wrong (as it does when the entry
    point reports other sizes than the model's).
    """
    if not vectors(q, qd, qdd):
        return None
    if out is None:
        return _empty(shape)
    return out if fits(out, shape) else None


def checked_out(out, shape):
    """Return ``out`` when it can take a result of ``shape``; ``ValueError`` otherwise."""
    if not (isinstance(out, np.ndarray) and out.dtype == _F8 and out.shape == shape
            and out.flags.c_contiguous and out.flags.writeable):
        raise ValueError('out must be a writable C-contiguous float64 array of shape %s, got %s'
                         % (shape, 'shape %s, dtype %s' % (out.shape, out.dtype)
                            if isinstance(out, np.ndarray) else type(out).__name__))
    return out


def compiled_batch(packed, what, q, qd, qdd, shape, out, code=0):
    """
    Run the compiled batch kernel ``what`` on checked ``(B, n)`` arrays.

    Returns ``(B,) + shape`` results: in ``out`` (checked, any batch shape) when given.
    """
    count = q.shape[0]
    result = _empty((count,) + shape) if out is None else out.reshape((count,) + shape)
    q = np.require(q, np.float64, ('C', 'W'))
    qd = q if qd is None else np.require(qd, np.float64, ('C', 'W'))
    qdd = q if qdd is None else np.require(qdd, np.float64, ('C', 'W'))
    from .compiled.batch import eom_batch
    eom_batch(packed, what, q, qd, qdd, code, result)
    return out if out is not None else result


def state_count(shape):
    """Return the number of states of a result ``shape`` (its last two axes are one state's)."""
    return int(np.prod(shape[:-2], dtype=np.int64))


def batch_result(result, out, shape):
    """Return ``result`` with its batch ``shape``, in ``out`` when given."""
    if out is None:
        return result.reshape(shape)
    if result is not out:
        out[...] = result.reshape(shape)
    return out
