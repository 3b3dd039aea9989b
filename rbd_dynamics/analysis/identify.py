"""
Identification of inertial and drive parameters from measured joint efforts (no ROS).

The torques are linear in the parameters: ``tau = Y(q, qd, qdd) pi + D(qd, qdd) d`` with
``Y`` the regressor of :func:`rbd_dynamics.regressor` (ten parameters per body) and ``D`` the
drive columns of :mod:`rbd_dynamics.drive` (per joint: viscous ``qd``, Coulomb
``tanh(qd / coulomb_velocity)``, armature ``qdd`` where it can be told from the links, and an
effort offset ``1``, a nuisance parameter of the sensor). The steps:

1. :class:`Layout`: the columns, and which combinations any motion could determine at all
   (the *structural* base parameters, from the regressor at random states: a QR
   decomposition with column pivoting gives the independent columns and ``K`` with
   ``Y_dep = Y_base K``, so the base parameters are ``pi_base + K pi_dep``).
2. :class:`Stack`: the data, in chunks of states; each joint's rows of the base columns (the
   others follow: ``Y_dep = Y_base K``) are folded into an upper-triangular factor ``R_j`` of
   ``[Y_j D_j tau_j]`` (a QR decomposition of the previous factor with the new rows): memory
   stays ``nv (r + 1)^2`` floats for any recording, and the per-joint factors let the weights
   be chosen after the data are read. A joint's rows where it does not move steadily can be
   left out (:func:`moving`): a joint at rest sticks, and its Coulomb friction is then
   anywhere between ``-coulomb`` and ``coulomb``, which no model of the state can predict;
   fitted, those rows would pull every parameter towards them.
3. :func:`solve`: ordinary least squares of the base parameters, the residual standard
   deviation ``sigma_j`` of each joint, weighted least squares with weights ``1 / sigma_j``
   (the base parameters the data determine); then the physically consistent full parameters:
   each body's own link is written in the log-Cholesky parameters of its pseudo-inertia
   (Rucker & Wensing, "Smooth parameterization of rigid-body inertia", IEEE RA-L 2022), so
   any value of them is a body whose 4x4 pseudo-inertia is positive definite, and
   ``scipy.optimize.least_squares`` minimises the weighted torque residual plus the distance
   to the description *in the directions no motion can see* (the null space of the
   regressor). Where the data are silent the description's values stay; where they speak
   the data decide.

A body made of several links joined by fixed joints has one set of ten parameters; what the
data change is put on the body's own link (the child link of its joint) and the links beyond
the fixed joints keep their description (:mod:`.writeback`). The consistency constraint is on
that own link, so the written URDF has a consistent inertia on every link.
"""

import numpy as np

from . import AnalysisError, EXIT_NOT_EXCITED
from ..drive import COULOMB_VELOCITY
from ..eom import regressor

PARAMETER_NAMES = ('m', 'mcx', 'mcy', 'mcz', 'ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz')
DRIVE_TERMS = ('viscous', 'coulomb', 'armature', 'offset')
DEFAULT_MAX_CONDITION = 1e5
DEFAULT_CHUNK = 4096  # states per regressor call
#: Slowest speed of a joint whose rows are fitted [rad/s; a tenth of it in m/s for prismatic
#: joints]: five times the default width of the smooth sign, where it is within 1e-4 of the
#: sign.
DEFAULT_MIN_SPEED = 0.05
_STRUCTURAL_STATES = 64  # random states per column of the structural regressor (at least)
# A column whose torques, at the parameter's physical size, are below this share of the largest
# ones is taken as silent or dependent: URDF angles written as 1.5708 for pi / 2 leave columns
# about 1e-8 of the others that no motion could determine.
_RANK_TOL = 1e-6
# weights of the distance to the description (in the directions no motion sees) against the
# largest singular value of the weighted data, one solve each (see _consistent)
_PRIOR_WEIGHTS = (1e-3, 1e-6)


class NotExcitedError(AnalysisError):
    """
    The motion does not determine the base parameters.

    Attributes
    ----------
    joints
        the joints that barely moved.
    condition
        the condition number of the base regressor.
    exit_code
        3, the command's exit code for it.

    """

    exit_code = EXIT_NOT_EXCITED

    def __init__(self, message, joints=(), condition=np.inf):
        super().__init__(message)
        self.joints = tuple(joints)
        self.condition = condition


