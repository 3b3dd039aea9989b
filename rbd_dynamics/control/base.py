"""
A floating base's state from an IMU (and odometry): checked, kept, differentiated.

An IMU (``sensor_msgs/Imu``) on a link of the robot gives that link's orientation in a
gravity-aligned world, its angular velocity and its proper linear acceleration (the specific
force), in its own frame. :class:`BaseInput` keeps the last good reading, refuses a bad one
with the reason (the last good one stays until its timeout), and gives the angular
acceleration, which an IMU does not measure: zero, or the derivative of the angular velocity
by the readings' header stamps. The derivative is that of a quadratic fitted by least squares
to the readings of the last :data:`DIFFERENTIATE_WINDOW` seconds, taken at the newest one:
exact for an angular velocity that changes as a quadratic in time, without the half-step lag
of a difference of two readings, and averaging the gyro's noise over the window.

Odometry (``nav_msgs/Odometry`` of the base link), where configured and fresh, gives the base's
orientation and angular velocity instead; the IMU still gives the acceleration.

Nothing of ROS is imported: the node hands the messages' numbers over.
"""

import math
from typing import NamedTuple

import numpy as np

from ..floating import base_at_rest, base_motion_from_imu

#: The compiled kernels a floating base's torques use beyond the RNEA (the IMU moved to the
#: base, the RNEAs and the contacts' split in one kernel): :func:`rbd_dynamics.compiled.prepare`'s
#: names.
KERNELS = ('floating_base',)
#: The modes of ``base.angular_acceleration``.
ANGULAR_ACCELERATIONS = ('differentiate', 'zero')
#: The base types of ``base.type``.
BASE_TYPES = ('fixed', 'floating')
#: How far a quaternion's norm may be from 1 before a reading is refused.
QUATERNION_TOLERANCE = 1e-3
#: The span of the angular velocity's fit [s] (see the module docstring).
DIFFERENTIATE_WINDOW = 0.02
#: Readings older than this are never in the fit [ns] (after a pause of the IMU).
STALE_SAMPLE_NS = 250_000_000
_ZERO3 = np.zeros(3)
_ZERO3.setflags(write=False)


class ImuReading(NamedTuple):
    """A checked IMU reading, in the frame of ``link``."""

    arrival_ns: int
    stamp_ns: int
    link: str
    orientation: np.ndarray  # (4,) unit quaternion [x y z w]
    angular_velocity: np.ndarray  # (3,) [rad/s]
    angular_acceleration: np.ndarray  # (3,) [rad/s^2], differentiated or zero
    proper_acceleration: np.ndarray  # (3,) [m/s^2]


class OdometryReading(NamedTuple):
    """A checked odometry reading of the base link (its frame)."""

    arrival_ns: int
    stamp_ns: int
    orientation: np.ndarray  # (4,)
    angular_velocity: np.ndarray  # (3,)
    angular_acceleration: np.ndarray  # (3,)


def _floats(values, count):
    """Return ``count`` finite floats of ``values``, or ``None`` (in floats: one per message)."""
    try:
        numbers = tuple(float(v) for v in values)
    except (TypeError, ValueError):
        return None
    if len(numbers) != count or not all(map(math.isfinite, numbers)):
        return None
    return numbers


def unit_quaternion(values, what):
    """Return ``(4,)`` ``[x y z w]`` normalised; ``ValueError`` unless finite and of norm 1."""
    numbers = _floats(values, 4)
    if numbers is None:
        raise ValueError('%s: the orientation is not 4 finite numbers' % what)
    x, y, z, w = numbers
    norm = math.sqrt(x * x + y * y + z * z + w * w)
    if abs(norm - 1.0) > QUATERNION_TOLERANCE:
        raise ValueError('%s: the orientation quaternion has norm %.6g, not 1 (within %g)'
                         % (what, norm, QUATERNION_TOLERANCE))
    return np.array((x / norm, y / norm, z / norm, w / norm))


