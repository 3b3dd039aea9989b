"""
The trajectory file: a planned trajectory as YAML, read and written here only.

:func:`read_trajectory` reads it, :func:`write_trajectory` writes it: a planned
``trajectory_msgs/JointTrajectory`` saved as YAML, the way
``ros2 topic echo --once /topic trajectory_msgs/msg/JointTrajectory`` prints it::

    header:
      stamp: {sec: 0, nanosec: 0}
      frame_id: ''
    joint_names: [joint1, joint2]
    points:
    - positions: [0.0, 0.5]
      velocities: [0.0, 0.0]
      accelerations: [0.0, 0.0]
      effort: []
      time_from_start: {sec: 0, nanosec: 0}
    ---

The first YAML document of the file is read (``echo`` ends each message with ``---``). The
file written has that form, ``effort: []`` and ``---`` included, each number with 12
significant digits.
"""

import numpy as np

from . import AnalysisError, write_file
from ..control.joint_trajectory import check_points, FIELDS


class PlannedTrajectory:
    """
    The points of a trajectory as arrays, in the message's joint order.

    Attributes
    ----------
    joint_names
        the message's joints.
    time
        ``(n,)`` ``time_from_start`` of each point [s].
    positions, velocities, accelerations
        ``(n, k)``.
    effort
        ``(n, k)`` or ``None`` when the points carry no effort.

    """

    def __init__(self, joint_names, time, positions, velocities, accelerations, effort):
        self.joint_names = tuple(joint_names)
        self.time = time
        self.positions, self.velocities, self.accelerations = positions, velocities, \
            accelerations
        self.effort = effort


def _duration(value, where):
    if not isinstance(value, dict) or not {'sec', 'nanosec'} <= set(value):
        raise AnalysisError('%s: time_from_start must have sec and nanosec' % where)
    try:
        return int(value['sec']) + 1e-9 * int(value['nanosec'])
    except (TypeError, ValueError):
        raise AnalysisError('%s: time_from_start is not a pair of integers' % where) from None


def parse_trajectory(document, source='the trajectory'):
    """
    Check a loaded YAML document and turn it into a :class:`PlannedTrajectory`.

    Every point needs positions, velocities and accelerations for every joint of
    ``joint_names``; ``effort`` is given at every point or at none. Times must increase.

    Raises
    ------
    AnalysisError
        the document is not a JointTrajectory (the message says what is wrong).

    """
    if not isinstance(document, dict) or 'joint_names' not in document \
            or 'points' not in document:
        raise AnalysisError('%s is not a trajectory_msgs/JointTrajectory: it needs joint_names '
                            'and points' % source)
    names = document['joint_names']
    points = document['points']
    if not isinstance(names, list):
        raise AnalysisError('%s: joint_names must be a non-empty list of names' % source)
    if not isinstance(points, list) or not points:
        raise AnalysisError('%s has no points' % source)
    time = []
    for index, point in enumerate(points):
        where = '%s, point %d' % (source, index)
        if not isinstance(point, dict):
            raise AnalysisError('%s is not a JointTrajectoryPoint' % where)
        time.append(_duration(point.get('time_from_start'), where))
    try:
        fields = check_points(names, {field: [point.get(field) or [] for point in points]
                                      for field in FIELDS},
                              required=FIELDS[:3], what=source, times=time)
    except ValueError as err:
        raise AnalysisError(str(err)) from None
    return PlannedTrajectory(names, np.array(time), *(fields[f] for f in FIELDS))


def read_trajectory(path):
    """
    Read a JointTrajectory YAML file (see the module docstring).

    Raises
    ------
    AnalysisError
        unreadable, not YAML, or not a JointTrajectory.

    """
    try:
        import yaml
    except ImportError:
        raise AnalysisError('reading trajectories needs PyYAML: pip install pyyaml') from None
    try:
        with open(path) as stream:
            document = next(iter(yaml.safe_load_all(stream)), None)
    except OSError as err:
        raise AnalysisError('cannot read %s: %s' % (path, err.strerror or err)) from None
    except (yaml.YAMLError, UnicodeDecodeError) as err:
        raise AnalysisError('%s is not YAML: %s' % (path, str(err).splitlines()[0])) from None
    return parse_trajectory(document, path)


def trajectory_text(joint_names, time, positions, velocities, accelerations):
    """
    Return a trajectory file's text (see the module docstring), without efforts.

    Parameters
    ----------
    joint_names
        the columns' joints.
    time
        ``(n,)`` ``time_from_start`` of each point [s], written to the nanosecond.
    positions, velocities, accelerations
        ``(n, k)``.

    """
    def row(values):
        return '[%s]' % ', '.join('%.12g' % v for v in values)

    lines = ['header:', '  stamp: {sec: 0, nanosec: 0}', "  frame_id: ''",
             'joint_names: [%s]' % ', '.join(joint_names), 'points:']
    for k, t in enumerate(time):
        ns = int(round(t * 1e9))
        lines += ['- positions: %s' % row(positions[k]),
                  '  velocities: %s' % row(velocities[k]),
                  '  accelerations: %s' % row(accelerations[k]),
                  '  effort: []',
                  '  time_from_start: {sec: %d, nanosec: %d}' % divmod(ns, 1000000000)]
    lines.append('---')
    return '\n'.join(lines) + '\n'


def write_trajectory(path, joint_names, time, positions, velocities, accelerations):
    """
    Write a trajectory file whole (:func:`~rbd_dynamics.analysis.write_file`).

    The arguments after ``path`` are those of :func:`trajectory_text`.

    Raises
    ------
    OSError
        the file cannot be written (the old one, if any, is left as it was).

    """
    write_file(path, trajectory_text(joint_names, time, positions, velocities, accelerations))
