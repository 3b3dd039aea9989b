"""
The drive's effort scales estimated with the rest: ``Y pi + D d + o - diag(e) k = 0``.

A driver that reports current ``e`` gives joint torques ``k_j e_j``; the torques are linear in
the inertial parameters, the drive and the offsets, so the scales ``k`` join them as unknowns
and the problem stays linear. It is homogeneous: every unknown times a common factor fits as
well. That factor is fixed

- by recordings holding a **load of known mass** on a link (``--load LINK:MASS BAG ...``): their
  rows carry the load's regressor block (its ten parameters about the link's origin), the mass
  known and moved to the right-hand side, its centre of mass and inertia unknowns; or, without
  one,
- by the **description's inertial parameters**: the solution's direction (the least singular
  vector of the weighted rows) is scaled so that its base parameters come closest to the
  description's, a weaker reference (a CAD model's masses are not a measurement).

A load's recordings are not the unloaded ones: the gears' friction grows with the load they
carry, and the motors warm up between recordings. Their rows carry, per joint, their own change
of viscous and Coulomb friction and of offset beside the arm's (which the unloaded recordings
fix), so that such a change is not taken for a scale.

Each joint's rows are folded into a triangular factor as :class:`~.stack.Stack` does, and
weighted by the spread of their residual. The scales' standard deviations come from the
least-squares covariance with the common factor held fixed.
"""

import numpy as np

from .blas import blas_threads
from .fit import NotExcitedError
from .payload import joint_columns
from ..analysis import AnalysisError
from ..drive import drive_columns
from ..numerics import column_norms

#: A scale whose standard deviation is more than this share of it is weakly determined.
WEAK = 0.05
#: Per load and joint, what may have changed in the drive since the unloaded recordings: its
#: viscous and Coulomb friction and its offset (the drive's columns of these terms).
CHANGED_TERMS = ('viscous', 'coulomb', 'offset')
CHANGES = len(CHANGED_TERMS)


class ScaleFit:
    """
    Scales estimated with the arm's parameters.

    Attributes
    ----------
    scale
        ``(nv,)`` joint torque per unit of the driver's effort, ``model.joint_names`` order.
    std
        ``(nv,)`` their standard deviations.
    weak
        names of the joints whose scale is weakly determined (relative deviation above
        :data:`WEAK`).
    reference
        ``'load'`` or ``'description'``: what fixed the common factor.
    loads
        ``[(link, mass, (10,) parameters), ...]`` the loads' estimated parameters.

    """


class _Folder:
    """Per joint, the triangular factor of rows ``[columns | rhs]`` folded in chunks."""

    def __init__(self, nv, width):
        self.factors = [np.zeros((0, width + 1)) for _ in range(nv)]
        self.width = width
        self.count = np.zeros(nv, dtype=np.int64)

    def add(self, j, rows, rhs):
        from scipy.linalg import qr
        self.count[j] += len(rows)
        block = np.vstack([self.factors[j], np.column_stack([rows, rhs])])
        self.factors[j] = qr(block, mode='r', overwrite_a=True,
                             check_finite=False)[0][:self.width + 1]

    def weighted(self, weights):
        rows = np.vstack([w * f for w, f in zip(weights, self.factors)])
        return np.linalg.qr(rows, mode='r')


def estimate_scales(layout, recordings, loads=(), rows=None, chunk=4096):
    """
    Estimate the effort scales (see the module docstring).

    Parameters
    ----------
    layout
        the :class:`~.columns.Layout` of the arm (its base columns are the arm's unknowns).
    recordings
        :class:`~.recordings.Recording` s without a load, efforts in the driver's units.
    loads
        ``[(link, mass, [Recording, ...]), ...]`` recordings holding a load of known mass.
    rows
        ``rows(recording)``: the ``(n, nv)`` mask of each joint's states to fit (a joint at
        rest sticks: its friction is anywhere within its Coulomb level, and its effort says
        nothing of its scale); ``None``: every state.
    chunk
        states per regressor call.

    Returns
    -------
    :class:`ScaleFit`.

    Raises
    ------
    AnalysisError
        a load on a link no joint moves, or data that determine no scale.

    """
    with blas_threads(1):
        return _estimate(layout, recordings, loads, rows, chunk)


