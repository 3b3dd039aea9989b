"""
Joint states merged by name into the model's coordinate order.

Several drivers may each publish a part of the robot; :class:`JointStateMerger` keeps the
latest position (and velocity) of every joint from whichever message carried it. It reads the
fields of a ``sensor_msgs/JointState`` but imports nothing of ROS.
"""

import array
import math

import numpy as np


def joint_state_problem(model):
    """
    Say why joint states cannot describe ``model``, or return ``''``.

    A ``sensor_msgs/JointState`` carries one coordinate per joint: a model with a floating or
    planar joint in use (several coordinates) cannot be driven by it -- a floating base's free
    joint aside, whose state comes from its IMU -- and a model without moving joints has
    nothing to drive.
    """
    multi = [(name, jtype, nq) for name, jtype, nq, nv in zip(
        model.joint_names, model.joint_types, model.joint_nq, model.joint_nv)
        if nv != 1 and name != model.base_joint]
    if multi:
        return ('joint %s, which joint states cannot carry; set root_link to a link below it%s'
                % (', '.join('%r is %s (%d coordinates)' % item for item in multi),
                   '' if model.base_joint else ', or base.type floating for a moving root'))
    if model.nv == (6 if model.base_joint else 0):
        return 'the model has no moving joints'
    return ''


def float_vector(values, what):
    """Return a message sequence of float64 as a NumPy array (no copy for ``array.array('d')``)."""
    if isinstance(values, array.array) and values.typecode == 'd':
        return np.frombuffer(values, dtype=float) if len(values) else np.empty(0)
    try:
        return np.asarray(values, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError('%s is not a sequence of numbers' % what) from None


def _finite(raw, values):
    """
    Say whether ``values``, taken from the message's ``raw`` field, are all finite.

    A message's ``array.array('d')`` is summed first: the sum of its numbers is finite only if
    each is (a sum that overflows is checked value by value).
    """
    if type(raw) is array.array and raw.typecode == 'd' and math.isfinite(sum(raw)):
        return True
    return bool(np.isfinite(values).all())


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
        # efforts, kept only when asked (the momentum observer reads them)
        self.effort = np.zeros(n)
        self.has_effort = np.zeros(n, dtype=bool)
        self.effort_fresh = False  # the last message carried efforts, and every joint has one
        self._effort_missing = n  # joints without an effort yet (has_effort False)
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

    def update(self, msg, efforts=False):
        """
        Merge one message (with ``efforts``: its efforts too).

        Returns
        -------
        The number of model joints the message carried.

        Raises
        ------
        ValueError
            array lengths that disagree with ``name``, duplicate names, or a
            non-finite position or velocity (with ``efforts``: or effort) of a model joint.
            Nothing is merged then.

        """
        names = msg.name
        count = len(names)
        raw_position, raw_velocity, raw_effort = msg.position, msg.velocity, msg.effort
        position = float_vector(raw_position, 'position')
        velocity = float_vector(raw_velocity, 'velocity')
        lengths = (len(position), len(velocity), len(raw_effort))
        if lengths != (count, count, count):
            for field, length in zip(('position', 'velocity', 'effort'), lengths):
                if length and length != count:
                    raise ValueError('joint_states has %d names but %d %s values'
                                     % (count, length, field))
        src, dst, carried = self._map(names)
        if not carried:
            return 0
        if len(position):
            position = position[src]
            if not _finite(raw_position, position):
                raise ValueError('joint_states position is not finite for %s'
                                 % self._non_finite(names, src, position))
        if len(velocity):
            velocity = velocity[src]
            if not _finite(raw_velocity, velocity):
                raise ValueError('joint_states velocity is not finite for %s'
                                 % self._non_finite(names, src, velocity))
        effort = None
        if efforts and len(raw_effort):
            effort = float_vector(raw_effort, 'effort')[src]
            if not _finite(raw_effort, effort):
                raise ValueError('joint_states effort is not finite for %s'
                                 % self._non_finite(names, src, effort))
        if len(velocity):
            self.velocity[dst] = velocity
        if effort is not None:
            self.effort[dst] = effort
            if self._effort_missing:
                self.has_effort[dst] = True
                self._effort_missing = int(np.count_nonzero(~self.has_effort))
            self.effort_fresh = not self._effort_missing
        else:
            self.effort_fresh = False
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
