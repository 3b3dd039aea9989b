"""
An excitation trajectory for identification: a finite Fourier series per joint.

Every independent joint moves as a finite Fourier series of ``L`` harmonics of the base
frequency ``w = 2 pi / P`` (Swevers et al. 1997)::

    q_j(t) = q0_j + sum_l a_jl sin(l w t) + b_jl (1 - cos(l w t)),    l = 1 .. L

The series starts at ``q0`` and is periodic, so it ends where it starts after any whole number
of periods. Two linear conditions per joint, ``sum_l l a_jl = 0`` and ``sum_l l^2 b_jl = 0``,
make the velocity and the acceleration zero at ``t = 0`` (and so at every period's end): the
motion starts and ends at rest at the start pose. The free coefficients (``2 L - 2`` per joint)
span the null space of those conditions.

They are chosen to minimise the condition number of the *base regressor* stacked along one
period: the rows of :func:`rbd_dynamics.regressor` and of the drive columns (viscous ``qd``,
Coulomb ``tanh(qd / coulomb_velocity)`` and armature ``qdd`` per joint, the model of
:mod:`rbd_dynamics.drive`) at every sample, restricted to the columns the motion can determine
at all: the base columns of :class:`~.columns.Layout`, the same that ``identify`` fits, less
its effort offsets (an armature that moves exactly like its link's inertia is left to the
link). Each column is divided by its norm, so the number measures how independent the
parameters' effects are, whatever their units. The optimiser is SciPy's SLSQP with the analytic
gradient of ``log(cond)`` (the singular vectors; the regressor's derivatives by finite
differences, one joint at a time), under linear constraints (positions inside the limits less a
margin, velocities, accelerations) and the effort constraints ``|rnea + nominal drive| <=
effort limit`` sampled along the period. The result is checked on the written 10 ms grid and
shrunk towards the start pose until every limit holds there too.
"""

import math
import sys
import time

import numpy as np

from .columns import Layout
from ..analysis import AnalysisError
from ..drive import COULOMB_VELOCITY, drive_torques
from ..dynamics import rnea
from ..parsers.urdf import joint_limits

#: Default length of the excitation [s] and of one period of its series at most [s].
DEFAULT_DURATION = 20.0
DEFAULT_PERIOD = 10.0
#: Default number of harmonics per joint.
DEFAULT_HARMONICS = 5
#: Default margin to the position limits, a share of each joint's range.
DEFAULT_MARGIN = 0.1
#: Spacing of the written points [s].
STEP = 0.01
#: Samples per period where the optimiser evaluates the regressor; the constraints take every
#: ``CONSTRAINT_STRIDE``-th of them (the written grid is checked afterwards).
SAMPLES = 100
CONSTRAINT_STRIDE = 2
#: Range each joint covers at least, when a quarter of its position range is more [rad, m].
COVERAGE = {'revolute': 1.0, 'prismatic': 0.1}
#: What a joint's shortfall from its share costs in the objective, per share (``log`` of the
#: condition number: a joint short by its whole share weighs as a condition number 20 times
#: larger).
SHORTFALL_PRICE = 3.0
#: Sharpness of the smooth range the optimiser sees, per share.
COVERAGE_SHARPNESS = 100.0
#: How far an optimiser's iterate may fall short of a clearance and still be taken [m].
CLEARANCE_TOLERANCE = 0.001
#: Samples per period where the optimiser keeps the clearances (their smooth minimum).
COLLISION_SAMPLES = 200
#: Share of the velocity and effort limits the optimiser aims for (sampling slack).
DESIGN_SHARE = 0.95
#: Range used for a joint without position limits, either side of its start [rad or m].
UNLIMITED_RANGE = {'prismatic': 0.1}
UNLIMITED_ANGLE = math.pi / 2


class Limits:
    """
    The limits an excitation keeps, per independent joint (arrays in ``model.joint_names``).

    Attributes
    ----------
    lower, upper
        position range the motion stays in (the URDF's, less the margin) [rad or m].
    velocity
        ``|qd|`` bound [rad/s or m/s]; ``inf`` where the URDF gives none.
    acceleration
        ``|qdd|`` bound [rad/s^2 or m/s^2].
    effort
        ``|rnea + nominal drive|`` bound [N m or N]; ``inf`` where none.

    """

    def __init__(self, lower, upper, velocity, acceleration, effort):
        self.lower, self.upper = lower, upper
        self.velocity, self.acceleration, self.effort = velocity, acceleration, effort


