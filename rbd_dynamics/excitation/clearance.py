"""The clearances an excitation keeps, as the optimiser sees them; a clear pose near a start."""

import math

import numpy as np

from .objective import STEP


#: How far an optimiser's iterate may fall short of a clearance and still be taken [m].
CLEARANCE_TOLERANCE = 0.001
#: Samples per period where the optimiser keeps the clearances (their smooth minimum).
COLLISION_SAMPLES = 200


class Clearance:
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
