"""
``python -m rbd_dynamics bag ...`` and ``python -m rbd_dynamics trajectory ...``.

Exit codes: 0 done (for ``trajectory``: within the effort limits), 1 unusable input (robot
description, bag, topic, joint names, trajectory file; the message on stderr names the
problem), 2 a command line that does not parse, 3 the trajectory exceeds an effort limit.
"""

import argparse
import os
import sys

import numpy as np

from .common import add_plot_options, add_recording_options, assignments, holds, stamp_text
from ..analysis import AnalysisError, exit_code
from ..analysis.report import CSV_NAME, PNG_NAME
from ..analysis.robot import load_model

COMMANDS = ('bag', 'trajectory')
EXIT_OVER_LIMIT = 3


def _parser(command):
    parser = argparse.ArgumentParser(prog='python -m rbd_dynamics %s' % command,
                                     description=(_BAG_HELP if command == 'bag'
                                                  else _TRAJECTORY_HELP),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('robot', metavar='ROBOT', help='robot description (.urdf or .xacro)')
    if command == 'bag':
        parser.add_argument('input', metavar='BAG',
                            help='rosbag2 directory, or a single .mcap or .db3 file')
        add_recording_options(parser)
        parser.add_argument('--effort-scale', metavar='FILE',
                            help='a node parameters file with drive.effort_scale (joint torque '
                                 "per unit of the driver's effort, in its joints' order): the "
                                 'recorded efforts are converted to joint torques before they '
                                 'are compared and written')
        parser.add_argument('--params-file', metavar='FILE',
                            help="a node parameters file with drive.* (identify's drive.yaml): "
                                 'its friction and armature are added to the torques, its '
                                 'drive.effort_scale converts the recorded efforts and its '
                                 'drive.effort_offset is taken off them')
    else:
        parser.add_argument('input', metavar='FILE',
                            help='JointTrajectory as YAML (ros2 topic echo --once output)')
    parser.add_argument('xacro_args', nargs='*', metavar='name:=value',
                        help='xacro arguments')
    parser.add_argument('--out', default='.', metavar='DIR',
                        help='directory for %s and %s (default: the current one)'
                        % (CSV_NAME, PNG_NAME))
    parser.add_argument('--hold', action='append', metavar='NAME=VALUE',
                        help='position of a joint the input does not carry, held at rest '
                             '(repeat for several joints)')
    add_plot_options(parser)
    return parser


_BAG_HELP = """Joint torques along a recording: reads sensor_msgs/JointState from a rosbag2
(MCAP or SQLite 3, no ROS needed), merges the messages by joint name, takes velocities from the
messages (differentiating positions where there are none), differentiates velocities into
accelerations (centred Savitzky-Golay, cubic) and computes tau = rnea(q, qd, qdd) for every
state. Writes DIR/torques.csv and DIR/torques.png and prints a per-joint summary."""

_TRAJECTORY_HELP = """Joint torques along a planned trajectory_msgs/JointTrajectory saved as
YAML (as `ros2 topic echo --once` prints it): tau = rnea(q, qd, qdd) at every point. Writes
DIR/torques.csv and DIR/torques.png, prints a per-joint summary and whether the efforts stay
within the limits (exit code 3 when they do not). Joints of the model the trajectory does not
name are held at rest at 0 (or at --hold NAME=VALUE)."""


def _analyse(command, args):
    """Run one command; returns the exit code. Raises AnalysisError for unusable input."""
    from ..analysis import pipeline, report
    from ..identification.hold import check_given
    hold = holds(args.hold)
    model = load_model(args.robot, assignments(args.xacro_args, ':=', 'xacro argument'),
                       args.root_link)
    pipeline.check_model(model)
    check_given(model, hold)
    scale, drive = {}, None
    if command == 'bag' and args.effort_scale and args.params_file:
        raise AnalysisError('give the effort scale with --effort-scale or in --params-file, '
                            'not both')
    if command == 'bag' and args.effort_scale:  # before the bag: a bad file fails at once
        from ..identification.units import read_effort_scale
        scale = read_effort_scale(args.effort_scale, model.joint_names, '--effort-scale')
    if command == 'bag' and args.params_file:
        from ..identification.units import read_drive, scaled_joints
        drive = read_drive(args.params_file, model, '--params-file')
        covered = scaled_joints(args.params_file, model.joint_names, '--params-file')
        scale = {name: k for name, k in zip(model.joint_names, drive['effort_scale'].tolist())
                 if covered is None or name in covered}
    if command == 'bag':
        from ..analysis.bag import ProgressPrinter, read_joint_states
        from ..analysis.merge import merge_joint_states
        if not args.window > 0 or not args.max_gap > 0:
            raise AnalysisError('--window and --max-gap must be positive')
        states = read_joint_states(args.input, args.topic, ProgressPrinter(sys.stderr))
        if not states.messages:
            raise AnalysisError('%s has no messages on %s' % (args.input, args.topic))
        notes = ['left out %d messages: %s' % (count, reason)
                 for reason, count in sorted(states.skipped.items())]
        if not states.groups:
            raise AnalysisError('no usable joint states on %s (%s)'
                                % (args.topic, '; '.join(notes)))
        merged = merge_joint_states(states.groups, model, args.max_gap, hold)
        notes += merged.notes
        missing = [name for name in merged.effort if scale and name not in scale]
        if missing:  # (joints recorded without efforts need none)
            raise AnalysisError('%s gives no scale for %s, whose efforts are recorded'
                                % ('--effort-scale %s' % args.effort_scale if args.effort_scale
                                   else '--params-file %s' % args.params_file,
                                   ', '.join(missing)))
        offset = {} if drive is None else dict(zip(model.joint_names,
                                                   drive['effort_offset'].tolist()))
        for name, values in merged.effort.items():  # the driver's units -> joint torques
            merged.effort[name] = values * scale.get(name, 1.0) - offset.get(name, 0.0)
        table = pipeline.bag_table(model, merged, args.window, drive=drive)
        origin = 'time from the first state, stamped %s' % stamp_text(merged.origin_ns)
        title = '%s: %d states from %s, %s' % (os.path.basename(args.input.rstrip('/')),
                                               len(table.time), args.topic, origin)
    else:
        from ..analysis.planned import read_trajectory
        trajectory = read_trajectory(args.input)
        table, notes = pipeline.trajectory_table(model, trajectory, hold)
        title = '%s: %d points' % (os.path.basename(args.input), len(table.time))
    for note in notes:
        print('warning: %s' % note, file=sys.stderr)
    try:
        os.makedirs(args.out, exist_ok=True)
        written = [os.path.join(args.out, CSV_NAME)]
        report.write_csv(written[0], table)
        if _has_matplotlib():
            written.append(os.path.join(args.out, PNG_NAME))
            report.plot_png(written[1], table, title, args.plot_points)
        else:
            print('warning: no plot without matplotlib (pip install matplotlib)', file=sys.stderr)
    except OSError as err:
        raise AnalysisError('cannot write to %s: %s' % (args.out, err.strerror or err)) from None
    print(title)
    if command == 'bag' and args.effort_scale:
        print('efforts converted to joint torques by drive.effort_scale of %s'
              % args.effort_scale)
    if drive is not None:
        print('torques with the drive of %s (viscous and Coulomb friction, armature); efforts '
              'converted by its drive.effort_scale (1 where it gives none), less its '
              'drive.effort_offset (0 where it gives none)' % args.params_file)
    print(report.summary(table))
    print('wrote %s' % ' and '.join(written))
    if command == 'trajectory':
        return _verdict(table)
    return 0


def _has_matplotlib():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _verdict(table):
    """Print whether the trajectory stays within the effort limits; the exit code."""
    if table.effort_limits is None or not np.isfinite(table.effort_limits).any():
        print('feasibility: unknown (the model has no effort limits)')
        return 0
    excess = table.first_excess()
    if excess is None:
        print('feasible: every |tau| is within its effort limit')
        return 0
    row, joint = excess
    print('exceeds the effort limits: first %s at time_from_start %.9g s (|tau| = %.4g, '
          'limit %.4g)' % (table.joint_names[joint], table.time[row],
                           abs(table.tau[row, joint]), table.effort_limits[joint]))
    return EXIT_OVER_LIMIT


def main(argv):
    """Entry point of the two commands; ``argv[0]`` is ``bag`` or ``trajectory``."""
    command, rest = argv[0], argv[1:]
    args = _parser(command).parse_intermixed_args(rest)
    return exit_code(_analyse, command, args)
