"""
The node's ``/diagnostics`` status, built from explicit inputs.

:func:`dynamics_status` turns what the node knows (its counters, the status of its
:class:`~rbd_dynamics.ros.model_source.ModelSource`, the model in use, the sensors, the
controller's desired input, the compute times) into one ``diagnostic_msgs/DiagnosticStatus``;
every value is text, in the formats the node has always reported. No rclpy here: the node
publishes the status.
"""

from diagnostic_msgs.msg import DiagnosticStatus, KeyValue
from rbd_dynamics import compiled

NS = 1e9

#: The counters the status reports, in this order (the node's and its model source's).
COUNTS = (
    'joint_states', 'outputs', 'descriptions', 'descriptions_rejected', 'rejected_joint_states',
    'rejected_desired', 'rejected_wrench', 'rejected_no_model', 'incomplete_joint_states',
    'non_finite_outputs', 'rejected_parameters', 'skipped_while_compiling', 'rejected_payload',
    'rejected_tare', 'saturated_cycles', 'trajectories', 'rejected_trajectory', 'rejected_imu',
    'rejected_odometry', 'floating_base_unpublished')


class ComputeTimes:
    """
    How long the joint-state path took per answer [ns]: the samples since the last report.

    Written by the joint-state thread, read by the diagnostics timer: :meth:`take` swaps the
    sample list whole.
    """

    def __init__(self):
        self.samples = []
        self.max_ns = 0

    def add(self, spent_ns):
        """Keep one answer's time."""
        self.samples.append(spent_ns)
        if spent_ns > self.max_ns:
            self.max_ns = spent_ns

    def take(self):
        """Return the samples since the last call and start a new list."""
        samples = self.samples
        self.samples = []
        return samples


def dynamics_status(name, now_ns, active, model, *, description_updates, counts,
                    callback_failures, last_joint_state_ns, desired_ns, sensors, compute,
                    saturated, own_thread, last_errors, observer=(), task=(), base=()):
    """
    Build the node's diagnostic status.

    Parameters
    ----------
    name
        the status name (``'<node>: dynamics'``).
    now_ns
        the node's clock now [ns].
    active
        the :class:`~rbd_dynamics.ros.model_source.ModelInUse`, or ``None``.
    model
        the :class:`~rbd_dynamics.ros.model_source.ModelStatus`.
    description_updates
        the parameter's value.
    counts
        counter name -> count, with every name of :data:`COUNTS`.
    callback_failures
        exceptions that escaped a callback.
    last_joint_state_ns, desired_ns
        when the last joint state was answered and the desired input arrived [ns], or
        ``None``.
    sensors
        the force/torque sensors (:class:`~rbd_dynamics.control.sensors.Sensor`).
    compute
        the :class:`ComputeTimes` (its samples are taken).
    saturated
        names of the joints over their effort limit in the last saturated cycle.
    own_thread
        joint states are taken on a thread of their own (else: the executor).
    last_errors
        input kind -> the reason its last message was refused.
    observer
        ``(key, value)`` pairs of the momentum observer (:func:`observer_values`).
    task
        ``(key, value)`` pairs of the task-space law (:func:`task_values`).
    base
        ``(key, value)`` pairs of a floating base (:func:`base_values`).

    Returns
    -------
    diagnostic_msgs.msg.DiagnosticStatus
        the status; every value is text.

    """
    setup = active.setup if active is not None else None
    status = DiagnosticStatus(name=name, hardware_id=setup.model.name if setup else '')
    values = []

    def add(key, value):
        values.append(KeyValue(key=key, value=str(value)))

    def age(stamp_ns):
        return 'never' if stamp_ns is None else '%.3f' % ((now_ns - stamp_ns) / NS)

    if setup is None:
        status.level = DiagnosticStatus.ERROR
        status.message = ('no model: %s' % model.error if model.error
                          else 'waiting for the robot description')
    else:
        missing = active.merger.missing()
        if missing:
            status.level = DiagnosticStatus.WARN
            status.message = 'waiting for joint_states of %s' % ', '.join(missing)
        elif model.error:
            status.level = DiagnosticStatus.WARN
            status.message = 'new description rejected, previous model in use'
        elif last_joint_state_ns is None:
            status.level = DiagnosticStatus.WARN
            status.message = 'no joint_states yet'
        else:
            status.level = DiagnosticStatus.OK
            status.message = 'publishing torques'
        contact = dict(observer).get('contact', 'none')
        if contact != 'none' and status.level == DiagnosticStatus.OK:
            status.level = DiagnosticStatus.WARN
            status.message = 'contact detected on %s' % contact
        unpublished = dict(base).get(BASE_PROBLEM, 'none')
        if unpublished != 'none' and status.level == DiagnosticStatus.OK:
            status.level = DiagnosticStatus.WARN
            status.message = 'floating base: no torques published: %s' % unpublished
        _add_setup(add, setup, model, saturated)
    add('description_updates', description_updates)
    add('model error', model.error or 'none')
    add('joint_states age [s]', age(last_joint_state_ns))
    add('desired age [s]', age(desired_ns))
    for sensor in sensors:
        reading = sensor.reading
        add('wrench %s age [s]' % sensor.name, age(reading.arrival_ns if reading else None))
        bias = sensor.bias
        add('wrench %s bias' % sensor.name,
            '%s in %s' % (vector_text(bias.wrench), bias.link) if bias is not None else 'none')
    samples = compute.take()
    if samples:
        add('compute time mean [us]', '%.1f' % (sum(samples) / len(samples) / 1e3))
    add('compute time max [us]', '%.1f' % (compute.max_ns / 1e3))
    for key in COUNTS:
        add(key, counts[key])
    add('callback_failures', callback_failures)
    add('joint_states taken on', 'a thread of their own' if own_thread else 'the executor')
    for key, value in tuple(observer) + tuple(task) + tuple(base):
        add(key, value)
    for kind, reason in last_errors.items():
        add('last %s rejection' % kind, reason)
    status.values = values
    return status


