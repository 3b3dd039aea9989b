"""
Solving for the parameters of the stacked data (:class:`~.stack.Stack`).

Ordinary least squares of the base parameters, the residual standard deviation ``sigma_j`` of
each joint, weighted least squares with weights ``1 / sigma_j`` (the base parameters the data
determine, unconstrained); then the written, physically consistent parameters: the weighted
effort residual ``|R_w [x; -1]|`` (the stacked factors) minimised *subject to* every body's own
link having a positive semi-definite 4x4 pseudo-inertia (Wensing, Kim & Slotine, IEEE RA-L
2017) and non-negative friction and armature. It is a semidefinite program, convex: solved by
cvxpy with the interior-point solver Clarabel, it has one optimum and a certificate that it was
reached. The description enters only as a weak prior in the directions no motion can see (the
null space of the regressor), where the data are silent; where they speak the data decide.
A solve that does not reach optimality is an error, not a result.

A body made of several links joined by fixed joints has one set of ten parameters; what the
data change is put on the body's own link (the child link of its joint) and the links beyond
the fixed joints keep their description (:mod:`.writeback`). The consistency constraint is on
that own link, so the written URDF has a consistent inertia on every link.
"""

import numpy as np

from .blas import blas_threads
from .columns import PARAMETER_NAMES
from .stack import barely_moved
from ..analysis import AnalysisError, EXIT_NOT_EXCITED
from ..numerics import column_norms, scaled_condition, scaled_lstsq
from ..spatial import consistency_margin, parameters_from_spatial, pseudo_inertia

DEFAULT_MAX_CONDITION = 1e5
#: Iterations of the consistent solve at most (Clarabel takes 10 to 40).
DEFAULT_MAX_ITERATIONS = 200
# weight of the distance to the description (in the directions the data do not see) against
# the largest singular value of the weighted data, where consistency costs effort residual
_PRIOR_WEIGHT = 1e-4
# a direction whose singular value is under this share of the largest is not seen by the data
_SEEN = 1e-7
# the solver's gap and feasibility tolerances (shares of the weighted efforts' norm squared),
# tried in turn
_TOLERANCES = (1e-10, 1e-8)
# every own link's pseudo-inertia at least this share of its body's physical size (mass times
# length squared, link_scales) in every direction: strictly inside, so rounding in a reader
# of the written URDF cannot find it outside
_MARGIN = 1e-9
# an own link whose smallest pseudo-inertia eigenvalue is within this share of its size of
# the margin is on the constraint (it binds)
_BINDING = 1e-6


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
    x_base
        ``(p,)`` the unconstrained weighted least-squares solution (``base`` in the base
        columns, 0 elsewhere): its torques are those of the base parameters.
    binding
        links whose pseudo-inertia is on the edge of consistency (where ``solver['exact']``
        is false: the data alone would make them inconsistent).
    bound
        drive columns (``'<joint>.<term>'``) at their bound 0: friction or armature the data
        alone would make negative, where ``solver['exact']`` is false.
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
    solver
        ``{'status': ..., 'iterations': ..., 'seconds': ...}`` of the consistent solve.

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


