"""
Inverse dynamics of a floating base: the joint torques of a robot whose root moves.

A model built with ``floating_base=True`` has a free joint above its base link (the first
coordinates: ``q[:7] = [x y z qx qy qz qw]``, ``qd[:6] = [v w]`` in the base frame). Its RNEA
gives ``nv`` forces: the first six are the wrench ``w_base`` the base would need from outside to
move as asked, the rest the joint torques. A real base gets that wrench from its contacts, so
the joint torques depend on how the contacts share it.

What this module computes, for one state:

1. **The base's motion** (:class:`BaseMotion`): its orientation in a gravity-aligned world, its
   angular velocity and acceleration, and its **proper** acceleration (the specific force an
   accelerometer at the base origin reads: ``+9.81`` up at rest), in the base frame.
   :func:`base_motion_from_imu` moves an IMU's reading on any link to the base through the
   model's kinematics; :func:`base_at_rest` is the base held still in an orientation.
   Gravity enters only through the proper acceleration: the model's ``gravity`` is not used.
   The base's linear velocity is not needed: the torques do not depend on it (a uniform velocity
   changes no force).
2. **The RNEA** with the joint accelerations asked for and that base motion
   (:func:`floating_inverse_dynamics`): ``w_base`` with no external wrench at all, then with the
   wrenches that sensors measure (``f_ext``).
3. **The contacts' share** of what is left of the base wrench, by weighted minimum norm: the
   contact wrenches ``lambda_i`` (in each contact link's frame, about its origin, applied on the
   robot) with ``J_c,base^T lambda = w_rest`` minimising ``sum w_i |lambda_i|^2``. One surface
   contact (a foot flat on the floor) determines its wrench; with two, the internal force between
   them does not move the base and is not observable: the minimum-norm split is a choice. What
   the contacts cannot carry (a point contact's moment) is the *unbalanced* wrench.
4. **The joint torques**: those of step 2 minus ``J_c,joints^T lambda``. A sub-tree that no
   contact and no sensor follows (a humanoid's arms and head) has exact torques whatever the
   contacts.

The wrenches follow :func:`~rbd_dynamics.rnea`'s ``f_ext``: ``(6,)``, force first, in the link
frame, the torque about its origin, applied on the robot.
"""

from typing import NamedTuple

import numpy as np

from .dynamics import rnea
from .eom import jacobian
from .frames import link_acceleration, link_pose
from .spatial import matrix_to_quaternion, quaternion_to_matrix

#: The proper acceleration of a base at rest [m/s^2], up.
STANDARD_GRAVITY = 9.81

#: The contact kinds: a ``surface`` carries a whole wrench (6 components), a ``point`` a force
#: at the link origin (3).
CONTACT_TYPES = ('surface', 'point')

_BASE_POSE = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])
_ZERO3 = np.zeros(3)
_ZERO3.setflags(write=False)


class BaseMotion(NamedTuple):
    """
    The motion of a floating base, in its own frame.

    Attributes
    ----------
    orientation
        ``(4,)`` quaternion ``[x y z w]``: the base's axes in a gravity-aligned world (z up;
        the yaw is irrelevant).
    angular_velocity
        ``(3,)`` [rad/s], base frame.
    angular_acceleration
        ``(3,)`` [rad/s^2], base frame.
    proper_acceleration
        ``(3,)`` [m/s^2], base frame: the acceleration of the base origin minus gravity, what an
        accelerometer there reads (``+9.81`` along the world's up at rest).

    """

    orientation: np.ndarray
    angular_velocity: np.ndarray
    angular_acceleration: np.ndarray
    proper_acceleration: np.ndarray


