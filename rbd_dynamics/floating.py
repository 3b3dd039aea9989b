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
                         angular_acceleration, proper_acceleration):
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

    Returns
    -------
    The base's :class:`BaseMotion`.

    """
    qf, vf, af = _full_state(model, q, qd, qdd, np.zeros(3), np.zeros(3))
    T = link_pose(model, qf, link)
    R, r = T[:3, :3], T[:3, 3]
    J = jacobian(model, qf, link, 'world')
    v_rel, w_rel = J[:3] @ vf, J[3:] @ vf
    a = link_acceleration(model, qf, vf, af, link)
    a_rel, alpha_rel = a[:3], a[3:]
    w = R @ np.asarray(angular_velocity, dtype=float) - w_rel
    alpha = R @ np.asarray(angular_acceleration, dtype=float) - alpha_rel - np.cross(w, w_rel)
    proper = (R @ np.asarray(proper_acceleration, dtype=float) - np.cross(alpha, r)
              - np.cross(w, np.cross(w, r)) - 2.0 * np.cross(w, v_rel) - a_rel)
    world_R_link = quaternion_to_matrix(np.asarray(orientation, dtype=float))
    return BaseMotion(matrix_to_quaternion(world_R_link @ R.T), w, alpha, proper)


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
    if model.base_joint is None:
        raise ValueError('the model has a fixed base (build it with floating_base=True)')
    if contact_type not in CONTACT_TYPES:
        raise ValueError('contact type %r: one of %s' % (contact_type, ', '.join(CONTACT_TYPES)))
    contacts = tuple(contacts)
    weights = _weights(weights, len(contacts))
    qf, vf, af = _full_state(model, q, qd, qdd, base.angular_velocity,
                             base.angular_acceleration)
    af[:3] += np.asarray(base.proper_acceleration, dtype=float) + model.gravity
    tau = rnea(model, qf, vf, af)
    base_wrench = tau[:6].copy()
    if f_ext:
        tau = rnea(model, qf, vf, af, f_ext)
    rest = tau[:6]
    torques = tau[6:].copy()
    found = {}
    unbalanced = rest.copy()
    if contacts:
        rows = 6 if contact_type == 'surface' else 3
        jacobians = [jacobian(model, qf, link, 'local')[:rows] for link in contacts]
        scale = np.repeat(1.0 / np.sqrt(weights), rows)
        A = np.concatenate([J[:, :6].T for J in jacobians], axis=1) * scale
        lam = np.linalg.lstsq(A, rest, rcond=None)[0] * scale
        unbalanced = rest - A @ (lam / scale)
        for k, (link, J) in enumerate(zip(contacts, jacobians)):
            wrench = lam[k * rows:(k + 1) * rows]
            torques -= J[:, 6:].T @ wrench
            found[link] = np.concatenate((wrench, np.zeros(6 - rows)))
    return FloatingResult(torques, base_wrench, found, unbalanced)


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
