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

from .compiled.layout import (BAD_SIZES, BASE, BASE_ALPHA, BASE_OMEGA, BASE_ORIENTATION,
                              BASE_PROPER, BASE_REST, FB_ALPHA, FB_GRAVITY, FB_LINK, FB_MOTION,
                              FB_MOVING, FB_ODO_ALPHA, FB_ODO_OMEGA, FB_ODO_ORIENTATION,
                              FB_ODOMETRY, FB_OMEGA, FB_ORIENTATION, FB_PROPER, FB_REST,
                              FB_SENSED, NOT_POSITIVE, OK)
from .dispatch import vectors
from .dynamics import rnea
from .eom import jacobian
from .frames import link_acceleration, link_pose
from .spatial import quaternion_of_rows

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
    x, y, z, w = orientation.tolist()
    # the world's z axis in base coordinates: the last row of the quaternion's rotation
    scale = gravity / (x * x + y * y + z * z + w * w)
    up = np.array((2.0 * (x * z - y * w) * scale, 2.0 * (y * z + x * w) * scale,
                   (1.0 - 2.0 * (x * x + y * y) / (x * x + y * y + z * z + w * w)) * gravity))
    return BaseMotion(orientation, _ZERO3, _ZERO3, up)


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
    model, q, qd, qdd
        as for :func:`floating_inverse_dynamics` (the joints' coordinates, without the base's).
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
    packed = model.runtime.eom_packed
    if packed is not None:
        motion = _compiled_motion(packed, q, qd, qdd, link, orientation, angular_velocity,
                                  angular_acceleration, proper_acceleration, base_rotation)
        if motion is not None:
            return motion
    # (3-vectors in floats: a tenth of the cost of arrays this small)
    if model.link_body[link] == 0:  # on the base's body: no joint between them
        X = model.link_X[link]  # [[E, 0], [-E [r]x, E]]: E rotates base to link coordinates
        R = X[:3, :3].T
        rx = (R @ X[3:, :3]).tolist()
        r = (-rx[2][1], -rx[0][2], -rx[1][0])
        R = R.tolist()
        v_rel = w_rel = a_rel = alpha_rel = (0.0, 0.0, 0.0)
    else:
        qf, vf, af = _full_state(model, q, qd, qdd, _ZERO3, _ZERO3)
        T = link_pose(model, qf, link)
        R, r = T[:3, :3].tolist(), T[:3, 3].tolist()
        J = jacobian(model, qf, link, 'world')
        v_rel, w_rel = (J @ vf).reshape(2, 3).tolist()
        a_rel, alpha_rel = link_acceleration(model, qf, vf, af, link).reshape(2, 3).tolist()
    if base_rotation is None:
        w = _minus(_rotate(R, angular_velocity), w_rel)
        alpha = _minus(_minus(_rotate(R, angular_acceleration), alpha_rel), _cross(w, w_rel))
        quaternion = _compose(orientation, quaternion_of_rows(R))
    else:
        quaternion = np.asarray(base_rotation[0], dtype=float)
        w, alpha = (np.asarray(x, dtype=float).tolist() for x in base_rotation[1:])
    wr = _cross(w, r)
    proper = _minus(_minus(_minus(_rotate(R, proper_acceleration), _cross(alpha, r)),
                           _cross(w, (wr[0] + 2.0 * v_rel[0], wr[1] + 2.0 * v_rel[1],
                                      wr[2] + 2.0 * v_rel[2]))), a_rel)
    return BaseMotion(quaternion, np.array(w), np.array(alpha), np.array(proper))


def _imu_base(packed, q, qd, qdd, link, orientation, angular_velocity, angular_acceleration,
              proper_acceleration, base_rotation):
    """Return the compiled kernel's ``base`` array of an IMU's reading, or ``None``."""
    row = packed.link_index.get(link) if isinstance(link, str) else None
    if row is None or not vectors(q, qd, qdd):
        return None
    base = np.zeros(BASE)
    try:  # (what the kernel cannot take, the NumPy path says what is wrong with)
        shapes = [(orientation, 4), (angular_velocity, 3), (angular_acceleration, 3),
                  (proper_acceleration, 3)]
        if base_rotation is not None:
            if len(base_rotation) != 3:
                return None
            shapes += zip(base_rotation, (4, 3, 3))
        if any(np.shape(value) != (size,) for value, size in shapes):
            return None
        base[FB_LINK] = row
        base[FB_ORIENTATION:FB_ORIENTATION + 4] = orientation
        base[FB_OMEGA:FB_OMEGA + 3] = angular_velocity
        base[FB_ALPHA:FB_ALPHA + 3] = angular_acceleration
        base[FB_PROPER:FB_PROPER + 3] = proper_acceleration
        if base_rotation is not None:
            base[FB_ODOMETRY] = 1.0
            base[FB_ODO_ORIENTATION:FB_ODO_ORIENTATION + 4] = base_rotation[0]
            base[FB_ODO_OMEGA:FB_ODO_OMEGA + 3] = base_rotation[1]
            base[FB_ODO_ALPHA:FB_ODO_ALPHA + 3] = base_rotation[2]
    except (TypeError, ValueError):
        return None
    base[FB_GRAVITY] = STANDARD_GRAVITY
    return base


