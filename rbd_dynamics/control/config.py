"""
Every parameter of the node, declared once: type, default, description, range and check.

:data:`PARAMETERS` (and :func:`sensor_parameters` for each force/torque sensor) is the one table
the node declares its parameters from and checks every change against, the torque law takes
its defaults from (:data:`DEFAULTS`, :class:`Config`) and the tools read node parameter
files with; :func:`check` is the only per-value validation. Checks that relate several
parameters (a gain list against the number of joints) belong to
:class:`rbd_dynamics.control.setup.Setup`, which the node builds for every change. No ROS: the
node maps each :attr:`Spec.ptype` to rclpy's type (:mod:`rbd_dynamics.ros.parameters`).

The table is also the source of the documentation: ``python -m rbd_dynamics.control.config``
prints the Markdown table of ``docs/node.md`` (:func:`markdown_table`), and a test holds that
page and ``config/rbd_dynamics.yaml`` equal to it.
"""

import math

import numpy as np

from .base import ANGULAR_ACCELERATIONS, BASE_TYPES
from .observer import REACTIONS
from .task import DEFAULT_STIFFNESS, MODES
from ..drive import COULOMB_VELOCITY
from ..floating import CONTACT_TYPES
from ..parsers.urdf import MAX_DESCRIPTION_BYTES
from ..spatial import inertia_problem, inertia_tensor

COMMAND_OUTPUTS = ('feedforward', 'gravity_compensation', 'task')
DRIVE_VELOCITIES = ('measured', 'desired')
#: Whether the observer's efforts include the drive (``contact.drive``): ``auto`` is ``on`` when
#: one of :data:`DRIVE_LISTS` is given.
CONTACT_DRIVES = ('auto', 'on', 'off')
#: The drive parameters whose values, given, say that a drive model of this robot exists.
DRIVE_LISTS = ('drive.viscous', 'drive.coulomb', 'drive.armature')
#: Per-joint lists of the configuration, in ``joints`` order, and what an empty list means.
PER_JOINT = {
    'kp': 'zero',
    'kd': 'zero',
    'drive.viscous': "the URDF's <dynamics damping>",
    'drive.coulomb': "the URDF's <dynamics friction>",
    'drive.armature': 'zero',
    'drive.effort_scale': 'one (efforts in N m or N)',
    'drive.effort_offset': 'zero (no bias)',
    'limits.effort': "the URDF's <limit effort>",
    'contact.threshold': 'no contact detection',
}
#: How a force/torque sensor's wrench is meant: on the robot, or by it (``wrench.<n>.convention``).
CONVENTIONS = ('applied_on_robot', 'exerted_by_robot')
DESCRIPTION_UPDATES = ('accept', 'lock')
MAX_TIMEOUT = 3600.0  # s

# What a change of a parameter affects (the node acts on these).
MODEL = 'model'  # the model is rebuilt
SETUP = 'setup'  # the joint setup is rebuilt (joints, gains, drive, limits, outputs)
PAYLOAD = 'payload'  # the configured payload is applied again
SENSOR = 'sensor'  # a force/torque sensor's settings
FIXED = 'fixed'  # read-only
NONE = 'none'  # read when needed


class Spec:
    """
    One parameter: how it is declared and checked.

    Attributes
    ----------
    name, default, description
        as declared.
    ptype
        the name of its ``rclpy.parameter.Parameter.Type`` (``'DOUBLE_ARRAY'``...).
    effect
        what a change affects (:data:`MODEL`, :data:`SETUP`, ...).
    check
        ``value -> reason`` ('' when acceptable).
    constraints
        the descriptor's ``additional_constraints`` text.
    float_range, int_range
        ``(from, to)`` for the descriptor, or ``None``.
    dynamic
        the parameter takes its type from its value (a number or a list of numbers): declared
        with ``dynamic_typing``.

    """

    def __init__(self, name, default, ptype, description, effect, check=None, constraints='',
                 float_range=None, int_range=None, dynamic=False):
        self.name = name
        self.default = default
        self.ptype = ptype
        self.description = description
        self.effect = effect
        self.check = check or (lambda value: '')
        self.constraints = constraints
        self.float_range = float_range
        self.int_range = int_range
        self.dynamic = dynamic

    @property
    def read_only(self):
        return self.effect == FIXED