class FloatingResult(NamedTuple):
    """
    What :func:`floating_inverse_dynamics` returns.

    Attributes
    ----------
    torques
        ``(nv - 6,)`` joint torques / forces [N m, N], ``model.joint_names[1:]`` order.
    base_wrench
        ``(6,)`` ``w_base``: force [N] then torque [N m] in the base frame about its origin
        that the base would need from outside with no external wrench at all (neither
        sensors' nor contacts').
    contact_wrenches
        ``{link: (6,)}`` the contacts' share, force first, in each link's frame about its
        origin, applied on the robot (a point contact's torque is zero).
    unbalanced
        ``(6,)`` what neither the sensors' wrenches nor the contacts carry, as ``base_wrench``:
        zero for a consistent estimate.

    """

    torques: np.ndarray
    base_wrench: np.ndarray
    contact_wrenches: dict
    unbalanced: np.ndarray


def base_at_rest(orientation, gravity=STANDARD_GRAVITY):
    """
    Return the :class:`BaseMotion` of a base held still in ``orientation``.

    Parameters
    ----------
    orientation
        ``(4,)`` unit quaternion ``[x y z w]`` of the base in a gravity-aligned world.
    gravity
        the magnitude of gravity [m/s^2].

    """
    orientation = np.asarray(orientation, dtype=float)
    up = quaternion_to_matrix(orientation)[2]  # the world's z axis in base coordinates
    zero = np.zeros(3)
    return BaseMotion(orientation, zero, zero, gravity * up)


def base_motion_from_imu(model, q, qd, qdd, link, orientation, angular_velocity,
                         angular_acceleration, proper_acceleration, base_rotation=None):
    """
    Move an IMU's reading on ``link`` to the base, through the model's kinematics.

    With ``r``, ``v_r``, ``a_r``, ``w_r``, ``alpha_r`` the link origin's position, velocity and
    acceleration and the link's angular velocity and acceleration relative to the base (in base
    axes, from the joints' ``q``, ``qd``, ``qdd``), the base's are::

        w     = w_link - w_r
        alpha = alpha_link - alpha_r - w x w_r
        a     = a_link - alpha x r - w x (w x r) - 2 w x v_r - a_r

    Parameters
    ----------
    model
        a model with a floating base (``model.base_joint``).
    q, qd, qdd
        ``(nq - 7,)``, ``(nv - 6,)``, ``(nv - 6,)`` the joints' coordinates, without the base's.
    link
        the link the IMU is fixed to, its frame the IMU's.
    orientation
        ``(4,)`` unit quaternion ``[x y z w]`` of the link in a gravity-aligned world.
    angular_velocity, angular_acceleration, proper_acceleration
        ``(3,)`` each, in the link's frame (as :class:`BaseMotion`).
    base_rotation
        ``None``, or the base's own ``(orientation, angular_velocity, angular_acceleration)``
        (odometry's) to use instead of the IMU's; the IMU then gives the proper acceleration
        only.

    Returns
    -------
    The base's :class:`BaseMotion`.

    """
    if model.link_body[link] == 0:  # on the base's body: no joint between them
        X = model.link_X[link]  # [[E, 0], [-E [r]x, E]]: E rotates base to link coordinates
        R = X[:3, :3].T
        rx = R @ X[3:, :3]
        r = np.array((-rx[2, 1], -rx[0, 2], -rx[1, 0]))
        v_rel = w_rel = a_rel = alpha_rel = _ZERO3
    else:
        qf, vf, af = _full_state(model, q, qd, qdd, _ZERO3, _ZERO3)
        T = link_pose(model, qf, link)
        R, r = T[:3, :3], T[:3, 3]
        J = jacobian(model, qf, link, 'world')
        v_rel, w_rel = J[:3] @ vf, J[3:] @ vf
        a = link_acceleration(model, qf, vf, af, link)
        a_rel, alpha_rel = a[:3], a[3:]
    if base_rotation is None:
        w = R @ np.asarray(angular_velocity, dtype=float) - w_rel
        alpha = R @ np.asarray(angular_acceleration, dtype=float) - alpha_rel - _cross(w, w_rel)
        world_R_link = quaternion_to_matrix(np.asarray(orientation, dtype=float))
        quaternion = matrix_to_quaternion(world_R_link @ R.T)
    else:
        quaternion, w, alpha = (np.asarray(x, dtype=float) for x in base_rotation)
    proper = (R @ np.asarray(proper_acceleration, dtype=float) - _cross(alpha, r)
              - _cross(w, _cross(w, r) + 2.0 * v_rel) - a_rel)
    return BaseMotion(quaternion, w, alpha, proper)