_OPENBLAS_SETTERS = ('openblas_set_num_threads', 'openblas_set_num_threads64_',
                     'scipy_openblas_set_num_threads', 'scipy_openblas_set_num_threads64_')
_OPENBLAS_GETTERS = tuple(name.replace('set_', 'get_') for name in _OPENBLAS_SETTERS)


def _openblas_libraries():
    """``[(get, set)]`` thread functions of the OpenBLAS libraries loaded (NumPy's, SciPy's)."""
    import ctypes
    try:
        with open('/proc/self/maps') as stream:
            paths = {line.split()[-1] for line in stream
                     if 'openblas' in line.lower() and '.so' in line}
    except OSError:  # not Linux
        return []
    out = []
    for path in sorted(p for p in paths if p.startswith('/')):
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        for get, put in zip(_OPENBLAS_GETTERS, _OPENBLAS_SETTERS):
            if hasattr(library, get) and hasattr(library, put):
                out.append((getattr(library, get), getattr(library, put)))
                break
    return out


class blas_threads:  # noqa: N801 (used like a function: with blas_threads(1): ...)
    """
    Limit the OpenBLAS libraries' threads within a ``with`` block.

    The factors here are small (about a hundred columns): on two cores shared with other work,
    BLAS threads contend and every decomposition takes many times longer than on one
    thread. Where the BLAS is not OpenBLAS (or the platform not Linux) this does nothing.
    """

    def __init__(self, count=1):
        self.count = int(count)
        self.saved = []

    def __enter__(self):
        try:
            for get, put in _openblas_libraries():
                self.saved.append((put, int(get())))
                put(self.count)
        except Exception:  # a library that does not behave as OpenBLAS: leave it alone
            pass
        return self

    def __exit__(self, *exc):
        for put, count in self.saved:
            put(count)
        self.saved = []
        return False


# Inertial parameters and pseudo-inertias -------------------------------------------------------

def parameters_from_spatial(inertia):
    """Ten parameters ``(..., 10)`` of spatial inertias ``(..., 6, 6)`` (Featherstone layout)."""
    inertia = np.asarray(inertia, dtype=float)
    out = np.empty(inertia.shape[:-2] + (10,))
    out[..., 0] = inertia[..., 3, 3]
    out[..., 1] = inertia[..., 2, 4]
    out[..., 2] = inertia[..., 0, 5]
    out[..., 3] = inertia[..., 1, 3]
    out[..., 4:] = inertia[..., (0, 0, 0, 1, 1, 2), (0, 1, 2, 1, 2, 2)]
    return out


def rotational_inertia(theta):
    """``(..., 3, 3)`` rotational inertia about the frame origin of parameters ``(..., 10)``."""
    theta = np.asarray(theta, dtype=float)
    ixx, ixy, ixz, iyy, iyz, izz = (theta[..., k] for k in range(4, 10))
    return np.stack([np.stack([ixx, ixy, ixz], -1), np.stack([ixy, iyy, iyz], -1),
                     np.stack([ixz, iyz, izz], -1)], -2)


def pseudo_inertia(theta):
    """
    4x4 pseudo-inertia ``[[Sigma, h], [h^T, m]]`` of parameters ``(..., 10)``.

    ``Sigma = tr(I) / 2 * 1 - I`` is the second moment of the mass distribution; the body is
    physically consistent (a mass distribution could have it) exactly when this is positive
    semi-definite (Wensing, Kim & Slotine, IEEE RA-L 2017).
    """
    theta = np.asarray(theta, dtype=float)
    inertia = rotational_inertia(theta)
    trace = np.trace(inertia, axis1=-2, axis2=-1)
    out = np.zeros(theta.shape[:-1] + (4, 4))
    out[..., :3, :3] = 0.5 * trace[..., None, None] * np.eye(3) - inertia
    out[..., :3, 3] = theta[..., 1:4]
    out[..., 3, :3] = theta[..., 1:4]
    out[..., 3, 3] = theta[..., 0]
    return out


def parameters_from_pseudo(J):
    """Ten parameters ``(..., 10)`` of pseudo-inertias ``(..., 4, 4)`` (inverse of the above)."""
    J = np.asarray(J, dtype=float)
    sigma = J[..., :3, :3]
    inertia = np.trace(sigma, axis1=-2, axis2=-1)[..., None, None] * np.eye(3) - sigma
    out = np.empty(J.shape[:-2] + (10,))
    out[..., 0] = J[..., 3, 3]
    out[..., 1:4] = J[..., :3, 3]
    out[..., 4:] = inertia[..., (0, 0, 0, 1, 1, 2), (0, 1, 2, 1, 2, 2)]
    return out


