"""
The excitation's design: the optimisation, the checks on the written grid, the written file.

:func:`design` chooses the coefficients of the Fourier series (:mod:`.fourier`) that minimise
the base regressor's condition number (:mod:`.objective`) within the limits (:mod:`.limits`)
and the clearances (:mod:`.clearance`), with SciPy's SLSQP; then checks the motion on the
written 10 ms grid and shrinks it towards the start pose until every limit holds there too
(the method: the package's docstring). :func:`write_yaml` writes it as a trajectory file.
"""

import math
import sys
import time

import numpy as np

from .clearance import clear_pose, Clearance, CLEARANCE_TOLERANCE
from .fourier import DEFAULT_HARMONICS, DEFAULT_PERIOD, FourierBasis
from .limits import coverage_need, DEFAULT_MARGIN, excitation_limits, joint_ranges
from .objective import condition_number, excited_columns, Problem, sample_motion, \
    SHORTFALL_PRICE, violations
from ..analysis import AnalysisError
from ..analysis.planned import write_trajectory
from ..drive import COULOMB_VELOCITY, drive_torques
from ..dynamics import rnea
from ..identification.columns import Layout


#: Default length of the excitation [s] and of one period of its series at most [s].
DEFAULT_DURATION = 20.0


class StartNotClearError(AnalysisError):
    """
    The start pose is not clear of the robot's world; ``near`` is a clear pose near it.

    Attributes
    ----------
    reason
        why the start pose is not clear.
    near
        ``(nv,)`` positions near the start where every clearance holds.

    """

    def __init__(self, message, near):
        super().__init__('%s; a clear pose near it: %s'
                         % (message, ' '.join('%.3f' % v for v in near)))
        self.reason, self.near = message, near


class Excitation:
    """
    A designed excitation, sampled every :data:`STEP`.

    Attributes
    ----------
    joint_names
        the model's independent joints.
    time
        ``(n,)`` from 0 to the duration [s].
    q, qd, qdd
        ``(n, nv)``.
    tau
        ``(n, nv)`` ``rnea`` + nominal drive along it [N m or N].
    condition
        condition number of the base regressor stacked along it (see :func:`condition_number`).
    columns
        number of base columns, of all.
    layout
        the :class:`~.columns.Layout` whose base columns it excites (``identify``'s).
    limits
        the :class:`Limits` it keeps.
    period, harmonics, coefficients, basis
        the series: ``coefficients`` ``(nv, 2 L - 2)`` free coefficients of the
        :class:`FourierBasis` ``basis`` (:meth:`at` evaluates it at any time).
    iterations, seconds, message
        optimiser iterations, the design's wall time [s] and the optimiser's last word.
    optimised, scale
        the condition number of the optimiser's result on its own samples (what its progress
        shows), and the factor the series was shrunk by towards the start pose so that every
        limit and clearance holds on the written grid (1: not shrunk).

    """

    def at(self, t):
        """``(q, qd, qdd)``, each ``(len(t), nv)``, of the series at times ``t`` [s]."""
        P, V, A = self.basis.matrices(t)
        Z = self.coefficients
        return self.q[0] + P @ Z.T, V @ Z.T, A @ Z.T


def design(model, urdf_text, duration=DEFAULT_DURATION, start=None, harmonics=DEFAULT_HARMONICS,
           period=None, margin=DEFAULT_MARGIN, acceleration=None, iterations=100, seed=1,
           coulomb_velocity=COULOMB_VELOCITY, progress=None, collisions=None):
    """
    Design an excitation (see the module docstring).

    Parameters
    ----------
    model
        the model (revolute, continuous and prismatic joints).
    urdf_text
        its URDF, for the position and velocity limits.
    duration
        length [s], a whole number of periods.
    start
        ``(nv,)`` start pose; ``None``: the middle of each joint's range.
    harmonics, period
        the series; ``period`` ``None``: the duration split into periods of about
        :data:`DEFAULT_PERIOD`.
    margin
        share of each joint's range kept free at both ends.
    acceleration
        ``|qdd|`` bound, one or per joint; ``None``: see :func:`excitation_limits`.
    iterations
        most optimiser iterations.
    seed
        of the random first guess.
    coulomb_velocity
        of the drive model's Coulomb columns.
    progress
        ``progress(iteration, condition)`` after each iteration, or ``None``.
    collisions
        the :class:`~rbd_dynamics.world.Collisions` whose clearances the motion keeps, or ``None``.

    Returns
    -------
    :class:`Excitation`.

    Raises
    ------
    AnalysisError
        a start pose outside the limits or not clear, a joint type an excitation cannot move,
        a period that does not divide the duration, or a start pose the effort limits cannot
        hold.

    """
    began = time.monotonic()
    from ..identification.blas import blas_threads
    # the optimiser's linear algebra is small (a 70 x 70 eigenproblem, a QP of 64 unknowns):
    # on a loaded 2-core machine OpenBLAS threads made every step fifty times slower
    with blas_threads(1):
        return _design(model, urdf_text, duration, start, harmonics, period, margin,
                       acceleration, iterations, seed, coulomb_velocity, progress, began,
                       collisions)