def _motion_of(base):
    """Return the :class:`BaseMotion` the compiled kernel wrote into ``base``."""
    return BaseMotion(base[BASE_ORIENTATION:BASE_ORIENTATION + 4],
                      base[BASE_OMEGA:BASE_OMEGA + 3], base[BASE_ALPHA:BASE_ALPHA + 3],
                      base[BASE_PROPER:BASE_PROPER + 3])


def _compiled_motion(packed, q, qd, qdd, *reading):
    """:func:`base_motion_from_imu` by the compiled kernel, or ``None`` (then the NumPy path)."""
    base = _imu_base(packed, q, qd, qdd, *reading)
    if base is None or _run(packed, q, qd, qdd, base, FB_MOTION, None, None, (), False,
                            None)[0] != OK:
        return None
    return _motion_of(base)


def floating_torques_from_imu(model, q, qd, qdd, link, orientation, angular_velocity,
                              angular_acceleration, proper_acceleration, base_rotation=None,
                              contacts=(), contact_type='surface', weights=None, at_rest=True):
    """
    Return the base's motion and the torques of an IMU's reading, without sensors' wrenches.

    :func:`base_motion_from_imu`, then :func:`floating_torques` with the base at rest in the
    orientation found (:func:`base_at_rest`), or with ``at_rest`` False
    :func:`floating_inverse_dynamics` alone; on the compiled path, one call.

    Returns
    -------
    ``(motion, result, torques_at_rest)``: the :class:`BaseMotion`, the
    :class:`FloatingResult` and the ``(nv - 6,)`` torques at rest (``None`` without
    ``at_rest``).

    Raises
    ------
    ValueError
        as :func:`base_motion_from_imu` and :func:`floating_inverse_dynamics`.

    """
    _floating_only(model)
    if contact_type not in CONTACT_TYPES:
        raise ValueError('contact type %r: one of %s' % (contact_type, ', '.join(CONTACT_TYPES)))
    contacts = tuple(contacts)
    weights = _weights(weights, len(contacts))
    reading = (link, orientation, angular_velocity, angular_acceleration, proper_acceleration,
               base_rotation)
    packed = model.runtime.eom_packed
    if packed is not None:
        base = _imu_base(packed, q, qd, qdd, *reading)
        if base is not None:
            point = contact_type == 'point'
            status, found = _compiled_results(
                packed, q, qd, qdd, base, FB_MOTION | FB_MOVING | (FB_REST if at_rest else 0),
                None, None, contacts, point, weights, at_rest)
            if found is not None:
                return (_motion_of(base),) + found
            if status == NOT_POSITIVE:  # the motion written, the split the reference's
                motion = _motion_of(base)
                states = ((qd, qdd, motion, None),)
                if at_rest:
                    zero = np.zeros(model.nv - 6)
                    states += ((zero, zero, base_at_rest(motion.orientation), None),)
                return (motion,) + _inverse_dynamics(model, q, states, contacts, contact_type,
                                                     weights, compiled=False)
    motion = base_motion_from_imu(model, q, qd, qdd, *reading)
    if not at_rest:
        return motion, floating_inverse_dynamics(model, q, qd, qdd, motion, None, contacts,
                                                 contact_type, weights), None
    return (motion,) + floating_torques(model, q, qd, qdd, motion,
                                        base_at_rest(motion.orientation), None, None, contacts,
                                        contact_type, weights)


_NO_CONTACTS = np.zeros(0, dtype=np.int64)
_NO_WEIGHTS = np.zeros(0)


def _run(packed, q, qd, qdd, base, what, fext, frest, rows, point, weights):
    """
    Call the compiled kernel (:mod:`rbd_dynamics.compiled.floating`).

    ``rows``: the contacts' rows in the packed links; ``weights`` ``(nc,)`` floats or ``None``.
    Returns ``(status, out)``.
    """
    nq, nv = packed.nq, packed.nv
    zero = packed.zero_fext
    nc = len(rows)
    contacts = np.array(rows, dtype=np.int64) if nc else _NO_CONTACTS
    out = np.empty(2 * (nv - 6) + 12 + 2 * (3 if point else 6) * nc)
    status = packed.floating1(
        packed.blob, q, qd, qdd, base, what, zero if fext is None else fext,
        zero if frest is None else frest, zero, contacts, point,
        _NO_WEIGHTS if weights is None else weights, np.empty(nq), np.empty((7, nv)),
        np.empty((nc + 1, 6, nv)), np.empty((4, 4)), np.empty((8, 6)), out)
    return status, out


