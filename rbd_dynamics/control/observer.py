"""
Sensorless contact: the generalized-momentum observer, arrays in and arrays out (no ROS here).

The residual of De Luca's momentum observer estimates the joint torques that nothing in the
model explains::

    r = K (p - integral(tau_m + C^T qd - g + r) dt - p0),     p = M qd

with ``tau_m`` the measured effort minus the drive's friction, and the measured force/torque
readings, payloads and armature part of the model. ``r`` answers an external torque as a
first-order lag: ``dr/dt = K (tau_ext - r)``.

A force/torque sensor that compensates the modelled bodies beyond it (a tool in the URDF)
measures their weight and their inertia at the *actual* acceleration, which the observer never
measures. So the observer cuts the model at such a sensor: the bodies beyond it are carried by
the sensor's reading instead of by the model. Their weight and velocity terms go into the
reading's wrench (``reading + payload_wrench(q, qd)``, at zero acceleration), and their
inertia leaves the observer's mass matrix (``M`` less ``J^T A``, ``A a`` the wrench that
accelerates them by ``a``). The commanded acceleration never enters: a tracking error is not an
external torque. (The feedforward keeps the reading compensated at the commanded acceleration:
that is the torque it commands.)

Discretisation, over the joint states' stamps ``t_k`` (``dt = t_k - t_(k-1)``). A joint state is
a measurement at its stamp: its position, velocity *and effort* are samples of the robot's
state at ``t_k``. Since ``dp/dt - C^T qd = M qdd + C qd`` (``M' = C + C^T``), the quantity inside
``K (...)`` changes over one step by ``integral(M qdd + n(q, qd) - tau_m - r) dt``, with
``n = C qd + g - J^T f`` (the RNEA at zero acceleration with the measured wrenches ``f``). Each
term is taken to second order in ``dt`` from the samples at both ends of the step, the
trapezoidal rule::

    u_k = (M_(k-1) + M_k) (qd_k - qd_(k-1)) / (2 dt) + (n_(k-1) + n_k) / 2
          - (tau_m,(k-1) + tau_m,k) / 2
    r_k = a r_(k-1) + (1 - a) u_k,     a = exp(-K dt)

``u_k`` is the mean external torque over the step, and ``r_k`` the exact solution of the
observer's equation for that mean held over the step. Without an external torque the residual
stays zero to second order in ``dt`` on any motion (first-order rules, ``M_(k-1)`` alone or
the effort taken as held since the previous state, leave a residual that grows with ``dt``
and the rate of change of the torques: docs/contact.md). A step of external torque between
two samples is seen as a ramp between them: ``r`` follows ``1 - exp(-K (t - t0))`` with ``t0``
half a step before the first sample that carries it.
``M v`` is ``rnea(q, 0, v) - g(q)``, so a step costs four RNEA passes of the compiled path and
never forms ``M`` or ``C``.

The observer restarts from a state (``r = 0``) when the stamp does not advance, when more than
:data:`MAX_GAP` seconds passed since the previous state, when it resumes after states without
efforts, on a new model or joint order, and on :meth:`Observer.reset`; other changes of the
configuration (gain, thresholds, drive) apply from the next step on, to both of its ends.
"""

import math
import threading
import weakref

import numpy as np

from ..dynamics import gravity_torques, payload_wrench, rnea
from ..eom import jacobian
from ..spatial import plux_parts

#: Largest gap between two joint states the integral bridges [s]; a longer one restarts it.
MAX_GAP = 0.1
REACTIONS = ('none', 'gravity_compensation')
#: Singular values of the scaled ``J^T`` below this share of the largest count as zero in the
#: wrench fit (:func:`wrench_at`).
RANK_TOLERANCE = 1e-6


class Step:
    """
    What one joint state gave the observer.

    Attributes
    ----------
    residual
        ``(nv,)`` ``r``, model order (zeros on a restart).
    restarted
        this state restarted the observer (the reason in ``reason``).
    contact
        the latched contact state after this step.
    changed
        ``contact`` changed with this step.
    joints
        model indices of the joints whose ``|r|`` exceeds the threshold in this step.
    bias
        ``(nv,)`` ``C q̇ + g`` at the state, the step's wrenches included (the RNEA at zero
        acceleration), which the task-space law shares.

    """

    __slots__ = ('residual', 'restarted', 'reason', 'contact', 'changed', 'joints', 'bias')

    def __init__(self, residual, restarted, reason, contact, changed, joints, bias=None):
        self.residual = residual
        self.restarted = restarted
        self.reason = reason
        self.contact = contact
        self.changed = changed
        self.joints = joints
        self.bias = bias


