"""
The stacked data of identification: the regressor of a recording folded into small factors.

Each joint's rows of the base columns (the others follow: ``Y_dep = Y_base K``) are folded into
an upper-triangular factor ``R_j`` of ``[Y_j D_j tau_j]`` (a QR decomposition of the previous
factor with the new rows): memory stays ``nv (r + 1)^2`` floats for any recording, and the
per-joint factors let the weights be chosen after the data are read. A joint's rows where it
does not move steadily can be left out (:func:`moving`): a joint at rest sticks, and its
Coulomb friction is then anywhere between ``-coulomb`` and ``coulomb``, which no model of the
state can predict; fitted, those rows would pull every parameter towards them.
"""

import numpy as np

from .blas import blas_threads
from .columns import unit_scale

DEFAULT_CHUNK = 4096  # states per regressor call
#: Slowest speed of a joint whose rows are fitted [rad/s; a tenth of it in m/s for prismatic
#: joints]: five times the node's default width of the smooth sign (the widths themselves are
#: identified on every row, :mod:`.friction`).
DEFAULT_MIN_SPEED = 0.05


class Stack:
    """
    The regressor of a recording, folded into one triangular factor per joint.

    ``add`` takes states in any number of calls; memory stays ``nv`` factors of at most
    ``(p + 1) x (p + 1)`` floats plus one chunk of the regressor.

    Attributes
    ----------
    layout
        the :class:`Layout`.
    samples
        number of states added.
    fitted
        per joint, the number of its rows folded in.
    factors
        per joint, the upper-triangular factor of ``[A_j tau_j]`` restricted to
        ``layout.row_columns[j]`` (last column: the efforts).
    q_min, q_max, qd_square, tau_square
        per joint: position range, sums of squared velocity and effort.
    timing
        seconds spent computing the regressor (``'regressor'``) and folding it in
        (``'fold'``).

    """

    def __init__(self, layout):
        self.layout = layout
        nv = layout.model.nv
        self.samples = 0
        self.fitted = np.zeros(nv, dtype=np.int64)
        self.factors = [np.zeros((0, len(c) + 1)) for c in layout.row_columns]
        self.q_min = np.full(nv, np.inf)
        self.q_max = np.full(nv, -np.inf)
        self.qd_square = np.zeros(nv)
        self.tau_square = np.zeros(nv)
        self.timing = {'regressor': 0.0, 'fold': 0.0}

    def add(self, q, qd, qdd, effort, chunk=DEFAULT_CHUNK, progress=None, keep=None):
        """
        Fold states ``(n, nv)`` and measured efforts ``(n, nv)`` in.

        ``progress(done, total)`` is called after every chunk. States with a non-finite value
        are left out, and so is joint ``j``'s row of a state where ``keep[:, j]`` (``(n,
        nv)`` booleans, default: all) is false.
        """
        arrays = [np.asarray(a, dtype=float) for a in (q, qd, qdd, effort)]
        keep = np.ones(arrays[0].shape, dtype=bool) if keep is None else \
            np.asarray(keep, dtype=bool)
        if keep.shape != arrays[0].shape:
            raise ValueError('keep has shape %s; the states have %s'
                             % (keep.shape, arrays[0].shape))
        finite = np.ones(len(arrays[0]), dtype=bool)
        for a in arrays:
            finite &= np.isfinite(a).all(axis=1)
        if not finite.all():
            arrays = [a[finite] for a in arrays]
            keep = keep[finite]
        q, qd, qdd, effort = arrays
        n = len(q)
        with blas_threads(1):
            self._fold(q, qd, qdd, effort, keep, chunk, progress)
        self.samples += n
        if n:
            self.q_min = np.minimum(self.q_min, q.min(axis=0))
            self.q_max = np.maximum(self.q_max, q.max(axis=0))
            self.qd_square += (qd ** 2).sum(axis=0)
            self.tau_square += (effort ** 2).sum(axis=0)
        return self

    def _fold(self, q, qd, qdd, effort, keep, chunk, progress):
        import time
        from scipy.linalg import qr
        n = len(q)
        layout = self.layout
        for start in range(0, n, chunk):
            rows = slice(start, min(n, start + chunk))
            t0 = time.perf_counter()
            A = layout.columns(q[rows], qd[rows], qdd[rows])
            t1 = time.perf_counter()
            for j, cols in enumerate(layout.row_columns):
                Aj, tau, fitted = A[:, j, cols], effort[rows, j], keep[rows, j]
                if not fitted.all():
                    Aj, tau = Aj[fitted], tau[fitted]
                self.fitted[j] += len(tau)
                block = np.empty((Aj.shape[0] + self.factors[j].shape[0], len(cols) + 1))
                block[:self.factors[j].shape[0]] = self.factors[j]
                block[self.factors[j].shape[0]:, :-1] = Aj
                block[self.factors[j].shape[0]:, -1] = tau
                self.factors[j] = qr(block, mode='r', overwrite_a=True,
                                     check_finite=False)[0][:len(cols) + 1]
            self.timing['regressor'] += t1 - t0
            self.timing['fold'] += time.perf_counter() - t1
            if progress is not None:
                progress(rows.stop, n)

    def joint_rows(self, j):
        """Joint ``j``'s factor embedded in all ``p + 1`` columns (last: the efforts)."""
        layout = self.layout
        factor = self.factors[j]
        out = np.zeros((factor.shape[0], layout.p + 1))
        out[:, layout.row_columns[j]] = factor[:, :-1]
        out[:, layout.dependent] = out[:, layout.base] @ layout.K  # Y_dep = Y_base K
        out[:, -1] = factor[:, -1]
        return out

    def residual_square(self, x):
        """Per joint, the sum of squared ``effort - A x`` over its rows folded in."""
        out = np.zeros(self.layout.model.nv)
        for j in range(len(self.factors)):
            rows = self.joint_rows(j)
            out[j] = np.sum((rows[:, :-1] @ x - rows[:, -1]) ** 2)
        return out

    def weighted_factor(self, weights):
        """Return the ``(p + 1, p + 1)`` factor, joint ``j``'s rows times ``weights[j]``."""
        rows = np.concatenate([w * self.joint_rows(j) for j, w in enumerate(weights)])
        R = np.linalg.qr(rows, mode='r')
        out = np.zeros((self.layout.p + 1, self.layout.p + 1))
        out[:R.shape[0]] = R
        return out


