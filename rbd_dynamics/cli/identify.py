"""
``python -m rbd_dynamics identify ROBOT BAG [BAG ...] [--validate BAG ...] ...``.

Reads the recordings (:mod:`.recordings`: joints held, merged and differentiated as ``bag``
does), identifies the friction widths (:mod:`.friction`) and the inertial and drive parameters
(:mod:`.stack`, :mod:`.fit`), and writes ``identified.urdf``, ``drive.yaml`` (:mod:`.writeback`),
``identification.csv`` and ``identification.png`` (:mod:`.report`) into ``--out``: all of them
or, on any error, none (they are written to a temporary directory beside it and moved in at the
end).

Exit codes: 0 done, 1 unusable input (robot, bag, topic, joints, no efforts; the message
names the problem), 2 a command line that does not parse, 3 the motion does not determine
the base parameters (the message names the joints that barely moved).
"""

import os
import sys
import time

import numpy as np

from .common import add_plot_options, add_recording_options, holds, recordings_parser
from ..analysis import AnalysisError, exit_code, require
from ..analysis.robot import load_description
from ..drive import COULOMB_VELOCITY
from ..identification import hold
from ..identification.excite import urdf_limits
from ..identification.friction import recording_widths
from ..identification.recordings import fitted_rows, held_model, read_states, recording, \
    split_holdout
from ..identification.report import CSV_NAME, plot_predictions, PNG_NAME, predictions, \
    summary, unconstrained_error, write_all, write_prediction_csv
from ..identification.scales import estimate_scales, WEAK
from ..identification.stack import DEFAULT_MIN_SPEED
from ..identification.units import read_effort_scale

#: The differentiation windows identify chooses from [s] (:func:`choose_window`) where
#: ``--window`` is not given.
WINDOWS = (0.05, 0.1, 0.2, 0.4)
#: A longer window is taken only where its residual share is below the shorter one's by more
#: than this share of it: noise in the accelerations (what the window is for) makes large
#: differences, smoothing the motion's own sharp features (a friction's reversals) small ones.
WINDOW_TIE = 0.1

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

    def __init__(self, total):
        self.total = total
        self.done = 0
        self.start = time.monotonic()
        self.next = self.start + 1.0
        self.shown = False

    def chunk(self, done, _):
        now = time.monotonic()
        if now >= self.next or (self.shown and self.done + done >= self.total):
            self.next = now + 0.5
            share = (self.done + done) / max(self.total, 1)
            sys.stderr.write('\rstacking the regressor [%-30s] %5.1f %%'
                             % ('#' * int(30 * share), 100 * share))
            sys.stderr.flush()
            self.shown = True

    def finish(self):
        if self.shown:
            sys.stderr.write('\n')


def _step(text):
    """Say on standard error which step starts (each may take seconds; the first run longer)."""
    sys.stderr.write('identify: %s ...\n' % text)
    sys.stderr.flush()