def solve(stack, x_prior=None, max_condition=DEFAULT_MAX_CONDITION,
          max_iterations=DEFAULT_MAX_ITERATIONS, min_separation=0.05):
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
    max_iterations
        iterations of each solve of the consistent program at most (it is solved up to four
        times: two programs, each at two tolerances).
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
    AnalysisError
        the consistent solve did not reach optimality.

    """
    with blas_threads(1):
        return _solve(stack, x_prior, max_condition, max_iterations, min_separation)


def _solve(stack, x_prior, max_condition, max_iterations, min_separation):
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
    x_ols[layout.base] = scaled_lstsq(R[:, layout.base], R[:, -1], 1e-12)
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
    result.x_base = np.zeros(layout.p)
    result.x_base[layout.base] = beta
    result.x, result.solver = _consistent(layout, Rw, x_prior, layout.scale, max_iterations)
    result.undetermined, result.combined = _undetermined(layout, layout.scale)
    offsets = own_link_offsets(model)
    own = result.body_parameters() - offsets
    result.margins = consistency_margin(own)
    size = layout.scale[:layout.n_links].reshape(-1, 10)[:, 4]
    lowest = np.linalg.eigvalsh(pseudo_inertia(own))[:, 0] if len(own) else np.zeros(0)
    result.binding = [link for link, low, m in zip(model.body_links, lowest, size)
                      if low < (_MARGIN + _BINDING) * m]
    result.bound = [layout.names[c] for (term, _), c in sorted(layout.drive.items())
                    if term != 'offset' and result.x[c] <= _BINDING * layout.scale[c]]
    result.drive = layout.drive_values(result.x, prior_drive)
    return result


def residual_share(stack):
    """
    Return the RMS residual of ordinary least squares over a stack, a share of its RMS effort.

    The base parameters by plain least squares (no weights, no consistency): what the model
    form, with these states, leaves unexplained in the efforts it was fitted to.
    """
    layout = stack.layout
    R = stack.weighted_factor(np.ones(layout.model.nv))
    x = np.zeros(layout.p)
    x[layout.base] = scaled_lstsq(R[:, layout.base], R[:, -1], 1e-12)
    total = float(stack.tau_square.sum())
    return float(np.sqrt(stack.residual_square(x).sum() / total)) if total > 0 else np.inf


def _base_fit(R, base):
    """Fit the base parameters of a factor ``[A tau]``; also its base columns' condition."""
    A = R[:, base]
    return scaled_lstsq(A, R[:, -1]), scaled_condition(A)


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
        coef = scaled_lstsq(Rw[:, others], a, 1e-12)
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
    _, _, Vt = np.linalg.svd(A / column_norms(A))
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


def _consistent(layout, Rw, x_prior, scale, max_iterations):
    """
    Physically consistent full parameters (see the module docstring): ``(x, solver)``.

    In the variables ``y = x / scale``, with the data's SVD ``U S V^T`` (the weighted factor's
    columns at their physical size, divided by the weighted efforts' norm so that tolerances
    are shares of them), ``w = S V^T y`` are the coordinates the data see, whitened, and ``m =
    C^T (y - y_prior)`` those they do not (``C`` an orthonormal basis of the regressor's null
    space and of any direction this recording left unexcited). The effort residual is ``|w -
    U^T b|^2`` plus what no parameter explains. Two semidefinite programs, every own link's
    pseudo-inertia ``>= margin`` and viscous, Coulomb and armature ``>= 0`` in both:

    1. ``w = U^T b`` (the unconstrained fit's efforts, exactly), the prior's ``|m|^2``
       minimised: where the data's best fit has a consistent completion, this is it, with the
       description's values wherever the data are silent.
    2. Where it has none (the program is infeasible), ``|w - U^T b|^2 + rho^2 |m|^2`` with a
       small ``rho``: the consistency costs effort residual, and the prior only settles what
       the data leave free.
    """
    import time
    import warnings
    import cvxpy as cp
    model = layout.model
    p, nb, n_links = layout.p, model.nb, layout.n_links
    offsets = own_link_offsets(model)
    size = scale[:n_links].reshape(-1, 10)[:, 4]  # m l^2 of each body
    bounded = np.array(sorted(c for (term, _), c in layout.drive.items() if term != 'offset'),
                       dtype=int)
    unit = max(np.linalg.norm(Rw[:, -1]), 1e-300)
    U, S, Vt = np.linalg.svd(Rw[:, :p] * scale[None, :] / unit)
    rank = int(np.count_nonzero(S > _SEEN * S[0])) if len(S) and S[0] > 0 else 0
    V, C = Vt[:rank].T, Vt[rank:].T
    target = U[:, :rank].T @ Rw[:, -1] / unit
    y_prior = x_prior / scale
    m = cp.Variable(p - rank)

    def program(w, objective):
        y = V @ cp.multiply(1.0 / S[:rank], w) + C @ (C.T @ y_prior) + C @ m
        x = cp.multiply(scale, y)
        constraints = [pseudo_inertia_expression(cp, x[10 * i:10 * i + 10] - offsets[i])
                       >> _MARGIN * size[i] * np.eye(4) for i in range(nb)]
        if len(bounded):
            constraints.append(y[bounded] >= 0)
        return cp.Problem(cp.Minimize(objective), constraints), y

    t0 = time.perf_counter()
    count = [0]

    def attempt(problem):
        # the tolerances in turn: an interior point that stalls short of the tightest one
        # (rounding in a poorly excited direction), or fails on it, is tried again at the next
        for tolerance in _TOLERANCES:
            try:
                problem.solve(solver='CLARABEL', max_iter=int(max_iterations),
                              tol_gap_abs=tolerance, tol_gap_rel=tolerance, tol_feas=tolerance)
            except cp.error.SolverError:
                continue
            count[0] += problem.solver_stats.num_iters or 0
            if problem.status != cp.OPTIMAL_INACCURATE:
                return

    exact, y = program(target, cp.sum_squares(m))
    problem = exact
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', UserWarning)  # cvxpy's "may be inaccurate"
        attempt(exact)
        if exact.status != cp.OPTIMAL:
            w = cp.Variable(rank)
            rho = _PRIOR_WEIGHT * S[0]
            problem, y = program(w, cp.sum_squares(w - target) + rho ** 2 * cp.sum_squares(m))
            attempt(problem)
    iterations = count[0]
    solver = {'status': problem.status, 'iterations': iterations,
              'seconds': time.perf_counter() - t0, 'exact': problem is exact}
    if problem.status != cp.OPTIMAL or y.value is None:
        raise AnalysisError('the physically consistent solve did not converge (%s after %s '
                            'iterations in all, at most %d a solve); nothing written'
                            % (problem.status or 'the solver failed', iterations,
                               max_iterations))
    y = np.asarray(y.value, dtype=float)
    # the solver keeps bounded values a hair inside their bound: a value there is the bound
    y[bounded] = np.maximum(y[bounded], 0.0)
    x = scale * y
    _onto_margin(x, offsets, size)
    return x, solver


