"""
ROS messages to model-ordered arrays and back, with the validation the node relies on.

Nothing here imports rclpy: the functions work on any object with the message's fields, so they
are tested without a ROS graph. Every function either returns finite arrays or raises
``ValueError`` with a message fit for a log line.
"""

import array

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