def consistency_margin(theta):
    """
    Smallest eigenvalue of the pseudo-inertia over its trace, per body: ``>= 0`` is consistent.

    ``theta`` is ``(..., 10)``; a body without mass gives 0.
    """
    J = pseudo_inertia(theta)
    scale = np.maximum(np.trace(J, axis1=-2, axis2=-1), 1e-300)
    return np.linalg.eigvalsh(J)[..., 0] / scale


# The log-Cholesky parameters: phi = (alpha, d1, d2, d3, s12, s23, s13, t1, t2, t3),
# U = e^alpha [[e^d1, s12, s13, t1], [0, e^d2, s23, t2], [0, 0, e^d3, t3], [0, 0, 0, 1]],
# pseudo-inertia = U U^T (Rucker & Wensing 2022, Eq. 8).
_U_ENTRY = {4: (0, 1), 5: (1, 2), 6: (0, 2), 7: (0, 3), 8: (1, 3), 9: (2, 3)}


def _cholesky_factor(phi):
    U = np.zeros((4, 4))
    U[0, 0], U[1, 1], U[2, 2] = np.exp(phi[1:4])
    for k, (r, c) in _U_ENTRY.items():
        U[r, c] = phi[k]
    U[3, 3] = 1.0
    return np.exp(phi[0]) * U


def parameters_from_log_cholesky(phi):
    """Ten parameters of a body from its log-Cholesky parameters ``phi`` ``(10,)``."""
    U = _cholesky_factor(np.asarray(phi, dtype=float))
    return parameters_from_pseudo(U @ U.T)


def log_cholesky_jacobian(phi):
    """``(theta, dtheta/dphi)``: the parameters and their ``(10, 10)`` Jacobian."""
    phi = np.asarray(phi, dtype=float)
    U = _cholesky_factor(phi)
    scale = np.exp(phi[0])
    dU = np.zeros((10, 4, 4))
    dU[0] = U
    for i in range(3):
        dU[1 + i, i, i] = U[i, i]
    for k, (r, c) in _U_ENTRY.items():
        dU[k, r, c] = scale
    dJ = dU @ U.T
    dJ = dJ + np.swapaxes(dJ, -1, -2)
    return parameters_from_pseudo(U @ U.T), parameters_from_pseudo(dJ).T


def log_cholesky_from_parameters(theta, floor=1e-9):
    """
    Log-Cholesky parameters of the consistent body nearest to ``theta`` ``(10,)``.

    The pseudo-inertia's eigenvalues are raised to at least ``floor`` times its largest one
    (and a massless body gets a tiny mass), so a body on the edge of consistency, or beyond
    it, gets parameters it is close to.
    """
    J = pseudo_inertia(theta)
    w, V = np.linalg.eigh(J)
    top = max(w[-1], 1e-12)
    J = (V * np.maximum(w, floor * top)) @ V.T
    flip = np.arange(3, -1, -1)
    L = np.linalg.cholesky(J[np.ix_(flip, flip)])
    U = L[np.ix_(flip, flip)]  # upper triangular, U U^T = J
    alpha = np.log(U[3, 3])
    U = U / U[3, 3]
    phi = np.empty(10)
    phi[0] = alpha
    phi[1:4] = np.log(np.diag(U)[:3])
    for k, (r, c) in _U_ENTRY.items():
        phi[k] = U[r, c]
    return phi


# The columns ---------------------------------------------------------------------------------

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
        width of the smooth sign of Coulomb friction [rad/s or m/s].
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
        if not (np.isfinite(coulomb_velocity) and coulomb_velocity > 0):
            raise AnalysisError('coulomb_velocity must be positive, got %r' % coulomb_velocity)
        self.model = model
        self.coulomb_velocity = float(coulomb_velocity)
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
        columns = {'viscous': qd, 'coulomb': np.tanh(qd / self.coulomb_velocity),
                   'armature': qdd, 'offset': np.ones_like(qd)}

        def drive_block(terms):
            block = np.zeros((count, nv, len(terms)))
            for k, (term, j) in enumerate(terms):
                block[:, j, k] = columns[term][:, j]
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
        """Return the stacked regressor ``(n, nv, p)`` of states ``(n, nv)`` (small batches)."""
        Y = regressor(self.model, q, qd, qdd)
        A = np.zeros(Y.shape[:-1] + (self.p,))
        A[..., :self.n_links] = Y
        self._drive_columns(A, qd, qdd)
        return A

    def _drive_columns(self, A, qd, qdd):
        for (term, j), c in self.drive.items():
            if term == 'viscous':
                A[:, j, c] = qd[:, j]
            elif term == 'coulomb':
                A[:, j, c] = np.tanh(qd[:, j] / self.coulomb_velocity)
            elif term == 'armature':
                A[:, j, c] = qdd[:, j]
            else:
                A[:, j, c] = 1.0

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