def _cross(a, b):
    """Return ``a x b`` of two ``(3,)`` vectors (without ``np.cross``'s general machinery)."""
    return np.array((a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                     a[0] * b[1] - a[1] * b[0]))


def floating_inverse_dynamics(model, q, qd, qdd, base, f_ext=None, contacts=(),
                              contact_type='surface', weights=None):
    """
    Joint torques of a floating-base robot, its contacts carrying what the sensors do not.

    Parameters
    ----------
    model
        a model with a floating base (``model.base_joint``).
    q, qd, qdd
        ``(nq - 7,)``, ``(nv - 6,)``, ``(nv - 6,)`` the joints' coordinates, without the base's.
    base
        the base's :class:`BaseMotion` (its orientation is not used: gravity is in the proper
        acceleration).
    f_ext
        ``None`` or ``{link: (6,)}`` wrenches the sensors measure, as :func:`~rbd_dynamics.rnea`.
    contacts
        the links the environment holds whose wrenches no sensor measures.
    contact_type
        ``'surface'`` (a whole wrench) or ``'point'`` (a force at the link origin).
    weights
        ``None`` (equal) or one positive weight per contact: the split minimises
        ``sum w_i |lambda_i|^2``.

    Returns
    -------
    :class:`FloatingResult`.

    Raises
    ------
    ValueError
        a model without a floating base, wrong sizes, an unknown contact type or weights that
        are not one positive number per contact.

    """
    return _inverse_dynamics(model, q, ((qd, qdd, base, f_ext),), contacts, contact_type,
                             weights)[0]


def floating_torques(model, q, qd, qdd, base, rest, f_ext=None, f_rest=None, contacts=(),
                     contact_type='surface', weights=None):
    """
    Return :func:`floating_inverse_dynamics` of a state and the joint torques at rest.

    What a controller publishes for one joint state: the feedforward (``qd``, ``qdd`` with the
    base's motion ``base`` and the sensors' ``f_ext``) and the gravity compensation (the joints
    and the base at rest, the base in ``rest``: :func:`base_at_rest`, with ``f_rest``), the
    contacts' Jacobians and their split shared by both.

    Returns
    -------
    ``(result, torques_at_rest)``: a :class:`FloatingResult` and ``(nv - 6,)`` torques.

    """
    zero = np.zeros(model.nv - 6)
    moving, still = _inverse_dynamics(
        model, q, ((qd, qdd, base, f_ext), (zero, zero, rest, f_rest)), contacts, contact_type,
        weights)
    return moving, still.torques