class Observer:
    """
    The momentum observer's state between joint states, with the latched contact.

    :meth:`step` runs on the joint-state path; :meth:`reset` and :meth:`take_window` may run on
    another thread: a lock (never contended for long) keeps each whole.

    Attributes
    ----------
    contact
        latched: a joint exceeded its threshold since the last reset.
    contact_joints
        model indices of the joints that raised it (set when it latched).
    restarts
        how many times the stamp rules restarted the integral.
    running
        the last joint state carried efforts (``False``: paused or never run).

    """

    def __init__(self):
        self._lock = threading.Lock()
        self.contact = False
        self.contact_joints = ()
        self.restarts = 0
        self.running = False
        # (model, rows, stamp_ns, q, qd, n, g, r, effort, tau_m, setup, (model.runtime,
        # {carried link: the wrench at rest at q}))
        self._state = None
        self._window = None  # (nv,) largest |r| since take_window

    def reset(self):
        """Clear the contact and restart the integral from the next joint state."""
        with self._lock:
            changed = self.contact
            self.contact = False
            self.contact_joints = ()
            self._state = None
            return changed

    def pause(self):
        """
        Note a joint state without efforts: it is not integrated.

        The integral goes on from the last state with efforts when they come back (an arm and a
        gripper merged, the gripper's states without efforts, lose nothing); after more than
        :data:`MAX_GAP` the gap rule restarts it.
        """
        with self._lock:
            self.running = False

    def take_window(self):
        """Return the largest ``|r|`` per joint (model order) since the last call, or ``None``."""
        with self._lock:
            window, self._window = self._window, None
            return window

    def step(self, setup, q, qd, effort, stamp_ns, f_ext=None, g=None, carried=(), bias=None):
        """
        Advance the observer to one joint state.

        Parameters
        ----------
        setup
            the :class:`~rbd_dynamics.control.setup.Setup` (model, gain, thresholds, the drive
            in the efforts).
        q, qd
            ``(nv,)`` measured state, model order.
        effort
            ``(nv,)`` measured joint torques at the stamp [N m or N], model order, finite
            (``drive.effort_scale`` applied). With ``setup.observer_drive`` the drive's
            friction at ``qd`` is taken off.
        stamp_ns
            the joint state's stamp [ns].
        f_ext
            measured wrenches ``{link: (6,)}`` (link frame, applied on the robot) or ``None``;
            for a sensor that compensates the bodies beyond it, its reading plus
            ``payload_wrench(model, link, q, qd)`` (at zero acceleration).
        g
            ``gravity_torques(model, q)`` if already computed (no wrenches), else ``None``.
        carried
            links of ``f_ext`` whose wrench carries the bodies beyond them (one entry per
            compensating sensor): the observer takes those bodies' inertia out of its mass
            matrix, the sensor having measured it.
        bias
            ``rnea(model, q, qd, 0, f_ext)`` (``C q̇ + g`` with the wrenches) if already
            computed, else ``None``.

        Returns
        -------
        Step

        """
        model = setup.model
        zero = setup.zero
        n = rnea(model, q, qd, zero, f_ext) if bias is None else bias
        if g is None:
            g = gravity_torques(model, q)
        effort = np.array(effort, dtype=float)  # kept: the caller may reuse its array
        tau_m = measured_torque(setup, qd, effort)
        # the carried bodies' wrench at rest at q: this state's and, kept, the next one's q0
        rest = (model.runtime, {link: payload_wrench(model, link, q) for link in carried})
        with self._lock:
            self.running = True
            state = self._state
            reason = ''
            if state is None or state[0] is not model or not (
                    state[1] is setup.rows or np.array_equal(state[1], setup.rows)):
                reason = 'start'
            else:
                dt = (stamp_ns - state[2]) * 1e-9
                if dt <= 0.0:
                    reason = 'stamp did not advance'
                elif dt > MAX_GAP:
                    reason = 'gap of %.3f s' % dt
            if reason:
                if reason != 'start':
                    self.restarts += 1
                r = np.zeros(model.nv)
            else:
                _, _, _, q0, qd0, n0, g0, r0, effort0, tau_m0, setup0, rest0 = state
                if setup0 is not setup:  # reconfigured: the previous sample as now configured
                    tau_m0 = measured_torque(setup, qd0, effort0)
                dqd = qd - qd0
                # the trapezoidal rule on M(q) qdd, with the drive's armature (the wrench at
                # rest at q0 is the previous state's, if the payloads are the same)
                m_dqd = 0.5 * (inertia_times(setup, q0, g0, dqd, carried,
                                             rest0[1] if rest0[0] is rest[0] else None)
                               + inertia_times(setup, q, g, dqd, carried, rest[1]))
                u = m_dqd / dt + 0.5 * (n0 + n) - 0.5 * (tau_m0 + tau_m)
                a = math.exp(-setup.contact_gain * dt)
                r = a * r0 + (1.0 - a) * u
            if not np.isfinite(r).all():
                # a non-finite model output must not stay in the integral
                r = np.zeros(model.nv)
                reason = reason or 'non-finite residual'
            self._state = (model, setup.rows, stamp_ns, q.copy(), qd.copy(), n, g, r,
                           effort, tau_m, setup, rest)
            magnitude = np.abs(r)
            self._window = magnitude if self._window is None or len(self._window) != len(r) \
                else np.maximum(self._window, magnitude)
            joints = ()
            changed = False
            if setup.threshold is not None:
                over = magnitude[setup.rows] > setup.threshold
                if over.any():
                    joints = tuple(setup.rows[over].tolist())
                    if not self.contact:
                        self.contact = True
                        self.contact_joints = joints
                        changed = True
            return Step(r, bool(reason), reason, self.contact, changed, joints, n)