def _add_setup(add, setup, model_status, saturated):
    """Add the values that describe the model in use and its setup."""
    model = setup.model
    add('model', '%s (%d joints, from %s)' % (model.name, setup.nv, model_status.source))
    add('compiled path', 'in use' if model.packed is not None else
        'compiling' if model_status.compiling else 'unavailable: %s (NumPy path)'
        % (compiled.UNAVAILABLE_REASON or 'the kernels could not be built'))
    add('joints', ', '.join(setup.joints))
    drive = (setup.viscous, setup.coulomb, setup.armature)
    add('drive compensation', 'on: viscous %s, coulomb %s, armature %s added to the '
        'feedforward' % tuple(vector_text(a[setup.rows]) for a in drive) if setup.drive_on
        else 'off')
    add('effort scale', "%s (joint torque per unit of the driver's effort)"
        % vector_text(setup.command_scale) if setup.scaled else '1 (the driver speaks N m or N)')
    add('effort limits', '%s%s' % (vector_text(setup.effort_limits),
                                   ', clamped' if setup.config.clamp else ''))
    add('saturated joints (last)', ', '.join(saturated) or 'none')
    for link, payload in sorted(model.payloads.items()):
        add('payload %s' % link, payload_text(payload))
    if not model.payloads:
        add('payloads', 'none')


#: The key of :func:`base_values` that says why a floating base has no torques ('none': it has).
BASE_PROBLEM = 'floating base problem'


def base_values(setup, controller, topics, unbalanced, now_ns):
    """
    Describe a floating base as ``(key, value)`` pairs for the status (nothing for a fixed one).

    The IMU (its topic, link and age), whether torques are published and why not, the contacts,
    and the last unbalanced base wrench ``fx fy fz tx ty tz`` [N, N m] in the base frame: what
    neither the sensors nor the contacts carry (zero for a consistent estimate). ``topics``:
    the resolved names of the IMU's and the odometry's topics ('' where not given).
    """
    if setup is None or not setup.floating:
        return ()
    imu, odometry = controller.base.fresh(now_ns, setup.imu_timeout_ns)
    imu_topic, odometry_topic = topics
    topic = imu_topic or '(none: base.imu.topic is empty)'
    if imu is None:
        reading = controller.base.imu
        problem = ('no reading of the IMU on %s yet' % topic if reading is None else
                   'the IMU on %s is stale (%.3f s old, base.imu.timeout %.3g s)'
                   % (topic, (now_ns - reading.arrival_ns) / NS, setup.imu_timeout_ns / NS))
    else:
        problem = controller.base_problem or 'none'
    last = controller.base.imu
    values = [
        ('base', 'floating (%s above %s)' % (setup.model.base_joint, setup.model.base_link)),
        ('base IMU', '%s on %s, %s' % (
            topic, last.link if last else setup.imu_frame or '?',
            'no reading yet' if last is None
            else 'age %.3f s' % ((now_ns - last.arrival_ns) / NS))),
        (BASE_PROBLEM, problem),
        ('contacts', '%s (%s)' % (', '.join(setup.contacts), setup.contact_type)
         if setup.contacts else 'none'),
        ('unbalanced base wrench', 'none yet' if unbalanced is None
         else ' '.join('%.6g' % v for v in unbalanced))]
    if odometry_topic:
        values.append(('base odometry', '%s: %s' % (odometry_topic,
                                                    'fresh' if odometry else 'none fresh')))
    return tuple(values)


