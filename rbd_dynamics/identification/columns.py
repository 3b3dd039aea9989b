"""
The columns of identification: the inertial parameters and the drive, and the base parameters.

The torques are linear in the parameters: ``tau = Y(q, qd, qdd) pi + D(qd, qdd) d`` with ``Y``
the regressor of :func:`rbd_dynamics.regressor` (ten parameters per body) and ``D`` the drive
columns of :mod:`rbd_dynamics.drive` (per joint: viscous ``qd``, Coulomb ``tanh(qd /
coulomb_velocity)``, armature ``qdd`` where it can be told from the links, and an effort offset
``1``, a nuisance parameter of the sensor). :class:`Layout` names the columns and decides, once
and for ``excite`` and ``identify`` alike, which combinations any motion could determine at all
(the *structural* base parameters, from the regressor at random states: a QR decomposition with
column pivoting of the columns at their parameters' physical size gives the independent
columns and ``K`` with ``Y_dep = Y_base K``, so the base parameters are ``pi_base + K
pi_dep``).
"""

import numpy as np

from .blas import blas_threads
from ..analysis import AnalysisError
from ..drive import COULOMB_VELOCITY, drive_columns, DRIVE_TERMS
from ..eom import regressor

PARAMETER_NAMES = ('m', 'mcx', 'mcy', 'mcz', 'ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz')
_STRUCTURAL_STATES = 64  # random states per column of the structural regressor (at least)
# A column whose torques, at the parameter's physical size, are below this share of the largest
# ones is taken as silent or dependent: URDF angles written as 1.5708 for pi / 2 leave columns
# about 1e-8 of the others that no motion could determine.
_RANK_TOL = 1e-6


def _random_states(model, count, rng):
    """States ``(q, qd, qdd)`` ``(count, nv)`` spread over the joints' ranges."""
    q = rng.uniform(-np.pi, np.pi, (count, model.nq))
    qd = rng.normal(0.0, 1.0, (count, model.nv))
    qdd = rng.normal(0.0, 1.0, (count, model.nv))
    return q, qd, qdd


def _rank_and_pivots(A, tol):
    """Numerical rank (diagonal of R over its first above ``tol``) and pivoted column order."""
    from scipy.linalg import qr
    with blas_threads(1):
        _, R, piv = qr(A, mode='economic', pivoting=True)
    diag = np.abs(np.diag(R))
    rank = int(np.count_nonzero(diag > tol * diag[0])) if len(diag) and diag[0] > 0 else 0
    return rank, piv


def link_scales(theta, total_mass=None):
    """
    Physical size of each inertial parameter, ``(nb * 10,)`` from parameters ``(nb * 10,)``.

    Body ``b``: a mass ``m_b`` (its own, at least 5 % of the mean body mass) and a length
    ``l_b`` (its centre of mass distance, at least 0.1 m): ``m_b`` for the mass, ``m_b l_b``
    for the first moments and ``m_b l_b^2`` for the inertias.
    """
    theta = np.asarray(theta, dtype=float).reshape(-1, 10)
    nb = len(theta)
    total = max(float(theta[:, 0].clip(0).sum()) if total_mass is None else total_mass, 1e-3)
    scale = np.empty((nb, 10))
    for b in range(nb):
        m = max(theta[b, 0], 0.05 * total / max(nb, 1), 1e-6)
        length = 0.1
        if theta[b, 0] > 0:
            length = max(length, np.linalg.norm(theta[b, 1:4]) / theta[b, 0])
        scale[b] = [m] + [m * length] * 3 + [m * length ** 2] * 6
    return scale.reshape(-1)


