"""
A payload's inertial parameters from a recording: joint efforts, or a wrist force/torque sensor.

The payload is a rigid body held by one link; its ten parameters ``pi = [m, m c, I]`` (about the
link's origin, in its axes) enter what the robot measures linearly:

- **joint efforts**: ``tau_measured - rnea_arm - drive - offset = Y_link(q, qd, qdd) pi``, where
  ``Y_link`` is the regressor's block of the link's body carried to the link's frame
  (:func:`joint_columns`) and the arm is the (identified) description with its drive;
- **a force/torque sensor** on a link of the same body (the payload beyond it):
  ``-(reading + payload_wrench_of_the_modelled_bodies) - offset = F(v_s, a_s) pi``, the
  payload's Newton-Euler wrench at the sensor (:func:`sensor_columns`).

:func:`estimate` solves the stacked rows by weighted least squares (each joint's or axis's rows
weighted by its residual's spread), then, where the unconstrained estimate is not a physical
body, by the least-squares problem under physical consistency (the 4x4 pseudo-inertia positive
semi-definite: a small semidefinite program, cvxpy with Clarabel). Where the motion does not
determine the rotational inertia (static poses, or too little rotation: the columns' condition
number above :data:`MAX_CONDITION`), only the mass and centre of mass are estimated and the
payload is a point mass. Standard deviations come from the unconstrained fit's covariance,
carried to the mass, centre of mass and inertia about it; they include the arm's model error
as it varies along the motion, not only independent noise (:func:`_covariances`).
"""

import numpy as np

from .fit import pseudo_inertia_expression
from ..analysis import AnalysisError
from ..dynamics import forward_pass, full_positions, full_velocities
from ..eom import body_force_regressor, regressor
from ..numerics import scaled_condition, scaled_lstsq
from ..spatial import consistency_margin, link_inertial, parameter_map

#: Largest condition number (columns scaled to unit norm) of the ten parameters' columns
#: for the rotational inertia to count as determined.
MAX_CONDITION = 1e4
#: The upper triangle of a 3 x 3 inertia: ixx ixy ixz iyy iyz izz.
_UPPER = ((0, 0, 0, 1, 1, 2), (0, 1, 2, 1, 2, 2))
#: Largest condition number of the mass and centre-of-mass columns.
MAX_CONDITION_MASS = 1e5
#: Runs of consecutive samples the covariance's sandwich sums over (:func:`_covariances`).
BLOCKS = 30


class NotDeterminedError(AnalysisError):
    """The recording does not determine the payload's mass and centre of mass (exit 3)."""

    exit_code = 3


def _body(model, link):
    body = model.link_body.get(link)
    if body is None:
        raise AnalysisError('the payload link %r is not a link of the description (links: %s)'
                            % (link, ', '.join(sorted(model.link_body))))
    if body < 0:
        raise AnalysisError('the payload link %s is fixed to the root: no joint carries its '
                            'payload' % link)
    return body


def joint_columns(model, link, q, qd, qdd):
    """
    ``(B, nv, 10)``: the joint torques of a payload on ``link`` per parameter.

    Parameters about the link's origin in its axes; rows in ``model.joint_names`` order.
    """
    body = _body(model, link)
    Y = regressor(model, q, qd, qdd)[..., 10 * body:10 * body + 10]
    return Y @ parameter_map(model.link_X[link])


def sensor_columns(model, link, frame, q, qd, qdd):
    """
    ``(B, 6, 10)``: the wrench [force; moment] a payload on ``link`` needs at ``frame``.

    ``frame`` is the sensor's link, rigidly joined to ``link`` (one body); the wrench is the
    one the sensor applies on the payload, in ``frame``'s axes about its origin (a sensor
    reporting the wrench on the robot reads its negative).
    """
    body = _body(model, link)
    if model.link_body.get(frame) != body:
        raise AnalysisError('the sensor frame %r is not rigidly joined to the payload link %s '
                            '(links of that body: %s)' % (frame, link, ', '.join(sorted(
                                n for n, b in model.link_body.items() if b == body))))
    q, qd, qdd = (np.asarray(x, dtype=float).reshape(-1, model.nv) for x in (q, qd, qdd))
    _, _, _, v, a = forward_pass(model, full_positions(model, q), full_velocities(model, qd),
                                 full_velocities(model, qdd))
    X_s = model.link_X[frame]                                    # body -> sensor coordinates
    F = body_force_regressor(v[body] @ X_s.T, a[body] @ X_s.T)   # [moment; force], pi in S
    # pi in the sensor's frame from pi in the link's: v_link = X v_sensor
    F = F @ parameter_map(model.link_X[link] @ np.linalg.inv(X_s))
    return np.concatenate([F[:, 3:], F[:, :3]], axis=1)