def task_values(setup, controller, note=''):
    """
    Describe the task-space law as ``(key, value)`` pairs for the status.

    The link and law, whether ``~/effort_commands`` carry it (and ``note``: why not yet), its
    gains, the components the link's joints reach, and what it aims at.
    """
    if setup is None or setup.task is None:
        return (('task', 'off (no task.link)'),)
    task = setup.task
    if not setup.task_out:
        state = 'not commanded (command_output is %s)' % setup.config.command_output
    else:
        state = note or 'commanding ~/effort_commands'
    pose = controller.pose
    return (
        ('task', '%s, %s: %s' % (task.link, task.mode, state)),
        ('task stiffness', vector_text(task.stiffness)),
        ('task damping', vector_text(task.damping)),
        ('task null-space stiffness', '%g' % task.nullspace_stiffness),
        ('task reach', task.note or 'all six components (%d joint coordinates)' % task.dof),
        ('task desired pose (last received)', 'none (holding the pose at start)'
         if pose is None else
         'position %s, quaternion %s' % (vector_text(pose.value.position),
                                         vector_text(pose.value.quaternion))))


def observer_values(setup, observer, wrench_rank=None, wrench_note=''):
    """
    Describe the momentum observer as ``(key, value)`` pairs for the status.

    Its state (off, running, paused: the joint states carry no efforts), the restarts by the
    stamp rules, the largest ``|r|`` per joint since the last report (one diagnostics period),
    the latched contact, whether the drive model is taken off the efforts
    (:func:`observer_drive_text`) and, with ``contact.wrench_link``, the rank of the wrench fit
    (or ``wrench_note``: why there is no estimate yet). Takes the observer's window of
    residuals.
    """
    if setup is None or not setup.observer_on:
        return (('observer', 'off'),)
    window = observer.take_window()
    pairs = [
        ('observer', 'running' if observer.running else 'paused (joint states without efforts)'),
        ('observer restarts', observer.restarts),
        ('largest external effort per joint, last period',
         vector_text(window[setup.rows]) if window is not None and len(window) == setup.model.nv
         else 'none'),
        ('contact threshold', 'none (no detection)' if setup.threshold is None
         else vector_text(setup.threshold)),
        ('contact', ', '.join(setup.model.joint_names[i] for i in observer.contact_joints
                              if i < setup.model.nv) if observer.contact else 'none'),
        ('contact reaction', setup.config.contact_reaction),
        ('observer drive model', observer_drive_text(setup))]
    if setup.wrench_link:
        pairs.append(('external wrench at', '%s (%s)' % (
            setup.wrench_link, wrench_note or 'rank %s of 6' % (
                '?' if wrench_rank is None else wrench_rank))))
    return tuple(pairs)


def observer_drive_text(setup):
    """
    Say whether the observer takes the drive model off the measured efforts, and why.

    ``on (...)`` with the friction and armature it uses, or ``off (...)``; the reason names
    ``contact.drive`` and, for ``auto``, the ``drive.*`` lists that decided it.
    """
    mode = setup.config.contact_drive
    if mode == 'auto':
        why = ('contact.drive auto: %s given' % ', '.join(setup.drive_given)
               if setup.drive_given else
               'contact.drive auto: none of drive.viscous, drive.coulomb, drive.armature given')
    else:
        why = 'contact.drive %s' % mode
    if not setup.observer_drive:
        return 'off (%s): the efforts are taken as the joint torques after the gear' % why
    viscous, coulomb, armature = (vector_text(a[setup.rows])
                                  for a in (setup.viscous, setup.coulomb, setup.armature))
    return ('on (%s): viscous %s, coulomb %s taken off the efforts, armature %s in the mass '
            'matrix' % (why, viscous, coulomb, armature))


def vector_text(values):
    """Return numbers as the node reports them: ``[1, 0.5, -2]`` (6 significant digits)."""
    return '[%s]' % ', '.join('%.6g' % v for v in values)


def payload_text(payload):
    """Return a payload as the node reports it: mass, com and the 6 inertia entries."""
    inertia = payload.inertia
    return ('m %.6g kg, com %s m, inertia %s kg m^2'
            % (payload.mass, vector_text(payload.com),
               vector_text([inertia[0, 0], inertia[0, 1], inertia[0, 2], inertia[1, 1],
                            inertia[1, 2], inertia[2, 2]])))
