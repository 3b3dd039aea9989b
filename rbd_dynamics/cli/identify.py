"""
``python -m rbd_dynamics identify ROBOT BAG [BAG ...] [--validate BAG ...] ...``.

The command line of :func:`rbd_dynamics.identification.pipeline.identify`, which reads the
recordings, holds the joints that do not move, identifies the friction widths and the inertial
and drive parameters; this writes ``identified.urdf``, ``drive.yaml``, ``description.yaml``,
``identification.csv`` and ``identification.png`` into ``--out``: all of them or, on any
error, none (they are written to a temporary directory beside it and moved in at the end).

Exit codes: 0 done, 1 unusable input (robot, bag, topic, joints, no efforts; the message
names the problem), 2 a command line that does not parse, 3 the motion does not determine
the base parameters (the message names the joints that barely moved).
"""

import sys
import time

import numpy as np

from .common import add_plot_options, add_recording_options, holds, recordings_parser
from ..analysis import AnalysisError, exit_code, require, write_all
from ..analysis.robot import load_description
from ..identification.pipeline import identify, Settings, WINDOW_TIE, WINDOWS
from ..identification.report import summary
from ..identification.scales import WEAK
from ..identification.stack import DEFAULT_MIN_SPEED
from ..identification.units import read_effort_scale
from ..identification.writeback import DRIVE_NAME

_HELP = """Identify the inertial parameters of the links and the drive (viscous and Coulomb
friction, armature where the data tell it from the links, an effort offset per joint) from
rosbag2 recordings of sensor_msgs/JointState with efforts. The regressor of every state is
stacked with the drive columns; the base parameters (what the data determine) come from weighted
least squares; the written parameters are physically consistent (every link's pseudo-inertia
positive definite) and keep the description's values where the data say nothing. Writes
DIR/identified.urdf (the description with new <inertial> elements), DIR/drive.yaml (a node
parameters file), DIR/identification.csv and .png (measured efforts against the description
and the identified model on the validation data: the --validate bags, else the last fifth of
the recording, held out of the fit) and prints a summary. Exit 3 when the motion does not
determine the base parameters."""


def _parser():
    parser = recordings_parser(
        'identify', _HELP, 'ROBOT BAG [BAG ...] [--validate BAG ...] [--topic TOPIC] '
        '[--out DIR] [options] [name:=value ...]',
        'the rosbag2 recordings (directories or .mcap / .db3 files)')
    parser.add_argument('--validate', nargs='+', default=[], metavar='BAG',
                        help='recordings to validate on (default: the last fifth of the data, '
                             'held out of the fit)')
    # (the window is chosen from the data unless given)
    add_recording_options(parser, window=None, window_default='the one of %s whose states '
                          'the model fits best' % ', '.join('%g' % w for w in WINDOWS))
    parser.add_argument('--out', default='.', metavar='DIR',
                        help='output directory (default: the current one)')
    parser.add_argument('--hold', action='append', metavar='JOINT=VALUE',
                        help='hold a joint fixed at this position [rad or m] (repeatable); '
                             'joints not recorded, or standing still within 1 mrad (0.1 mm), '
                             'are held without it: at their median, or at 0 within their '
                             'limits')
    parser.add_argument('--coulomb-velocity', type=float, default=None,
                        help='width of the smooth sign of Coulomb friction [rad/s; a tenth in '
                             'm/s for prismatic joints], the same for every joint (default: '
                             'identified per joint)')
    parser.add_argument('--min-speed', type=float, default=DEFAULT_MIN_SPEED,
                        help="a joint's samples slower than this are left out of the fit and "
                             'of the moving-state error: a joint at rest sticks [rad/s; a '
                             'tenth in m/s for prismatic joints] (default: %(default)s)')
    parser.add_argument('--effort-scale', metavar='FILE|estimate',
                        help='estimate: estimate the effort scale of every joint with the rest '
                             '(the common factor from --load, else from the description); or a '
                             'node parameters file with drive.effort_scale (joint torque per '
                             "unit of the driver's effort, in its joints' order): the recorded "
                             'efforts are converted to joint torques before the fit, and the '
                             'scale is written to drive.yaml')
    parser.add_argument('--load', action='append', nargs='+', metavar='LINK:MASS BAG',
                        help='with --effort-scale estimate: recordings holding a load of known '
                             'mass [kg] rigidly on LINK (its centre of mass and inertia are '
                             'estimated); repeatable')
    parser.add_argument('--no-offset', action='store_true',
                        help='do not estimate a constant effort offset per joint')
    parser.add_argument('--no-armature', action='store_true',
                        help='do not identify armature (keep it at 0)')
    parser.add_argument('--max-iterations', type=int, default=None,
                        help='iterations of each solve of the physically consistent program '
                             'at most; one that does not converge within them is an error '
                             '(default: 200)')
    parser.add_argument('--max-condition', type=float, default=None,
                        help='largest condition number of the base regressor accepted '
                             '(default: 1e5)')
    add_plot_options(parser)
    return parser