def joint_ranges(model, urdf_text, start=None):
    """
    Return ``(lower, upper, velocity)``, each ``(nv,)``, of the independent joints.

    The URDF's position range (``start`` plus or minus :data:`UNLIMITED_ANGLE` or
    :data:`UNLIMITED_RANGE` for a joint without one; 0 for ``start`` ``None``) and velocity
    limit (``inf`` where none).
    """
    given = joint_limits(urdf_text)
    nv = model.nv
    start = np.zeros(nv) if start is None else start
    lower, upper, velocity = np.empty(nv), np.empty(nv), np.full(nv, np.inf)
    for j, (name, jtype) in enumerate(zip(model.joint_names, model.joint_types)):
        lo, hi, vel = given.get(name, (None, None, None))
        if jtype == 'continuous' or lo is None or hi is None or hi <= lo:
            half = UNLIMITED_RANGE.get(jtype, UNLIMITED_ANGLE)
            lo, hi = start[j] - half, start[j] + half
        lower[j], upper[j] = lo, hi
        if vel is not None and vel > 0:
            velocity[j] = vel
    return lower, upper, velocity


def excitation_limits(model, urdf_text, start, margin=DEFAULT_MARGIN, acceleration=None,
                      frequency=None):
    """
    Return the :class:`Limits` of an excitation from ``start``.

    Parameters
    ----------
    model
        the model.
    urdf_text
        its URDF (the position and velocity limits are read from it).
    start
        ``(nv,)`` start pose.
    margin
        share of each joint's range kept free at both ends.
    acceleration
        ``None``, one bound or ``(nv,)``; ``None``: the velocity limit times ``2 pi
        frequency`` (a sine at the highest harmonic that just reaches the velocity limit).
    frequency
        highest frequency of the series [Hz], for the default acceleration bound.

    Raises
    ------
    AnalysisError
        the start pose is outside the range left by the margin.

    """
    lower, upper, velocity = joint_ranges(model, urdf_text, start)
    keep = margin * (upper - lower)
    lower, upper = lower + keep, upper - keep
    nv = model.nv
    outside = [name for name, q, lo, hi in zip(model.joint_names, start, lower, upper)
               if not lo <= q <= hi]
    if outside:
        raise AnalysisError('the start pose is outside the position limits less the margin '
                            '(%g of the range) for %s' % (margin, ', '.join(outside)))
    if acceleration is None:
        fallback = np.where(np.isfinite(velocity), velocity, 1.0)
        acceleration = fallback * 2.0 * math.pi * frequency
    acceleration = np.broadcast_to(np.asarray(acceleration, dtype=float), (nv,)).copy()
    return Limits(lower, upper, velocity, acceleration, np.asarray(model.effort_limits, float))


class FourierBasis:
    """
    The series of one joint on a time grid: ``q - q0 = P z``, ``qd = V z``, ``qdd = A z``.

    ``z`` holds the ``2 L - 2`` free coefficients (an orthonormal basis of the null space of
    the rest conditions, sine coefficients first).
    """

    def __init__(self, harmonics, period):
        if harmonics < 2:
            raise AnalysisError('the excitation needs at least 2 harmonics')
        self.harmonics, self.period = harmonics, period
        self.w = 2.0 * math.pi / period
        order = np.arange(1, harmonics + 1, dtype=float)
        self.null_sin = _null_space(order)
        self.null_cos = _null_space(order ** 2)
        self.size = 2 * (harmonics - 1)

    def matrices(self, t):
        """``(P, V, A)``, each ``(len(t), size)``, at times ``t`` [s]."""
        t = np.asarray(t, dtype=float)[:, None]
        order = np.arange(1, self.harmonics + 1, dtype=float)
        lw = order * self.w
        s, c = np.sin(lw * t), np.cos(lw * t)
        pos = np.hstack([s @ self.null_sin, (1.0 - c) @ self.null_cos])
        vel = np.hstack([(lw * c) @ self.null_sin, (lw * s) @ self.null_cos])
        acc = np.hstack([(-lw ** 2 * s) @ self.null_sin, (lw ** 2 * c) @ self.null_cos])
        return pos, vel, acc


def _null_space(row):
    """Orthonormal basis ``(n, n - 1)`` of the vectors orthogonal to ``row``."""
    _, _, vt = np.linalg.svd(row[None, :])
    return vt[1:].T


def coverage_need(model, urdf_text, start):
    """
    Return the range ``(nv,)`` each joint should cover.

    A quarter of its position range or :data:`COVERAGE` (1 rad, 0.1 m), whichever is less.
    """
    lower, upper, _ = joint_ranges(model, urdf_text, start)
    cap = np.array([COVERAGE['prismatic' if t == 'prismatic' else 'revolute']
                    for t in model.joint_types])
    return np.minimum(0.25 * (upper - lower), cap)