def _rotate(R, v):
    """Return ``R v`` of a rotation given as rows (floats) and a 3-vector."""
    x, y, z = (float(c) for c in v)
    return tuple(row[0] * x + row[1] * y + row[2] * z for row in R)


def _minus(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


def _compose(world_link, base_link):
    """
    Return the quaternion of the base in the world, ``(4,)`` ``[x y z w]`` with ``w >= 0``.

    ``world_link`` times the inverse of ``base_link`` (the link in the base).
    """
    x1, y1, z1, w1 = (float(c) for c in world_link)
    x2, y2, z2, w2 = base_link
    x2, y2, z2 = -x2, -y2, -z2  # the inverse of a unit quaternion
    x = w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2
    y = w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2
    z = w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2
    w = w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2
    if w < 0.0:
        x, y, z, w = -x, -y, -z, -w
    return np.array((x, y, z, w))


def _cross(a, b):
    """Return ``a x b`` of two 3-vectors, as floats."""
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


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
    return _inverse_dynamics(
        model, q, ((qd, qdd, base, f_ext), (zero, zero, rest, f_rest)), contacts, contact_type,
        weights)


def _inverse_dynamics(model, q, states, contacts, contact_type, weights, compiled=True):
    """
    Return the :class:`FloatingResult` of the first ``(qd, qdd, base, f_ext)`` of ``states``.

    ``(result, torques_at_rest)``: the second state's joint torques (at rest:
    :func:`floating_torques`), ``None`` without one. ``compiled`` False: the NumPy path (for a
    split the compiled kernel has refused).
    """
    _floating_only(model)
    if contact_type not in CONTACT_TYPES:
        raise ValueError('contact type %r: one of %s' % (contact_type, ', '.join(CONTACT_TYPES)))
    contacts = tuple(contacts)
    weights = _weights(weights, len(contacts))
    packed = model.runtime.eom_packed if compiled else None
    if packed is not None:
        results = _compiled_inverse_dynamics(packed, q, states, contacts, contact_type, weights)
        if results is not None:
            return results
    found = []
    for qd, qdd, base, f_ext in states:
        qf, vf, af = base_state(model, q, qd, qdd, base)
        tau = rnea(model, qf, vf, af)
        base_wrench = tau[:6].copy()
        if f_ext:
            tau = rnea(model, qf, vf, af, f_ext)
        found.append((base_wrench, tau))
    if not contacts:
        return (FloatingResult(found[0][1][6:], found[0][0], {}, found[0][1][:6]),
                found[1][1][6:] if len(found) == 2 else None)
    rows = 6 if contact_type == 'surface' else 3
    m = rows * len(contacts)
    # the contacts' Jacobians stacked, (m, nv): the first six columns the base's
    J = np.empty((m, model.nv))
    for c, link in enumerate(contacts):
        J[c * rows:(c + 1) * rows] = jacobian(model, qf, link, 'local')[:rows]
    scale = np.repeat(1.0 / np.sqrt(weights), rows)
    A = J[:, :6].T * scale
    rests = np.empty((6, len(found)))
    for k, (_, tau) in enumerate(found):
        rests[:, k] = tau[:6]
    lams = _minimum_norm(A, rests, rows == 6) * scale[:, None]
    unbalanced = rests - J[:, :6].T @ lams
    corrections = J[:, 6:].T @ lams
    base_wrench, tau = found[0]
    wrenches = {}
    for c, link in enumerate(contacts):
        wrench = lams[c * rows:(c + 1) * rows, 0]
        wrenches[link] = wrench if rows == 6 else np.concatenate((wrench, _ZERO3))
    return (FloatingResult(tau[6:] - corrections[:, 0], base_wrench, wrenches,
                           unbalanced[:, 0]),
            found[1][1][6:] - corrections[:, 1] if len(found) == 2 else None)


def _compiled_inverse_dynamics(packed, q, states, contacts, contact_type, weights):
    """
    :func:`_inverse_dynamics` by the compiled kernel, or ``None`` (then the NumPy path).

    ``states``: the state, and optionally a second one at rest (zero velocities and
    accelerations, the base's too), as :func:`floating_torques` gives.
    """
    qd, qdd, motion, f_ext = states[0]
    base = np.zeros(BASE)
    what = FB_MOVING
    try:
        base[BASE_OMEGA:BASE_OMEGA + 3] = motion.angular_velocity
        base[BASE_ALPHA:BASE_ALPHA + 3] = motion.angular_acceleration
        base[BASE_PROPER:BASE_PROPER + 3] = motion.proper_acceleration
        frest = None
        if len(states) == 2:
            _, _, rest, frest = states[1]  # (zero velocities and accelerations)
            if np.any(rest.angular_velocity) or np.any(rest.angular_acceleration):
                return None  # (not at rest: the NumPy path takes both as they are)
            base[BASE_REST:BASE_REST + 3] = rest.proper_acceleration
            what |= FB_REST
    except (TypeError, ValueError, AttributeError):  # (the NumPy path says what is wrong)
        return None
    if not vectors(q, qd, qdd):
        return None
    # (imported here: a packed model means the compiled package is loaded; the library's
    # import loads no numba)
    from .compiled.packed import single_state_forces
    fext = single_state_forces(packed, f_ext, q)
    if fext is None:
        return None
    if f_ext:
        what |= FB_SENSED
    if frest is not None:
        frest = single_state_forces(packed, frest, q)
        if frest is None:
            return None
    return _compiled_results(packed, q, qd, qdd, base, what, fext, frest, contacts,
                             contact_type == 'point', weights, len(states) == 2)[1]


def _compiled_results(packed, q, qd, qdd, base, what, fext, frest, contacts, point, weights,
                      at_rest):
    """
    Run the compiled kernel: ``(status, (result, torques_at_rest))``, or ``(status, None)``.

    ``torques_at_rest`` is ``None`` without ``at_rest``. No result where a contact is not a
    link of the model (BAD_SIZES) or the kernel refuses (NOT_POSITIVE: the contacts' ``A Aᵀ``
    singular, for the NumPy path's least squares; the base's motion is written then).
    """
    rows = [packed.link_index.get(link) if isinstance(link, str) else None for link in contacts]
    if None in rows:
        return BAD_SIZES, None
    status, out = _run(packed, q, qd, qdd, base, what, fext, frest, rows, point, weights)
    if status != OK:
        return status, None
    n = packed.nv - 6
    width = 3 if point else 6
    wrenches = {}
    for c, link in enumerate(contacts):
        wrench = out[2 * n + 12 + c * width:2 * n + 12 + (c + 1) * width]
        wrenches[link] = np.concatenate((wrench, _ZERO3)) if point else wrench
    result = FloatingResult(out[:n], out[2 * n:2 * n + 6], wrenches, out[2 * n + 6:2 * n + 12])
    return status, (result, out[n:2 * n] if at_rest else None)


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


def _minimum_norm(A, B, full_rank):
    """
    Return the ``X`` of least norm among those that minimise ``|A X - B|``, column by column.

    Surface contacts give ``A`` (6 x m) full row rank (``full_rank``: each contact's block is
    an invertible transform), where ``X = A^T (A A^T)^-1 B`` is it (one small solve); point
    contacts may not (feet on a line, too few), and take the SVD's least squares.
    """
    if full_rank:
        return A.T @ np.linalg.solve(A @ A.T, B)
    return np.linalg.lstsq(A, B, rcond=None)[0]


def _floating_only(model):
    """Raise ``ValueError`` for a model without a floating base."""
    if model.base_joint is None:
        raise ValueError('the model has a fixed base (build it with floating_base=True)')


def _weights(weights, count):
    """Return ``(count,)`` positive weights (ones for ``None`` or an empty sequence)."""
    if weights is None or len(weights) == 0:
        return np.ones(count)
    weights = np.ascontiguousarray(weights, dtype=float).reshape(-1)  # (the kernel's)
    if weights.shape != (count,) or not np.all(np.isfinite(weights)) or np.any(weights <= 0):
        raise ValueError('contact weights: %d positive numbers expected (one per contact), '
                         'got %s' % (count, weights.tolist()))
    return weights


def _full_state(model, q, qd, qdd, angular_velocity, angular_acceleration):
    """Return ``(qf, vf, af)`` of the whole model: the base at the origin, linear velocity 0."""
    _floating_only(model)
    qf = np.empty(model.nq)
    vf = np.empty(model.nv)
    af = np.empty(model.nv)
    qf[:7] = _BASE_POSE
    qf[7:] = q
    vf[:3] = 0.0
    vf[3:6] = angular_velocity
    vf[6:] = qd
    af[:3] = 0.0
    af[3:6] = angular_acceleration
    af[6:] = qdd
    return qf, vf, af