def _design(model, urdf_text, duration, start, harmonics, period, margin, acceleration,
            iterations, seed, coulomb_velocity, progress, began, collisions):
    from scipy.optimize import minimize

    if model.nq != model.nv:
        raise AnalysisError('excite moves revolute, continuous and prismatic joints only')
    if not (np.isfinite(duration) and duration > 0):
        raise AnalysisError('the duration must be positive, got %g s' % duration)
    if period is None:
        period = duration / max(1, round(duration / DEFAULT_PERIOD))
    periods = duration / period
    if period <= 0 or abs(periods - round(periods)) > 1e-9 or round(periods) < 1:
        raise AnalysisError('the period (%g s) must divide the duration (%g s)'
                            % (period, duration))
    basis = FourierBasis(harmonics, period)
    if start is None:
        lower, upper, _ = joint_ranges(model, urdf_text)
        start = 0.5 * (lower + upper)
    start = np.asarray(start, dtype=float)
    if start.shape != (model.nv,) or not np.all(np.isfinite(start)):
        raise AnalysisError('the start pose needs %d finite numbers (%s), got %d'
                            % (model.nv, ', '.join(model.joint_names), start.size))
    limits = excitation_limits(model, urdf_text, start, margin, acceleration,
                               harmonics / period)
    rest = rnea(model, start, np.zeros(model.nv), np.zeros(model.nv))
    over = [n for n, tau, e in zip(model.joint_names, rest, limits.effort) if abs(tau) > e]
    if over:
        raise AnalysisError('at the start pose gravity alone exceeds the effort limits of %s'
                            % ', '.join(over))
    dropped = []
    if collisions is not None:
        try:
            dropped = collisions.settle(start)
        except AnalysisError as err:
            near = clear_pose(collisions, limits.lower, limits.upper, start)
            if near is None:
                raise
            raise StartNotClearError(str(err), near) from None
    clear = Clearance(collisions, basis, start)
    layout = Layout(model, coulomb_velocity)
    problem = Problem(model, limits, start, basis, layout)
    problem.need = coverage_need(model, urdf_text, start)
    C, d = problem.linear_constraints()

    # first guess: random coefficients, shrunk until every constraint holds with room
    rng = np.random.default_rng(seed)
    z = rng.normal(size=model.nv * basis.size)
    # each joint as wide as its own limits allow (a short finger stroke must not shrink an
    # arm's motion), then all of them together until the rest holds
    for j in range(model.nv):
        block = slice(j * basis.size, (j + 1) * basis.size)
        rows = np.flatnonzero(np.any(C[:, block] != 0.0, axis=1))
        reach = C[rows][:, block] @ z[block]
        toward = reach < 0.0
        if toward.any():
            z[block] *= 0.9 * float((d[rows][toward] / -reach[toward]).min())
    for _ in range(200):
        if (C @ z + d).min() >= 0 and problem.effort_constraint(z).min() >= 0 \
                and clear.smallest(z) >= 0:
            break
        z *= 0.7
    z *= 0.8
    state = {'iteration': 0}

    def callback(zk):
        state['iteration'] += 1
        if progress is not None:
            progress(state['iteration'], math.exp(problem.evaluate(zk)[0]))

    constraints = [{'type': 'ineq', 'fun': lambda z: C @ z + d, 'jac': lambda z: C}]
    if len(problem.effort_rows()):
        constraints.append({'type': 'ineq', 'fun': problem.effort_constraint,
                            'jac': problem.effort_jacobian})
    if clear.active:
        constraints.append({'type': 'ineq', 'fun': clear.values, 'jac': clear.jacobian})
    # each joint's share of motion, with a slack the objective pays for (a hard bound made
    # the problem infeasible where the effort limits leave a joint little room)
    need = problem.need
    n = z.size

    def padded(fun, jac):
        return {'type': 'ineq', 'fun': lambda x: fun(x[:n]),
                'jac': lambda x: np.hstack([jac(x[:n]), np.zeros((len(fun(x[:n])), model.nv))])}

    def covered(x):
        return problem.coverage(x[:n])[0] + x[n:] - need

    def covered_jacobian(x):
        return np.hstack([problem.coverage(x[:n])[1], np.eye(model.nv)])

    constraints = [padded(c['fun'], c['jac']) for c in constraints]
    constraints.append({'type': 'ineq', 'fun': covered, 'jac': covered_jacobian})
    price = SHORTFALL_PRICE / need
    x0 = np.concatenate([z, np.maximum(need - problem.coverage(z)[0], 0.0)])
    best = z
    state['message'] = 'the first guess (no iterations)'

    def feasible(x):
        return not clear.active or clear.values(x[:n]).min() >= -CLEARANCE_TOLERANCE

    # the last iterate that keeps the clearances: where the optimiser stops outside them (an
    # iteration limit, a failed line search), the design goes on from there (shrinking
    # towards the start repairs a limit, not always a clearance)
    state['feasible'] = z

    def track(x):
        if feasible(x):
            state['feasible'] = x[:n].copy()
        callback(x[:n])

    if iterations > 0:
        result = minimize(lambda x: problem.evaluate(x[:n])[0] + price @ x[n:], x0,
                          jac=lambda x: np.concatenate([problem.evaluate(x[:n])[1], price]),
                          method='SLSQP', constraints=constraints,
                          bounds=[(None, None)] * n + [(0.0, float(v)) for v in need],
                          callback=track,
                          options={'maxiter': iterations, 'ftol': 1e-4})
        state['message'] = result.message
        if np.all(np.isfinite(result.x)) and feasible(result.x):
            best = result.x[:n]
        else:
            best = state['feasible']
            state['message'] = '%s (the last iterate within the limits kept)' % result.message

    # the written grid: shrink towards the start pose until every limit holds on it
    optimised = math.exp(problem.evaluate(best)[0])
    Z = best.reshape(model.nv, basis.size)
    nominal = {'viscous': model.damping, 'coulomb': model.friction,
               'coulomb_velocity': coulomb_velocity}
    for shrinks in range(100):
        t, q, qd, qdd = sample_motion(model, basis, start, Z, duration)
        tau = rnea(model, q, qd, qdd) + drive_torques(qd, qdd, **nominal)
        bad = violations(model, limits, q, qd, qdd, tau)
        what = 'the limits of %s' % ', '.join(bad)
        if not bad:
            hit = clear.check(Z, q, period)
            if hit is None:
                break
            what = 'the clearance of %s (%.4g m apart at %.2f s, %g m needed)' % (
                hit + (collisions.clearance,))
        Z = 0.98 * Z
    else:
        raise AnalysisError('no excitation keeps %s: try another start pose' % what)
    out = Excitation()
    out.joint_names = model.joint_names
    out.time, out.q, out.qd, out.qdd, out.tau = t, q, qd, qdd, tau
    out.limits = limits
    out.layout = layout
    columns = excited_columns(layout)
    out.condition = condition_number(layout.columns(q, qd, qdd)[..., columns])
    out.columns = (len(columns), layout.p)
    out.period, out.harmonics, out.coefficients = period, harmonics, Z
    out.basis = basis
    out.iterations = state['iteration']
    out.message = state['message']
    out.optimised = optimised
    out.scale = 0.98 ** shrinks
    out.collisions, out.left_out = collisions, dropped
    out.need = problem.need
    out.seconds = time.monotonic() - began
    return out


