"""
The node's torque law, arrays in and arrays out: no ROS here.

:class:`Controller` turns a measured state into the torques the node publishes::

    qdd_cmd     = qdd_d + kp (q_d - q) + kd (qd_d - qd)        (PD terms where references exist)
    feedforward = rnea(q, qd, qdd_cmd, f_ext) [+ drive_torques(qd, qdd_cmd)]   (drive.compensate)
    gravity     = rnea(q, 0, 0, f_ext)
    command     = feedforward, gravity or the task-space law of one link (:mod:`.task`),
                  optionally clamped to the effort limits and rate limited (gravity from a
                  detected contact on, with contact.reaction gravity_compensation)
    residual    = the momentum observer's estimate of the external joint torques, from the
                  measured efforts (:mod:`.observer`), minus the drive's friction where the
                  efforts include it (contact.drive)

with ``f_ext`` the fresh force/torque readings, their tare bias removed and, where asked, the
modelled bodies beyond the sensor added back. Everything that depends on the model and the
configuration is one immutable :class:`Setup`, replaced whole when either changes, so a thread
computing torques always sees a consistent set while another thread reconfigures.
"""

import math

import numpy as np

from .base import BaseInput
from .floating_law import floating_output, rest_state
from .observer import Observer
from .sensors import Bias
from .setup import first_over_limit
from .task import quaternion_matrix
from .values import DesiredPose, ObserverStep, Output, Stamped, TaskHold
from ..dynamics import gravity_torques, payload_wrench, rnea
from ..frames import link_pose