class _StackProgress:
    """Progress line while the regressor is stacked (only for runs longer than a second)."""

    def __init__(self):
        self.start = time.monotonic()
        self.next = self.start + 1.0
        self.shown = False

    def show(self, done, total):
        now = time.monotonic()
        if now >= self.next or (self.shown and done >= total):
            self.next = now + 0.5
            share = done / max(total, 1)
            sys.stderr.write('\rstacking the regressor [%-30s] %5.1f %%'
                             % ('#' * int(30 * share), 100 * share))
            sys.stderr.flush()
            self.shown = True

    def finish(self):
        if self.shown:
            sys.stderr.write('\n')
            self.shown = False


def _step(text):
    """Say on standard error which step starts (each may take seconds; the first run longer)."""
    sys.stderr.write('identify: %s ...\n' % text)
    sys.stderr.flush()


def run(args, out=None):
    """Run the command for parsed arguments; returns ``(exit code, timing)``."""
    out = sys.stdout if out is None else out
    require('identify', 'scipy', 'matplotlib', 'cvxpy')
    from ..parsers.files import split_xacro_args
    try:
        tokens, xacro_args = split_xacro_args(args.inputs)
        validate, more = split_xacro_args(args.validate)
        xacro_args.update(more)
    except Exception as err:
        raise AnalysisError(str(err)) from None
    if len(tokens) < 2:
        raise AnalysisError('identify needs a robot description and at least one bag')
    if not (args.window is None or args.window > 0) or not args.max_gap > 0 or not (
            args.coulomb_velocity is None or args.coulomb_velocity > 0):
        raise AnalysisError('--window, --max-gap and --coulomb-velocity must be positive')
    if not (np.isfinite(args.min_speed) and args.min_speed >= 0):
        raise AnalysisError('--min-speed must be a finite number >= 0, got %r' % args.min_speed)
    robot, bags = tokens[0], tokens[1:]
    text, model = load_description(robot, xacro_args, args.root_link)
    from ..analysis.pipeline import check_model
    check_model(model)
    estimating = args.effort_scale == 'estimate'
    if args.load and not estimating:
        raise AnalysisError('--load fixes the common factor of estimated scales: give it with '
                            '--effort-scale estimate')
    scales = args.effort_scale if estimating else read_effort_scale(
        args.effort_scale, model.joint_names, '--effort-scale') if args.effort_scale else None
    settings = Settings(
        text, model, bags, validate, topic=args.topic, max_gap=args.max_gap, window=args.window,
        holds=holds(args.hold), root_link=args.root_link,
        coulomb_velocity=args.coulomb_velocity, min_speed=args.min_speed, effort_scale=scales,
        effort_scale_source='--effort-scale %s' % args.effort_scale if args.effort_scale
        else '', loads=[_load_spec(spec, model) for spec in args.load or []],
        offset=not args.no_offset, armature=not args.no_armature,
        max_iterations=args.max_iterations, max_condition=args.max_condition)
    progress = _StackProgress()

    def step(text):
        progress.finish()  # (the progress line ends before the next step is said)
        _step(text)

    try:
        found = identify(settings, step=step, stack_progress=progress.show)
    finally:
        progress.finish()
    t0 = time.perf_counter()
    _step('writing into %s' % args.out)
    written = write_all(args.out, found.files(args.plot_points))
    found.timing['writing'] = time.perf_counter() - t0
    held_out = 'the --validate recordings' if validate else found.held_out
    out.write(summary(found.model, found.solution, found.stack, found.rows, held_out,
                      len(bags), found.timing, args.min_speed, found.window, found.every_speed,
                      found.unconstrained, found.held))
    if found.windows:
        out.write('differentiation window %g s, the shortest whose states leave the least '
                  'residual of plain least squares in the fitted data, within %g %% of it (%s)\n'
                  % (found.window, 100 * WINDOW_TIE, ', '.join(
                      '%g s: %.3g %%' % (w, 100 * share) for w, share in found.windows.items())))
    if found.scale_fit is not None:
        out.write(scale_summary(found.model, found.scale_fit, found.rows))
        unscaled = [n for n in model.joint_names if n not in found.scales]
        if unscaled:
            out.write('not estimated (held): the scale of %s, written as 1 in %s; put in its '
                      "driver's scale by hand if the node commands it\n"
                      % (', '.join(unscaled), DRIVE_NAME))
    elif found.scales is not None:
        out.write('efforts converted to joint torques by drive.effort_scale from %s (written to '
                  '%s): %s\n' % (args.effort_scale, DRIVE_NAME, ', '.join(
                      '%s %.6g' % (n, found.scales[n]) for n in found.model.joint_names)))
    out.write('wrote %s\n' % ', '.join(written))
    for line in found.warnings():
        sys.stderr.write('identify: warning: %s\n' % line)
    return 0, found.timing