class Estimate:
    """
    A payload estimate.

    Attributes
    ----------
    link
        the link holding it.
    theta
        ``(10,)`` parameters about the link's origin in its axes (physically consistent).
    mass, com, inertia
        [kg], ``(3,)`` [m] and ``(3, 3)`` about the centre of mass in the link's axes [kg m^2].
    std
        standard deviations: ``mass``, ``com`` ``(3,)``, ``inertia`` ``(6,)`` (``ixx ixy ixz
        iyy iyz izz``; zeros for a point mass).
    point_mass
        the motion did not determine the rotational inertia: it is zero about the centre of
        mass.
    offsets
        the constant per channel estimated with it (joint efforts or sensor axes).
    nuisance
        ``(c, m)`` the coefficients of the ``nuisance`` columns per channel (``m`` 0: none).
    condition
        condition number of the ten parameters' columns (scaled to unit norm).
    consistent_binds
        the unconstrained estimate was not a physical body (the constraint binds).
    rms, rms_before
        per channel, the RMS of the residual with the estimate and with no payload.
    effect
        per channel, the RMS of what the payload explains (its efforts or wrench).
    rows
        rows used.

    """


def estimate(A, b, channels, offsets=True, nuisance=None):
    """
    Estimate a payload's parameters from ``b = A pi (+ offset per channel + nuisance)``.

    Parameters
    ----------
    A
        ``(n, c, 10)`` columns per sample and channel.
    b
        ``(n, c)`` what the payload must explain.
    channels
        ``(c,)`` bool: the channels to use (others are left out).
    offsets
        estimate a constant per channel too.
    nuisance
        ``(n, c, m)`` more columns per channel whose coefficients are estimated alongside,
        one set per channel (what changed in the arm's drive since it was identified: its
        friction), or ``None``.

    Returns
    -------
    :class:`Estimate` (without ``link``).

    Raises
    ------
    NotDeterminedError
        the data do not determine the mass and centre of mass.

    """
    A = np.asarray(A, dtype=float)[:, channels]
    b = np.asarray(b, dtype=float)[:, channels]
    n, c, _ = A.shape
    features = [np.ones((n, c, 1))] if offsets else []
    if nuisance is not None:
        features.append(np.asarray(nuisance, dtype=float)[:, channels])
    m = sum(f.shape[2] for f in features)
    if n * c < 10 + c * m:
        raise NotDeterminedError('too few samples (%d) for the payload' % n)
    extra = _per_channel(np.concatenate(features, axis=2) if features else
                         np.zeros((n, c, 0)))
    # (a column that is zero throughout, a joint's friction at rest, is estimated as nothing)
    used = np.linalg.norm(extra, axis=0) > 0
    extra_all, extra = extra, extra[:, used]
    rows, rhs = A.reshape(n * c, 10), b.reshape(n * c)
    # the inertia's columns: determined when the ten are well conditioned
    cond10 = scaled_condition(np.hstack([rows, extra]))
    cond4 = scaled_condition(np.hstack([rows[:, :4], extra]))
    if not cond4 < MAX_CONDITION_MASS:
        raise NotDeterminedError("the recording does not determine the payload's mass and "
                                 'centre of mass (condition number %.3g): move the link through '
                                 'several orientations' % cond4)
    point_mass = not cond10 < MAX_CONDITION
    use = slice(0, 4) if point_mass else slice(0, 10)
    M = np.hstack([rows[:, use], extra])
    # weighted least squares: every channel's rows by its residual's spread (two passes)
    weight = np.ones(c)
    for _ in range(2):
        W = np.tile(weight, n)
        x = scaled_lstsq(M * W[:, None], rhs * W)
        residual = (rhs - M @ x).reshape(n, c)
        spread = np.sqrt((residual ** 2).mean(axis=0))
        weight = 1.0 / np.maximum(spread, 1e-9 * max(spread.max(), 1e-300))
    W = np.tile(weight, n)
    Mw = M * W[:, None]
    x = scaled_lstsq(Mw, rhs * W)
    covariances = _covariances(Mw, rhs * W - Mw @ x, n, c)
    k = use.stop
    theta = np.zeros(10)
    theta[:k] = x[:k]
    out = Estimate()
    out.consistent_binds = False
    if point_mass:
        if theta[0] <= 0:
            raise NotDeterminedError('the estimated mass is not positive (%.4g kg): the payload '
                                     'is lighter than the data resolve' % theta[0])
        theta = _point_mass(theta)
    elif consistency_margin(theta) < 0:
        theta, x = _consistent(Mw, rhs * W, extra.shape[1])
        out.consistent_binds = True
    out.theta = theta
    out.mass, out.com, out.inertia = link_inertial(theta)
    # each value's deviation: the larger of the two covariances'
    deviations = [_deviations(theta, cov[:k, :k], point_mass) for cov in covariances]
    out.std = {key: np.maximum(*(d[key] for d in deviations)) for key in deviations[0]}
    out.std['mass'] = float(out.std['mass'])
    out.point_mass = point_mass
    coefficients = np.zeros(c * m)
    coefficients[used] = x[k:]
    per_channel = coefficients.reshape(c, m)
    out.offsets = per_channel[:, 0] if offsets else np.zeros(c)
    out.nuisance = per_channel[:, 1:] if offsets else per_channel
    out.condition = cond10
    effect = rows @ theta
    fitted = effect + extra_all @ coefficients
    out.rms = np.sqrt(((rhs - fitted).reshape(n, c) ** 2).mean(axis=0))
    out.effect = np.sqrt((effect.reshape(n, c) ** 2).mean(axis=0))
    out.rms_before = np.sqrt((b ** 2).mean(axis=0))
    out.rows = n
    return out