# The stacked data ----------------------------------------------------------------------------

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


# Solving -------------------------------------------------------------------------------------

class Identification:
    """
    What :func:`solve` found.

    Attributes
    ----------
    layout
        the :class:`Layout`.
    samples
        number of states used.
    condition
        condition number of the weighted base regressor (columns scaled to unit norm).
    base
        ``(r,)`` the base parameters of the weighted least-squares fit.
    x
        ``(p,)`` the physically consistent full parameters (``layout.names``).
    x_prior
        ``(p,)`` the description's.
    sigma
        ``(nv,)`` residual standard deviation per joint of the fit [N m or N] (the
        inverse weights).
    base_error
        largest difference between the base parameters of ``x`` and ``base``, relative
        to the largest base parameter.
    weakest
        ``[(column name, share), ...]``: what the least determined combination is made of.
    weak_armature
        joints whose armature the data hardly tell from the other columns (not identified).
    undetermined
        ``{body link: [parameter names]}`` the data say nothing about (description kept).
    combined
        ``{body link: [parameter names]}`` the data see only in combination with others.
    drive
        ``{term: (nv,) values}`` (armature the data cannot separate: the prior's).
    margins
        ``(nb,)`` consistency margin of each body's own link (smallest eigenvalue of its
        pseudo-inertia over its trace; > 0: consistent).
    optimizer
        the ``scipy.optimize.OptimizeResult`` of the consistency step.

    """

    def body_parameters(self):
        """Return the ``(nb, 10)`` identified inertial parameters of every body."""
        return self.x[:self.layout.n_links].reshape(-1, 10)

    def own_link_parameters(self):
        """
        Return ``{link: (10,) parameters}`` of each body's own link, as written back.

        The body's parameters less those of the links merged into it by fixed joints
        (which keep their description), about the own link's origin in its axes.
        """
        model = self.layout.model
        own = self.body_parameters() - own_link_offsets(model)
        return dict(zip(model.body_links, own))


def own_link_offsets(model):
    """
    Parameters of the other links of each body, ``(nb, 10)``.

    The links merged into each body by fixed joints, other than its own (with their
    payloads): they keep their description.
    """
    out = np.zeros((model.nb, 10))
    link_inertia = model.runtime.link_inertia
    for name in model.link_names:
        b = model.link_body[name]
        if b >= 0 and name != model.body_links[b]:
            out[b] += parameters_from_spatial(link_inertia[name])
    return out


def solve(stack, x_prior=None, max_condition=DEFAULT_MAX_CONDITION, max_nfev=400,
          min_separation=0.05):
    """
    Identify the parameters of the states folded into ``stack``.

    Parameters
    ----------
    stack
        a :class:`Stack`.
    x_prior
        ``(p,)`` the description's parameters in ``stack.layout``'s columns (default
        ``layout.prior()``).
    max_condition
        above this condition number of the base regressor the motion does not determine
        the base parameters.
    max_nfev
        evaluations of the consistency step at most.
    min_separation
        an armature column whose angle to the span of the other base columns is under
        this (sine) is not identified: the data cannot tell it from the links' inertia;
        the prior's value stays.

    Returns
    -------
    :class:`Identification` (its ``layout`` may have fewer armature columns than the
    stack's).

    Raises
    ------
    NotExcitedError
        too few states, or a condition number over ``max_condition`` (its ``joints``
        are the joints that barely moved).

    """
    with blas_threads(1):
        return _solve(stack, x_prior, max_condition, max_nfev, min_separation)