def run(args, out=None):
    """Run the command for parsed arguments; returns ``(exit code, timing)``."""
    out = sys.stdout if out is None else out
    require('identify', 'scipy', 'matplotlib', 'cvxpy')
    from .. import identification as idf
    from ..identification.writeback import DESCRIPTION_NAME, DRIVE_NAME, drive_yaml, \
        identified_urdf, URDF_NAME
    from ..model import Model
    from ..parsers.files import split_xacro_args
    timing = {}
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
    min_speed = args.min_speed
    if not (np.isfinite(min_speed) and min_speed >= 0):
        raise AnalysisError('--min-speed must be a finite number >= 0, got %r' % min_speed)
    robot, bags = tokens[0], tokens[1:]
    text, model = load_description(robot, xacro_args, args.root_link)
    from ..analysis.pipeline import check_model
    check_model(model)
    estimating = args.effort_scale == 'estimate'
    if args.load and not estimating:
        raise AnalysisError('--load fixes the common factor of estimated scales: give it with '
                            '--effort-scale estimate')
    scales = read_effort_scale(args.effort_scale, model.joint_names) \
        if args.effort_scale and not estimating else None
    load_specs = [_load_spec(spec, model) for spec in args.load or []]
    _step('reading %d recording%s' % (len(bags) + len(validate),
                                      '' if len(bags) + len(validate) == 1 else 's'))
    states = [read_states(b, args.topic, model, timing) for b in bags]
    checked = [read_states(b, args.topic, model, timing) for b in validate]
    described = model
    held = hold.choose(model, urdf_limits(text), states, holds(args.hold))
    if len(held.values) == model.nv:
        raise idf.NotExcitedError('no joint of the model moves in the recordings (%s)'
                                  % '; '.join(held.summary()), model.joint_names)
    if held:
        model = held_model(text, held, args.root_link)
    fixed = (set(described.joint_names) | set(described.mimic)) \
        - set(model.joint_names) - set(model.mimic)
    windows = None
    if args.window is None:
        _step('choosing the differentiation window')
        args.window, windows = choose_window(model, bags, states, fixed, args, scales, validate)
    recordings = [recording(b, s, model, args.window, args.max_gap, timing, fixed)
                  for b, s in zip(bags, states)]
    if validate:
        validation = [recording(b, s, model, args.window, args.max_gap, timing, fixed)
                      for b, s in zip(validate, checked)]
    if validate:
        fit = recordings
        held_out = 'the --validate recordings'
    else:
        fit, validation = split_holdout(recordings)
        held_out = 'the last fifth of the data, held out of the fit'
    # the rows to fit: a joint at rest sticks (its effort says nothing of the model, nor of
    # its scale); they depend on the motion only, not on the efforts' unit
    keep, every_speed = fitted_rows(model, fit, min_speed, args.window)
    scale_fit = None
    if estimating:
        _step('estimating the effort scales')
        loads = [(link, mass, [recording(b, read_states(b, args.topic, described, timing),
                                         model, args.window, args.max_gap, timing, fixed)
                               for b in load_bags]) for link, mass, load_bags in load_specs]
        t0 = time.perf_counter()
        layout0 = idf.Layout(model, args.coulomb_velocity or COULOMB_VELOCITY,
                             offset=not args.no_offset, armature=not args.no_armature)
        rows = {id(r): k for r, k in zip(fit, keep)}
        for _, _, parts in loads:
            rows.update(zip(map(id, parts), fitted_rows(model, parts, min_speed,
                                                        args.window)[0]))
        scale_fit = estimate_scales(layout0, fit, loads, lambda r: rows[id(r)])
        timing['effort scales'] = time.perf_counter() - t0
        scales = dict(zip(model.joint_names, scale_fit.scale))
    if scales is not None:
        missing = [n for n in model.joint_names if n not in scales]
        if missing:
            raise AnalysisError('--effort-scale %s gives no scale for %s'
                                % (args.effort_scale, ', '.join(missing)))
        scale = np.array([scales[n] for n in model.joint_names])
        for r in fit + validation:
            r.effort = r.effort * scale  # the driver's units -> joint torques
    t0 = time.perf_counter()
    widths = args.coulomb_velocity
    if widths is None:
        _step("identifying the friction width of each joint (a machine's first run also "
              'compiles its kernels: about a minute)')
        with idf.blas_threads(1):
            widths = recording_widths(model, fit, not args.no_offset, not args.no_armature)
        timing['friction widths'] = time.perf_counter() - t0
        t0 = time.perf_counter()
    layout = idf.Layout(model, widths, offset=not args.no_offset, armature=not args.no_armature)
    stack = idf.Stack(layout)
    progress = _StackProgress(sum(len(r) for r in fit))
    with idf.blas_threads(1):
        for r, k in zip(fit, keep):
            stack.add(r.q, r.qd, r.qdd, r.effort, progress=progress.chunk, keep=k)
            progress.done += len(r)
    progress.finish()
    # the regressor's own time, and the rest of stacking (folding into the factors)
    timing['regressor'] = stack.timing['regressor']
    timing['stacking'] = time.perf_counter() - t0 - stack.timing['regressor']
    t0 = time.perf_counter()
    options = {} if args.max_condition is None else {'max_condition': args.max_condition}
    if args.max_iterations is not None:
        options['max_iterations'] = args.max_iterations
    _step('solving for the physically consistent parameters')
    with idf.blas_threads(1):
        try:
            result = idf.solve(stack, **options)
        except idf.NotExcitedError as err:
            left_out = 1 - stack.fitted.sum() / max(stack.samples * model.nv, 1)
            if left_out > 0.05:
                raise idf.NotExcitedError(
                    '%s (--min-speed %g left %.0f %% of the joint samples out of the fit; a '
                    'lower one keeps more)' % (err, min_speed, 100 * left_out), err.joints,
                    err.condition) from None
            raise
    text_out = identified_urdf(text, result.own_link_parameters())
    identified_model = Model.from_urdf(hold.held_description(text_out, held.values)
                                       if held else text_out,
                                       root_link=args.root_link or None, compiled=False)
    identified_model.compile()
    timing['solving'] = time.perf_counter() - t0
    t0 = time.perf_counter()
    _step('validating and writing into %s' % args.out)
    rows = []
    for r in validation:
        nominal, identified = predictions(model, identified_model, result, r)
        rows.append((r, nominal, identified))
    unconstrained = unconstrained_error(result, validation)
    timing['validation'] = time.perf_counter() - t0
    t0 = time.perf_counter()
    notes = ['Drive identified by python -m rbd_dynamics identify from %s.'
             % ', '.join(os.path.basename(b.rstrip('/')) for b in bags)]
    effort_offset = None
    if not args.no_offset:
        notes.append('drive.effort_offset: the bias of the measured efforts (a sensor '
                     'nuisance); the node takes it off them before the contact observer.')
        index = {name: j for j, name in enumerate(model.joint_names)}
        effort_offset = [float(result.drive['offset'][index[name]]) if name in index else 0.0
                         for name in described.joint_names]
    drive = every_joint(described, model, result.drive, layout.coulomb_velocity)
    effort_scale = None
    if scales is not None:
        notes.append("Efforts in the driver's units: drive.effort_scale %s."
                     % ('estimated (the common factor from %s)' % (
                         'the loads of known mass' if load_specs else "the description's "
                         'inertial parameters') if estimating
                        else 'from %s' % os.path.basename(args.effort_scale)))
        effort_scale = [scales.get(name, 1.0) for name in described.joint_names]
    written = write_all(args.out, {
        URDF_NAME: text_out, DRIVE_NAME: drive_yaml(*drive, notes, effort_scale=effort_scale,
                                                    effort_offset=effort_offset),
        DESCRIPTION_NAME: drive_yaml(*drive, notes + [
            'The identified description and drive: run the node with --params-file on this '
            'file alone.'], description=text_out, effort_scale=effort_scale,
            effort_offset=effort_offset),
        CSV_NAME: lambda path: write_prediction_csv(path, model.joint_names, rows),
        PNG_NAME: lambda path: plot_predictions(path, model.joint_names, rows, args.plot_points)})
    timing['writing'] = time.perf_counter() - t0
    out.write(summary(model, result, stack, rows, held_out, len(bags), timing, min_speed,
                      args.window, every_speed, unconstrained, held))
    if windows:
        out.write('differentiation window %g s, the shortest whose states leave the least '
                  'residual of plain least squares in the fitted data, within %g %% of it (%s)\n'
                  % (args.window, 100 * WINDOW_TIE, ', '.join(
                      '%g s: %.3g %%' % (w, 100 * share) for w, share in windows.items())))
    if scale_fit is not None:
        out.write(scale_summary(model, scale_fit, rows))
        unscaled = [n for n in described.joint_names if n not in scales]
        if unscaled:
            out.write('not estimated (held): the scale of %s, written as 1 in %s; put in its '
                      "driver's scale by hand if the node commands it\n"
                      % (', '.join(unscaled), DRIVE_NAME))
    elif scales is not None:
        out.write('efforts converted to joint torques by drive.effort_scale from %s (written to '
                  '%s): %s\n' % (args.effort_scale, DRIVE_NAME, ', '.join(
                      '%s %.6g' % (n, scales[n]) for n in model.joint_names)))
    out.write('wrote %s\n' % ', '.join(written))
    for line in fit_warnings(model, rows, None if scales is None else scale):
        sys.stderr.write('identify: warning: %s\n' % line)
    return 0, timing