def finite_vector(values, what):
    """Return ``(3,)`` floats; ``ValueError`` unless 3 finite numbers."""
    numbers = _floats(values, 3)
    if numbers is None:
        raise ValueError('%s are not 3 finite numbers' % what)
    return np.array(numbers)


class _Rate:
    """The derivative of a vector from its timed samples (the module docstring's fit)."""

    CAPACITY = 256  # samples held before the window is moved to the front

    def __init__(self):
        self.origin_ns = None  # the stamps are kept in seconds after this one
        self.t = np.empty(self.CAPACITY)
        self.w = np.empty((self.CAPACITY, 3))
        self.first = self.count = 0  # the window is [first, count)

    def add(self, stamp_ns, value):
        """Add a sample: the derivative at it, or ``None`` for a stamp not after the last."""
        if self.count and stamp_ns <= self.last_ns:
            if stamp_ns >= self.last_ns - 1_000_000_000:
                return None  # a repeated or reordered stamp: it cannot be differentiated
            self.origin_ns = None  # the clock went back (a replay): start again
        if self.origin_ns is None or stamp_ns - self.origin_ns > 3_600_000_000_000:
            self.origin_ns = stamp_ns  # (re-based hourly: seconds in floats stay exact)
            self.first = self.count = 0
        if self.count == self.CAPACITY:
            kept = self.count - self.first
            self.t[:kept] = self.t[self.first:self.count]
            self.w[:kept] = self.w[self.first:self.count]
            self.first, self.count = 0, kept
        now = (stamp_ns - self.origin_ns) * 1e-9
        self.t[self.count] = now
        self.w[self.count] = value
        self.count += 1
        self.last_ns = stamp_ns
        t = self.t
        start, stale = now - DIFFERENTIATE_WINDOW, now - STALE_SAMPLE_NS * 1e-9
        first = self.first
        while (self.count - first > 3 and t[first] < start
               or self.count - first > 1 and t[first] < stale):
            first += 1
        self.first = first
        count = self.count - first
        if count < 2:
            return np.zeros(3)
        if count == 2:
            return (self.w[first + 1] - self.w[first]) / (t[first + 1] - t[first])
        return _quadratic_slope(t[first:self.count] - now, self.w[first:self.count])


def _quadratic_slope(t, values):
    """
    Return the slope at ``t = 0`` of the quadratic fitted to samples ``values`` at times ``t``.

    ``t`` ``(N,)`` [s] (the newest 0), ``values`` ``(N, 3)``. The least-squares normal equations
    ``M c = B`` of ``c0 + c1 s + c2 s^2`` in the scaled time ``s = t / DIFFERENTIATE_WINDOW``
    (``M``, ``B`` by two products of the ``(3, N)`` powers), solved for ``c1`` by Cramer's rule
    in floats: no solver's overhead per reading.
    """
    powers = np.empty((3, len(t)))
    powers[0] = 1.0
    np.multiply(t, 1.0 / DIFFERENTIATE_WINDOW, out=powers[1])
    np.multiply(powers[1], powers[1], out=powers[2])
    (m00, m01, m02), (_, m11, m12), (_, _, m22) = (powers @ powers.T).tolist()
    b0, b1, b2 = (powers @ values).tolist()
    # c1 = det(M with its second column B) / det(M); M symmetric
    a0, a1, a2 = m12 * m02 - m01 * m22, m00 * m22 - m02 * m02, m01 * m02 - m00 * m12
    det = m01 * a0 + m11 * a1 + m12 * a2
    if not abs(det) > 1e-12:  # the stamps too close to tell a curve: the last two's slope
        return (values[-1] - values[-2]) / (t[-1] - t[-2])
    scale = 1.0 / (det * DIFFERENTIATE_WINDOW)
    return np.array([(a0 * x + a1 * y + a2 * z) * scale for x, y, z in zip(b0, b1, b2)])