def _one_of(choices):
    def check(value):
        if value not in choices:
            return 'unknown value %r (use %s)' % (value, ' or '.join(choices))
        return ''
    return check


def _finite(count=None, minimum=None, strict=False):
    """Return a check of a number (``count`` None) or of a list of ``count`` numbers (0: any)."""
    def check(value):
        values = [value] if count is None else list(value)
        if count and len(values) != count:
            return 'must be %d numbers, got %d' % (count, len(values))
        for v in values:
            if not math.isfinite(v):
                return 'must be finite, got %r' % (value,)
            if minimum is not None and (v <= minimum if strict else v < minimum):
                return 'must be %s %g, got %r' % ('>' if strict else '>=', minimum, value)
        return ''
    return check


def _widths(value):
    """Check one positive width, or a non-empty list of them (one per joint)."""
    values = list(value) if isinstance(value, (list, tuple)) else [value]
    if not values:
        return 'must not be an empty list'
    if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in values):
        return 'must be a number or a list of numbers, got %r' % (value,)
    return _finite(0, 0.0, strict=True)(values)


def _non_zero(value):
    reason = _finite(0)(value)
    if not reason and any(v == 0.0 for v in value):
        reason = "must not be 0 (joint torque per unit of the driver's effort), got %r" % (
            list(value),)
    return reason


def _six_or_empty(value):
    return _finite(6, 0.0)(value) if len(value) else ''


def _no_duplicates(value):
    return 'lists a joint more than once' if len(set(value)) != len(value) else ''


def _timeout(value):
    if not (math.isfinite(value) and 0.0 <= value <= MAX_TIMEOUT):
        return 'must be in [0, %g] s, got %r' % (MAX_TIMEOUT, value)
    return ''


def _inertia(value):
    reason = _finite(6)(value)
    if not reason:
        problem = inertia_problem(inertia_tensor(value))
        reason = "is not a body's: it %s, got %r" % (problem, list(value)) if problem else ''
    return reason


class T:
    """The names of the rclpy parameter types of the table (``Parameter.Type.<name>``)."""

    BOOL = 'BOOL'
    INTEGER = 'INTEGER'
    DOUBLE = 'DOUBLE'
    STRING = 'STRING'
    DOUBLE_ARRAY = 'DOUBLE_ARRAY'
    STRING_ARRAY = 'STRING_ARRAY'


NON_NEGATIVE_LIST = 'len(joints) finite numbers >= 0, or empty'