def _per_channel(features):
    """Return ``(n, c, m)`` per-channel columns as ``(n c, c m)``: channel ``j``'s in its block."""
    n, c, m = features.shape
    out = np.zeros((n, c, c, m))
    out[:, np.arange(c), np.arange(c), :] = features
    return out.reshape(n * c, c * m)


def _covariances(Mw, residual, n, c, blocks=BLOCKS):
    """
    Return two covariances of the weighted least-squares parameters: noise, and model error.

    The classical one (independent residuals) and a block sandwich, ``B⁻¹ (Σ_b g_b g_bᵀ)
    B⁻¹`` with ``B = Mwᵀ Mw`` and ``g_b`` the sum of ``Mwᵀ r`` over the ``b``-th of
    ``blocks`` runs of consecutive samples: an error of the arm's model (its
    friction changed since it was identified, a temperature, a load-dependent gear) is
    correlated along the motion, which the classical covariance takes for independent noise and
    so claims a precision the estimate does not have.
    """
    bread = np.linalg.pinv(Mw.T @ Mw)
    dof = max(Mw.shape[0] - Mw.shape[1], 1)
    classical = float((residual ** 2).sum()) / dof * bread
    scores = (Mw * residual[:, None]).reshape(n, c, -1).sum(axis=1)  # per sample
    edges = np.linspace(0, n, min(blocks, n) + 1).astype(int)
    g = np.add.reduceat(scores, edges[:-1], axis=0)
    sandwich = bread @ (g.T @ g) @ bread * len(g) / max(len(g) - 1, 1)
    return classical, sandwich


def _point_mass(theta):
    """Return ``theta`` with the inertia of a point mass at its centre of mass."""
    out = np.array(theta, dtype=float)
    c = out[1:4] / out[0]
    out[4:] = out[0] * (c @ c * np.eye(3) - np.outer(c, c))[_UPPER]
    return out


def _consistent(Mw, rhs, offsets):
    """Return the weighted least-squares parameters under physical consistency (an SDP)."""
    import cvxpy as cp
    theta = cp.Variable(10)
    extra = cp.Variable(offsets) if offsets else None
    x = theta if extra is None else cp.hstack([theta, extra])
    # scaled so that the solver's tolerances mean the same for any units
    scale = max(np.linalg.norm(rhs), 1e-300)
    problem = cp.Problem(cp.Minimize(cp.sum_squares(Mw @ x - rhs) / scale ** 2),
                         [pseudo_inertia_expression(cp, theta) >> 0])
    try:
        problem.solve(solver=cp.CLARABEL)
    except cp.error.SolverError as err:
        raise AnalysisError('the physically consistent payload did not solve: %s' % err) \
            from None
    if problem.status not in ('optimal', 'optimal_inaccurate') or theta.value is None:
        raise AnalysisError('the physically consistent payload did not solve (%s)'
                            % problem.status)
    values = np.asarray(x.value, dtype=float)
    return values[:10], values


def _deviations(theta, covariance, point_mass):
    """Return the standard deviations of mass, centre of mass and inertia about it."""
    k = covariance.shape[0]

    def values(t):
        full = theta.copy()
        full[:k] = t
        if point_mass:
            full = _point_mass(full)
        mass, com, inertia = link_inertial(full)
        return np.concatenate([[mass], com, inertia[_UPPER]])

    base = values(theta[:k])
    J = np.empty((10, k))
    for j in range(k):
        step = 1e-7 * max(abs(theta[j]), 1e-3)
        t = theta[:k].copy()
        t[j] += step
        J[:, j] = (values(t) - base) / step
    std = np.sqrt(np.maximum(np.einsum('ij,jk,ik->i', J, covariance, J), 0.0))
    if point_mass:
        std[4:] = 0.0
    return {'mass': float(std[0]), 'com': std[1:4], 'inertia': std[4:]}
