"""
A stand-in for ros2_controllers' JointTrajectoryController on an effort interface.

It emulates the controller's documented behaviour (it is not the controller): a received
``trajectory_msgs/JointTrajectory`` starts at its ``header.stamp`` (or on receipt when that is
zero) and is sampled every control period with splines between its points, the degree set by
what the points carry (positions only: linear; with velocities: cubic; with accelerations
too: quintic). Before the first point the reference runs from the state at receipt (measured
position and velocity, zero acceleration); after the last point it holds the last point as
given. The effort command is a PID on the position error with the velocity error as its
derivative, plus the sampled ``effort`` of the points (added on Jazzy and later for effort
command interfaces); effort is interpolated linearly between points, and before the first
point it is the first point's. Arrays in and out, no ROS: the simulated driver does the wiring.
"""

import numpy as np

from ..control.joint_trajectory import check_points


def _polynomial(degree, duration, start, end):
    """
    Fit the polynomial of a segment, per joint.

    Coefficients ``(degree + 1, n)`` (lowest power first) of the polynomial per joint that
    meets ``start`` and ``end`` (tuples of position, velocity, acceleration ``(n,)``) after
    ``duration`` [s]: linear on positions, cubic on positions and velocities, quintic on all.
    """
    T = duration
    p0, v0, a0 = start
    p1, v1, a1 = end
    if degree == 1:
        return np.array([p0, (p1 - p0) / T])
    if degree == 3:
        return np.array([p0, v0,
                         (3.0 * (p1 - p0) - (2.0 * v0 + v1) * T) / T ** 2,
                         (-2.0 * (p1 - p0) + (v0 + v1) * T) / T ** 3])
    return np.array([p0, v0, a0 / 2.0,
                     (20.0 * (p1 - p0) - (8.0 * v1 + 12.0 * v0) * T
                      - (3.0 * a0 - a1) * T ** 2) / (2.0 * T ** 3),
                     (-30.0 * (p1 - p0) + (14.0 * v1 + 16.0 * v0) * T
                      + (3.0 * a0 - 2.0 * a1) * T ** 2) / (2.0 * T ** 4),
                     (12.0 * (p1 - p0) - 6.0 * (v1 + v0) * T
                      - (a0 - a1) * T ** 2) / (2.0 * T ** 5)])


def _evaluate(coefficients, t):
    """Position, velocity and acceleration ``(n,)`` of the polynomials at ``t`` [s]."""
    powers = np.arange(len(coefficients))
    q = sum(c * t ** k for k, c in zip(powers, coefficients))
    qd = sum(k * c * t ** (k - 1) for k, c in zip(powers[1:], coefficients[1:]))
    qdd = sum(k * (k - 1) * c * t ** (k - 2) for k, c in zip(powers[2:], coefficients[2:]))
    zero = np.zeros_like(coefficients[0])
    return q, zero + qd, zero + qdd