#: The node's parameters (sensor parameters: :func:`sensor_parameters`).
PARAMETERS = (
    Spec('robot_description', '', T.STRING, 'URDF text of the robot; empty: subscribe to the '
         'robot_description topic (latched, as robot_state_publisher publishes it)', MODEL),
    Spec('description_updates', 'accept', T.STRING, 'accept: a new description replaces the '
         'model (with a warning naming what changed); lock: the first model stays, later '
         'descriptions are refused', NONE, _one_of(DESCRIPTION_UPDATES),
         ' or '.join(DESCRIPTION_UPDATES)),
    Spec('max_description_bytes', MAX_DESCRIPTION_BYTES, T.INTEGER, 'larger robot '
         'descriptions are refused [bytes]', MODEL, _finite(minimum=1024),
         int_range=(1024, 2 ** 31 - 1)),
    Spec('root_link', '', T.STRING, 'root link of the model (a sub-tree of the URDF); empty: '
         'the URDF root', MODEL),
    Spec('gravity', [0.0, 0.0, -9.81], T.DOUBLE_ARRAY, 'gravity acceleration in the root link '
         'frame [m/s^2]', MODEL, _finite(3), '3 finite numbers'),
    Spec('base.type', 'fixed', T.STRING, 'fixed: the root link is bolted down; floating: it '
         'moves (a free joint above it, its motion from base.imu): humanoids, quadrupeds, arms '
         'on a moving base', MODEL, _one_of(BASE_TYPES), ' or '.join(BASE_TYPES)),
    Spec('base.imu.topic', '', T.STRING, 'sensor_msgs/Imu of a link of the robot (orientation '
         'in a gravity-aligned world, angular velocity, proper linear acceleration: +9.81 up at '
         'rest); needed by base.type floating', FIXED),
    Spec('base.imu.frame', '', T.STRING, "the IMU's link, overriding header.frame_id; empty: "
         'the header', SETUP),
    Spec('base.imu.timeout', 0.05, T.DOUBLE, 'an IMU (or odometry) reading older than this is '
         'stale: no floating-base output at all [s]', SETUP,
         _finite(minimum=0.0, strict=True), '> 0', float_range=(0.0, MAX_TIMEOUT)),
    Spec('base.angular_acceleration', 'differentiate', T.STRING, "the base's angular "
         'acceleration, which the IMU does not measure: differentiate (the angular velocity by '
         'the header stamps, a quadratic fit over 20 ms) or zero', SETUP,
         _one_of(ANGULAR_ACCELERATIONS), ' or '.join(ANGULAR_ACCELERATIONS)),
    Spec('base.odometry.topic', '', T.STRING, 'optional nav_msgs/Odometry of the base link: '
         "its orientation and angular velocity, used instead of the IMU's (the IMU still "
         'gives the acceleration); empty: none', FIXED),
    Spec('contacts.links', [], T.STRING_ARRAY, 'links the environment may hold (feet, a hand '
         'on a table) whose wrench no force/torque sensor measures: they carry what the '
         'sensors leave of the base wrench (weighted minimum norm); ~/contact_wrench/<link>',
         SETUP, _no_duplicates),
    Spec('contacts.type', 'surface', T.STRING, 'surface: a contact carries a whole wrench (6 '
         'components); point: a force at the link origin (3)', SETUP,
         _one_of(CONTACT_TYPES), ' or '.join(CONTACT_TYPES)),
    Spec('contacts.weights', [], T.DOUBLE_ARRAY, 'one per contact link: the split minimises '
         'the sum of w_i |lambda_i|^2; empty: equal', SETUP, _finite(0, 0.0, strict=True),
         'len(contacts.links) finite numbers > 0, or empty'),
    Spec('joints', [], T.STRING_ARRAY, 'output order of the torques and of '
         'desired_accelerations; empty: every independent joint in model order', SETUP,
         _no_duplicates),
    Spec('command_output', 'feedforward', T.STRING, 'torque published on ~/effort_commands: '
         'feedforward, gravity_compensation, or task (the task-space law of task.link, with '
         'the pose on ~/desired_pose)',
         SETUP, _one_of(COMMAND_OUTPUTS), ' or '.join(COMMAND_OUTPUTS)),
    Spec('kp', [], T.DOUBLE_ARRAY, 'position gains in joints order [1/s^2]; empty: zero', SETUP,
         _finite(0, 0.0), NON_NEGATIVE_LIST),
    Spec('kd', [], T.DOUBLE_ARRAY, 'velocity gains in joints order [1/s]; empty: zero', SETUP,
         _finite(0, 0.0), NON_NEGATIVE_LIST),
    Spec('desired_timeout', 0.1, T.DOUBLE, 'desired input older than this counts as zero '
         'acceleration without PD terms [s]; 0: never expires', SETUP, _timeout,
         float_range=(0.0, MAX_TIMEOUT)),
    Spec('drive.compensate', False, T.BOOL, 'add the drive torques (armature, viscous and '
         'Coulomb friction) to ~/feedforward and ~/trajectory_with_effort (the observer: '
         'contact.drive)', SETUP),
    Spec('drive.viscous', [], T.DOUBLE_ARRAY, 'viscous friction per joint in joints order '
         '[N m s/rad or N s/m]; empty: the URDF <dynamics damping>', SETUP, _finite(0, 0.0),
         NON_NEGATIVE_LIST),
    Spec('drive.coulomb', [], T.DOUBLE_ARRAY, 'Coulomb friction per joint in joints order '
         '[N m or N]; empty: the URDF <dynamics friction>', SETUP, _finite(0, 0.0),
         NON_NEGATIVE_LIST),
    Spec('drive.coulomb_velocity', COULOMB_VELOCITY, T.DOUBLE, 'width of the smooth sign of '
         'Coulomb friction, tanh(qd / coulomb_velocity) [rad/s or m/s]: one for every joint, '
         'or one per joint in joints order', SETUP, _widths, '> 0, one or len(joints) numbers',
         dynamic=True),
    Spec('drive.armature', [], T.DOUBLE_ARRAY, 'rotor inertia reflected through the gear per '
         'joint in joints order [kg m^2 or kg]; empty: zero', SETUP, _finite(0, 0.0),
         NON_NEGATIVE_LIST),
    Spec('drive.effort_scale', [], T.DOUBLE_ARRAY, "joint torque per unit of the driver's "
         'effort, per joint in joints order [N m or N per unit; the torque constant times the '
         'gear ratio, with its sign]: measured efforts are multiplied by it, ~/effort_commands '
         'and ~/trajectory_with_effort divided; empty: all 1 (the driver speaks N m or N)',
         SETUP, _non_zero, 'len(joints) finite non-zero numbers, or empty'),
    Spec('drive.effort_offset', [], T.DOUBLE_ARRAY, 'constant bias of the measured efforts '
         'per joint in joints order [N m or N, after drive.effort_scale], as identify writes '
         'it: taken off the measured efforts before the observer, so that a sensor bias is not '
         'an external torque; no output changes; empty: none', SETUP, _finite(0),
         'len(joints) finite numbers, or empty'),
    Spec('drive.velocity', 'measured', T.STRING, 'velocity of the friction terms: measured, '
         'or desired (the desired velocity while a fresh one exists)', SETUP,
         _one_of(DRIVE_VELOCITIES), ' or '.join(DRIVE_VELOCITIES)),
    Spec('limits.clamp', False, T.BOOL, 'clamp ~/effort_commands to the effort limits '
         '(~/feedforward and ~/gravity_compensation are never clamped)', SETUP),
    Spec('limits.effort', [], T.DOUBLE_ARRAY, 'effort limit per joint in joints order '
         '[N m or N]; empty: the URDF <limit effort>; 0: unlimited', SETUP, _finite(0, 0.0),
         NON_NEGATIVE_LIST),
    Spec('limits.effort_rate', 0.0, T.DOUBLE, 'largest change of each command per second '
         '[N m/s]; 0: none', SETUP, _finite(minimum=0.0), '>= 0'),
    Spec('payload.link', '', T.STRING, 'link holding the configured payload; empty: none',
         PAYLOAD),
    Spec('payload.mass', 0.0, T.DOUBLE, 'payload mass [kg]', PAYLOAD, _finite(minimum=0.0),
         '>= 0'),
    Spec('payload.com', [0.0, 0.0, 0.0], T.DOUBLE_ARRAY, 'payload centre of mass in the '
         'link frame [m]', PAYLOAD, _finite(3), '3 finite numbers'),
    Spec('payload.inertia', [0.0] * 6, T.DOUBLE_ARRAY, 'payload inertia about its centre of '
         'mass in the link axes: ixx, ixy, ixz, iyy, iyz, izz [kg m^2]', PAYLOAD, _inertia,
         "6 finite numbers: a body's (moments >= 0, none above the sum of the others)"),
    Spec('contact.observer', False, T.BOOL, 'estimate the external joint torques with the '
         'momentum observer on every joint state that carries efforts (~/external_effort, '
         '~/contact, ~/external_wrench)', SETUP),
    Spec('contact.gain', 50.0, T.DOUBLE, 'observer bandwidth K [1/s]: the residual follows an '
         'external torque as 1 - exp(-K t)', SETUP, _finite(minimum=0.0, strict=True), '> 0'),
    Spec('contact.drive', 'auto', T.STRING, 'whether the measured efforts include the drive '
         '(drive.*): on (measured before the gear, e.g. motor current): the observer takes the '
         'drive friction off them and adds the armature to the mass matrix; off (a joint '
         'torque sensor after the gear): the efforts are the link-side torques; auto: on when '
         'drive.viscous, drive.coulomb or drive.armature is given (non-empty), else off. '
         'Independent of drive.compensate', SETUP, _one_of(CONTACT_DRIVES),
         ' or '.join(CONTACT_DRIVES)),
    Spec('contact.threshold', [], T.DOUBLE_ARRAY, 'per joint in joints order [N m or N]: a '
         'joint whose residual exceeds it is in contact (latched until ~/reset_contact); '
         'empty: no detection', SETUP, _finite(0, 0.0), NON_NEGATIVE_LIST),
    Spec('contact.reaction', 'none', T.STRING, 'on contact: none, or gravity_compensation '
         '(~/effort_commands carries the gravity compensation until ~/reset_contact)', SETUP,
         _one_of(REACTIONS), ' or '.join(REACTIONS)),
    Spec('contact.wrench_link', '', T.STRING, 'link to estimate the external wrench at '
         '(least squares of J^T w = residual, in that link frame, on ~/external_wrench); '
         'empty: none', SETUP),
    Spec('task.link', '', T.STRING, 'link the task-space law controls (fixed-joint children '
         'allowed); empty: none', SETUP),
    Spec('task.mode', MODES[0], T.STRING, 'task-space law: impedance, tau = J^T (K e + D '
         'de) + C qd + g + N^T tau_null; operational_space, tau = J^T Lambda (K e + D de - dJ qd) '
         '+ C qd + g + N^T tau_null', SETUP, _one_of(MODES), ' or '.join(MODES)),
    Spec('task.stiffness', list(DEFAULT_STIFFNESS), T.DOUBLE_ARRAY, 'K of the task-space law '
         'in the root link axes: 3 linear [N/m], then 3 angular [N m/rad]', SETUP,
         _finite(6, 0.0), '6 finite numbers >= 0'),
    Spec('task.damping', [], T.DOUBLE_ARRAY, 'D of the task-space law: 3 linear [N s/m], then '
         '3 angular [N m s/rad]; empty: 2 sqrt(K) (critical damping of a unit mass, of the '
         'unit system in operational space)', SETUP, _six_or_empty,
         '6 finite numbers >= 0, or empty'),
    Spec('task.nullspace_stiffness', 0.0, T.DOUBLE, 'stiffness toward the posture (the desired '
         "state's positions, else the positions when the law started) [N m/rad], with damping "
         '2 sqrt of it; projected into the null space of the link (N^T) in both laws', SETUP,
         _finite(minimum=0.0), '>= 0'),
    Spec('joint_states_thread', True, T.BOOL, 'take joint_states on a thread of its own (the '
         'executor of rclpy costs more per message than the dynamics); false: in the executor '
         'with every other callback', FIXED),
    Spec('wrench_sensors', [], T.STRING_ARRAY, 'names of the force/torque sensors; each has '
         'wrench.<name>.topic, .frame, .convention, .timeout, .compensate_payload', FIXED),
)


