"""
Everything the torque law derives from one model and one configuration: a :class:`Setup`.

The configuration (:class:`~.config.Config`) is checked against the model (joint names, list
lengths, links, the task-space settings) and turned into model-ordered arrays: gains, drive
coefficients, effort scales and offsets, limits, the observer's settings. A setup is never
modified: the node builds a new one for every change and swaps it whole.
"""

import math

import numpy as np

from .config import check_lengths, CONTACT_DRIVES, DRIVE_LISTS
from .observer import REACTIONS
from .task import TaskSettings
from ..drive import COULOMB_VELOCITY, drive_law


class Setup:
    """
    Everything derived from one model and one configuration; replaced, never mutated.

    Attributes
    ----------
    model
        the :class:`~rbd_dynamics.Model`.
    config
        the :class:`Config`.
    floating
        the model has a floating base: its free joint is left out of every joint vector
        here ("model order" is then the order of ``model.joint_names[1:]``).
    names, nv
        the independent joints of the joint vectors (the model's, without a floating base's
        free joint), and their number of velocities.
    joints
        output order.
    index
        independent joint name -> model index.
    rows
        ``(len(joints),)`` model index of each output joint.
    reorder
        ``rows``, or ``None`` when the outputs are in model order.
    kp, kd
        ``(nv,)`` gains in model order, zero outside ``joints``.
    viscous, coulomb, armature, coulomb_velocity
        ``(nv,)`` drive coefficients in model order.
    effort_scale
        ``(nv,)`` joint torque per unit of the driver's effort, model order (ones where not
        given); ``command_scale``: the outputs' (``joints`` order).
    effort_offset, offset
        ``(nv,)`` the measured efforts' bias [N m or N], model order (zeros where not given),
        and whether any is non-zero.
    effort_limits
        ``(len(joints),)`` limits of the outputs, ``inf`` for none.
    continuous
        ``(nv,)`` bool, joints whose position error wraps to [-pi, pi).
    zero
        ``(nv,)`` zeros.
    observer_on
        run the momentum observer.
    contact_gain
        its bandwidth [1/s].
    threshold
        ``(len(joints),)`` contact thresholds, or ``None`` (no detection).
    drive_on
        add the drive torques to the feedforward and the trajectories' efforts
        (``drive.compensate``).
    observer_drive
        the observer takes the drive's friction off the measured efforts and adds its
        armature to the mass matrix (``contact.drive``, ``auto`` resolved).
    drive_given
        the names of :data:`DRIVE_LISTS` that are given (what ``auto`` looked at).
    armature_observed
        ``(nv,)`` the armature the observer adds to the mass matrix (the drive's with
        ``observer_drive``, else zeros).
    react
        switch the command to the gravity compensation while in contact.
    wrench_link
        link of the wrench estimate, or ''.
    task
        the checked :class:`~.task.TaskSettings`, or ``None`` (no ``task.link``).
    task_out
        ``~/effort_commands`` carries the task-space law (``command_output: task``).
    contacts, contact_type, contact_weights
        the floating base's contact links, their kind and weights (``contacts.*``; weights
        ``None`` for equal).
    imu_frame, imu_timeout_ns, differentiate
        the IMU's link override, how old its reading may be, and whether the base's angular
        acceleration is the derivative of the angular velocity (``base.*``).

    """

    def __init__(self, model, config):
        """
        Check the configuration against the model and set up the output order.

        Raises
        ------
        ValueError
            ``joints`` names something that is not an independent joint, lists a joint twice,
            or a per-joint list has the wrong length.

        """
        self.model = model
        self.config = config
        # a floating base's free joint comes first; it has no entry in any joint list
        self.floating = model.base_joint is not None
        base = 6 if self.floating else 0
        self.names = model.joint_names[1:] if self.floating else model.joint_names
        self.nv = model.nv - base
        self.index = {name: i for i, name in enumerate(self.names)}
        self.joints = config.joints or self.names
        unknown = [name for name in self.joints if name not in self.index]
        if unknown:
            mimic = [name for name in unknown if name in model.mimic]
            raise ValueError('joints names %s, not independent joints of the model%s '
                             '(joints of the model: %s)'
                             % (', '.join(unknown),
                                ' (%s follow a mimic master)' % ', '.join(mimic) if mimic else '',
                                ', '.join(self.names)))
        if len(set(self.joints)) != len(self.joints):
            raise ValueError('joints lists a joint more than once')
        reason = check_lengths(config, len(self.joints))
        if reason:
            raise ValueError(reason)
        self.rows = np.array([self.index[name] for name in self.joints], dtype=np.intp)
        self.reorder = None if np.array_equal(self.rows, np.arange(self.nv)) else self.rows
        lists = config.per_joint
        self.kp = self._model_order(lists['kp'], np.zeros(self.nv))
        self.kd = self._model_order(lists['kd'], np.zeros(self.nv))
        self.viscous = self._model_order(lists['drive.viscous'], model.damping[base:])
        self.coulomb = self._model_order(lists['drive.coulomb'], model.friction[base:])
        self.armature = self._model_order(lists['drive.armature'], np.zeros(self.nv))
        self.coulomb_velocity = self._coulomb_velocity(config.coulomb_velocity)
        self.effort_scale = self._model_order(lists['drive.effort_scale'], np.ones(self.nv))
        if not (np.isfinite(self.effort_scale).all() and (self.effort_scale != 0.0).all()):
            raise ValueError('drive.effort_scale must be finite and non-zero (joint torque per '
                             "unit of the driver's effort), got %r"
                             % (list(lists['drive.effort_scale']),))
        self.command_scale = self.effort_scale[self.rows]
        self.scaled = bool((self.effort_scale != 1.0).any())
        self.effort_offset = self._model_order(lists['drive.effort_offset'], np.zeros(self.nv))
        if not np.isfinite(self.effort_offset).all():
            raise ValueError('drive.effort_offset must be finite [N m or N], got %r'
                             % (list(lists['drive.effort_offset']),))
        self.offset = bool((self.effort_offset != 0.0).any())
        limits = self._model_order(lists['limits.effort'], model.effort_limits[base:])[self.rows]
        limits[limits == 0.0] = np.inf  # 0: unlimited, as in a URDF
        self.effort_limits = limits
        self.limited = bool(np.isfinite(limits).any())
        # every independent joint's limit (the outputs' as configured), for trajectories
        self.model_effort_limits = np.array(model.effort_limits[base:], dtype=float)
        self.model_effort_limits[self.rows] = limits
        self.continuous = np.array([t == 'continuous' for t in model.joint_types[base and 1:]],
                                   dtype=bool)
        self.has_continuous = bool(self.continuous.any())
        self.zero = np.zeros(self.nv)
        self.feedforward_out = config.command_output == 'feedforward'
        self.desired_timeout_ns = int(config.desired_timeout * 1e9)
        self.drive_on = bool(config.drive_compensate)
        self.drive_desired_velocity = config.drive_velocity == 'desired'
        self.observer_on = bool(config.contact_observer)
        gain = config.contact_gain
        if not (math.isfinite(gain) and gain > 0.0):
            raise ValueError('contact.gain must be a finite number > 0, got %r' % (gain,))
        self.contact_gain = float(gain)
        threshold = lists['contact.threshold']
        self.threshold = np.array(threshold, dtype=float) if len(threshold) else None
        if self.threshold is not None and not (np.isfinite(self.threshold).all()
                                               and (self.threshold >= 0.0).all()):
            raise ValueError('contact.threshold must be finite numbers >= 0, got %r'
                             % (list(threshold),))
        if config.contact_drive not in CONTACT_DRIVES:
            raise ValueError('contact.drive: unknown value %r (use %s)'
                             % (config.contact_drive, ' or '.join(CONTACT_DRIVES)))
        # The feedforward and the observer ask different questions of the drive model:
        # drive.compensate is what the command should add; contact.drive is what the measured
        # effort contains, which depends on where it is measured (before or after the gear).
        self.drive_given = tuple(name for name in DRIVE_LISTS if len(lists[name]))
        self.observer_drive = config.contact_drive == 'on' or (
            config.contact_drive == 'auto' and bool(self.drive_given))
        self.armature_observed = self.armature if self.observer_drive else self.zero
        if config.contact_reaction not in REACTIONS:
            raise ValueError('contact.reaction: unknown value %r (use %s)'
                             % (config.contact_reaction, ' or '.join(REACTIONS)))
        self.react = config.contact_reaction == 'gravity_compensation'
        link = config.contact_wrench_link
        if link and link not in model.link_body:
            raise ValueError('contact.wrench_link %r is not a link of the model (links: %s)'
                             % (link, ', '.join(sorted(model.link_body))))
        self.wrench_link = link
        self.task_out = config.command_output == 'task'
        self.task = None
        if config.task_link:
            self.task = TaskSettings(model, config.task_link, config.task_mode,
                                     config.task_stiffness, config.task_damping,
                                     config.task_nullspace_stiffness)
        elif self.task_out:
            raise ValueError('command_output task needs task.link: the link to control')
        self._base_settings(config)

    def _base_settings(self, config):
        """Check the floating base's settings (``contacts.*``, ``base.*``)."""
        model = self.model
        self.contacts = tuple(config.contacts_links)
        self.contact_type = config.contacts_type
        self.contact_weights = tuple(config.contacts_weights) or None
        self.imu_frame = config.imu_frame
        self.imu_timeout_ns = int(config.imu_timeout * 1e9)
        self.differentiate = config.angular_acceleration == 'differentiate'
        if not self.floating:
            self.contacts = ()  # a fixed base is held by its mounting: contacts.* unused
            return
        refused = [name for name, on in (('contact.observer', self.observer_on),
                                         ('task.link', self.task is not None)) if on]
        if refused:
            raise ValueError('%s: not available on a floating base yet' % ', '.join(refused))
        unknown = [link for link in self.contacts if link not in model.link_body]
        if unknown:
            raise ValueError('contacts.links names %s, not links of the model'
                             % ', '.join(unknown))
        if len(set(self.contacts)) != len(self.contacts):
            raise ValueError('contacts.links lists a link more than once')
        if self.contact_weights and len(self.contact_weights) != len(self.contacts):
            raise ValueError('contacts.weights has %d entries, contacts.links has %d'
                             % (len(self.contact_weights), len(self.contacts)))
        if config.imu_frame and config.imu_frame not in model.link_body:
            raise ValueError('base.imu.frame %r is not a link of the model' % config.imu_frame)

    def _coulomb_velocity(self, value):
        """``(nv,)`` widths in model order of one width or a list in ``joints`` order."""
        if np.ndim(value) == 0:
            widths = np.full(self.nv, float(value))
        else:
            if len(value) != len(self.joints):
                raise ValueError('drive.coulomb_velocity has %d entries, joints has %d (give '
                                 'one width, or one per joint)' % (len(value), len(self.joints)))
            widths = self._model_order(value, np.full(self.nv, COULOMB_VELOCITY))
        if not (np.isfinite(widths).all() and (widths > 0.0).all()):
            raise ValueError('drive.coulomb_velocity must be finite numbers > 0, got %r'
                             % (value,))
        return widths

    def _model_order(self, values, default):
        """Return a ``joints``-order list as a model-order array; the default where not given."""
        out = np.array(default, dtype=float)
        if len(values):
            out[self.rows] = values
        return out

    def to_outputs(self, tau):
        """Model-order torques ``(..., nv)`` in output order."""
        return tau if self.reorder is None else tau[..., self.reorder]

    def drive_torques(self, qd, qdd):
        """
        Drive torques ``(..., nv)`` with this setup's coefficients, model order.

        :func:`~rbd_dynamics.drive.drive_torques`'s law, with the widths checked once (here
        at the setup) rather than at every joint state.
        """
        return drive_law(qd, qdd, self.viscous, self.coulomb, self.armature,
                         self.coulomb_velocity)


def first_over_limit(efforts, limits):
    """
    Find the first effort strictly beyond its limit: first in time, then in joint order.

    Parameters
    ----------
    efforts
        ``(points, k)`` [N m or N], one row per point in time order.
    limits
        ``(k,)`` effort limits [N m or N], ``inf`` where unlimited.

    Returns
    -------
    ``(point, column)`` of the first ``|effort| > limit``, or ``None`` when every effort is
    within its limit (an effort equal to its limit is within).

    """
    over = np.abs(efforts) > limits
    points = np.flatnonzero(over.any(axis=1))
    if not len(points):
        return None
    point = int(points[0])
    return point, int(np.flatnonzero(over[point])[0])