class Controller:
    """
    The torque law of the node, with the inputs it keeps between states.

    The desired input, sensor readings and biases are each swapped in whole (one reference),
    so :meth:`compute` may run on one thread while the setters run on another.
    """

    def __init__(self, sensors=()):
        self.sensors = list(sensors)
        self.desired = None  # Stamped(model, arrival [ns], Desired)
        self.pose = None  # Stamped(model, arrival [ns], DesiredPose)
        self.twist = None  # Stamped(model, arrival [ns], twist (6,))
        self._hold = None  # the task-space law's TaskHold, taken when the law starts
        self._last_command = None  # (setup, time [ns], command)
        self.observer = Observer()
        self.base = BaseInput()  # a floating base's IMU and odometry
        self.base_problem = ''  # why the last state of a floating base had no torques

    # Inputs -------------------------------------------------------------------------------------

    def set_desired(self, model, desired, now_ns):
        """
        Keep a desired input.

        Keep a desired input (:class:`~rbd_dynamics.control.desired.Desired`, model order)
        that arrived at ``now_ns``.
        """
        self.desired = Stamped(model, now_ns, desired)

    def set_desired_pose(self, model, position, quaternion, now_ns):
        """
        Keep the task-space law's desired pose (root frame) that arrived at ``now_ns``.

        Raises
        ------
        ValueError
            a position that is not 3 finite numbers, or a quaternion ``[x, y, z, w]`` that is
            not finite or not of unit length; the pose in use stays.

        """
        position = np.array(position, dtype=float).reshape(-1)
        if position.shape != (3,) or not np.isfinite(position).all():
            raise ValueError('the position must be 3 finite numbers, got %s' % position.tolist())
        quaternion = np.array(quaternion, dtype=float).reshape(-1)
        self.pose = Stamped(model, now_ns,
                            DesiredPose(position, quaternion, quaternion_matrix(quaternion)))

    def set_desired_twist(self, model, twist, now_ns):
        """Keep the desired twist ``(6,)`` (linear first, root axes); ``ValueError`` if bad."""
        twist = np.array(twist, dtype=float).reshape(-1)
        if twist.shape != (6,) or not np.isfinite(twist).all():
            raise ValueError('the twist must be 6 finite numbers, got %s' % twist.tolist())
        self.twist = Stamped(model, now_ns, twist)

    def fresh_desired(self, setup, now_ns, entry=None):
        """
        Return the desired input if fresh and of the setup's model, else ``None``.

        ``entry``: another :class:`Stamped` input (the pose, the twist) to look at instead of
        the desired joint input; the same ``desired_timeout`` applies.
        """
        if entry is None:
            entry = self.desired
        if entry is None or entry.model is not setup.model:
            return None
        if setup.desired_timeout_ns and now_ns - entry.arrival_ns > setup.desired_timeout_ns:
            return None
        return entry.value

    @staticmethod
    def reading_link(sensor, frame_id, model):
        """Return the link a reading acts on; ``ValueError`` names why it cannot be used."""
        link = sensor.frame or frame_id
        if not link:
            raise ValueError('sensor %s: empty header.frame_id and no wrench.%s.frame override'
                             % (sensor.name, sensor.name))
        if model is not None and link not in model.link_body:
            raise ValueError('sensor %s: frame %r is not a link of the model'
                             % (sensor.name, link))
        return link

    # Torques ------------------------------------------------------------------------------------

    def commanded_acceleration(self, setup, q, qd, desired):
        """Desired acceleration plus PD terms where references exist; zero without input."""
        if desired is None:
            return setup.zero
        qdd = desired.qdd
        if desired.q is not None and setup.kp.any():
            error = desired.q - q
            if setup.has_continuous:
                error[setup.continuous] = wrap_angle(error[setup.continuous])
            qdd = qdd + setup.kp * desired.mask * error
        if desired.qd is not None and setup.kd.any():
            qdd = qdd + setup.kd * desired.mask * (desired.qd - qd)
        return qdd

    def drive(self, setup, qd, qdd, desired):
        """Drive torques ``(nv,)`` at the commanded acceleration, model order."""
        if setup.drive_desired_velocity and desired is not None and desired.qd is not None:
            qd = np.where(desired.mask, desired.qd, qd)
        return setup.drive_torques(qd, qdd)

    def wrenches(self, setup, q, qd, qdd, now_ns, observed=False, rest=None):
        """
        External wrenches of the fresh readings: feedforward, gravity, the observer, the task law.

        A sensor that compensates the modelled bodies beyond it has their wrench added at the
        state of each use: the feedforward's at the commanded acceleration ``qdd`` (the
        torque it commands), gravity's at rest; the observer's and the task-space law's at
        the measured ``q``, ``qd`` and zero acceleration (the law's ``C q̇ + g`` term), the
        observer taking their inertia out of its mass matrix
        (:func:`~.observer.inertia_times`), so that neither the commanded acceleration nor
        an unmeasured one enters the residual.

        A floating base passes the whole model's state (:func:`~rbd_dynamics.floating.base_state`)
        and, as ``rest``, the ``(qd, qdd)`` of the base at rest (gravity as the IMU sees it).

        Returns
        -------
        ``(f_ff, f_g, f_obs, carried)``: ``None`` or ``{link: (6,)}`` each for the first
        three (``f_obs``, at the measured state, ``None`` unless ``observed``), and the links
        of the compensating sensors (one per sensor) for the observer.

        """
        f_ff = f_g = f_obs = None
        carried = []
        link_body = setup.model.link_body
        for sensor in self.sensors:
            reading = sensor.fresh(now_ns)
            if reading is None or reading.link not in link_body:
                continue  # stale, or the model changed under the reading
            link, wrench = reading.link, reading.wrench
            bias = sensor.bias
            if bias is not None and bias.link == link:
                wrench = wrench - bias.wrench
            w_ff = w_g = w_obs = wrench
            if sensor.compensate:
                # the sensor also carries the modelled bodies beyond it; their wrench at the
                # state of each torque turns the reading into the contact wrench
                w_ff = wrench + payload_wrench(setup.model, link, q, qd, qdd)
                w_g = wrench + (payload_wrench(setup.model, link, q) if rest is None
                                else payload_wrench(setup.model, link, q, *rest))
                if observed:
                    w_obs = wrench + payload_wrench(setup.model, link, q, qd)
                    carried.append(link)
            if f_ff is None:
                f_ff, f_g = {}, {}
                f_obs = {} if observed else None
            f_ff[link] = f_ff[link] + w_ff if link in f_ff else w_ff
            f_g[link] = f_g[link] + w_g if link in f_g else w_g
            if observed:
                f_obs[link] = f_obs[link] + w_obs if link in f_obs else w_obs
        return f_ff, f_g, f_obs, tuple(carried)

    def compute(self, setup, q, qd, now_ns, effort=None, stamp_ns=None, task_ready=True,
                observe_later=False, gravity=True):
        """
        Torques for the measured state ``q``, ``qd`` (model order) at time ``now_ns``.

        With the observer on, ``effort`` (``(nv,)`` measured in the driver's units, model
        order, finite; turned into joint torques by ``drive.effort_scale``, less
        ``drive.effort_offset``) and the joint
        state's ``stamp_ns`` advance it; ``effort`` ``None`` pauses it. On a detected
        contact with the reaction ``gravity_compensation``, this state's command is already
        the gravity compensation. With ``command_output: task``, the command is the
        task-space law (:meth:`task_command`); until ``task_ready`` (its compiled kernels
        are built), the gravity compensation.

        ``observe_later``: where no torque depends on the observer (no reaction), leave its
        step for :meth:`observe_pending`, which the caller runs once the torques are out
        (the step costs about as much as the torque law). ``gravity`` False: a floating base's
        gravity compensation may be left out (``None``) where the command is not it.

        Returns
        -------
        An :class:`Output`, or ``None`` when a torque would not be finite (nothing must be
        published then).

        """
        if setup.floating:
            return floating_output(self, setup, q, qd, now_ns, gravity)
        model = setup.model
        desired = self.fresh_desired(setup, now_ns)
        qdd = self.commanded_acceleration(setup, q, qd, desired)
        observed = setup.observer_on and effort is not None
        # the wrenches at the measured state: the observer's, and the task law's for a
        # compensating sensor (one reading for every output of this state)
        at_state = observed or (setup.task_out and task_ready
                                and any(s.compensate for s in self.sensors))
        f_ff, f_g, f_obs, carried = (self.wrenches(setup, q, qd, qdd, now_ns, at_state)
                                     if self.sensors else (None, None, None, ()))
        tau_ff = rnea(model, q, qd, qdd, f_ff)
        friction = None
        if setup.drive_on:
            tau_drive = self.drive(setup, qd, qdd, desired)
            tau_ff = tau_ff + tau_drive
            friction = tau_drive - setup.armature * qdd  # the drive at zero acceleration
        tau_g_model = gravity_torques(model, q, f_g)
        step = pending = None
        if setup.observer_on:
            if effort is None:
                self.observer.pause()
            else:
                if setup.scaled:
                    effort = effort * setup.effort_scale
                if setup.offset:  # a bias of the measurement, not a torque on the robot
                    effort = effort - setup.effort_offset
                pending = ObserverStep(setup, q, qd, effort, stamp_ns, f_obs,
                                       tau_g_model if f_g is None else None, carried, None)
                if not (observe_later and not setup.react):
                    step = self.observe(*pending)
                    pending = None
        tau_ff = setup.to_outputs(tau_ff)
        tau_g = setup.to_outputs(tau_g_model)
        if not (np.isfinite(tau_ff).all() and np.isfinite(tau_g).all()):
            self._observe_now(pending)  # (nothing is published: the observer steps all the same)
            return None
        # (the contact as this state's step left it: a reset on the service's thread after the
        # step takes effect at the next state, with the observer's restart)
        react = setup.react and setup.observer_on and (
            self.observer.contact if step is None else step.contact)
        command = tau_ff if setup.feedforward_out else tau_g
        task_error = None
        if not setup.task_out or react:
            # the law takes the pose it has when it starts (again after a contact's reset:
            # not back to where the contact found the arm)
            self._hold = None
        elif task_ready:
            # (the observer's C q̇ + g is the law's: the same state and wrenches)
            bias = None if step is None else step.bias
            if pending is not None:  # computed now for both
                bias = rnea(model, q, qd, setup.zero, f_obs)
                pending = pending._replace(bias=bias)
            tau_task, task_error = self.task_command(setup, q, qd, desired, now_ns,
                                                     f_obs if at_state else f_ff, friction,
                                                     bias)
            command = setup.to_outputs(tau_task)
            if not np.isfinite(command).all():
                self._observe_now(pending)
                return None
        command, saturated = self.limit(setup, tau_g if react else command, now_ns)
        return Output(tau_ff, tau_g, command, saturated,
                      None if step is None else setup.to_outputs(step.residual), step,
                      task_error, pending)

    def _observe_now(self, pending):
        if pending is not None:
            self.observe(*pending)

    def observe_pending(self, out):
        """
        Run the observer's step :meth:`compute` left in ``out`` (``observe_later``), if any.

        Sets ``out.step`` and ``out.external`` as :meth:`compute` would have; returns ``out``.
        """
        if out.pending is not None:
            out.step = self.observe(*out.pending)
            out.external = out.pending.setup.to_outputs(out.step.residual)
            out.pending = None
        return out

    def task_command(self, setup, q, qd, desired, now_ns, f_ext=None, friction=None,
                     bias=None):
        """
        Return the task-space law's torques ``(nv,)`` (model order) and its pose error.

        The desired pose and twist are the fresh ones (``desired_timeout``) that arrived
        after the law started (one from before, an earlier use's, would make the start a
        step); without one the link holds the pose it had when the law started, and the
        posture is the positions of the fresh desired state where it gives them, else those
        the joints had when the law started. With ``drive.compensate`` the drive's armature is
        part of the mass matrix and its friction is added: ``friction`` ``(nv,)``, the drive's
        torques at zero acceleration, which :meth:`compute` has from the feedforward's.
        ``bias``: ``C q̇ + g`` with ``f_ext`` if already computed (the observer's), or ``None``.
        """
        task = setup.task
        model = setup.model
        hold = self._hold
        if hold is None or hold.model is not model or hold.link != task.link:
            T = link_pose(model, q, task.link)
            hold = TaskHold(model, task.link, T[:3, 3].copy(), T[:3, :3].copy(), q.copy(),
                            now_ns)
            self._hold = hold
        pose = self._fresh_since(setup, now_ns, self.pose, hold.start_ns)
        position, rotation = (pose.position, pose.rotation) if pose is not None \
            else (hold.position, hold.rotation)
        posture = None
        if task.nullspace_stiffness > 0.0:
            posture = hold.posture
            if desired is not None and desired.q is not None:
                posture = np.where(desired.mask, desired.q, posture)
        result = task.torques(model, q, qd, position, rotation,
                              self._fresh_since(setup, now_ns, self.twist, hold.start_ns), posture,
                              f_ext, setup.armature if setup.drive_on else None, bias)
        tau = result.torque
        if friction is not None:
            tau = tau + friction
        return tau, result.error

    def observe(self, setup, q, qd, effort, stamp_ns, f_ext=None, g=None, carried=(),
                bias=None):
        """
        Advance the momentum observer (:mod:`.observer`) with one joint state's efforts.

        ``effort``: the measured joint torques (``(nv,)``, model order). The drive's friction
        at the measured velocity is taken off them when they include the drive
        (``contact.drive``; its armature is then part of the observer's mass matrix); the
        measured wrenches ``f_ext`` are part of the model, and the bodies beyond the
        ``carried`` links are the sensors' (:meth:`wrenches`).

        Returns
        -------
        the :class:`~.observer.Step`.

        """
        return self.observer.step(setup, q, qd, effort, stamp_ns, f_ext, g, carried, bias)

    def limit(self, setup, command, now_ns):
        """
        Clamp and rate limit the command.

        The command clamped to the effort limits (with ``limits.clamp``) and rate limited
        (with ``limits.effort_rate``), and the joints whose command exceeded its limit.

        The rate limit starts from the previous command of the same setup; the first command
        after a start or a reconfiguration passes unchanged (what the drive applies before it
        is unknown here).
        """
        saturated = ()
        if setup.limited:
            over = np.abs(command) > setup.effort_limits
            if over.any():
                saturated = tuple(name for name, o in zip(setup.joints, over) if o)
                if setup.config.clamp:  # (np.clip's own checks cost more than the clamp)
                    command = np.minimum(np.maximum(command, -setup.effort_limits),
                                         setup.effort_limits)
        rate = setup.config.effort_rate
        if rate > 0.0:
            last = self._last_command
            if last is not None and last[0] is setup and now_ns > last[1]:
                step = rate * (now_ns - last[1]) * 1e-9
                command = np.minimum(np.maximum(command, last[2] - step), last[2] + step)
            self._last_command = (setup, now_ns, command)
        return command, saturated

    def _fresh_since(self, setup, now_ns, entry, start_ns):
        """Return a fresh task-space input that arrived at or after ``start_ns``, or ``None``."""
        if entry is None or entry.arrival_ns < start_ns:
            return None
        return self.fresh_desired(setup, now_ns, entry)

    # Trajectories ------------------------------------------------------------------------------

    def trajectory_efforts(self, setup, rows, positions, velocities, accelerations, held):
        """
        Efforts of a planned trajectory at every point, in one batch.

        Parameters
        ----------
        setup
            the current setup (model with its payloads, drive).
        rows
            ``(k,)`` model index of each trajectory joint.
        positions, velocities, accelerations
            ``(points, k)``.
        held
            ``(nv,)`` positions of the joints the trajectory does not name (held there at
            rest).

        Returns
        -------
        ``(efforts, exceeded)``: ``(points, k)`` torques ``rnea(q, qd, qdd)`` (+ drive
        torques when compensating), and ``None`` or ``(point, column)`` of the first effort
        over its limit (in time, then in the trajectory's joint order).

        Raises
        ------
        ValueError
            a torque would not be finite.

        """
        count = positions.shape[0]
        q = np.tile(held, (count, 1))
        qd = np.zeros_like(q)
        qdd = np.zeros_like(q)
        q[:, rows] = positions
        qd[:, rows] = velocities
        qdd[:, rows] = accelerations
        tau = rnea(setup.model, q, qd, qdd)
        if setup.drive_on:
            tau += setup.drive_torques(qd, qdd)
        efforts = tau[:, rows]
        if not np.isfinite(efforts).all():
            raise ValueError('the efforts of the trajectory are not finite')
        return efforts, first_over_limit(efforts, setup.model_effort_limits[rows])

    # Tare ---------------------------------------------------------------------------------------

    def tare(self, sensor, setup, q, now_ns):
        """
        Take the sensor's bias.

        Take the sensor's bias: its fresh reading minus the reading the model expects now
        (the bodies beyond the frame, at rest at ``q``, when it compensates them; else zero).

        Returns
        -------
        ``(link, (6,) bias)`` [N, N m], force first, in the link frame, applied-on-robot
        convention; it is also kept on the sensor.

        Raises
        ------
        ValueError
            no model, no fresh reading, or (compensating) no complete joint state.

        """
        if setup is None:
            raise ValueError('no model yet')
        reading = sensor.fresh(now_ns)
        if reading is None:
            raise ValueError('no fresh reading of sensor %s (timeout %.3g s)'
                             % (sensor.name, sensor.timeout_ns * 1e-9))
        link, wrench = reading.link, reading.wrench
        if link not in setup.model.link_body:
            raise ValueError('sensor %s: frame %r is not a link of the model'
                             % (sensor.name, link))
        expected = np.zeros(6)
        if sensor.compensate:
            if q is None:
                raise ValueError('no complete joint state yet: the expected reading of the '
                                 'bodies beyond %s needs the joint positions' % link)
            # a sensor reads contact - payload_wrench; at rest without contact: -payload
            state = (q,) if not setup.floating else rest_state(self, setup, q, now_ns)
            expected = -payload_wrench(setup.model, link, *state)
        bias = Bias(link, wrench - expected)
        sensor.bias = bias
        return bias


def wrap_angle(values):
    """Angles wrapped to ``[-pi, pi)``."""
    return (values + math.pi) % (2.0 * math.pi) - math.pi