#: The default of every parameter of :data:`PARAMETERS`, by name.
DEFAULTS = {spec.name: spec.default for spec in PARAMETERS}


def sensor_parameters(name):
    """Return the parameters of force/torque sensor ``name`` (``wrench.<name>.*``)."""
    prefix = 'wrench.%s.' % name
    return (
        Spec(prefix + 'topic', name + '/wrench', T.STRING, 'geometry_msgs/WrenchStamped topic '
             'of sensor %s' % name, FIXED),
        Spec(prefix + 'frame', '', T.STRING, 'link the wrench acts on, in whose frame it is '
             'expressed; empty: the message header.frame_id', SENSOR),
        Spec(prefix + 'convention', CONVENTIONS[0], T.STRING, 'applied_on_robot: the wrench '
             'the environment applies on the link; exerted_by_robot: the opposite', SENSOR,
             _one_of(CONVENTIONS), ' or '.join(CONVENTIONS)),
        Spec(prefix + 'timeout', 0.1, T.DOUBLE, 'older readings are dropped [s]; 0: never',
             SENSOR, _timeout, float_range=(0.0, MAX_TIMEOUT)),
        Spec(prefix + 'compensate_payload', False, T.BOOL, 'add the modelled wrench of the '
             'links at and beyond the frame (the sensor measures their weight and inertia '
             'too)', SENSOR),
    )