def measured_torque(setup, qd, effort):
    """
    Return ``tau_m``: the measured joint torques, less the drive's friction where they hold it.

    Parameters
    ----------
    setup
        the :class:`~rbd_dynamics.control.setup.Setup`: ``observer_drive`` says whether the
        efforts include the drive (``contact.drive``).
    qd
        ``(nv,)`` measured velocities, model order.
    effort
        ``(nv,)`` measured joint torques [N m or N], model order.

    Returns
    -------
    ``(nv,)`` [N m or N].

    """
    if setup.observer_drive:
        return effort - setup.drive_torques(qd, None)
    return effort


def inertia_times(setup, q, g, v, carried=(), at_rest=None):
    """
    Return ``M(q) v`` of the observer's model: with the armature, without carried bodies.

    Parameters
    ----------
    setup
        the :class:`~rbd_dynamics.control.setup.Setup`.
    q
        ``(nv,)`` positions, model order.
    g
        ``(nv,)`` ``gravity_torques(model, q)``.
    v
        ``(nv,)`` the vector [rad/s or m/s]: a change of velocity.
    carried
        links whose bodies beyond them a sensor carries (:meth:`Observer.step`).
    at_rest
        ``{link: payload_wrench(model, link, q)}`` already computed, or ``None``; a link
        missing from it is computed here.

    Returns
    -------
    ``(nv,)`` ``M v + armature v - J^T A v`` [N m s or N s], ``A v`` the wrench on the
    bodies beyond each carried link that changes their velocity by ``v``.

    """
    model = setup.model
    f_ext = None
    for link in carried:
        # (payload_wrench is affine in the acceleration: at zero velocity, what is beyond
        # gravity is the inertia's part)
        rest = at_rest.get(link) if at_rest else None
        if rest is None:
            rest = payload_wrench(model, link, q)
        accelerating = payload_wrench(model, link, q, None, v) - rest
        if f_ext is None:
            f_ext = {}
        f_ext[link] = f_ext[link] + accelerating if link in f_ext else accelerating
    # rnea(q, 0, v, f) - g = M v - J^T f: the sensor holds (and measures) what accelerates them
    return rnea(model, q, setup.zero, v, f_ext) - g + setup.armature_observed * v