def excited_columns(layout):
    """
    Return the base columns of ``identify``'s :class:`~.columns.Layout` a motion excites.

    All but the effort offsets: a constant per joint, which the motion determines only by
    moving the joint's other columns away from a constant, as the conditioning of those
    columns already asks.
    """
    offsets = {c for (term, _), c in layout.drive.items() if term == 'offset'}
    return np.array([c for c in layout.base if c not in offsets], dtype=int)


def condition_number(W):
    """Condition number of ``W`` (rows stacked) with its columns scaled to unit norm."""
    W = W.reshape(-1, W.shape[-1])
    norms = np.linalg.norm(W, axis=0)
    s = np.linalg.svd(W / np.where(norms > 0, norms, 1.0), compute_uv=False)
    return float(s[0] / s[-1]) if s[-1] > 0 else math.inf


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


class _Problem:
    """The optimisation: coefficients ``z`` ``(nv * size,)`` -> objective, constraints."""

    def __init__(self, model, limits, start, basis, layout):
        self.model, self.limits, self.start, self.basis = model, limits, start, basis
        self.layout, self.columns = layout, excited_columns(layout)
        t = np.arange(SAMPLES) * (basis.period / SAMPLES)
        self.P, self.V, self.A = basis.matrices(t)
        self.sparse = slice(None, None, CONSTRAINT_STRIDE)
        self.nv, self.m = model.nv, basis.size
        self.parameters = layout.prior()  # the description and its nominal drive
        self.need = None
        self._cache = (None, None)

    def states(self, z):
        Z = z.reshape(self.nv, self.m).T
        return self.start + self.P @ Z, self.V @ Z, self.A @ Z

    def evaluate(self, z):
        """Objective, its gradient, torques and their Jacobian ``(S, nv, nv * m)``."""
        if self._cache[0] is not None and np.array_equal(self._cache[0], z):
            return self._cache[1]
        q, qd, qdd = self.states(z)
        cols, nv, count = self.columns, self.nv, q.shape[0]
        # the states, then each joint's q, qd and qdd moved by h: one batch
        h = 1e-6
        batch = [np.repeat(x[None], 1 + 3 * nv, axis=0) for x in (q, qd, qdd)]
        for which in range(3):
            for j in range(nv):
                batch[which][1 + which * nv + j, :, j] += h
        Wall = self.layout.columns(*batch)
        W = Wall[0]                                                  # (S, nv, ncol)
        dW = (Wall[1:] - W) / h                                      # (3 nv, S, nv, ncol)
        Wb = W[..., cols].reshape(-1, len(cols))
        norms = np.linalg.norm(Wb, axis=0)
        norms = np.where(norms > 0, norms, 1.0)
        Wn = Wb / norms
        # singular values and vectors from the Gram matrix (a small symmetric eigenproblem)
        eig, vecs = np.linalg.eigh(Wn.T @ Wn)
        eig = np.maximum(eig, 1e-300)
        s = np.sqrt(eig[[-1, 0]])
        objective = math.log(s[0] / s[1])
        # d sigma_i = <G_i, dW_b> with G_i = (u_i v_i^T - sigma_i Wn diag(v_i^2)) / norms
        G = np.zeros_like(Wb)
        for sigma, v, sign in ((s[0], vecs[:, -1], 1.0), (s[1], vecs[:, 0], -1.0)):
            u = Wn @ v / sigma
            G += sign * (np.outer(u, v) - sigma * Wn * v ** 2) / norms / sigma
        G = G.reshape(W.shape[:-1] + (len(cols),))
        tau = W @ self.parameters
        g = np.einsum('src,ksrc->ks', G, dW[..., cols])              # (3 nv, S)
        g_obj = np.zeros((nv, self.m))
        d_tau = np.zeros((count, nv, nv, self.m))
        dtau = dW @ self.parameters                                  # (3 nv, S, nv)
        for which, B in enumerate((self.P, self.V, self.A)):
            g_obj += g[which * nv:(which + 1) * nv] @ B
            for j in range(nv):
                d_tau[:, :, j, :] += dtau[which * nv + j][:, :, None] * B[:, None, :]
        result = (objective, g_obj.reshape(-1), tau, d_tau.reshape(count, nv, -1))
        self._cache = (z.copy(), result)
        return result

    def linear_constraints(self):
        """``(C, d)``: ``C z + d >= 0`` for positions, velocities and accelerations."""
        rows, offsets = [], []
        lim = self.limits
        nz = self.nv * self.m
        for j in range(self.nv):
            block = slice(j * self.m, (j + 1) * self.m)
            P, V, A = (B[self.sparse] for B in (self.P, self.V, self.A))
            for B, low, high in ((P, lim.lower[j] - self.start[j],
                                  lim.upper[j] - self.start[j]),
                                 (V, -DESIGN_SHARE * lim.velocity[j],
                                  DESIGN_SHARE * lim.velocity[j]),
                                 (A, -lim.acceleration[j], lim.acceleration[j])):
                for sign, bound in ((1.0, -low), (-1.0, high)):
                    if not np.isfinite(bound):
                        continue
                    C = np.zeros((B.shape[0], nz))
                    C[:, block] = sign * B
                    rows.append(C)
                    offsets.append(np.full(B.shape[0], bound))
        return np.vstack(rows), np.concatenate(offsets)

    def coverage(self, z):
        """
        Each joint's smooth range over the samples ``(nv,)`` and its Jacobian ``(nv, nz)``.

        The smooth maximum less the smooth minimum: above the true range by at most
        ``2 log(SAMPLES) / COVERAGE_SHARPNESS`` of the joint's need.
        """
        q = self.start + self.P @ z.reshape(self.nv, self.m).T        # (S, nv)
        rho = COVERAGE_SHARPNESS / self.need
        value = np.empty(self.nv)
        jac = np.zeros((self.nv, self.nv * self.m))
        for sign in (1.0, -1.0):
            x = sign * rho * q
            top = x.max(axis=0)
            w = np.exp(x - top)
            total = w.sum(axis=0)
            value_part = (top + np.log(total)) / rho                      # smooth max of ±q
            value = value_part if sign > 0 else value + value_part
            w /= total
            for j in range(self.nv):
                jac[j, j * self.m:(j + 1) * self.m] += w[:, j] @ self.P
        return value, jac

    def effort_rows(self):
        return np.flatnonzero(np.isfinite(self.limits.effort))

    def effort_constraint(self, z):
        _, _, tau, _ = self.evaluate(z)
        joints = self.effort_rows()
        bound = DESIGN_SHARE * self.limits.effort[joints]
        t = tau[self.sparse][:, joints]
        return np.concatenate([(bound - t).ravel(), (bound + t).ravel()])

    def effort_jacobian(self, z):
        _, _, _, d_tau = self.evaluate(z)
        d = d_tau[self.sparse][:, self.effort_rows(), :].reshape(-1, d_tau.shape[-1])
        return np.vstack([-d, d])