def _onto_margin(x, offsets, size):
    """
    Move each own link of ``x`` whose pseudo-inertia is below its margin onto it, in place.

    The margin of a link is ``_MARGIN`` times its ``size``. The solver meets the constraint
    within its feasibility tolerance, which can leave a link whose constraint binds a hair
    outside it (its smallest eigenvalue, a few 1e-10 of its size below the margin, below
    zero): adding ``d`` times the identity to the pseudo-inertia (``m += d``, each diagonal
    moment ``+= 2 d``) raises every eigenvalue by ``d``, a change of the parameters of that
    order, which the fit does not see. A link further below than ``_BINDING`` times its size
    is a failed solve, not rounding: :class:`AnalysisError`.
    """
    for i, low in enumerate(np.linalg.eigvalsh(pseudo_inertia(
            x[:10 * len(offsets)].reshape(-1, 10) - offsets))[:, 0]):
        d = _MARGIN * size[i] - low
        if d > 0.0:
            if d > _BINDING * size[i]:
                raise AnalysisError('the physically consistent solve left body %d outside the '
                                    'constraint (by %.3g of its size); nothing written'
                                    % (i, d / max(size[i], 1e-300)))
            x[10 * i] += d
            x[10 * i + 4:10 * i + 10] += 2.0 * d * np.array([1, 0, 0, 1, 0, 1])


def pseudo_inertia_expression(cp, theta):
    """Return the 4x4 pseudo-inertia of ten parameters as a cvxpy expression (:mod:`.inertia`)."""
    m, hx, hy, hz, ixx, ixy, ixz, iyy, iyz, izz = (theta[k] for k in range(10))
    half = 0.5 * (ixx + iyy + izz)
    return cp.bmat([[half - ixx, -ixy, -ixz, hx], [-ixy, half - iyy, -iyz, hy],
                    [-ixz, -iyz, half - izz, hz], [hx, hy, hz, m]])
