"""
Solving for the parameters of the stacked data (:class:`~.stack.Stack`).

Ordinary least squares of the base parameters, the residual standard deviation ``sigma_j`` of
each joint, weighted least squares with weights ``1 / sigma_j`` (the base parameters the data
determine); then the physically consistent full parameters: each body's own link is written in
the log-Cholesky parameters of its pseudo-inertia (Rucker & Wensing, "Smooth parameterization
of rigid-body inertia", IEEE RA-L 2022), so any value of them is a body whose 4x4
pseudo-inertia is positive definite, and ``scipy.optimize.least_squares`` minimises the
weighted torque residual plus the distance to the description *in the directions no motion can
see* (the null space of the regressor). Where the data are silent the description's values
stay; where they speak the data decide.

A body made of several links joined by fixed joints has one set of ten parameters; what the
data change is put on the body's own link (the child link of its joint) and the links beyond
the fixed joints keep their description (:mod:`.writeback`). The consistency constraint is on
that own link, so the written URDF has a consistent inertia on every link.
"""

import numpy as np

from .blas import blas_threads
from .columns import PARAMETER_NAMES
from .inertia import consistency_margin, log_cholesky_from_parameters, \
    log_cholesky_jacobian, parameters_from_spatial
from .stack import barely_moved
from ..analysis import AnalysisError, EXIT_NOT_EXCITED

DEFAULT_MAX_CONDITION = 1e5
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
