"""
ROS messages to model-ordered arrays and back, with the validation the node relies on.

Nothing here imports rclpy: the functions work on any object with the message's fields, so they
are tested without a ROS graph. Every function either returns finite arrays or raises
``ValueError`` with a message fit for a log line.
"""

import array

import numpy as np
from rbd_dynamics.control.desired import Desired
from rbd_dynamics.control.joint_states import float_vector

CONVENTIONS = ('applied_on_robot', 'exerted_by_robot')


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
    acc = float_vector(point.accelerations, 'accelerations')
    if len(acc) != len(names):
        raise ValueError('desired_state has %d joint_names but %d accelerations (required)'
                         % (len(names), len(acc)))
    out = Desired(np.zeros(n), mask=np.zeros(n, dtype=bool))
    out.mask[rows] = True
    for field in ('positions', 'velocities', 'accelerations'):
        values = float_vector(getattr(point, field), field)
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
            values = float_vector(getattr(point, field), field)
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