def check(spec, value):
    """Why ``value`` is not acceptable for ``spec`` on its own, or ``''``."""
    reason = spec.check(value)
    return '%s %s' % (spec.name, reason) if reason else ''


#: The sensor name the documentation shows in ``wrench.<n>.*``.
SENSOR_PLACEHOLDER = '<n>'


def all_specs(sensor=SENSOR_PLACEHOLDER):
    """Return every parameter: the node's, then those of a sensor named ``sensor``."""
    return PARAMETERS + sensor_parameters(sensor)


def _markdown_value(value):
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, str):
        return value or "''"
    return str(value)


def markdown_table():
    """Return the Markdown table of every parameter: name, default and meaning."""
    rows = ['| name | default | meaning |', '| --- | --- | --- |']
    for spec in all_specs():
        meaning = spec.description
        choices = spec.constraints.split(' or ')
        if spec.constraints and not all(choice in meaning for choice in choices):
            meaning += ' (%s)' % spec.constraints
        if spec.read_only:
            meaning += '; read-only'
        meaning = meaning.replace('|', '\\|').replace('<', '&lt;').replace('>', '&gt;')
        rows.append('| `%s` | `%s` | %s |' % (spec.name, _markdown_value(spec.default), meaning))
    return '\n'.join(rows) + '\n'