def choose_window(model, bags, states, fixed, args, scales, validate):
    """
    Return the differentiation window of :data:`WINDOWS` to identify with, and each one's share.

    Velocities and accelerations come from the positions (and measured velocities) through a
    Savitzky-Golay window: too short, their noise enters the regressor, and least squares,
    which takes the regressor as exact, trades physical parameters for it (errors in
    variables); too long, it smooths the motion itself. Each window's states are fitted by plain
    least squares on the rows every window fits (a longer window leaves more of the slow rows
    out; the validation data untouched), and the shortest window whose fit leaves a residual
    share within :data:`WINDOW_TIE` of the least is taken (states without noise fit alike at
    any window: then the shortest, which smooths the motion least).
    """
    from .. import identification as idf
    fits, keeps = {}, {}
    for window in WINDOWS:
        parts = [recording(b, s, model, window, args.max_gap, None, fixed, quiet=True)
                 for b, s in zip(bags, states)]
        fits[window] = parts if validate else split_holdout(parts)[0]
        keeps[window] = fitted_rows(model, fits[window], args.min_speed, window)[0]
    common = [np.logical_and.reduce([keeps[w][k] for w in WINDOWS])
              for k in range(len(keeps[WINDOWS[0]]))]
    scale = None if scales is None else np.array([scales.get(n, 1.0)
                                                  for n in model.joint_names])
    shares = {}
    for window in WINDOWS:
        layout = idf.Layout(model, args.coulomb_velocity or COULOMB_VELOCITY,
                            offset=not args.no_offset, armature=not args.no_armature)
        stack = idf.Stack(layout)
        with idf.blas_threads(1):
            for r, k in zip(fits[window], common):
                stack.add(r.q, r.qd, r.qdd, r.effort if scale is None else r.effort * scale,
                          keep=k)
        shares[window] = idf.residual_share(stack)
    least = min(shares.values())
    return min(w for w in WINDOWS if shares[w] <= (1.0 + WINDOW_TIE) * least), shares


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