class Trajectory:
    """
    A received trajectory of ``n`` joints, sampled as the JointTrajectoryController does.

    Parameters
    ----------
    start
        start time [s] (the message's stamp, or the time of receipt when it is zero).
    times
        ``(k,)`` strictly increasing ``time_from_start`` of the points [s], >= 0.
    positions
        ``(k, n)`` [rad or m].
    velocities, accelerations, efforts
        ``(k, n)``, or empty / ``None`` when the points do
        not carry them.
    now
        time of receipt [s].
    q, qd
        ``(n,)`` measured state at receipt, the start of the segment before the first
        point.

    Raises
    ------
    ValueError
        sizes that do not match, values that are not finite, or times that do not
        increase.

    """

    def __init__(self, start, times, positions, velocities=None, accelerations=None,
                 efforts=None, now=0.0, q=None, qd=None):
        times = np.asarray(times, dtype=float).reshape(-1)
        count = times.size
        n = len(positions[0]) if len(positions) else 0
        given = {'positions': positions, 'velocities': velocities,
                 'accelerations': accelerations, 'effort': efforts}
        fields = {field: [[]] * count if rows is None or not len(rows) else rows
                  for field, rows in given.items()}
        checked = check_points(['joint %d' % j for j in range(n)], fields,
                               required=('positions',), what='the trajectory', times=times)
        positions, velocities, accelerations, efforts = (checked[f] for f in given)
        if not np.isfinite(start):
            raise ValueError('the start time is not finite')
        self.degree = 1 if velocities is None else (3 if accelerations is None else 5)
        zeros = np.zeros((count, n))
        knots = [start + times]
        pos, vel, acc = [positions], [zeros if velocities is None else velocities], \
            [zeros if accelerations is None else accelerations]
        self.efforts = efforts
        if start + times[0] > now:
            # the segment before the first point starts from the state at receipt
            knots.insert(0, [now])
            pos.insert(0, [np.asarray(q, dtype=float)])
            vel.insert(0, [np.asarray(qd, dtype=float)])
            acc.insert(0, [np.zeros(n)])
            if efforts is not None:
                self.efforts = np.vstack([efforts[:1], efforts])
        self.knots = np.concatenate(knots)
        self.positions = np.vstack(pos)
        self.velocities = np.vstack(vel)
        self.accelerations = np.vstack(acc)
        self._segments = {}

    @classmethod
    def hold(cls, now, q):
        """Hold ``q`` from ``now`` on (the controller's state before any trajectory)."""
        q = np.asarray(q, dtype=float)
        zero = np.zeros_like(q)
        return cls(now, [0.0], [q], [zero], [zero], now=now, q=q, qd=zero)

    def sample(self, t):
        """
        Sample the reference at time ``t``.

        Reference at time ``t`` [s]: ``(q, qd, qdd, effort)``, each ``(n,)``; ``effort``
        is zeros when the points carry none.
        """
        knots = self.knots
        n = self.positions.shape[1]
        if t >= knots[-1]:
            k, where = len(knots) - 1, None
        elif t <= knots[0]:
            k, where = 0, None
        else:
            k = int(np.searchsorted(knots, t, side='right')) - 1
            where = t - knots[k]
        effort = np.zeros(n) if self.efforts is None else self.efforts[k].copy()
        if where is None:
            return (self.positions[k].copy(), self.velocities[k].copy(),
                    self.accelerations[k].copy(), effort)
        duration = knots[k + 1] - knots[k]
        if k not in self._segments:
            ends = [(self.positions[i], self.velocities[i], self.accelerations[i])
                    for i in (k, k + 1)]
            self._segments[k] = _polynomial(self.degree, duration, *ends)
        q, qd, qdd = _evaluate(self._segments[k], where)
        if self.efforts is not None:
            effort += (self.efforts[k + 1] - self.efforts[k]) * (where / duration)
        return q, qd, qdd, effort


class Pid:
    """
    Per-joint PID on a position error.

    Per-joint PID on a position error with the velocity error as its derivative (the form
    control_toolbox's ``Pid`` is called with by the trajectory controller).

    Parameters
    ----------
    p, i, d
        gains, scalars or ``(n,)`` [N m/rad, N m/(rad s), N m s/rad].
    i_clamp
        bound of the integral term [N m], scalar or ``(n,)``; 0: none.

    """

    def __init__(self, p, i=0.0, d=0.0, i_clamp=0.0):
        self.p, self.i, self.d = (np.asarray(g, dtype=float) for g in (p, i, d))
        clamp = np.asarray(i_clamp, dtype=float)
        self.i_clamp = np.where(clamp > 0.0, clamp, np.inf)
        self.integral = 0.0

    def __call__(self, error, error_rate, dt):
        """Effort ``(n,)`` for the position error, its rate and the period ``dt`` [s]."""
        self.integral = np.clip(self.integral + self.i * error * dt,
                                -self.i_clamp, self.i_clamp)
        return self.p * error + self.integral + self.d * error_rate
