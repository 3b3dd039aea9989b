"""What an excitation may do: each joint's range, velocity, acceleration and effort limits."""

import math

import numpy as np

from ..analysis import AnalysisError
from ..parsers.urdf import joint_limits


#: Default margin to the position limits, a share of each joint's range.
DEFAULT_MARGIN = 0.1
#: Range each joint covers at least, when a quarter of its position range is more [rad, m].
COVERAGE = {'revolute': 1.0, 'prismatic': 0.1}
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


def coverage_need(model, urdf_text, start):
    """
    Return the range ``(nv,)`` each joint should cover.

    A quarter of its position range or :data:`COVERAGE` (1 rad, 0.1 m), whichever is less.
    """
    lower, upper, _ = joint_ranges(model, urdf_text, start)
    cap = np.array([COVERAGE['prismatic' if t == 'prismatic' else 'revolute']
                    for t in model.joint_types])
    return np.minimum(0.25 * (upper - lower), cap)