def _sample(model, basis, start, Z, duration, step=STEP):
    count = int(round(duration / step))
    t = np.linspace(0.0, duration, count + 1)
    P, V, A = basis.matrices(t)
    q, qd, qdd = start + P @ Z.T, V @ Z.T, A @ Z.T
    # the series is at rest on the start pose at both ends; write that exactly
    for k in (0, -1):
        q[k], qd[k], qdd[k] = start, 0.0, 0.0
    return t, q, qd, qdd


def _violations(model, limits, q, qd, qdd, tau):
    """Joint names whose limits the samples break (empty when none)."""
    tol = 1e-9
    bad = ((q < limits.lower - tol) | (q > limits.upper + tol)
           | (np.abs(qd) > limits.velocity + tol) | (np.abs(qdd) > limits.acceleration + tol)
           | (np.abs(tau) > limits.effort + tol)).any(axis=0)
    return [n for n, b in zip(model.joint_names, bad) if b]


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
    from .blas import blas_threads
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
        raise AnalysisError('--duration must be positive, got %g' % duration)
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
        raise AnalysisError('--start needs %d finite numbers (%s), got %d'
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
            raise AnalysisError('%s; a clear pose near it: --start %s'
                                % (err, ' '.join('%.3f' % v for v in near))) from None
    clear = _Clearance(collisions, basis, start)
    layout = Layout(model, coulomb_velocity)
    problem = _Problem(model, limits, start, basis, layout)
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
        t, q, qd, qdd = _sample(model, basis, start, Z, duration)
        tau = rnea(model, q, qd, qdd) + drive_torques(qd, qdd, **nominal)
        bad = _violations(model, limits, q, qd, qdd, tau)
        what = 'the limits of %s' % ', '.join(bad)
        if not bad:
            hit = clear.check(Z, q, period)
            if hit is None:
                break
            what = 'the clearance of %s (%.4g m apart at %.2f s, %g m needed)' % (
                hit + (collisions.clearance,))
        Z = 0.98 * Z
    else:
        raise AnalysisError('no excitation keeps %s: try another --start' % what)
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


class _Clearance:
    """The clearances as the optimiser's constraints, and the check of the written motion."""

    def __init__(self, collisions, basis, start):
        self.collisions, self.basis, self.start = collisions, basis, start
        self.active = collisions is not None and collisions.count > 0
        if self.active:
            t = np.arange(COLLISION_SAMPLES) * (basis.period / COLLISION_SAMPLES)
            self.P = basis.matrices(t)[0]
        self._cache = (None, None)

    def _evaluate(self, z):
        if self._cache[0] is None or not np.array_equal(self._cache[0], z):
            Z = z.reshape(len(self.start), -1)
            value, grad = self.collisions.smooth_min(self.start + self.P @ Z.T, self.P)
            self._cache = (z.copy(), (value - self.collisions.kept, grad))
        return self._cache[1]

    def values(self, z):
        return self._evaluate(z)[0]

    def jacobian(self, z):
        return self._evaluate(z)[1]

    def smallest(self, z):
        return self.values(z).min() if self.active else 0.0

    def check(self, Z, q, period):
        """
        First violation ``(name, clearance, time)`` along the motion, or ``None``.

        The motion is evaluated between the written points too, finely enough that no capsule
        moves more than a quarter of the clearance from one evaluation to the next.
        """
        if not self.active:
            return None
        collisions = self.collisions
        step = np.abs(np.diff(q, axis=0))
        move = np.einsum('bcv,bv->bc', collisions.reach(q[:-1]), step).max()
        split = max(1, int(math.ceil(4.0 * move / collisions.clearance)))
        duration = STEP * (len(q) - 1)
        t = np.linspace(0.0, duration, split * (len(q) - 1) + 1)
        P = self.basis.matrices(t)[0]
        fine = self.start + P @ Z.T
        hit = collisions.check(fine, np.abs(np.diff(fine, axis=0, append=fine[-1:])))
        if hit is None:
            return None
        k, name, value = hit
        return name, value, t[k]


def clear_pose(collisions, lower, upper, near, spare=0.01):
    """
    Return a pose near ``near`` where every clearance holds with ``spare`` [m] to spare.

    Within ``lower`` and ``upper``; ``None`` where the search finds none.
    """
    from scipy.optimize import minimize
    bound = collisions.clearance + spare

    def clearances(q):
        return collisions.clearances(q[None])[0] - bound

    def jacobian(q):
        return collisions.clearances(q[None], gradient=True)[1][0]

    start = np.clip(near, lower, upper)
    result = minimize(lambda q: 0.5 * float((q - near) @ (q - near)), start,
                      jac=lambda q: q - near, method='SLSQP', bounds=list(zip(lower, upper)),
                      constraints=[{'type': 'ineq', 'fun': clearances, 'jac': jacobian}],
                      options={'maxiter': 200})
    q = result.x
    if not (np.all(np.isfinite(q)) and clearances(q).min() >= -1e-6):
        return None
    return q


def write_yaml(path, excitation, joint_names=None, held=None):
    """
    Write the excitation as a ``JointTrajectory`` YAML (the form ``trajectory`` reads).

    ``joint_names`` orders the columns (default: the excitation's joints); ``held``
    (``{joint: position}``) are joints of it the excitation leaves where they are: constant,
    at rest.
    """
    def row(values):
        return '[%s]' % ', '.join('%.12g' % v for v in values)

    names = list(joint_names or excitation.joint_names)
    held = held or {}
    n = len(excitation.time)
    columns = {name: k for k, name in enumerate(excitation.joint_names)}

    def table(values, rest):
        return np.column_stack([values[:, columns[name]] if name in columns
                                else np.full(n, held[name] if rest is None else rest)
                                for name in names])

    q, qd, qdd = (table(excitation.q, None), table(excitation.qd, 0.0),
                  table(excitation.qdd, 0.0))
    lines = ['header:', '  stamp: {sec: 0, nanosec: 0}', "  frame_id: ''",
             'joint_names: [%s]' % ', '.join(names), 'points:']
    for k, t in enumerate(excitation.time):
        ns = int(round(t * 1e9))
        lines += ['- positions: %s' % row(q[k]),
                  '  velocities: %s' % row(qd[k]),
                  '  accelerations: %s' % row(qdd[k]),
                  '  effort: []',
                  '  time_from_start: {sec: %d, nanosec: %d}' % divmod(ns, 1000000000)]
    lines.append('---')
    with open(path, 'w') as stream:
        stream.write('\n'.join(lines) + '\n')


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