class BaseInput:
    """
    The IMU's and odometry's latest good readings of a floating base.

    Each reading keeps the derivative of its angular velocity (the module docstring); the
    setup decides whether it is used (``base.angular_acceleration``) and how old a reading may
    be (``base.imu.timeout``). A reading is swapped in whole (one reference): the torque law
    may read on one thread while another receives.
    """

    def __init__(self):
        self.imu = None
        self.odometry = None
        self._imu_rate = _Rate()
        self._odometry_rate = _Rate()

    def receive_imu(self, model, frame, arrival_ns, stamp_ns, frame_id, orientation,
                    angular_velocity, linear_acceleration):
        """
        Check and keep an IMU reading.

        ``frame``: the IMU's link overriding ``frame_id`` (``base.imu.frame``; '' for none).

        Raises
        ------
        ValueError
            the frame is not a link of ``model``, the quaternion is not unit, or a value is not
            finite; the last good reading stays.

        A reading stamped zero is differentiated by its arrival; one stamped not after the last
        reading keeps the last angular acceleration (it cannot be differentiated).

        """
        link = frame or frame_id
        if not link:
            raise ValueError('IMU: empty header.frame_id and no base.imu.frame')
        if link not in model.link_body:
            raise ValueError('IMU: frame %r is not a link of the model' % link)
        quaternion = unit_quaternion(orientation, 'IMU')
        omega = finite_vector(angular_velocity, 'IMU: the angular velocity')
        proper = finite_vector(linear_acceleration, 'IMU: the linear acceleration')
        alpha = self._imu_rate.add(stamp_ns or arrival_ns, omega)
        if alpha is None:  # a stamp not after the last one's: the last derivative stays
            alpha = self.imu.angular_acceleration if self.imu is not None else np.zeros(3)
        self.imu = ImuReading(arrival_ns, stamp_ns, link, quaternion, omega, alpha, proper)

    def receive_odometry(self, arrival_ns, stamp_ns, orientation, angular_velocity):
        """Check and keep an odometry reading of the base link; ``ValueError`` if bad."""
        quaternion = unit_quaternion(orientation, 'odometry')
        omega = finite_vector(angular_velocity, 'odometry: the angular velocity')
        alpha = self._odometry_rate.add(stamp_ns or arrival_ns, omega)
        if alpha is None:  # a stamp not after the last one's: the last derivative stays
            alpha = (self.odometry.angular_acceleration if self.odometry is not None
                     else np.zeros(3))
        self.odometry = OdometryReading(arrival_ns, stamp_ns, quaternion, omega, alpha)

    def fresh(self, now_ns, timeout_ns):
        """Return ``(imu, odometry)``: each reading if not older than ``timeout_ns``, else None."""
        imu, odometry = self.imu, self.odometry
        if imu is not None and now_ns - imu.arrival_ns > timeout_ns:
            imu = None
        if odometry is not None and now_ns - odometry.arrival_ns > timeout_ns:
            odometry = None
        return imu, odometry


def reading(imu, odometry, differentiate):
    """
    Return the fresh readings as :func:`~rbd_dynamics.floating.base_motion_from_imu` takes them.

    ``(link, orientation, angular_velocity, angular_acceleration, proper_acceleration,
    base_rotation)``: the IMU's, and odometry's rotation where given. ``differentiate``: the
    readings' angular acceleration (else zero).
    """
    alpha = imu.angular_acceleration if differentiate else _ZERO3
    rotation = None
    if odometry is not None:
        rotation = (odometry.orientation, odometry.angular_velocity,
                    odometry.angular_acceleration if differentiate else _ZERO3)
    return (imu.link, imu.orientation, imu.angular_velocity, alpha, imu.proper_acceleration,
            rotation)


def base_motions(model, q, qd, qdd, imu, odometry, differentiate):
    """
    Return the base's motion for the feedforward and at rest, from the fresh readings.

    ``(motion, rest)``: :class:`~rbd_dynamics.floating.BaseMotion` each; the IMU moved to
    the base with the joints' ``q``, ``qd`` and the commanded ``qdd`` (odometry, where given,
    the base's orientation and angular velocity), and the base at rest in that orientation.
    ``differentiate``: use the readings' angular acceleration (else zero).
    """
    motion = base_motion_from_imu(model, q, qd, qdd, *reading(imu, odometry, differentiate))
    return motion, base_at_rest(motion.orientation)
