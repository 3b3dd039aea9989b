"""
Joints held where a recording leaves them: not recorded, or standing still.

Real recordings are partial: a gripper publishes its joint states on a topic of its own, or not
at all, and stands still during an excitation. Such a joint tells nothing about its bodies'
dynamics, and no motion of it determines anything. It is *held*: made a fixed joint at its
recorded position (the median), or at the position given (``--hold JOINT=VALUE``; default for a
joint never recorded: 0, clamped into its limits). The bodies beyond it then belong to its
parent's body (as fixed children do), whose identified change goes on that body's own link;
their own links keep the description's values (:mod:`.writeback` writes the identified
``<inertial>`` into the original description, with every joint as it was).

:func:`held_description` writes the description with the held joints fixed; a mimic joint of a
held joint is held with it.
"""

import xml.etree.ElementTree as ET

import numpy as np

from ..analysis import AnalysisError
from ..spatial import axis_angle_to_matrix, matrix_to_rpy, rpy_to_matrix

#: A joint whose recorded positions stay within this range is standing still [rad; a tenth of
#: it in m for prismatic joints].
STILL = 1e-3
#: A joint given to hold (``--hold``) whose recorded positions span more than this is refused:
#: it moves, and its motion would be modelled as none [rad; a tenth of it in m for prismatic
#: joints]. Between :data:`STILL` and this, the summary says how far it moves.
MOVES = 0.05
_MOVING_TYPES = ('revolute', 'continuous', 'prismatic')


class Held:
    """
    The joints held, with their positions and why.

    Attributes
    ----------
    values
        ``{joint: position}`` the independent joints held [rad or m].
    reasons
        ``{joint: text}`` why and where each is held.

    """

    def __init__(self):
        self.values = {}
        self.reasons = {}

    def __bool__(self):
        return bool(self.values)

    def summary(self):
        """One line per held joint: ``name at value (reason)``."""
        return ['%s at %.6g (%s)' % (name, value, self.reasons[name])
                for name, value in self.values.items()]


def recorded_positions(states, name):
    """All finite positions of joint ``name`` in the groups of ``states`` (several bags)."""
    parts = []
    for s in states:
        for group in s.groups:
            if name in group.names:
                column = group.position[:, group.names.index(name)]
                parts.append(column[np.isfinite(column)])
    return np.concatenate(parts) if parts else np.zeros(0)


def choose(model, limits, states, given=None, still=STILL):
    """
    Decide which joints are held, and where.

    Parameters
    ----------
    model
        the :class:`~rbd_dynamics.Model` of the whole description.
    limits
        ``{joint: (lower, upper, velocity)}`` of the description (``None`` where absent).
    states
        the :class:`~rbd_dynamics.analysis.bag.BagJointStates` of the fitted recordings.
    given
        ``{joint: position}`` held by the user (``--hold``).
    still
        a joint whose recorded positions stay within this range is standing still [rad; a
        tenth of it in m for prismatic joints].

    Returns
    -------
    :class:`Held`

    Raises
    ------
    AnalysisError
        ``given`` names a joint that is not an independent joint of the model, or one that
        moves in the recordings by more than :data:`MOVES`.

    """
    given = check_given(model, given)
    held = Held()
    for name, kind in zip(model.joint_names, model.joint_types):
        unit = 0.1 if kind == 'prismatic' else 1.0
        positions = recorded_positions(states, name)
        if name in given:
            held.values[name] = float(given[name])
            held.reasons[name] = 'given'
            span = np.ptp(positions) if len(positions) else 0.0
            if span > MOVES * unit:
                raise AnalysisError(
                    'holding %s at %g: %s moves in the recordings (from %.3g to %.3g %s); held, '
                    'its motion would be modelled as none. Hold only joints that stand still '
                    '(or record it standing still)'
                    % (name, given[name], name, positions.min(), positions.max(),
                       'm' if kind == 'prismatic' else 'rad'))
            if span > still * unit:
                held.reasons[name] = 'given; it moves by %.3g %s in the recordings' % (
                    1e3 * span, 'mm' if kind == 'prismatic' else 'mrad')
            continue
        if not len(positions):
            lower, upper, _ = limits.get(name, (None, None, None))
            value = 0.0 if lower is None else max(0.0, lower)
            held.values[name] = value if upper is None else min(value, upper)
            held.reasons[name] = 'never recorded'
        elif np.ptp(positions) <= still * unit:
            held.values[name] = float(np.median(positions))
            held.reasons[name] = 'standing still within %g %s' % (
                1e3 * still * unit, 'mm' if kind == 'prismatic' else 'mrad')
    return held


def check_given(model, given):
    """
    Return ``given`` (``{joint: position}`` of ``--hold``) as a dict, its joints checked.

    Raises
    ------
    AnalysisError
        a joint that is not an independent joint of the model.

    """
    given = dict(given or {})
    unknown = sorted(set(given) - set(model.joint_names))
    if unknown:
        raise AnalysisError('the joints to hold include some that are not independent joints '
                            'of the model: '
                            '%s; its joints: %s' % (', '.join(unknown),
                                                    ', '.join(model.joint_names)))
    return given


def held_description(text, values):
    """
    Return the description ``text`` with the joints of ``values`` fixed at those positions.

    The joint's origin takes its motion at the position (a rotation about its axis, or a
    translation along it); its axis, limits, dynamics and mimic go. A mimic joint following a
    held joint is held at ``multiplier * value + offset``.

    Raises
    ------
    AnalysisError
        the text is not XML, or a joint of ``values`` is not a moving joint of it.

    """
    try:
        root = ET.fromstring(text)
    except ET.ParseError as err:
        raise AnalysisError('the description is not XML: %s' % err) from None
    joints = {j.get('name'): j for j in root.iter('joint') if j.get('type') in _MOVING_TYPES}
    values = {name: float(v) for name, v in values.items()}
    missing = sorted(set(values) - set(joints))
    if missing:
        raise AnalysisError('cannot hold %s: not a moving joint of the description'
                            % ', '.join(missing))
    for name, joint in joints.items():  # mimic joints of held joints follow them
        mimic = joint.find('mimic')
        if name not in values and mimic is not None and mimic.get('joint') in values:
            values[name] = (float(mimic.get('multiplier', 1.0)) * values[mimic.get('joint')]
                            + float(mimic.get('offset', 0.0)))
    for name, value in values.items():
        _fix(joints[name], value)
    return ET.tostring(root, encoding='unicode')


def _numbers(element, attr, default):
    if element is None or element.get(attr) is None:
        return np.array(default, dtype=float)
    return np.array([float(v) for v in element.get(attr).split()], dtype=float)


def _fix(joint, value):
    origin = joint.find('origin')
    xyz = _numbers(origin, 'xyz', [0.0, 0.0, 0.0])
    R = rpy_to_matrix(_numbers(origin, 'rpy', [0.0, 0.0, 0.0]))
    axis = _numbers(joint.find('axis'), 'xyz', [1.0, 0.0, 0.0])
    axis = axis / np.linalg.norm(axis)
    if joint.get('type') == 'prismatic':
        xyz = xyz + R @ axis * value
    else:
        R = R @ axis_angle_to_matrix(axis, value)
    if origin is None:
        origin = ET.SubElement(joint, 'origin')
    origin.set('xyz', ' '.join('%.17g' % v for v in xyz))
    origin.set('rpy', ' '.join('%.17g' % v for v in matrix_to_rpy(R)))
    joint.set('type', 'fixed')
    for tag in ('axis', 'limit', 'dynamics', 'mimic', 'safety_controller', 'calibration'):
        for child in joint.findall(tag):
            joint.remove(child)