def _load_spec(spec, model):
    """Return ``(link, mass, bags)`` of one ``--load LINK:MASS BAG [BAG ...]``."""
    if len(spec) < 2 or ':' not in spec[0]:
        raise AnalysisError('--load needs LINK:MASS and at least one bag, got %s'
                            % ' '.join(spec))
    link, _, mass = spec[0].rpartition(':')
    try:
        mass = float(mass)
    except ValueError:
        mass = float('nan')
    if link not in model.link_body:
        raise AnalysisError('--load %s: %r is not a link of the description' % (spec[0], link))
    if not (np.isfinite(mass) and mass > 0):
        raise AnalysisError('--load %s: the mass must be a positive number [kg]' % spec[0])
    return link, mass, spec[1:]


def scale_summary(model, fit, rows):
    """Return the printed lines of estimated scales and the validation in the driver's units."""
    from ..identification.report import rms_errors
    effort, _, after = rms_errors(rows, model.nv)
    lines = ["effort scales estimated (joint torque per unit of the driver's effort; the "
             'common factor from %s):' % (
                 'the loads of known mass (%s)' % ', '.join(
                     '%g kg on %s' % (mass, link) for link, mass, _ in fit.loads)
                 if fit.reference == 'load' else
                 "the description's inertial parameters, a weaker reference than a load of "
                 'known mass (--load)')]
    width = max(len(n) for n in model.joint_names + ('joint',))
    lines.append('  %-*s %12s %10s %22s' % (width, 'joint', 'scale', 'std',
                                            'validation RMS [unit]'))
    for j, name in enumerate(model.joint_names):
        k = fit.scale[j]
        share = 100 * after[j] / effort[j] if effort[j] > 0 else np.nan
        lines.append('  %-*s %12.6g %10.2g %12.4g (%5.1f %%)%s'
                     % (width, name, k, fit.std[j], after[j] / abs(k), share,
                        '  weakly determined' if name in fit.weak else ''))
    if fit.weak:
        lines.append('weakly determined scales (standard deviation over %.0f %% of the scale): '
                     '%s; a load moved so that it loads those joints (not about a vertical '
                     'axis) determines them' % (100 * WEAK, ', '.join(fit.weak)))
    for link, mass, theta in fit.loads:
        com = theta[1:4] / theta[0]
        lines.append('load on %s: %g kg (given), centre of mass [%s] m (estimated)'
                     % (link, mass, ', '.join('%.4g' % c for c in com)))
    return '\n'.join(lines) + '\n'


def main(argv):
    """Entry point; ``argv`` are the arguments after ``identify``."""
    args = _parser().parse_intermixed_args(argv)
    return exit_code(lambda: run(args)[0])