def write_yaml(path, excitation, joint_names=None, held=None):
    """
    Write the excitation as a trajectory file, whole (:func:`write_trajectory`).

    ``joint_names`` orders the columns (default: the excitation's joints); ``held``
    (``{joint: position}``) are joints of it the excitation leaves where they are: constant,
    at rest.

    Raises
    ------
    OSError
        the file cannot be written (the old one, if any, is left as it was).

    """
    names = list(joint_names or excitation.joint_names)
    held = held or {}
    n = len(excitation.time)
    columns = {name: k for k, name in enumerate(excitation.joint_names)}

    def table(values, rest):
        return np.column_stack([values[:, columns[name]] if name in columns
                                else np.full(n, held[name] if rest is None else rest)
                                for name in names])

    write_trajectory(path, names, excitation.time, table(excitation.q, None),
                     table(excitation.qd, 0.0), table(excitation.qdd, 0.0))


class ProgressLine:
    """``excite: iteration 12, condition number 41.3`` rewritten in place on a terminal."""

    def __init__(self, stream=sys.stderr):
        self.stream = stream
        self.tty = getattr(stream, 'isatty', lambda: False)()
        self.shown = False

    def __call__(self, iteration, condition):
        text = 'excite: iteration %d, condition number %.4g' % (iteration, condition)
        if self.tty:
            self.stream.write('\r' + text + '   ')
        elif iteration % 10 == 0 or iteration == 1:
            self.stream.write(text + '\n')
        self.stream.flush()
        self.shown = True

    def finish(self):
        if self.shown and self.tty:
            self.stream.write('\n')
            self.stream.flush()
