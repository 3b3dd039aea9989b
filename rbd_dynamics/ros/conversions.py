"""
ROS messages to model-ordered arrays and back, with the validation the node relies on.

Nothing here imports rclpy: the functions work on any object with the message's fields, so they
are tested without a ROS graph. Every function either returns finite arrays or raises
``ValueError`` with a message fit for a log line.
"""

import array

import numpy as np

CONVENTIONS = ('applied_on_robot', 'exerted_by_robot')


def _floats(values, what):
    """Return a message sequence of float64 as a NumPy array (no copy for ``array.array('d')``)."""
    if isinstance(values, array.array) and values.typecode == 'd':
        return np.frombuffer(values, dtype=float) if len(values) else np.empty(0)
    try:
        return np.asarray(values, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError('%s is not a sequence of numbers' % what) from None


def to_float_array(values):
    """``array.array('d')`` from a float64 vector: what generated message fields store."""
    out = array.array('d')
    out.frombytes(np.ascontiguousarray(values, dtype=float).tobytes())
    return out


class JointStateMerger:
    """
    Merge ``sensor_msgs/JointState`` messages by name into the model's coordinate order.

    Several publishers may each send a part of the robot (an arm driver, a gripper driver, a
    head). Positions are kept per joint; a message without velocities leaves the last velocity
    of its joints in place (zero for a joint that never had one). Names that are not
    independent joints of the model (other robots' joints, mimic joints) are ignored.
    """

    def __init__(self, joint_names):
        """
        Start with every joint at zero and none received.

        Parameters
        ----------
        joint_names
            The model's independent 1-DoF joints, in ``q`` order.

        """
        self.joint_names = tuple(joint_names)
        self.index = {name: i for i, name in enumerate(self.joint_names)}
        n = len(self.joint_names)
        self.position = np.zeros(n)
        self.velocity = np.zeros(n)
        self.has_position = np.zeros(n, dtype=bool)
        self.missing_count = n
        self._last_names = None
        self._last_map = None

    def adopt(self, other):
        """Carry the state of the joints ``other`` knew over (after a model swap)."""
        for name, i in self.index.items():
            j = other.index.get(name)
            if j is not None and other.has_position[j]:
                self.position[i] = other.position[j]
                self.velocity[i] = other.velocity[j]
                self.has_position[i] = True
        self.missing_count = int(np.count_nonzero(~self.has_position))

    def _map(self, names):
        """
        Map the joints named in ``names`` to model rows.

        ``(message rows, model rows, count)`` of the model joints named in ``names``:
        slices when the message lists exactly the model's joints in model order, index arrays
        otherwise.
        """
        if names == self._last_names:
            return self._last_map
        if len(set(names)) != len(names):
            seen = set()
            dup = sorted({n for n in names if n in seen or seen.add(n)})
            raise ValueError('joint_states lists %s more than once' % ', '.join(dup))
        if tuple(names) == self.joint_names:
            mapping = (slice(None), slice(None), len(names))
        else:
            src, dst = [], []
            for k, name in enumerate(names):
                i = self.index.get(name)
                if i is not None:
                    src.append(k)
                    dst.append(i)
            mapping = (np.array(src, dtype=np.intp), np.array(dst, dtype=np.intp), len(src))
        self._last_names = list(names)
        self._last_map = mapping
        return mapping

    def update(self, msg):
        """
        Merge one message.

        Returns
        -------
        The number of model joints the message carried.

        Raises
        ------
        ValueError
            array lengths that disagree with ``name``, duplicate names, or a
            non-finite position or velocity of a model joint. Nothing is merged then.

        """
        names = msg.name
        count = len(names)
        position = _floats(msg.position, 'position')
        velocity = _floats(msg.velocity, 'velocity')
        for field, length in (('position', len(position)), ('velocity', len(velocity)),
                              ('effort', len(msg.effort))):
            if length and length != count:
                raise ValueError('joint_states has %d names but %d %s values'
                                 % (count, length, field))
        src, dst, carried = self._map(names)
        if not carried:
            return 0
        if len(position):
            position = position[src]
            if not np.isfinite(position).all():
                raise ValueError('joint_states position is not finite for %s'
                                 % self._non_finite(names, src, position))
        if len(velocity):
            velocity = velocity[src]
            if not np.isfinite(velocity).all():
                raise ValueError('joint_states velocity is not finite for %s'
                                 % self._non_finite(names, src, velocity))
            self.velocity[dst] = velocity
        if len(position):
            self.position[dst] = position
            if self.missing_count:
                self.has_position[dst] = True
                self.missing_count = int(np.count_nonzero(~self.has_position))
        return carried

    @staticmethod
    def _non_finite(names, src, values):
        rows = np.arange(len(names))[src][~np.isfinite(values)]
        return ', '.join(names[k] for k in rows)

    def missing(self):
        """Names of the model joints that never had a position."""
        return [name for name, ok in zip(self.joint_names, self.has_position) if not ok]


class Desired:
    """
    A desired input in model order: accelerations, optional positions and velocities.

    Attributes
    ----------
    qdd
        ``(n,)`` accelerations (zero for joints outside the configured ``joints``).
    q
        ``(n,)`` positions, or ``None`` when the input carried none.
    qd
        ``(n,)`` velocities, or ``None``.
    mask
        ``(n,)`` bool, the joints the input covers (the PD terms act on these only).

    """

    __slots__ = ('qdd', 'q', 'qd', 'mask')

    def __init__(self, qdd, q=None, qd=None, mask=None):
        self.qdd = qdd
        self.q = q
        self.qd = qd
        self.mask = mask


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
    names = list(msg.joint_names)
    if len(msg.points) != 1:
        raise ValueError('desired_state must carry exactly one point, got %d' % len(msg.points))
    point = msg.points[0]
    unknown = [name for name in names if name not in index]
    if unknown:
        raise ValueError('desired_state names unknown joints: %s' % ', '.join(unknown))
    if len(set(names)) != len(names):
        raise ValueError('desired_state lists a joint more than once')
    missing = [name for name in required if name not in set(names)]
    if missing:
        raise ValueError('desired_state is missing joints: %s' % ', '.join(missing))
    rows = np.array([index[name] for name in names], dtype=np.intp)
    acc = _floats(point.accelerations, 'accelerations')
    if len(acc) != len(names):
        raise ValueError('desired_state has %d joint_names but %d accelerations (required)'
                         % (len(names), len(acc)))
    out = Desired(np.zeros(n), mask=np.zeros(n, dtype=bool))
    out.mask[rows] = True
    for field in ('positions', 'velocities', 'accelerations'):
        values = _floats(getattr(point, field), field)
        if not len(values):
            continue
        if len(values) != len(names):
            raise ValueError('desired_state has %d joint_names but %d %s'
                             % (len(names), len(values), field))
        if not np.all(np.isfinite(values)):
            raise ValueError('desired_state %s are not finite' % field)
        full = np.zeros(n)
        full[rows] = values
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
    values = _floats(msg.data, 'data')
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
    names = list(msg.joint_names)
    if not names:
        raise ValueError('trajectory has no joint_names')
    if not len(msg.points):
        raise ValueError('trajectory has no points')
    unknown = [name for name in names if name not in index]
    if unknown:
        raise ValueError('trajectory names joints that are not independent joints of the '
                         'model: %s' % ', '.join(unknown))
    if len(set(names)) != len(names):
        raise ValueError('trajectory lists a joint more than once')
    rows = np.array([index[name] for name in names], dtype=np.intp)
    fields = ('positions', 'velocities', 'accelerations')
    out = [np.empty((len(msg.points), len(names))) for _ in fields]
    for k, point in enumerate(msg.points):
        for field, values_of in zip(fields, out):
            values = _floats(getattr(point, field), field)
            if len(values) != len(names):
                raise ValueError('trajectory point %d has %d %s for %d joints (positions, '
                                 'velocities and accelerations are required)'
                                 % (k, len(values), field, len(names)))
            if not np.isfinite(values).all():
                raise ValueError('trajectory point %d: %s are not finite' % (k, field))
            values_of[k] = values
    return (rows,) + tuple(out)


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
