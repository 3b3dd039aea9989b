"""
What an excitation is chosen for: the conditioning of the base regressor along one period.

The columns a motion excites (:func:`excited_columns`), their column-scaled condition number
(:func:`condition_number`), and :class:`Problem`: the objective, its gradient and the
constraints (limits, efforts, each joint's coverage) that the optimiser of :mod:`.design` sees.
"""

import math

import numpy as np

from ..numerics import column_norms, scaled_condition

#: Spacing of the written points [s].
STEP = 0.01
#: Samples per period where the optimiser evaluates the regressor; the constraints take every
#: ``CONSTRAINT_STRIDE``-th of them (the written grid is checked afterwards).
SAMPLES = 100
CONSTRAINT_STRIDE = 2
#: What a joint's shortfall from its share costs in the objective, per share (``log`` of the
#: condition number: a joint short by its whole share weighs as a condition number 20 times
#: larger).
SHORTFALL_PRICE = 3.0
#: Sharpness of the smooth range the optimiser sees, per share.
COVERAGE_SHARPNESS = 100.0
#: Share of the velocity and effort limits the optimiser aims for (sampling slack).
DESIGN_SHARE = 0.95


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
    """
    Return the condition number of ``W`` (rows stacked) with its columns scaled to unit norm.

    :func:`rbd_dynamics.numerics.scaled_condition` of ``W`` ``(..., ncol)`` as ``(-1, ncol)``.
    """
    return scaled_condition(W.reshape(-1, W.shape[-1]))


class Problem:
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
        norms = column_norms(Wb)
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


def sample_motion(model, basis, start, Z, duration, step=STEP):
    count = int(round(duration / step))
    t = np.linspace(0.0, duration, count + 1)
    P, V, A = basis.matrices(t)
    q, qd, qdd = start + P @ Z.T, V @ Z.T, A @ Z.T
    # the series is at rest on the start pose at both ends; write that exactly
    for k in (0, -1):
        q[k], qd[k], qdd[k] = start, 0.0, 0.0
    return t, q, qd, qdd


def violations(model, limits, q, qd, qdd, tau):
    """Joint names whose limits the samples break (empty when none)."""
    tol = 1e-9
    bad = ((q < limits.lower - tol) | (q > limits.upper + tol)
           | (np.abs(qd) > limits.velocity + tol) | (np.abs(qdd) > limits.acceleration + tol)
           | (np.abs(tau) > limits.effort + tol)).any(axis=0)
    return [n for n, b in zip(model.joint_names, bad) if b]