def _solve(stack, x_prior, max_condition, max_nfev, min_separation):
    layout = stack.layout
    model = layout.model
    nv = model.nv
    x_prior = layout.prior() if x_prior is None else np.asarray(x_prior, dtype=float)
    prior_drive = layout.drive_values(x_prior)
    still = barely_moved(stack)
    names = [model.joint_names[j] for j in still]
    if stack.fitted.sum() < 2 * layout.rank:
        raise NotExcitedError('%d states (%d joint rows fitted) cannot determine %d base '
                              'parameters' % (stack.samples, stack.fitted.sum(), layout.rank),
                              names)
    # weights 1 / sigma_j from the residuals of ordinary least squares (a minimum-norm
    # solution: what counts here is the residual, which is the same for any solution)
    R = stack.weighted_factor(np.ones(nv))
    x_ols = np.zeros(layout.p)
    x_ols[layout.base] = _normalised_lstsq(R[:, layout.base], R[:, -1], 1e-12)
    dof = np.maximum(1.0, stack.fitted - layout.rank / nv)
    sigma = np.sqrt(stack.residual_square(x_ols) / dof)
    rms_tau = np.sqrt(stack.tau_square / max(stack.samples, 1))
    sigma = np.maximum(sigma, 1e-9 * np.maximum(rms_tau, 1e-9))
    Rw = stack.weighted_factor(1.0 / sigma)
    weak = _weak_armature(layout, Rw, min_separation)
    if weak:
        reduced = layout.without_armature(weak)
        Rw, x_prior = _remap(layout, reduced, Rw, x_prior)
        layout = reduced
    beta, condition = _base_fit(Rw, layout.base)
    if not condition <= max_condition:
        raise NotExcitedError(_not_excited_message(condition, max_condition, names), names,
                              condition)

    result = Identification()
    result.layout, result.samples, result.condition = layout, stack.samples, condition
    result.base, result.sigma, result.x_prior = beta, sigma, x_prior
    result.weak_armature = weak
    result.weakest = _weakest(layout, Rw)
    result.x, result.optimizer = _consistent(layout, Rw, x_prior, layout.scale, max_nfev)
    result.base_error = (np.abs(layout.base_parameters(result.x) - beta).max()
                         / max(np.abs(beta).max(), 1e-300))
    result.undetermined, result.combined = _undetermined(layout, layout.scale)
    offsets = own_link_offsets(model)
    result.margins = consistency_margin(result.body_parameters() - offsets)
    result.drive = layout.drive_values(result.x, prior_drive)
    return result


def _normalised_lstsq(A, b, rcond=None):
    """Least squares with the columns of ``A`` scaled to unit norm (zero columns: 0)."""
    norms = np.linalg.norm(A, axis=0)
    norms[norms == 0] = 1.0
    return np.linalg.lstsq(A / norms, b, rcond=rcond)[0] / norms


def _base_fit(R, base):
    """Fit the base parameters of a factor ``[A tau]``; also its base columns' condition."""
    A = R[:, base]
    norms = np.linalg.norm(A, axis=0)
    norms[norms == 0] = 1.0
    s = np.linalg.svd(A / norms, compute_uv=False)
    condition = s[0] / s[-1] if len(s) and s[-1] > 0 else np.inf
    return np.linalg.lstsq(A / norms, R[:, -1], rcond=None)[0] / norms, condition


def _weak_armature(layout, Rw, min_separation):
    """Joints whose armature column the data hardly tell from the other base columns."""
    weak = []
    base = list(layout.base)
    norms = np.linalg.norm(Rw[:, :-1], axis=0)
    for (term, j), c in sorted(layout.drive.items()):
        if term != 'armature' or c not in base or norms[c] == 0:
            continue
        others = [k for k in base if k != c]
        a = Rw[:, c] / norms[c]
        coef = _normalised_lstsq(Rw[:, others], a, 1e-12)
        if np.linalg.norm(a - Rw[:, others] @ coef) < min_separation:
            weak.append(j)
    return weak


def _remap(old, new, R, x_prior):
    """Map a factor and prior of ``old``'s columns to ``new``'s; dropped columns at the prior."""
    index = {name: k for k, name in enumerate(old.names)}
    keep = [index[name] for name in new.names]
    dropped = [k for k in range(old.p) if k not in set(keep)]
    z = R[:, -1] - R[:, dropped] @ x_prior[dropped]
    return np.column_stack([R[:, keep], z]), x_prior[keep]