class Config:
    """
    The configuration a :class:`Setup` is built from (the node's parameters, by name).

    Attributes
    ----------
    joints
        output order; empty: the model's independent joints.
    per_joint
        name of :data:`PER_JOINT` -> list in ``joints`` order (empty: the default).
    command_output
        one of :data:`~.config.COMMAND_OUTPUTS`.
    desired_timeout
        [s]; 0: never expires.
    drive_compensate
        add the drive torques to the feedforward (the feedforward only: see
        ``contact_drive`` for the observer).
    drive_velocity
        one of :data:`~.config.DRIVE_VELOCITIES`.
    coulomb_velocity
        width of the smooth sign [rad/s or m/s]: one for every joint, or a list in ``joints``
        order.
    clamp
        clamp the command to the effort limits.
    effort_rate
        largest change of a command per second [N m/s]; 0: none.
    contact_observer
        run the momentum observer on the joint states that carry efforts.
    contact_gain
        the observer's bandwidth ``K`` [1/s], > 0.
    contact_reaction
        one of :data:`~.observer.REACTIONS`.
    contact_drive
        one of :data:`CONTACT_DRIVES`: the measured efforts include the drive's friction and
        armature (``on``: efforts measured before the gear, motor current), or not (``off``:
        a joint torque sensor after the gear); ``auto``: ``on`` when one of
        :data:`DRIVE_LISTS` is given.
    contact_wrench_link
        link to estimate the external wrench at; '' for none.
    task_link, task_mode, task_stiffness, task_damping, task_nullspace_stiffness
        the task-space law (:class:`~.task.TaskSettings`); ``task_link`` '' for none.
    imu_frame, imu_timeout, angular_acceleration
        the floating base's IMU (``base.imu.frame``, ``base.imu.timeout``,
        ``base.angular_acceleration``).
    contacts_links, contacts_type, contacts_weights
        the floating base's contacts (``contacts.*``).

    """

    def __init__(self, joints=(), **settings):
        self.joints = tuple(joints)
        per_joint = {name: settings.pop(name) for name in list(settings) if name in PER_JOINT}
        self.per_joint = {name: list(per_joint.get(name, ())) for name in PER_JOINT}
        unknown = set(settings) - set(SETTINGS)
        if unknown:
            raise TypeError('unknown settings: %s' % ', '.join(sorted(unknown)))
        for attribute, name in SETTINGS.items():
            setattr(self, attribute, settings.get(attribute, DEFAULTS[name]))
        self.task_stiffness = tuple(self.task_stiffness)
        self.task_damping = tuple(self.task_damping)
        self.contacts_links = tuple(self.contacts_links)
        self.contacts_weights = tuple(self.contacts_weights)

    @classmethod
    def from_parameters(cls, params):
        """Build a configuration from parameters by their node names (``drive.viscous``...)."""
        return cls(joints=params.get('joints', ()),
                   **{name: params.get(name, ()) for name in PER_JOINT},
                   **{attribute: params.get(name, DEFAULTS[name])
                      for attribute, name in SETTINGS.items()})


