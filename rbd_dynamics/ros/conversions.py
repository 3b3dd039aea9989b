"""
ROS messages to model-ordered arrays and back, with the validation the node relies on.

Nothing here imports rclpy: the functions work on any object with the message's fields, so they
are tested without a ROS graph. Every function either returns finite arrays or raises
``ValueError`` with a message fit for a log line.
"""

import array
import struct
import sys

import numpy as np
from rbd_dynamics.control.config import CONVENTIONS
from rbd_dynamics.control.desired import Desired
from rbd_dynamics.control.joint_states import float_vector
from rbd_dynamics.control.joint_trajectory import check_points

_STATE_FIELDS = ('positions', 'velocities', 'accelerations')


def to_float_array(values):
    """``array.array('d')`` from a float64 vector: what generated message fields store."""
    out = array.array('d')
    out.frombytes(np.ascontiguousarray(values, dtype=float).tobytes())
    return out


_CDR_LE = b'\x00\x01'  # the encapsulation of plain little-endian CDR
_QUATERNION = struct.Struct('<4d')
_VECTOR = struct.Struct('<3d')
# from the orientation (8-aligned after the frame_id): itself, its covariance, the angular
# velocity, its covariance, the linear acceleration, its covariance
_IMU_ANGULAR = 32 + 72
_IMU_LINEAR = _IMU_ANGULAR + 24 + 72
_IMU_END = _IMU_LINEAR + 24 + 72


def imu_from_cdr(data):
    """
    Read a serialized ``sensor_msgs/Imu`` without building the message.

    ``data``: the bytes a subscription with ``raw=True`` receives. Plain little-endian CDR (the
    encapsulation ROS 2's middlewares use by default) gives ``(stamp_ns, frame_id, orientation,
    angular_velocity, linear_acceleration)``, the vectors as tuples of floats (covariances
    skipped); anything else ``None``: the caller deserializes it as rclpy does (about
    30 us per message for an IMU's, a tenth of that here).
    """
    if data[:2] != _CDR_LE or len(data) < 16:
        return None
    sec, nanosec = _STAMP.unpack_from(data, 4)
    try:
        frame, end = _read_string(data, 12)
    except (struct.error, UnicodeDecodeError, ValueError):
        return None
    start = _aligned(end, 8)
    if len(data) < start + _IMU_END:
        return None
    return (sec * 1_000_000_000 + nanosec, frame, _QUATERNION.unpack_from(data, start),
            _VECTOR.unpack_from(data, start + _IMU_ANGULAR),
            _VECTOR.unpack_from(data, start + _IMU_LINEAR))


class JointStateReader:
    """
    Read serialized ``sensor_msgs/JointState`` messages without building them.

    :meth:`read` takes the bytes a subscription with ``raw=True`` receives. A driver sends the
    same names in every message: the part of the bytes from the frame to the last name is kept,
    and a message that carries it again takes the names decoded last time (a comparison of
    bytes). rclpy's deserialization of a 29-joint robot's message took some 20 us.
    """

    def __init__(self):
        """Start with no names read."""
        self._names_bytes = b''  # the bytes from header.frame_id's length to the last name
        self._frame_id = ''
        self._names = []

    def read(self, data):
        """
        Return ``(sec, nanosec, frame_id, name, position, velocity, effort)``, or ``None``.

        The sequences of floats as ``array.array('d')``, as a message's; ``None`` for what
        this does not read (an encapsulation other than plain little-endian CDR, bytes that
        end too soon): the caller deserializes it as rclpy does.
        """
        if data[:2] != _CDR_LE or len(data) < 16:
            return None
        sec, nanosec = _STAMP.unpack_from(data, 4)
        kept = self._names_bytes
        if kept and data[12:12 + len(kept)] == kept:
            frame_id, names, at = self._frame_id, self._names, 12 + len(kept)
        else:
            found = _read_names(data)
            if found is None:
                return None
            frame_id, names, at = found
            self._names_bytes, self._frame_id, self._names = data[12:at], frame_id, names
        values = []
        for _ in range(3):  # position, velocity, effort
            at = _aligned(at, 4)
            if at + 4 > len(data):
                return None
            count = _COUNT.unpack_from(data, at)[0]
            at += 4
            if count:
                at = _aligned(at, 8)
            end = at + 8 * count
            if end > len(data):
                return None
            field = array.array('d')
            field.frombytes(data[at:end])
            if _BIG_ENDIAN:
                field.byteswap()
            values.append(field)
            at = end
        return (sec, nanosec, frame_id, names) + tuple(values)