class Layout:
    """
    The columns of the stacked regressor and the structure of the base parameters.

    Attributes
    ----------
    model
        the :class:`~rbd_dynamics.Model`.
    coulomb_velocity
        ``(nv,)`` width of the smooth sign of Coulomb friction per joint [rad/s or m/s] (one
        number given: every joint's).
    names
        ``(p,)`` column names: ``'<link>.<parameter>'`` (:data:`PARAMETER_NAMES`, body
        after body in ``model.body_links`` order) then ``'<joint>.<term>'`` for the drive.
    n_links
        ``10 * model.nb``: the inertial columns come first.
    drive
        ``{(term, joint index): column}`` of the drive columns present.
    fixed_armature
        joint indices whose armature is not identified (kept at the prior's value):
        ``inseparable_armature`` (no motion can tell it from the links' inertia) and those
        left out by the ``armature`` argument.
    row_columns
        per joint, the base columns that can be non-zero in its row (what is stacked).
    base
        ``(r,)`` columns of the structural base parameters; ``dependent`` the others that
        any motion sees; ``silent`` the columns no motion sees (zero everywhere).
    K
        ``(r, len(dependent))``: base parameters ``= x[base] + K @ x[dependent]``.
    null
        ``(p, p - r)`` a basis of the directions no motion sees (regressor null space).

    """

    def __init__(self, model, coulomb_velocity=COULOMB_VELOCITY, offset=True, armature=True,
                 seed=0):
        widths = np.asarray(coulomb_velocity, dtype=float)
        if widths.ndim and widths.shape != (model.nv,):
            raise AnalysisError('coulomb_velocity needs one width or %d, got %d'
                                % (model.nv, widths.size))
        widths = np.broadcast_to(widths, (model.nv,))
        if not (np.isfinite(widths).all() and (widths > 0).all()):
            raise AnalysisError('coulomb_velocity must be positive, got %r'
                                % (coulomb_velocity,))
        self.model = model
        self.coulomb_velocity = widths.copy()
        nv, nb = model.nv, model.nb
        self.n_links = 10 * nb
        rng = np.random.default_rng(seed)
        count = max(_STRUCTURAL_STATES, 2 * (10 * nb + 4 * nv) // max(nv, 1) + 8)
        q, qd, qdd = _random_states(model, count, rng)
        Y = regressor(model, q, qd, qdd)  # (count, nv, 10 nb)
        # every drive column a joint could have; chosen below
        candidates = [('viscous', j) for j in range(nv)] + [('coulomb', j) for j in range(nv)]
        if offset:
            candidates += [('offset', j) for j in range(nv)]
        columns = drive_columns(qd, qdd, widths)

        def drive_block(terms):
            block = np.zeros((count, nv, len(terms)))
            for k, (term, j) in enumerate(terms):
                block[:, j, k] = columns[:, j, DRIVE_TERMS.index(term)]
            return block

        # columns at the physical size of their parameters: torques comparable across columns
        theta = model.inertial_parameters()
        link_scale = link_scales(theta)
        tau_rms = np.sqrt(np.mean((Y @ theta) ** 2, axis=0))
        drive_scale = np.maximum(tau_rms, 1e-3 * max(tau_rms.max(), 1e-9))

        def scaled(terms):
            scale = np.concatenate([link_scale, [drive_scale[j] for _, j in terms]])
            A = np.concatenate([Y, drive_block(terms)], axis=2).reshape(count * nv, -1)
            return A * scale, scale

        def rank_of(terms):
            return _rank_and_pivots(scaled(terms)[0], _RANK_TOL)[0]

        chosen = list(candidates)
        rank = rank_of(chosen)
        self.options = {'coulomb_velocity': coulomb_velocity, 'offset': offset,
                        'armature': armature, 'seed': seed}
        allowed = (range(nv) if armature is True else () if armature is False
                   else sorted({int(j) for j in armature}))
        self.fixed_armature = [j for j in range(nv) if j not in allowed]
        #: joints whose armature no motion can tell from the links' inertia
        self.inseparable_armature = []
        for j in allowed:  # armature where it is more than the links' inertia
            if rank_of(chosen + [('armature', j)]) > rank:
                chosen.append(('armature', j))
                rank += 1
            else:
                self.fixed_armature.append(j)
                self.inseparable_armature.append(j)
        self.fixed_armature.sort()
        order = {t: k for k, t in enumerate(DRIVE_TERMS)}
        chosen.sort(key=lambda t: (order[t[0]], t[1]))
        self.drive = {t: self.n_links + k for k, t in enumerate(chosen)}
        self.p = self.n_links + len(chosen)
        self.names = tuple(['%s.%s' % (link, name) for link in model.body_links
                            for name in PARAMETER_NAMES]
                           + ['%s.%s' % (model.joint_names[j], term) for term, j in chosen])
        flat, self.scale = scaled(chosen)
        rank, pivots = _rank_and_pivots(flat, _RANK_TOL)
        size = np.abs(flat).max(axis=0)
        seen = size > _RANK_TOL * size.max()
        self.silent = np.flatnonzero(~seen)
        self.base = np.sort(pivots[:rank])
        base = set(self.base.tolist())
        self.dependent = np.array([c for c in range(self.p) if seen[c] and c not in base],
                                  dtype=int)
        blocks = flat.reshape(count, nv, self.p)
        # only base columns are stacked: any motion's dependent columns are Y_base K
        in_base = np.zeros(self.p, dtype=bool)
        in_base[self.base] = True
        self.row_columns = [np.flatnonzero((np.abs(blocks[:, j, :]).max(axis=0)
                                            > _RANK_TOL * size.max()) & in_base)
                            for j in range(nv)]
        # K in physical units: x_base + K x_dep (scaled: flat_dep = flat_base K_s)
        K = np.linalg.lstsq(flat[:, self.base], flat[:, self.dependent], rcond=None)[0] \
            if len(self.dependent) else np.zeros((rank, 0))
        self.K = K * self.scale[self.base][:, None] / self.scale[self.dependent][None, :]
        null = np.zeros((self.p, self.p - rank))
        for k, c in enumerate(self.dependent):
            null[self.base, k] = -self.K[:, k]
            null[c, k] = 1.0
        for k, c in enumerate(self.silent):
            null[c, len(self.dependent) + k] = 1.0
        self.null = null

    def without_armature(self, joints):
        """Return this layout with the armature of ``joints`` (indices) not identified."""
        options = dict(self.options)
        allowed = [j for j in range(self.model.nv) if j not in self.fixed_armature
                   and j not in set(joints)]
        options['armature'] = allowed
        reduced = Layout(self.model, **options)
        reduced.inseparable_armature = sorted(set(self.inseparable_armature)
                                              | set(reduced.inseparable_armature))
        return reduced

    @property
    def rank(self):
        """Return the number of structural base parameters."""
        return len(self.base)

    def base_parameters(self, x):
        """Return the base parameters ``(r,)`` of full parameters ``x``: ``x_b + K x_d``."""
        x = np.asarray(x, dtype=float)
        return x[self.base] + self.K @ x[self.dependent]

    def base_names(self):
        """Name each base parameter: its column and what is folded into it."""
        out = []
        for i, c in enumerate(self.base):
            parts = [self.names[c]]
            for k, d in enumerate(self.dependent):
                if abs(self.K[i, k]) > 1e-9:
                    parts.append('%+.3g %s' % (self.K[i, k], self.names[d]))
            out.append(' '.join(parts))
        return out

    def columns(self, q, qd, qdd):
        """Return the stacked regressor ``(..., nv, p)`` of states ``(..., nv)``."""
        Y = regressor(self.model, q, qd, qdd)
        A = np.zeros(Y.shape[:-1] + (self.p,))
        A[..., :self.n_links] = Y
        self._drive_columns(A, qd, qdd)
        return A

    def _drive_columns(self, A, qd, qdd):
        columns = drive_columns(qd, qdd, self.coulomb_velocity)
        for (term, j), c in self.drive.items():
            A[..., j, c] = columns[..., j, DRIVE_TERMS.index(term)]

    def prior(self, viscous=None, coulomb=None, armature=None):
        """
        Return the description's parameters ``(p,)``: its inertias and its drive.

        Viscous and Coulomb friction default to the URDF's ``<dynamics damping friction>``,
        armature and offsets to zero.
        """
        model = self.model
        x = np.zeros(self.p)
        x[:self.n_links] = model.inertial_parameters()
        values = {'viscous': model.damping if viscous is None else viscous,
                  'coulomb': model.friction if coulomb is None else coulomb,
                  'armature': np.zeros(model.nv) if armature is None else armature,
                  'offset': np.zeros(model.nv)}
        for (term, j), c in self.drive.items():
            x[c] = np.asarray(values[term], dtype=float).reshape(-1)[j]
        return x

    def drive_values(self, x, prior=None):
        """``{term: (nv,) values}`` of full parameters ``x`` (absent columns from ``prior``)."""
        out = {}
        for term in DRIVE_TERMS:
            values = np.zeros(self.model.nv)
            for j in range(self.model.nv):
                c = self.drive.get((term, j))
                if c is not None:
                    values[j] = x[c]
                elif prior is not None and term in prior:
                    values[j] = prior[term][j]
            out[term] = values
        return out


def unit_scale(model):
    """
    Per joint, 1 for a revolute joint and 0.1 for a prismatic one: ``(nv,)``.

    Thresholds in radians (rad/s) apply to prismatic joints as a tenth of them in metres
    (m/s). For models with one coordinate per joint (the analysis refuses others).
    """
    if len(model.joint_types) != model.nv:
        raise AnalysisError('joint states carry one coordinate per joint; the model has '
                            '%d joints and %d velocities' % (len(model.joint_types), model.nv))
    return np.where(np.array(model.joint_types) == 'prismatic', 0.1, 1.0)