#: The settings of a :class:`Config` other than the joints and the per-joint lists: attribute ->
#: the node parameter it holds (whose default in :data:`~.config.DEFAULTS` is its default).
SETTINGS = {
    'command_output': 'command_output',
    'desired_timeout': 'desired_timeout',
    'drive_compensate': 'drive.compensate',
    'drive_velocity': 'drive.velocity',
    'coulomb_velocity': 'drive.coulomb_velocity',
    'clamp': 'limits.clamp',
    'effort_rate': 'limits.effort_rate',
    'contact_observer': 'contact.observer',
    'contact_gain': 'contact.gain',
    'contact_reaction': 'contact.reaction',
    'contact_wrench_link': 'contact.wrench_link',
    'contact_drive': 'contact.drive',
    'task_link': 'task.link',
    'task_mode': 'task.mode',
    'task_stiffness': 'task.stiffness',
    'task_damping': 'task.damping',
    'task_nullspace_stiffness': 'task.nullspace_stiffness',
    'imu_frame': 'base.imu.frame',
    'imu_timeout': 'base.imu.timeout',
    'angular_acceleration': 'base.angular_acceleration',
    'contacts_links': 'contacts.links',
    'contacts_type': 'contacts.type',
    'contacts_weights': 'contacts.weights',
}


def check_lengths(config, count):
    """
    Say why the per-joint lists do not fit ``count`` joints.

    Why the per-joint lists do not fit ``count`` joints, or ``''`` (``count`` ``None``: the
    number of joints is not known yet).
    """
    if count is None:
        return ''
    for name, values in config.per_joint.items():
        if len(values) not in (0, count):
            return '%s has %d entries, joints has %d' % (name, len(values), count)
    width = config.coulomb_velocity
    if np.ndim(width) and len(width) != count:
        return 'drive.coulomb_velocity has %d entries, joints has %d (give one width, or one ' \
            'per joint)' % (len(width), count)
    return ''


if __name__ == '__main__':
    print(markdown_table(), end='')
