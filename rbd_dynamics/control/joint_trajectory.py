"""
The checks every reader of a ``trajectory_msgs/JointTrajectory`` makes, written once.

The node's ``~/desired_state`` and ``~/trajectory``, the offline ``trajectory`` command (YAML)
and the simulated JointTrajectoryController all read joint names and, per point, positions,
velocities, accelerations and efforts. :func:`check_points` takes those as plain sequences (no
ROS import), so each reader only gathers the fields and adds its own rules (one point for a
desired state, the joints it knows).
"""

import array

import numpy as np

from .joint_states import float_vector

FIELDS = ('positions', 'velocities', 'accelerations', 'effort')


def check_points(joint_names, fields, required=(), known=None, what='trajectory', times=None):
    """
    Check the joint names and the per-point fields of a JointTrajectory.

    Parameters
    ----------
    joint_names
        the message's ``joint_names``.
    fields
        field name -> one sequence of numbers per point (every field lists every point; an
        empty sequence means the point does not carry the field).
    required
        fields every point must carry; any other field is carried by every point or by none.
    known
        the joints the reader can use (``None``: any); others are refused by name.
    what
        how the messages name the trajectory (``'desired_state'``, a file name).
    times
        ``(points,)`` ``time_from_start`` [s] to check (finite, >= 0, strictly increasing), or
        ``None``.

    Returns
    -------
    field name -> ``(points, len(joint_names))`` finite float array, or ``None`` for a field
    that no point carries.

    Raises
    ------
    ValueError
        no joint names or no points; unknown or repeated joints; a point whose field has
        another length than ``joint_names``, lacks a required field, or is not finite; a
        field carried by some points only; times that do not increase. The message names
        the point and the field.

    """
    names = list(joint_names)
    counts = {len(rows) for rows in fields.values()}
    count = counts.pop() if len(counts) == 1 else None
    if count is None:
        raise ValueError('%s: the fields list different numbers of points' % what)
    if not count:
        raise ValueError('%s has no points' % what)
    if not names:
        raise ValueError('%s has no joint_names' % what)
    if not all(isinstance(name, str) for name in names):
        raise ValueError('%s: joint_names must be names (strings)' % what)
    if known is not None:
        unknown = [name for name in names if name not in known]
        if unknown:
            raise ValueError('%s names unknown joints: %s (known: %s)'
                             % (what, ', '.join(unknown), ', '.join(known)))
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError('%s lists a joint more than once: %s' % (what, ', '.join(repeated)))
    k = len(names)
    out = {}
    for field, rows in fields.items():
        stacked = _stacked(rows, k)
        if stacked is not None:
            out[field] = stacked
            continue
        values = []
        for point, row in enumerate(rows):
            where = '%s, point %d' % (what, point)
            try:
                row = float_vector([] if row is None else row, field)
            except ValueError:
                raise ValueError('%s: %s is not a list of numbers' % (where, field)) from None
            if not len(row):
                if field in required:
                    raise ValueError('%s has no %s' % (where, field))
            elif len(row) != k:
                raise ValueError('%s: %s has %d entries, joint_names has %d'
                                 % (where, field, len(row), k))
            elif not np.isfinite(row).all():
                raise ValueError('%s: %s are not finite' % (where, field))
            values.append(row)
        carried = [len(row) > 0 for row in values]
        if not any(carried):
            out[field] = None
        elif not all(carried):
            raise ValueError('%s: point %d has no %s, others have (every point needs %d %s '
                             'or none)' % (what, carried.index(False), field, k, field))
        else:
            out[field] = np.array(values, dtype=float).reshape(count, k)
    if times is not None:
        times = np.asarray(times, dtype=float).reshape(-1)
        if len(times) != count:
            raise ValueError('%s has %d times for %d points' % (what, len(times), count))
        steps = np.diff(times)
        bad = np.flatnonzero(~np.isfinite(times) | (times < 0.0)
                             | np.concatenate([[False], ~(steps > 0.0)]))
        if len(bad):
            raise ValueError('%s: time_from_start of point %d is not finite, >= 0 and '
                             'increasing' % (what, bad[0]))
    return out


def _stacked(rows, k):
    """
    Return ``rows`` as one ``(points, k)`` array, or ``None``.

    When each row is an ``array.array('d')`` of ``k`` finite numbers (a message's field, as
    rclpy gives it): the common case of a trajectory of many points, in one copy and without
    a Python step per point. Anything else (and a refusal's reason) is left to
    :func:`check_points`' loop.
    """
    if not all(type(row) is array.array and row.typecode == 'd' and len(row) == k
               for row in rows):
        return None
    values = np.frombuffer(bytearray().join(rows), dtype=float).reshape(len(rows), k)
    return values if np.isfinite(values).all() else None