_COUNT = struct.Struct('<I')
_BIG_ENDIAN = sys.byteorder == 'big'


def _read_names(data):
    """Return ``(frame_id, names, offset after them)`` of a serialized JointState, or None."""
    try:
        frame_id, at = _read_string(data, 12)
        at = _aligned(at, 4)
        count = _COUNT.unpack_from(data, at)[0]
        at += 4
        if count > len(data):
            return None
        names = []
        for _ in range(count):
            at = _aligned(at, 4)
            name, at = _read_string(data, at)
            names.append(name)
    except (struct.error, UnicodeDecodeError, ValueError):
        return None
    return frame_id, names, at


def _aligned(at, size):
    """Return the offset from ``at`` on where a value of ``size`` bytes starts in CDR."""
    return at + -(at - 4) % size  # (aligned in the payload, after the 4-byte encapsulation)


def _read_string(data, at):
    """Return a CDR string at ``at`` and the offset after it; ``ValueError`` where malformed."""
    length = _COUNT.unpack_from(data, at)[0]
    end = at + 4 + length
    if length == 0 or end > len(data) or data[end - 1] != 0:
        raise ValueError('not a string')
    return data[at + 4:end - 1].decode(), end


class JointStateBytes:
    """
    A ``sensor_msgs/JointState`` of fixed names and efforts only, serialized by hand.

    The names (and everything but the stamp and the efforts) are written once; each message
    then costs writing its stamp and efforts (plain little-endian CDR, as
    :func:`imu_from_cdr` reads). rclpy's conversion of a message with a 29-joint robot's names
    took some 40 us per publish; a publisher takes the bytes as they are. The middleware must
    read them as the message (the caller checks once: :meth:`serialized` deserialized).
    """

    def __init__(self, names, frame_id=''):
        """Lay out the message for ``names`` (and ``frame_id``)."""
        buf = bytearray(_CDR_LE + b'\x00\x00')
        buf += bytes(8)  # header.stamp
        _cdr_string(buf, frame_id)
        _cdr_align(buf, 4)
        buf += struct.pack('<I', len(names))
        for name in names:
            _cdr_align(buf, 4)
            _cdr_string(buf, name)
        for _ in ('position', 'velocity'):  # empty
            _cdr_align(buf, 4)
            buf += struct.pack('<I', 0)
        _cdr_align(buf, 4)
        buf += struct.pack('<I', len(names))
        if names:
            _cdr_align(buf, 8)
        self._at = len(buf)
        self.count = len(names)
        buf += bytes(8 * len(names))
        self._buf = buf

    def serialized(self, sec, nanosec, effort):
        """
        Return the message's bytes for the stamp and ``effort`` (``count`` floats).

        Raises
        ------
        ValueError
            ``effort`` is not ``count`` floats (the bytes would be no message).

        """
        values = np.ascontiguousarray(effort, dtype='<f8').tobytes()
        if len(values) != 8 * self.count:
            raise ValueError('%d efforts for %d joints' % (len(values) // 8, self.count))
        buf = self._buf
        _STAMP.pack_into(buf, 4, sec, nanosec)
        buf[self._at:] = values
        return bytes(buf)


_STAMP = struct.Struct('<iI')


def _cdr_align(buf, size):
    """Pad ``buf`` so that its next value is aligned to ``size`` (:func:`_aligned`)."""
    buf += bytes(_aligned(len(buf), size) - len(buf))


def _cdr_string(buf, text):
    """Append a CDR string: its length with the terminator, its UTF-8 bytes, the terminator."""
    data = text.encode()
    buf += struct.pack('<I', len(data) + 1) + data + b'\x00'


def desired_from_trajectory(msg, index, n, required):
    """
    Read a ``trajectory_msgs/JointTrajectory`` with one point as a :class:`Desired`.

    Parameters
    ----------
    msg
        the message.
    index
        joint name -> model index (the independent joints).
    n
        number of model coordinates.
    required
        names the message must cover (the configured ``joints``).

    Raises
    ------
    ValueError
        not exactly one point, no accelerations, lengths that disagree with
        ``joint_names``, unknown, duplicate or missing joints, non-finite values.

    """
    if len(msg.points) != 1:
        raise ValueError('desired_state must carry exactly one point, got %d' % len(msg.points))
    point = msg.points[0]
    fields = check_points(msg.joint_names,
                          {field: [getattr(point, field)] for field in _STATE_FIELDS},
                          required=('accelerations',), known=index, what='desired_state')
    names = list(msg.joint_names)
    missing = [name for name in required if name not in set(names)]
    if missing:
        raise ValueError('desired_state is missing joints: %s' % ', '.join(missing))
    rows = np.array([index[name] for name in names], dtype=np.intp)
    out = Desired(np.zeros(n), mask=np.zeros(n, dtype=bool))
    out.mask[rows] = True
    for field, values in fields.items():
        if values is None:
            continue
        full = np.zeros(n)
        full[rows] = values[0]
        if field == 'positions':
            out.q = full
        elif field == 'velocities':
            out.qd = full
        else:
            out.qdd = full
    return out


def desired_from_array(msg, rows, n):
    """
    Read a ``std_msgs/Float64MultiArray`` of accelerations as a :class:`Desired`.

    The accelerations are in ``joints`` order.

    Parameters
    ----------
    msg
        the message.
    rows
        ``(len(joints),)`` model index of each configured joint.
    n
        number of model coordinates.

    Raises
    ------
    ValueError
        wrong length or non-finite values.

    """
    values = float_vector(msg.data, 'data')
    if len(values) != len(rows):
        raise ValueError('desired_accelerations has %d entries, joints has %d'
                         % (len(values), len(rows)))
    if not np.all(np.isfinite(values)):
        raise ValueError('desired_accelerations are not finite')
    out = Desired(np.zeros(n), mask=np.zeros(n, dtype=bool))
    out.qdd[rows] = values
    out.mask[rows] = True
    return out


def trajectory_to_arrays(msg, index):
    """
    Read a planned ``trajectory_msgs/JointTrajectory`` as arrays in its joint order.

    Parameters
    ----------
    msg
        the message; every point needs positions, velocities and accelerations for each
        of its joints.
    index
        independent joint name -> model index.

    Returns
    -------
    ``(rows, positions, velocities, accelerations)``: ``(k,)`` model index of each message
    joint and three ``(points, k)`` arrays.

    Raises
    ------
    ValueError
        no joints or points, unknown or duplicate joints, missing or non-finite
        values, or lengths that disagree with ``joint_names`` (the message names the point).

    """
    fields = check_points(msg.joint_names,
                          {field: [getattr(point, field) for point in msg.points]
                           for field in _STATE_FIELDS},
                          required=_STATE_FIELDS, known=index, what='trajectory')
    rows = np.array([index[name] for name in msg.joint_names], dtype=np.intp)
    return (rows,) + tuple(fields[field] for field in _STATE_FIELDS)


def wrench_to_array(msg, convention):
    """
    ``geometry_msgs/WrenchStamped`` as ``(6,)`` [fx fy fz tx ty tz] applied on the robot.

    Raises
    ------
    ValueError
        a non-finite component or an unknown convention.

    """
    if convention not in CONVENTIONS:
        raise ValueError('unknown convention %r (use %s)' % (convention, ' or '.join(CONVENTIONS)))
    force, torque = msg.wrench.force, msg.wrench.torque
    values = np.array([force.x, force.y, force.z, torque.x, torque.y, torque.z], dtype=float)
    if not np.all(np.isfinite(values)):
        raise ValueError('wrench is not finite: %s' % values.tolist())
    if convention == 'exerted_by_robot':
        values = -values
    return values
