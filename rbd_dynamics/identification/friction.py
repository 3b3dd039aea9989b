"""
The width of each joint's smooth sign of Coulomb friction, identified from the data.

The drive model's Coulomb term ``coulomb * tanh(qd / coulomb_velocity)`` is linear in
``coulomb`` but not in the width ``coulomb_velocity``, and joints differ in it: a harmonic drive
changes the sign of its friction over a few hundredths of a radian per second, a belt or a
lightly loaded wrist over tenths. :func:`coulomb_widths` finds one width per joint by
coordinate descent around the linear fit, on a subsample of the fitted states:

1. the least-squares fit of all parameters with the current widths (the regressor of every
   state is the same for any width but for the Coulomb columns);
2. per joint, a one-dimensional search of the width: the joint's own rows with every other
   parameter's torque removed, fitted by its Coulomb, viscous and offset terms alone, on a
   logarithmic grid of widths and then refined between the grid's neighbours of the best;
3. again from 1. with the new widths until they stop changing.

The widths then define the columns the whole recording is stacked with (:class:`.Layout`).
"""

import numpy as np

from .columns import Layout, unit_scale
from ..drive import COULOMB_VELOCITY, drive_columns
from ..numerics import column_norms

#: Range of widths searched [rad/s; a tenth in m/s for prismatic joints].
WIDTHS = (1e-3, 1.0)
#: Points of the logarithmic grid over :data:`WIDTHS` (neighbours 19 % apart).
GRID = 41
#: Regressor entries of the subsample at most (states x joints x columns).
SUBSAMPLE_ENTRIES = 2e7
#: Subsample size at most [states].
SUBSAMPLE_STATES = 20000
SWEEPS = 4


def subsample(arrays, keep, size):
    """Every k-th state of ``arrays`` (each ``(n, ...)``) and of ``keep``: at most ``size``."""
    n = len(keep)
    stride = max(1, int(np.ceil(n / max(size, 1))))
    return [a[::stride] for a in arrays], keep[::stride]


def coulomb_widths(model, q, qd, qdd, effort, keep, start, offset=True, armature=True,
                   sweeps=SWEEPS):
    """
    Return the width of every joint's smooth sign that fits the efforts best: ``(nv,)``.

    Parameters
    ----------
    model
        the :class:`~rbd_dynamics.Model`.
    q, qd, qdd, effort
        ``(n, nv)`` the fitted states and their efforts (a subsample is used: at most
        :data:`SUBSAMPLE_STATES`, and :data:`SUBSAMPLE_ENTRIES` regressor entries).
    keep
        ``(n, nv)`` booleans: the joint rows fitted.
    start
        the widths (or one width) to start from; a joint whose friction the data do not
        show keeps its start.
    offset, armature
        the drive columns fitted beside (as :class:`.Layout`).
    sweeps
        rounds of the coordinate descent at most.

    """
    from scipy.optimize import minimize_scalar
    nv = model.nv
    widths = np.broadcast_to(np.asarray(start, dtype=float), (nv,)).copy()
    layout = Layout(model, widths, offset=offset, armature=armature)
    size = int(min(SUBSAMPLE_STATES, SUBSAMPLE_ENTRIES / max(nv * layout.p, 1)))
    (q, qd, qdd, effort), keep = subsample([np.asarray(a, dtype=float) for a in
                                            (q, qd, qdd, effort)], np.asarray(keep, bool), size)
    finite = np.isfinite(q).all(1) & np.isfinite(qd).all(1) & np.isfinite(qdd).all(1) \
        & np.isfinite(effort).all(1)
    q, qd, qdd, effort, keep = q[finite], qd[finite], qdd[finite], effort[finite], keep[finite]
    if not len(q):
        return widths
    A = layout.columns(q, qd, qdd)
    base = layout.base
    own = {j: [layout.drive[(term, j)] for term in ('coulomb', 'viscous', 'offset')
               if (term, j) in layout.drive] for j in range(nv)}
    scale = unit_scale(model)
    grid = np.exp(np.linspace(np.log(WIDTHS[0]), np.log(WIDTHS[1]), GRID))
    for _ in range(sweeps):
        coulomb = drive_columns(qd, None, widths, ('coulomb',))[..., 0]
        for j in range(nv):
            A[:, j, layout.drive[('coulomb', j)]] = coulomb[:, j]
        x = np.zeros(layout.p)
        x[base] = _least_squares(A[keep][:, base], effort[keep])
        found = widths.copy()
        for j in range(nv):
            fitted = keep[:, j]
            if fitted.sum() < 10:
                continue
            others = np.setdiff1d(np.arange(layout.p), own[j])
            partial = effort[fitted, j] - A[fitted, j][:, others] @ x[others]
            found[j] = _best_width(qd[fitted, j], partial, 'offset' in
                                   {t for t, k in layout.drive if k == j},
                                   grid * scale[j], widths[j], minimize_scalar)
        done = np.max(np.abs(np.log(found / widths))) < 1e-3
        widths = found
        if done:
            break
    return widths


def _least_squares(A, b):
    """Least squares by the normal equations of the columns scaled to unit norm (small ``p``)."""
    norms = column_norms(A)
    A = A / norms
    return np.linalg.lstsq(A.T @ A, A.T @ b, rcond=1e-12)[0] / norms


def _best_width(qd, partial, offset, grid, current, minimize_scalar):
    """Return the width whose Coulomb term (with viscous and offset) fits ``partial`` best."""
    # the other columns' products once; per width only those with tanh(qd / width)
    others = list(drive_columns(qd, terms=('viscous', 'offset') if offset else ('viscous',)).T)
    gram = np.array([[a @ b for b in others] for a in others])
    other_rhs = np.array([a @ partial for a in others])
    total = partial @ partial

    def cost(width):
        t = drive_columns(qd, None, width, ('coulomb',))[:, 0]
        G = np.empty((len(others) + 1,) * 2)
        G[0, 0] = t @ t
        G[0, 1:] = G[1:, 0] = [t @ a for a in others]
        G[1:, 1:] = gram
        rhs = np.concatenate([[t @ partial], other_rhs])
        coef = np.linalg.lstsq(G, rhs, rcond=1e-12)[0]
        return float(total - coef @ rhs)

    costs = np.array([cost(w) for w in grid])
    k = int(np.argmin(costs))
    lower, upper = grid[max(k - 1, 0)], grid[min(k + 1, len(grid) - 1)]
    refined = minimize_scalar(lambda s: cost(np.exp(s)), bounds=(np.log(lower), np.log(upper)),
                              method='bounded', options={'xatol': 1e-4})
    best = float(np.exp(refined.x)) if refined.fun <= costs[k] else float(grid[k])
    # friction the data do not show: no width is better than another
    if not min(refined.fun, costs[k]) < (1.0 - 1e-6) * cost(current):
        return float(current)
    return best


def recording_widths(model, recordings, offset, armature):
    """
    Identify the width of every joint's smooth sign from recordings (:func:`coulomb_widths`).

    On an even subsample of all states of ``recordings``, the slow ones included (``--min-speed``
    leaves them out of the fit, but the change of sign the width describes happens there),
    starting from the node's default width.
    """
    total = sum(len(r) for r in recordings)
    stride = max(1, int(np.ceil(total / SUBSAMPLE_STATES)))
    parts = [np.concatenate([getattr(r, name)[::stride] for r in recordings])
             for name in ('q', 'qd', 'qdd', 'effort')]
    return coulomb_widths(model, *parts, np.ones(parts[0].shape, dtype=bool), COULOMB_VELOCITY,
                          offset, armature)