def chain_length(model, link):
    """
    Return the length of the kinematic chain from the root to ``link`` [m, or the model's unit].

    The sum of the distances between consecutive joint frames on the path from the root link
    to ``link`` (the origin offsets of its joints, fixed joints merged), as a URDF's
    ``<origin xyz>`` give them: how far the link reaches when the arm is stretched out. It does
    not depend on the pose, and it scales with the description's unit of length.

    Parameters
    ----------
    model
        the model.
    link
        a link of the model.

    Returns
    -------
    the length, ``>= 0`` (0 only for a link at the root, all offsets zero).

    """
    def offset(X):
        return float(np.linalg.norm(plux_parts(X)[1]))

    length = offset(model.link_X[link])
    body = model.link_body[link]
    while body >= 0:
        length += offset(model.Xtree[body])
        body = model.parent[body]
    return length


def wrench_at(model, q, link, residual):
    """
    Estimate the external wrench at ``link`` that explains ``residual``: ``J^T w = r``.

    ``w = (f, n)`` mixes newtons and newton-metres, and ``J^T`` metres and radians, so a plain
    least-squares solve would depend on the unit of length: its rank test (singular values
    against the largest) and its minimum-norm answer (``|f|^2 + |n|^2``, which adds N^2 and
    N^2 m^2) change when the description is written in millimetres. The problem is solved in
    units of force instead, with ``L`` = :func:`chain_length` (the link's reach from the root):
    the unknowns are ``(f, n / L)``, and the equation of every coordinate that turns the link
    (its angular Jacobian column is not zero: a revolute joint on the path) is divided by
    ``L`` (a torque over a length is a force); those of coordinates that only translate it
    (prismatic joints) are forces already. Every length of the description scaled by ``s``
    leaves that matrix as it is and scales its right-hand side and answer as forces, so the
    rank and the wrench are the same in any unit. For an arm of revolute joints alone the
    least-squares fit is the plain one over the joint torques; the scaling decides only the
    rank test and the minimum-norm answer.

    The rank is the numerical rank of the scaled ``J^T``: the singular values above
    :data:`RANK_TOLERANCE` of the largest, the number of independent wrench components the
    joints on the path feel (6: a full wrench). With fewer (fewer than six joints on the path,
    a singular pose), the answer is the minimum-norm least-squares solution: of the wrenches
    that explain ``r`` best, the one with the smallest ``|f|^2 + |n|^2 / L^2``. It has no part
    along the wrenches the joints cannot feel (``J^T w = 0``), orthogonality taken in that
    same metric: the true wrench projected onto the felt ones. That is "the components they
    cannot see set to zero" only where an unfelt direction is a pure force or a pure torque
    along the link's axes; in general (a force along a line off the link's origin, which a
    force and a torque at the origin make together) the answer's force and torque are both
    different from the true ones, and only ``J^T w`` is right.

    Parameters
    ----------
    model
        the model.
    q
        ``(nv,)`` positions, model order.
    link
        a link of the model.
    residual
        ``(nv,)`` external joint torques, model order [N m or N].

    Returns
    -------
    ``((6,) wrench, rank)``: force first, in ``link``'s frame about its origin, applied on the
    robot [N, N m]; the numerical rank of the scaled ``J^T`` (6: a full wrench).

    """
    jt = jacobian(model, q, link, frame='local').T  # (nv, 6): linear, then angular columns
    length = _lengths(model).get(link)
    if length is None:
        # (0: a link at the root with every offset zero, no length in the description)
        length = _lengths(model)[link] = chain_length(model, link) or 1.0
    turning = jt[:, 3:].any(axis=1)  # rows of coordinates that turn the link
    row = np.where(turning, 1.0 / length, 1.0)
    columns = np.array([1.0, 1.0, 1.0, length, length, length])
    u, sigma, vt = np.linalg.svd(jt * row[:, None] * columns, full_matrices=False)
    rank = int(np.count_nonzero(sigma > RANK_TOLERANCE * sigma[0])) if sigma[0] > 0.0 else 0
    x = vt[:rank].T @ ((u[:, :rank].T @ (residual * row)) / sigma[:rank])
    return x * columns, rank


#: model -> {link: chain_length}, kept while the model lives.
_LENGTHS = weakref.WeakKeyDictionary()


def _lengths(model):
    lengths = _LENGTHS.get(model)
    if lengths is None:
        lengths = _LENGTHS[model] = {}
    return lengths
