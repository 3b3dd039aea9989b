"""
``python -m rbd_dynamics excite ROBOT [name:=value ...] [--duration S] [--start Q ...]``.

(``[--out DIR]`` and the options of ``--help``.)
Designs an excitation (:mod:`rbd_dynamics.excitation`) and writes ``DIR/excitation.yaml``.
Exit codes: 0 written, 1 unusable input (description, start pose, limits; the message names
the problem),
2 a command line that does not parse, 3 the motion designed does not determine the base
parameters as ``identify`` requires (its condition number over
:data:`~.fit.DEFAULT_MAX_CONDITION`; the message says why, nothing is written).
"""

import argparse
import os
import sys

import numpy as np

from .. import excitation as excite, world as collision
from ..analysis import AnalysisError, exit_code, require
from ..identification.fit import DEFAULT_MAX_CONDITION, NotExcitedError
from ..parsers.urdf import joint_limits

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
    parser.add_argument('--max-condition', type=float, default=DEFAULT_MAX_CONDITION,
                        help="largest condition number of a motion written, as identify's "
                             'option of that name (default: %(default)g)')
    parser.add_argument('--seed', type=int, default=1, help='of the first guess')
    parser.add_argument('--hold', action='append', metavar='JOINT=VALUE',
                        help='leave a joint at this position [rad or m] (repeatable): a gripper '
                             'on a driver of its own; the excitation keeps it there, and '
                             'identify holds it as standing still')
    parser.add_argument('--out', default='.', metavar='DIR',
                        help='directory for %s (default: the current one)' % FILE_NAME)
    parser.add_argument('--root-link', default=None, help='root of the model')
    world = parser.add_argument_group(
        'the world', 'Every link keeps --clearance from the others (but those of one rigid body '
        'and those joined by one joint), from the floor (z = 0 of the root link, for every '
        'link whose height can change) and from --keep-out regions; links are capsules fitted '
        "to the description's collision geometry.")
    world.add_argument('--clearance', type=float, default=collision.DEFAULT_CLEARANCE,
                       metavar='M', help='least distance kept [m] (default: %(default)s)')
    world.add_argument('--srdf', metavar='FILE',
                       help="the robot's SRDF: its disable_collisions pairs are not checked")
    world.add_argument('--keep-out', metavar='FILE',
                       help='YAML file of planes and boxes no link may cross, in the root '
                            "link's frame:\n" + collision.KEEP_OUT_FORMAT)
    world.add_argument('--no-floor', action='store_true',
                       help='no floor: the robot is not mounted on a surface at z = 0 of its '
                            'root link (a wall, a ceiling, a pedestal that --keep-out describes)')
    world.add_argument('--no-collisions', action='store_true',
                       help='check no clearance at all (only joint limits)')
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
    if not args.max_condition >= 1.0:
        raise AnalysisError('--max-condition must be a number >= 1')
    if not (np.isfinite(args.clearance) and args.clearance > collision.START_SLACK):
        raise AnalysisError('--clearance must be more than %g m' % collision.START_SLACK)


def _world(args, model, text):
    """Return the :class:`~rbd_dynamics.world.Collisions` the command line asks for, or None."""
    if args.no_collisions:
        return None
    srdf = None
    if args.srdf:
        if args.srdf.endswith('.xacro'):
            raise AnalysisError('--srdf %s is a xacro file: expand it first (xacro %s > '
                                'robot.srdf)' % (args.srdf, args.srdf))
        try:
            with open(args.srdf, 'rb') as stream:
                srdf = stream.read()
        except OSError as err:
            raise AnalysisError('--srdf %s: %s' % (args.srdf, err.strerror or err)) from None
    keep_out = collision.read_keep_out(args.keep_out) if args.keep_out else None
    base_dir = os.path.dirname(os.path.abspath(args.robot))
    return collision.Collisions(model, text, base_dir, srdf, keep_out, not args.no_floor,
                                args.clearance)


def _held(args, model, text):
    """Return ``(text, model, start, held)`` with the ``--hold`` joints made fixed."""
    from .common import holds
    from ..analysis.robot import model_of
    from ..identification.hold import check_given, held_description
    held = check_given(model, holds(args.hold))
    if not held:
        return text, model, args.start, {}
    if len(held) == model.nv:
        raise AnalysisError('--hold holds every joint: nothing is left to move')
    limits = joint_limits(text)
    for name, value in held.items():
        lower, upper, _ = limits.get(name, (None, None, None))
        if (lower is not None and value < lower) or (upper is not None and value > upper):
            raise AnalysisError('--hold %s=%g is outside its limits [%s, %s]'
                                % (name, value, lower, upper))
    start = args.start
    if start is not None:
        start = [v for n, v in zip(model.joint_names, start) if n not in held]
    text = held_description(text, held)
    return text, model_of(text, args.robot, model.root_link), start, held