def _estimate(layout, recordings, loads, fitted, chunk):
    model = layout.model
    nv, base = model.nv, layout.base
    r = len(base)
    # arm base, loads less their mass, per load and joint the drive's change (viscous, Coulomb,
    # offset), scales
    changes = r + 9 * len(loads)
    unknowns = changes + CHANGES * nv * len(loads)
    width = unknowns + nv
    folder = _Folder(nv, width)
    widths = np.broadcast_to(np.asarray(layout.coulomb_velocity, dtype=float), (nv,))

    def fold(recording, load=None):
        mask = np.ones(recording.effort.shape, dtype=bool) if fitted is None \
            else fitted(recording)
        for first in range(0, len(recording), chunk):
            part = slice(first, first + chunk)
            q, qd, qdd = recording.q[part], recording.qd[part], recording.qdd[part]
            effort = recording.effort[part]
            A = layout.columns(q, qd, qdd)[..., base]
            L = None if load is None else joint_columns(model, loads[load][0], q, qd, qdd)
            changed = None if load is None else drive_columns(qd, None, widths, CHANGED_TERMS)
            for j in range(nv):
                rows = np.zeros((len(q), width))
                rows[:, :r] = A[:, j]
                rhs = np.zeros(len(q))
                if L is not None:
                    rows[:, r + 9 * load:r + 9 * load + 9] = L[:, j, 1:]
                    rhs = -L[:, j, 0] * loads[load][1]
                    # what changed in joint j's drive under this load (a loaded gear's
                    # friction, a warmer motor's), beside the arm's own friction
                    at = changes + CHANGES * (nv * load + j)
                    rows[:, at:at + CHANGES] = changed[:, j]
                rows[:, unknowns + j] = -effort[:, j]
                keep = np.isfinite(rows).all(axis=1) & np.isfinite(rhs) & mask[part, j]
                folder.add(j, rows[keep], rhs[keep])

    # each joint's effort noise, from the efforts' fourth differences: 70 sigma^2 for white
    # noise, next to nothing for a smooth motion; their median, not their mean, so that
    # friction's sharp reversals do not count
    parts = []
    for recording in list(recordings) + [p for _, _, rec in loads for p in rec]:
        d4 = np.diff(recording.effort, n=4, axis=0)
        parts.append(np.abs(d4[np.isfinite(d4).all(axis=1)]))
    d4 = np.concatenate(parts) if parts else np.zeros((0, nv))
    noise2 = (1.4826 * np.median(d4, axis=0)) ** 2 / 70.0 if len(d4) else np.zeros(nv)
    for recording in recordings:
        fold(recording)
    for k, (link, mass, parts) in enumerate(loads):
        if model.link_body.get(link, -1) < 0:
            raise AnalysisError('the load on %s: no joint of the model moves that link' % link)
        for recording in parts:
            fold(recording, k)

    # The efforts are a column of this system, noise and all: their noise would add n sigma^2
    # to each scale's diagonal of the Gram matrix and pull every scale towards 0 (errors in
    # variables); that share is taken off. Weights: each joint's rows by its residual's spread.
    # the effort's mean square per joint: where the noise estimate is not well below it (a
    # joint that hardly moves, a finger), it is no noise estimate, and nothing is taken off
    energy = np.array([f[:, unknowns + j] @ f[:, unknowns + j]
                       for j, f in enumerate(folder.factors)]) / np.maximum(folder.count, 1)
    noise2 = np.where(noise2 < 0.01 * energy, noise2, 0.0)
    weights = np.ones(nv)
    for _ in range(3):
        R = folder.weighted(weights)
        correction = np.zeros(width)
        correction[unknowns:] = weights ** 2 * folder.count * noise2
        z = _direct(R, loads, layout, correction)
        x, k = z[:unknowns], z[unknowns:]
        residual = np.array([np.linalg.norm(f[:, :unknowns] @ x - f[:, -1]
                                            + k[j] * f[:, unknowns + j])
                             for j, f in enumerate(folder.factors)])
        spread = residual / np.sqrt(np.maximum(folder.count, 1))
        # (within a factor of 1000: a joint the data fit all but exactly must not outweigh
        # the others a millionfold)
        weights = 1.0 / np.maximum(spread, 1e-3 * spread.max()) if spread.max() > 0 \
            else np.ones(nv)
    R = folder.weighted(weights)
    correction = np.zeros(width)
    correction[unknowns:] = weights ** 2 * folder.count * noise2
    z = _direct(R, loads, layout, correction)
    norms = column_norms(R[:, :-1])
    out = ScaleFit()
    k = z[unknowns:]
    if not np.all(np.isfinite(k)) or np.any(k == 0):
        raise AnalysisError('the recordings determine no effort scale (a joint whose efforts '
                            'are all zero, or no motion)')
    out.scale = k
    out.std = _deviations(R, norms, z, unknowns, loads, int(folder.count.sum()))
    out.weak = [n for n, s, d in zip(model.joint_names, k, out.std) if not d <= WEAK * abs(s)]
    lost = [n for n, s, d in zip(model.joint_names, k, out.std) if not d < 0.5 * abs(s)]
    if lost:
        raise NotExcitedError(
            'the recordings do not determine the effort scale of %s (its standard deviation is '
            'half the scale or more): record it moving%s, hold it, or give the scales in a file'
            % (', '.join(lost), ' under the load' if loads else ''),
            lost)
    out.reference = 'load' if loads else 'description'
    out.loads = [(link, mass, np.concatenate([[mass], z[r + 9 * i:r + 9 * i + 9]]))
                 for i, (link, mass, _) in enumerate(loads)]
    return out