def _not_excited_message(condition, max_condition, names):
    text = ('the motion does not determine the base parameters (condition number %.3g, more '
            'than %.3g)' % (condition, max_condition))
    if names:
        text += '; joints that barely moved: %s' % ', '.join(names)
    return text + '; record a motion that moves every joint (python -m rbd_dynamics excite)'


def _weakest(layout, Rw):
    """Find the least determined combination of base parameters: ``[(name, share), ...]``."""
    A = Rw[:, layout.base]
    norms = np.linalg.norm(A, axis=0)
    norms[norms == 0] = 1.0
    _, _, Vt = np.linalg.svd(A / norms)
    v = Vt[-1] ** 2
    order = np.argsort(v)[::-1][:3]
    return [(layout.names[layout.base[k]], float(v[k])) for k in order if v[k] > 0.05]


def _undetermined(layout, scale):
    """Parameters the regressor's null space holds wholly (undetermined) or in part."""
    model = layout.model
    N = layout.null / scale[:, None]  # the null space in scaled coordinates
    undetermined, combined = {}, {}
    if N.shape[1]:
        Q, _ = np.linalg.qr(N)
        share = (Q ** 2).sum(axis=1)
    else:
        share = np.zeros(layout.p)
    for b, link in enumerate(model.body_links):
        for k, name in enumerate(PARAMETER_NAMES):
            s = share[10 * b + k]
            if s > 1 - 1e-6:
                undetermined.setdefault(link, []).append(name)
            elif s > 1e-6:
                combined.setdefault(link, []).append(name)
    return undetermined, combined


def _consistent(layout, Rw, x_prior, scale, max_nfev):
    """
    Physically consistent full parameters (see the module docstring).

    Minimises ``|Rw [x; -1]|^2 + rho^2 |N^T (x - x_prior) / scale|^2`` over the log-Cholesky
    parameters of every body's own link and the drive parameters (viscous, Coulomb,
    armature >= 0); ``N`` is an orthonormal basis of the regressor's null space in scaled
    coordinates.
    """
    from scipy.optimize import least_squares
    model = layout.model
    p, nb, n_links = layout.p, model.nb, layout.n_links
    offsets = own_link_offsets(model)
    N = layout.null / scale[:, None]
    if N.shape[1]:
        N, _ = np.linalg.qr(N)
    data = Rw[:, :p]
    s_max = max(np.linalg.norm(data, 2), 1e-300)
    drive = np.arange(n_links, p)
    lower = np.full(len(drive), -np.inf)
    for (term, j), c in layout.drive.items():
        if term != 'offset':
            lower[c - n_links] = 0.0
    own_prior = x_prior[:n_links].reshape(nb, 10) - offsets
    phi0 = np.concatenate([log_cholesky_from_parameters(t) for t in own_prior]) \
        if nb else np.zeros(0)
    z = np.concatenate([phi0, np.maximum(x_prior[drive], lower)])

    def full(z):
        x = np.empty(p)
        jac = np.zeros((p, len(z)))
        for i in range(nb):
            theta, d = log_cholesky_jacobian(z[10 * i:10 * i + 10])
            x[10 * i:10 * i + 10] = theta + offsets[i]
            jac[10 * i:10 * i + 10, 10 * i:10 * i + 10] = d
        x[n_links:] = z[n_links:]
        jac[drive, drive] = 1.0
        return x, jac

    bounds = (np.concatenate([np.full(n_links, -np.inf), lower]), np.full(len(z), np.inf))
    # continuation: a strong pull towards the description first settles the directions no
    # motion sees; a weak one then lets the data decide every direction they see
    for weight in _PRIOR_WEIGHTS:
        rho = weight * s_max
        A = np.concatenate([data, rho * N.T / scale[None, :]])
        b = np.concatenate([Rw[:, -1], rho * N.T @ (x_prior / scale)])
        with np.errstate(over='ignore', invalid='ignore'):
            opt = least_squares(lambda z: A @ full(z)[0] - b, z,
                                jac=lambda z: A @ full(z)[1], bounds=bounds, method='trf',
                                x_scale='jac', ftol=1e-15, xtol=1e-15, gtol=1e-15,
                                max_nfev=max_nfev)
        z = opt.x
    x = full(opt.x)[0]
    # the solver keeps bounded values a hair inside their bound: a value there is the bound
    at_bound = np.isfinite(lower) & (x[drive] < lower + 1e-9)
    x[drive[at_bound]] = lower[at_bound]
    return x, opt