def _inverse_dynamics(model, q, states, contacts, contact_type, weights):
    """Return a :class:`FloatingResult` per ``(qd, qdd, base, f_ext)`` of ``states`` at ``q``."""
    if model.base_joint is None:
        raise ValueError('the model has a fixed base (build it with floating_base=True)')
    if contact_type not in CONTACT_TYPES:
        raise ValueError('contact type %r: one of %s' % (contact_type, ', '.join(CONTACT_TYPES)))
    contacts = tuple(contacts)
    weights = _weights(weights, len(contacts))
    found = []
    for qd, qdd, base, f_ext in states:
        qf, vf, af = base_state(model, q, qd, qdd, base)
        tau = rnea(model, qf, vf, af)
        base_wrench = tau[:6].copy()
        if f_ext:
            tau = rnea(model, qf, vf, af, f_ext)
        found.append((base_wrench, tau))
    if not contacts:
        return [FloatingResult(tau[6:], base_wrench, {}, tau[:6])
                for base_wrench, tau in found]
    rows = 6 if contact_type == 'surface' else 3
    jacobians = [jacobian(model, qf, link, 'local')[:rows] for link in contacts]
    scale = np.repeat(1.0 / np.sqrt(weights), rows)
    A = np.concatenate([J[:, :6].T for J in jacobians], axis=1) * scale
    rests = np.empty((6, len(found)))
    for k, (_, tau) in enumerate(found):
        rests[:, k] = tau[:6]
    lams = _minimum_norm(A, rests) * scale[:, None]
    unbalanced = rests - A @ (lams / scale[:, None])
    results = []
    for k, (base_wrench, tau) in enumerate(found):
        torques = tau[6:].copy()
        wrenches = {}
        for c, (link, J) in enumerate(zip(contacts, jacobians)):
            wrench = lams[c * rows:(c + 1) * rows, k]
            torques -= J[:, 6:].T @ wrench
            wrenches[link] = wrench if rows == 6 else np.concatenate((wrench, np.zeros(3)))
        results.append(FloatingResult(torques, base_wrench, wrenches, unbalanced[:, k]))
    return results


def base_state(model, q, qd, qdd, base):
    """
    Return the whole model's ``(qf, vf, af)`` for the joints' state and the base's motion.

    The base sits at the origin with no linear velocity, its angular velocity and acceleration
    those of ``base``, and its linear acceleration such that, with the model's ``gravity``,
    the base origin's proper acceleration is ``base.proper_acceleration``: any function of the
    library (:func:`~rbd_dynamics.rnea`, :func:`~rbd_dynamics.payload_wrench`...) then sees
    gravity as the IMU measured it.
    """
    qf, vf, af = _full_state(model, q, qd, qdd, base.angular_velocity,
                             base.angular_acceleration)
    af[:3] += np.asarray(base.proper_acceleration, dtype=float) + model.gravity
    return qf, vf, af


def _minimum_norm(A, B):
    """
    Return the ``X`` of least norm among those that minimise ``|A X - B|``, column by column.

    Surface contacts give ``A`` (6 x m) full row rank, where ``X = A^T (A A^T)^-1 B`` is it
    (one small solve); otherwise (point contacts on a line, too few) the SVD's least squares.
    """
    if A.shape[1] >= 6:
        try:
            X = A.T @ np.linalg.solve(A @ A.T, B)
        except np.linalg.LinAlgError:
            X = None
        if X is not None and np.abs(A @ X - B).max() <= 1e-9 * (1.0 + np.abs(B).max()):
            return X
    return np.linalg.lstsq(A, B, rcond=None)[0]


def _weights(weights, count):
    """Return ``(count,)`` positive weights (ones for ``None`` or an empty sequence)."""
    if weights is None or len(weights) == 0:
        return np.ones(count)
    weights = np.asarray(weights, dtype=float).reshape(-1)
    if weights.shape != (count,) or not np.all(np.isfinite(weights)) or np.any(weights <= 0):
        raise ValueError('contact weights: %d positive numbers expected (one per contact), '
                         'got %s' % (count, weights.tolist()))
    return weights


def _full_state(model, q, qd, qdd, angular_velocity, angular_acceleration):
    """Return ``(qf, vf, af)`` of the whole model: the base at the origin, linear velocity 0."""
    if model.base_joint is None:
        raise ValueError('the model has a fixed base (build it with floating_base=True)')
    qf = np.concatenate((_BASE_POSE, np.asarray(q, dtype=float).reshape(-1)))
    vf = np.concatenate((np.zeros(3), angular_velocity, np.asarray(qd, dtype=float).reshape(-1)))
    af = np.concatenate((np.zeros(3), angular_acceleration,
                         np.asarray(qdd, dtype=float).reshape(-1)))
    return qf, vf, af