def _direct(R, loads, layout, correction):
    """
    Return the unknowns of the system ``R`` ``[M | rhs]`` solved at once.

    With loads: least squares, less the bias of ``correction`` ``(width,)`` on the Gram
    matrix's diagonal (the effort columns' noise): ``z = (M^T M - D)^-1 M^T b``, on the
    singular value decomposition of ``M`` (the normal equations themselves would square the
    condition number). Without loads: the least singular vector, scaled by the description.
    """
    norms = column_norms(R[:, :-1])
    M, rhs = R[:, :-1] / norms, R[:, -1]
    if not loads:
        z = np.linalg.svd(M)[2][-1] / norms
        return _description_factor(z, layout) * z
    U, S, Vt = np.linalg.svd(M, full_matrices=False)
    seen = S > np.finfo(float).eps * max(M.shape) * S[0]
    U, S, Vt = U[:, seen], S[seen], Vt[seen]
    # (M^T M - D)^-1 M^T b = V S^-1 (1 - B)^-1 U^T b with B = S^-1 V^T D V S^-1; in a
    # direction where the noise is not small against what the data see (an eigenvalue of B
    # of 1/2 or more: a scale the data hardly determine) the correction would not hold, and
    # none is made there
    B = (Vt * (correction / norms ** 2)) @ Vt.T / np.outer(S, S)
    lam, Q = np.linalg.eigh(B)
    factor = np.where((lam >= 0.0) & (lam < 0.5), 1.0 / (1.0 - lam), 1.0)
    c = Q @ ((Q.T @ (U.T @ rhs)) * factor)
    z = Vt.T @ (c / S)
    return z / norms


def _description_factor(x, layout):
    """
    Return the factor that brings the arm's inertial base parameters closest to the description's.

    Each in its column's own size; the drive's columns (friction the description rarely
    knows) do not count.
    """
    r = len(layout.base)
    inertial = layout.base < layout.n_links
    size = layout.scale[layout.base][inertial]
    a = x[:r][inertial] / size
    b = layout.base_parameters(layout.prior())[inertial] / size
    return float(a @ b) / float(a @ a) if a @ a > 0 else np.nan


def _deviations(R, norms, z, unknowns, loads, rows):
    """Return the standard deviations of the scales (after ``unknowns``), the factor held."""
    M = R[:, :-1] / norms
    residual = M @ (z * norms) - R[:, -1]
    dof = max(rows - M.shape[1], 1)  # the samples folded in, not the factor's rows
    sigma2 = float(residual @ residual) / dof
    if not loads:
        # hold the common factor: drop the direction of the solution itself
        u = z * norms
        u = u / np.linalg.norm(u)
        M = np.vstack([M, 1e6 * u])
    covariance = sigma2 * np.linalg.pinv(M.T @ M)
    std = np.sqrt(np.maximum(np.diag(covariance), 0.0)) / norms
    return std[unknowns:]
