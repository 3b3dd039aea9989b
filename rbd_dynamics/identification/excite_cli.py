"""
``python -m rbd_dynamics excite ROBOT [name:=value ...] [--duration S] [--start Q ...]``.

(``[--out DIR]`` and the options of ``--help``.)
Designs an excitation (:mod:`.excite`) and writes ``DIR/excitation.yaml``. Exit codes: 0
written, 1 unusable input (description, start pose, limits; the message names the problem),
2 a command line that does not parse.
"""

import argparse
import os
import sys

import numpy as np

from . import excite
from ..analysis import AnalysisError, exit_code, require

FILE_NAME = 'excitation.yaml'

_HELP = """Design an excitation for identification: a finite Fourier series per joint (%d
harmonics by default) whose coefficients minimise the condition number of the regressor and the
drive columns stacked along it, within the position limits less a margin, the velocity limits,
an acceleration bound and the effort limits (rnea + the description's drive), starting and
ending at rest at the start pose. Writes DIR/%s, a trajectory_msgs/JointTrajectory (points every
10 ms with positions, velocities and accelerations) that `python -m rbd_dynamics trajectory`
reads and `rbd_dynamics_send` sends to a JointTrajectoryController.""" % (
    excite.DEFAULT_HARMONICS, FILE_NAME)


def _parser():
    parser = argparse.ArgumentParser(prog='python -m rbd_dynamics excite', description=_HELP)
    parser.add_argument('robot', metavar='ROBOT', help='robot description (.urdf or .xacro)')
    parser.add_argument('xacro_args', nargs='*', metavar='name:=value', help='xacro arguments')
    parser.add_argument('--duration', type=float, default=excite.DEFAULT_DURATION,
                        help='length [s], a whole number of periods (default: %(default)s)')
    parser.add_argument('--period', type=float, default=None,
                        help='period of the series [s] (default: the duration in periods of '
                             'about %g s)' % excite.DEFAULT_PERIOD)
    parser.add_argument('--harmonics', type=int, default=excite.DEFAULT_HARMONICS,
                        help='harmonics per joint (default: %(default)s)')
    parser.add_argument('--start', type=float, nargs='+', metavar='Q',
                        help='start and end pose, one value per independent joint in the '
                             "model's order (default: the middle of each range)")
    parser.add_argument('--margin', type=float, default=excite.DEFAULT_MARGIN,
                        help='share of each position range kept free at both ends '
                             '(default: %(default)s)')
    parser.add_argument('--acceleration', type=float, nargs='+', metavar='A',
                        help='|qdd| bound, one value or one per joint [rad/s^2 or m/s^2] '
                             '(default: the velocity limit times 2 pi the highest frequency)')
    parser.add_argument('--iterations', type=int, default=100,
                        help='most optimiser iterations (default: %(default)s)')
    parser.add_argument('--seed', type=int, default=1, help='of the first guess')
    parser.add_argument('--out', default='.', metavar='DIR',
                        help='directory for %s (default: the current one)' % FILE_NAME)
    parser.add_argument('--root-link', default=None, help='root of the model')
    return parser


def _check(args, model):
    if args.start is not None and len(args.start) != model.nv:
        raise AnalysisError('--start needs %d values (%s), got %d'
                            % (model.nv, ', '.join(model.joint_names), len(args.start)))
    if args.acceleration is not None:
        if len(args.acceleration) not in (1, model.nv) or \
                not all(np.isfinite(a) and a > 0 for a in args.acceleration):
            raise AnalysisError('--acceleration needs one positive number or %d'
                                % model.nv)
    if not 0.0 <= args.margin < 0.5:
        raise AnalysisError('--margin must be at least 0 and less than 0.5')
    if args.harmonics < 2 or args.iterations < 0:
        raise AnalysisError('--harmonics must be at least 2 and --iterations not negative')


def _run(args):
    require('excite', 'scipy')
    from ..analysis.cli import _assignments, load_description
    from ..analysis.pipeline import check_model
    xacro_args = _assignments(args.xacro_args, ':=', 'xacro argument')
    text, model = load_description(args.robot, xacro_args, args.root_link)
    check_model(model)
    _check(args, model)
    print('excite: %s, %d joints: %s' % (model.name, model.nv, ', '.join(model.joint_names)),
          flush=True)
    progress = excite.ProgressLine(sys.stderr)
    try:
        result = excite.design(model, text, args.duration, args.start, args.harmonics,
                               args.period, args.margin, args.acceleration, args.iterations,
                               args.seed, progress=progress)
    finally:
        progress.finish()
    path = os.path.join(args.out, FILE_NAME)
    partial = path + '.partial'
    try:
        os.makedirs(args.out, exist_ok=True)
        excite.write_yaml(partial, result)
        os.replace(partial, path)
    except OSError as err:
        if os.path.exists(partial):
            os.remove(partial)
        raise AnalysisError('cannot write to %s: %s' % (args.out, err.strerror or err)) from None
    print(summary(result, model))
    print('wrote %s' % path)
    return 0


def summary(result, model):
    """Return the printed report: condition number, duration, and the peaks against the limits."""
    lim = result.limits
    lines = ['condition number %.4g (the base regressor along the whole motion: %d of %d '
             'columns, each scaled to unit norm; %d optimiser iterations, %.1f s)'
             % (result.condition, result.columns[0], result.columns[1], result.iterations,
                result.seconds),
             'duration %.6g s: %d period(s) of %.6g s, %d harmonics (%.3g .. %.3g Hz), %d '
             'points every %g ms, at rest at the start pose at both ends'
             % (result.time[-1], int(round(result.time[-1] / result.period)), result.period,
                result.harmonics, 1.0 / result.period, result.harmonics / result.period,
                len(result.time), 1e3 * excite.STEP)]
    width = max(len(n) for n in model.joint_names)
    # positions in rad (revolute joints) or m (prismatic), accelerations per s^2
    lines.append('%-*s %12s %12s %12s %12s %20s %12s'
                 % (width, 'joint', 'start [rad|m]', 'min [rad|m]', 'max [rad|m]', '|qd|/limit',
                    '|qdd| peak [rad|m/s2]', '|tau|/limit'))

    def share(values, bound):
        peak = np.abs(values).max()
        return '%12.2f' % (peak / bound) if np.isfinite(bound) else '%12s' % '-'

    for j, name in enumerate(model.joint_names):
        lines.append('%-*s %12.4f %12.4f %12.4f %s %20.4g %s'
                     % (width, name, result.q[0, j], result.q[:, j].min(), result.q[:, j].max(),
                        share(result.qd[:, j], lim.velocity[j]), np.abs(result.qdd[:, j]).max(),
                        share(result.tau[:, j], lim.effort[j])))
    return '\n'.join(lines)


def main(argv):
    """Entry point; ``argv`` without the command name."""
    args = _parser().parse_intermixed_args(argv)
    return exit_code(_run, args)