def fit_warnings(model, rows, scale=None):
    """
    Return what makes the written model suspect, one line each (none: nothing).

    Validation rows ``(recording, description, identified)``; ``scale`` ``(nv,)`` the effort
    scale the efforts were converted by, or ``None``. Said: a joint whose converted efforts the
    identified model predicts worse (a share of their RMS) than the description predicts the
    unconverted ones (a wrong scale, or sign: the fit cannot follow it), and an identified model
    that predicts the validation data worse than the description.
    """
    from ..identification.report import rms_errors
    lines = []
    effort, before, after = rms_errors(rows, model.nv)
    if scale is not None:
        sums = np.zeros((2, model.nv))
        for r, nominal, _ in rows:
            raw = r.effort / scale
            sums += ((raw - nominal) ** 2).sum(axis=0), (raw ** 2).sum(axis=0)
        raw_error, raw_effort = np.sqrt(sums)
        for j, name in enumerate(model.joint_names):
            fitted = after[j] / effort[j] if effort[j] > 0 else 0.0
            described = raw_error[j] / raw_effort[j] if raw_effort[j] > 0 else np.inf
            if scale[j] != 1.0 and fitted > described:
                lines.append(
                    '%s: converted by its scale %.6g, its efforts are predicted to %.1f %% by '
                    'the identified model, where the description predicts them unconverted to '
                    '%.1f %%: is the scale (and its sign) right? An effort already in N m (or '
                    'N) takes the scale 1' % (name, scale[j], 100 * fitted, 100 * described))
    total, before, after = (np.sqrt((e ** 2).sum()) for e in (effort, before, after))
    if total > 0 and after > before:
        lines.append('the identified model predicts the validation data worse than the '
                     'description (%.1f %% against %.1f %% of the RMS effort): check the units '
                     'of the efforts (--effort-scale) and the recordings before using it'
                     % (100 * after / total, 100 * before / total))
    return lines


def every_joint(described, fitted, drive, widths):
    """
    Return ``[joints, viscous, coulomb, armature, widths]`` for every joint of the description.

    The fitted model's joints take the identified values; a held joint (not in ``fitted``)
    keeps the description's friction, the node's default width and no armature, so the node
    still gives it a torque.
    """
    index = {name: j for j, name in enumerate(fitted.joint_names)}
    out = [described.joint_names]
    for values, default in ((drive['viscous'], described.damping),
                            (drive['coulomb'], described.friction),
                            (drive['armature'], np.zeros(described.nv)),
                            (np.broadcast_to(widths, (fitted.nv,)),
                             np.full(described.nv, COULOMB_VELOCITY))):
        out.append([float(values[index[name]]) if name in index else float(default[j])
                    for j, name in enumerate(described.joint_names)])
    return out


def main(argv):
    """Entry point; ``argv`` are the arguments after ``identify``."""
    args = _parser().parse_intermixed_args(argv)
    return exit_code(lambda: run(args)[0])