def _run(args):
    require('excite', 'scipy')
    from .common import assignments
    from ..analysis.robot import load_description
    from ..analysis.pipeline import check_model
    xacro_args = assignments(args.xacro_args, ':=', 'xacro argument')
    text, model = load_description(args.robot, xacro_args, args.root_link)
    check_model(model)
    _check(args, model)
    all_joints = model.joint_names
    text, model, start, held = _held(args, model, text)
    world = _world(args, model, text)
    print('excite: %s, %d joints: %s' % (model.name, model.nv, ', '.join(model.joint_names)),
          flush=True)
    progress = excite.ProgressLine(sys.stderr)
    try:
        result = excite.design(model, text, args.duration, start, args.harmonics,
                               args.period, args.margin, args.acceleration, args.iterations,
                               args.seed, progress=progress, collisions=world)
    except excite.StartNotClearError as err:
        raise AnalysisError('%s; a clear pose near it: --start %s' % (
            err.reason, ' '.join('%.3f' % v for v in err.near))) from None
    finally:
        progress.finish()
    if not result.condition <= args.max_condition:
        raise NotExcitedError(
            'the motion designed does not determine the base parameters: condition number '
            '%.3g, more than identify accepts (%.3g, --max-condition). %s. Nothing written; try '
            'another --start (further from the limits and obstacles), a smaller --clearance or '
            '--margin, or more --iterations'
            % (result.condition, args.max_condition, why_worse(result)),
            [n for n, c in zip(model.joint_names, covered(result)) if c < 0.5],
            result.condition)
    path = os.path.join(args.out, FILE_NAME)
    try:
        os.makedirs(args.out, exist_ok=True)
        excite.write_yaml(path, result, all_joints, held)
    except OSError as err:
        raise AnalysisError('cannot write to %s: %s' % (args.out, err.strerror or err)) from None
    print(summary(result, model))
    if held:
        print('held (constant in %s): %s' % (FILE_NAME, ', '.join(
            '%s at %g' % item for item in held.items())))
    print('wrote %s' % path)
    return 0


def covered(result):
    """Return each joint's range in the motion, a share of what it should cover."""
    return np.ptp(result.q, axis=0) / result.need


def why_worse(result):
    """Say why the written motion's condition number differs from the optimiser's last one."""
    text = 'The optimiser reached %.4g on its samples' % result.optimised
    if result.scale < 1.0:
        text += ('; the motion was then shrunk to %.0f %% of its size, towards the start '
                 'pose, to keep every limit and clearance on the written %g ms grid'
                 % (100 * result.scale, 1e3 * excite.STEP))
    if 'kept' in result.message:
        text += '; its last iterate left a clearance, so the last one within them was kept'
    shares = covered(result)
    return text + ' (joints cover %.0f to %.0f %% of their share of range)' % (
        100 * shares.min(), 100 * shares.max())


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
    if abs(result.condition - result.optimised) > 0.01 * result.optimised:
        lines.insert(1, '  %s' % why_worse(result))
    width = max(len(n) for n in model.joint_names)
    # positions in rad (revolute joints) or m (prismatic), accelerations per s^2
    lines.append('%-*s %12s %12s %12s %11s %12s %20s %12s'
                 % (width, 'joint', 'start [rad|m]', 'min [rad|m]', 'max [rad|m]', 'range/share',
                    '|qd|/limit', '|qdd| peak [rad|m/s2]', '|tau|/limit'))

    def share(values, bound):
        peak = np.abs(values).max()
        return '%12.2f' % (peak / bound) if np.isfinite(bound) else '%12s' % '-'

    shares = covered(result)
    for j, name in enumerate(model.joint_names):
        lines.append('%-*s %12.4f %12.4f %12.4f %11.2f %s %20.4g %s'
                     % (width, name, result.q[0, j], result.q[:, j].min(), result.q[:, j].max(),
                        shares[j], share(result.qd[:, j], lim.velocity[j]),
                        np.abs(result.qdd[:, j]).max(),
                        share(result.tau[:, j], lim.effort[j])))
    lines += _world_lines(result)
    return '\n'.join(lines)


def _world_lines(result):
    world = result.collisions
    if world is None:
        return ['clearance: not checked (--no-collisions)']
    lines = []
    if world.count:
        g = world.clearances(result.q)
        k = np.unravel_index(np.argmin(g), g.shape)
        lines.append('clearance: at least %.3f m (%s, at %.2f s) of %g m asked; %d capsule pairs, '
                     '%s%d keep-out regions; links as capsules around their collision geometry'
                     % (g[k], world.names()[k[1]], result.time[k[0]], world.clearance,
                        len(world.pairs), 'the floor, ' if world.floor else 'no floor, ',
                        len(world.keep_out.planes) + len(world.keep_out.boxes) - world.floor))
    else:
        lines.append('clearance: nothing to check (no collision geometry)')
    if result.left_out:
        lines.append('not checked, capsules overlapping at the start pose (next-but-one links): '
                     + ', '.join(result.left_out))
    for link, reasons in sorted(world.unchecked.items()):
        lines.append('not checked: %s %s (%s)' % (
            'a shape of' if link in world.links else 'the collision geometry of', link,
            '; '.join(reasons)))
    return lines


def main(argv):
    """Entry point; ``argv`` without the command name."""
    args = _parser().parse_intermixed_args(argv)
    return exit_code(_run, args)