def moving(model, qd, min_speed, span=0):
    """
    Return where each joint moves steadily: ``(n, nv)`` booleans.

    True where the joint's speed is ``min_speed`` or more at the state and at the ``span``
    states on either side (a derivative taken over a window that holds a stop or a slip is
    not the motion's); a non-finite speed counts as a stop. ``qd`` ``(n, nv)`` in order;
    ``min_speed`` in rad/s (:func:`unit_scale` for prismatic joints).
    """
    qd = np.asarray(qd, dtype=float)
    if not min_speed > 0.0:
        return np.ones(qd.shape, dtype=bool)
    speed = np.abs(qd)
    speed[~np.isfinite(speed)] = 0.0
    if span > 0 and len(speed):
        from scipy.ndimage import minimum_filter1d
        speed = minimum_filter1d(speed, 2 * int(span) + 1, axis=0, mode='nearest')
    return speed >= min_speed * unit_scale(model)


def barely_moved(stack, min_range=0.1, min_speed=0.05):
    """
    Joints whose motion cannot excite much.

    Indices of the joints whose position range is under ``min_range`` or whose RMS speed is
    under ``min_speed`` (rad, rad/s; :func:`unit_scale` for prismatic joints).
    """
    model = stack.layout.model
    out = []
    for j, scale in enumerate(unit_scale(model)):
        span = stack.q_max[j] - stack.q_min[j]
        rms = np.sqrt(stack.qd_square[j] / max(stack.samples, 1))
        if not (span >= min_range * scale) or not (rms >= min_speed * scale):
            out.append(j)
    return out
