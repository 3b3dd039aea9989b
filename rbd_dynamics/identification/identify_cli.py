"""
``python -m rbd_dynamics identify ROBOT BAG [BAG ...] [--validate BAG ...] ...``.

Reads the joint states of the bags (merged and differentiated as ``bag`` does), identifies the
inertial and drive parameters (:mod:`.identify`), and writes ``identified.urdf``,
``drive.yaml``, ``identification.csv`` and ``identification.png`` (:mod:`.writeback`) into
``--out``: all of them or, on any error, none (they are written to a temporary directory
beside it and moved in at the end).

Exit codes: 0 done, 1 unusable input (robot, bag, topic, joints, no efforts; the message
names the problem), 2 a command line that does not parse, 3 the motion does not determine
the base parameters (the message names the joints that barely moved).
"""

import argparse
import os
import shutil
import sys
import tempfile
import time

import numpy as np

from . import hold
from .excite import urdf_limits
from .stack import DEFAULT_MIN_SPEED
from ..analysis import AnalysisError, exit_code, require
from ..analysis.cli import _holds, add_recording_options
from ..analysis.differentiate import DEFAULT_WINDOW
from ..analysis.merge import DEFAULT_MAX_GAP
from ..analysis.report import DEFAULT_PLOT_POINTS
from ..drive import COULOMB_VELOCITY

CSV_NAME = 'identification.csv'
PNG_NAME = 'identification.png'
HOLDOUT = 0.2  # share of the data held out for validation without --validate
#: A joint that moved steadily in fewer states than this share is fitted at every speed.
MIN_STEADY_SHARE = 0.01

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


class Recording:
    """States of one bag: ``time`` ``(n,)``, ``q``, ``qd``, ``qdd``, ``effort`` ``(n, nv)``."""

    def __init__(self, name, time, q, qd, qdd, effort):
        self.name = name
        self.time, self.q, self.qd, self.qdd, self.effort = time, q, qd, qdd, effort

    def __len__(self):
        return len(self.time)

    def part(self, rows):
        """Return the rows ``rows`` (a slice) of this recording."""
        return Recording(self.name, self.time[rows], self.q[rows], self.qd[rows],
                         self.qdd[rows], self.effort[rows])


def _parser():
    parser = argparse.ArgumentParser(
        prog='python -m rbd_dynamics identify', description=_HELP,
        usage='%(prog)s ROBOT BAG [BAG ...] [--validate BAG ...] [--topic TOPIC] [--out DIR] '
              '[options] [name:=value ...]')
    parser.add_argument('inputs', nargs='+', metavar='ROBOT BAG',
                        help='robot description (.urdf or .xacro), the rosbag2 recordings '
                             '(directories or .mcap / .db3 files), xacro arguments')
    parser.add_argument('--validate', nargs='+', default=[], metavar='BAG',
                        help='recordings to validate on (default: the last fifth of the data, '
                             'held out of the fit)')
    add_recording_options(parser)
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
    parser.add_argument('--no-offset', action='store_true',
                        help='do not estimate a constant effort offset per joint')
    parser.add_argument('--no-armature', action='store_true',
                        help='do not identify armature (keep it at 0)')
    parser.add_argument('--max-iterations', type=int, default=None,
                        help='iterations of the physically consistent solve at most; one that '
                             'does not converge within them is an error (default: 200)')
    parser.add_argument('--max-condition', type=float, default=None,
                        help='largest condition number of the base regressor accepted '
                             '(default: 1e5)')
    parser.add_argument('--root-link', default=None, help='root of the model')
    parser.add_argument('--plot-points', type=int, default=DEFAULT_PLOT_POINTS,
                        help='samples per plotted curve at most (default: %(default)s)')
    return parser


def held_model(text, held, root_link=None):
    """Return the model fitted: the description with the ``held`` joints fixed (compiled)."""
    from ..model import Model
    from ..precompile import CompileProgress
    try:
        model = Model.from_urdf(hold.held_description(text, held.values),
                                root_link=root_link or None, compiled=False)
    except AnalysisError:
        raise
    except Exception as err:  # UrdfError: a held joint the description cannot do without
        raise AnalysisError('the description with %s held: %s'
                            % (', '.join(held.values), err)) from None
    progress = CompileProgress()
    model.compile(progress=progress)
    progress.finish()
    return model


def load_description(path, xacro_args=None, root_link=None):
    """
    Return ``(urdf text, model)`` of a description file (xacro expanded).

    Raises
    ------
    AnalysisError
        the file cannot be read or is not a usable description.

    """
    from ..model import Model
    from ..parsers.files import read_description_file
    from ..precompile import CompileProgress
    try:
        text = read_description_file(path, xacro_args=xacro_args or None)
        model = Model.from_urdf(text, root_link=root_link or None, compiled=False)
    except OSError as err:
        raise AnalysisError('cannot read %s: %s' % (path, err.strerror or err)) from None
    except Exception as err:  # UrdfError, and whatever xacro raises for its input
        raise AnalysisError('cannot load %s: %s' % (path, err)) from None
    progress = CompileProgress()
    model.compile(progress=progress)
    progress.finish()
    return text, model


def read_states(path, topic, model, timing=None):
    """
    Read the joint states of one bag: a :class:`~rbd_dynamics.analysis.bag.BagJointStates`.

    Raises
    ------
    AnalysisError
        unreadable or empty bag, joints the description does not have.

    """
    from ..analysis.bag import ProgressPrinter, read_joint_states
    t0 = time.perf_counter()
    states = read_joint_states(path, topic, ProgressPrinter(sys.stderr, 'reading'))
    if not states.messages:
        raise AnalysisError('%s has no messages on %s' % (path, topic))
    if not states.groups:
        raise AnalysisError('%s: no usable joint states on %s (%s)' % (
            path, topic, '; '.join('%d messages: %s' % (n, r)
                                   for r, n in sorted(states.skipped.items()))))
    if not any(g.effort is not None for g in states.groups):
        raise AnalysisError('%s has no efforts: identification needs the measured efforts (the '
                            'effort field of the joint states)' % path)
    recorded = {n for g in states.groups for n in g.names}
    foreign = sorted(recorded - set(model.joint_names) - set(model.mimic))
    if foreign:
        raise AnalysisError('%s records joints the description does not have: %s (is it a '
                            'recording of this robot? its joints: %s)'
                            % (path, ', '.join(foreign), ', '.join(model.joint_names)))
    if timing is not None:
        timing['reading'] = timing.get('reading', 0.0) + time.perf_counter() - t0
    return states


def recording(path, states, model, window=DEFAULT_WINDOW, max_gap=DEFAULT_MAX_GAP,
              timing=None, held=()):
    """
    Merge and differentiate one bag's joint states as ``bag`` does: a :class:`Recording`.

    ``model`` is the model fitted (the ``held`` joints fixed in it); every one of its joints
    must be recorded with its effort.

    Raises
    ------
    AnalysisError
        a joint of the model missing, no efforts, too few states.

    """
    from ..analysis.merge import merge_joint_states
    from ..analysis.pipeline import state_derivatives
    t0 = time.perf_counter()
    try:
        merged = merge_joint_states(states.groups, model, max_gap)
    except AnalysisError as err:
        text = str(err).replace(
            '(hold them with --hold NAME=VALUE)',
            '(identification needs every moving joint of the model recorded with its effort: '
            'record them too, or hold them with --hold NAME=VALUE)')
        raise AnalysisError('%s: %s' % (path, text)) from None
    no_effort = [n for n in model.joint_names if n not in merged.effort]
    if no_effort:
        raise AnalysisError('%s has no efforts for %s: identification needs the measured '
                            'efforts (the effort field of the joint states)'
                            % (path, ', '.join(no_effort)))
    qd, qdd = state_derivatives(merged, window)
    effort = np.column_stack([merged.effort[n] for n in model.joint_names])
    if timing is not None:
        timing['differentiation'] = timing.get('differentiation', 0.0) \
            + time.perf_counter() - t0
    for note in merged.notes:
        if note.startswith('ignored joints the model does not have: ') and set(
                note.split(': ', 1)[1].split(', ')) <= set(held):
            continue  # the held joints, said in the summary
        print('warning: %s: %s' % (path, note), file=sys.stderr)
    return Recording(path, merged.time, merged.q, qd, qdd, effort)


def read_recording(path, topic, model, window=DEFAULT_WINDOW, max_gap=DEFAULT_MAX_GAP,
                   timing=None):
    """Read, merge and differentiate one bag of every joint of ``model`` (:func:`recording`)."""
    return recording(path, read_states(path, topic, model, timing), model, window, max_gap,
                     timing)


def split_holdout(recordings, share=HOLDOUT):
    """``(fit, validation)`` recordings: the last ``share`` of all states held out."""
    total = sum(len(r) for r in recordings)
    cut = int(round(total * (1.0 - share)))
    fit, validation, start = [], [], 0
    for r in recordings:
        stop = start + len(r)
        if stop <= cut:
            fit.append(r)
        elif start >= cut:
            validation.append(r)
        else:
            fit.append(r.part(slice(0, cut - start)))
            validation.append(r.part(slice(cut - start, None)))
        start = stop
    return fit, validation


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


def friction_widths(model, recordings, offset, armature):
    """
    Identify the width of every joint's smooth sign (:func:`.friction.coulomb_widths`).

    On an even subsample of all states of ``recordings``, the slow ones included (``--min-speed``
    leaves them out of the fit, but the change of sign the width describes happens there),
    starting from the node's default width.
    """
    from .friction import coulomb_widths, SUBSAMPLE_STATES
    total = sum(len(r) for r in recordings)
    stride = max(1, int(np.ceil(total / SUBSAMPLE_STATES)))
    parts = [np.concatenate([getattr(r, name)[::stride] for r in recordings])
             for name in ('q', 'qd', 'qdd', 'effort')]
    return coulomb_widths(model, *parts, np.ones(parts[0].shape, dtype=bool), COULOMB_VELOCITY,
                          offset, armature)


def predictions(model, identified_model, result, recording):
    """
    Return the ``(description, identified)`` efforts ``(n, nv)`` along a recording.

    The description's with its ``<dynamics>`` friction at the node's default width; the
    identified model's with the identified drive and widths, and the effort offsets.
    """
    from ..drive import drive_torques
    from ..dynamics import rnea
    r = recording
    nominal = rnea(model, r.q, r.qd, r.qdd) + drive_torques(
        r.qd, r.qdd, model.damping, model.friction, 0.0, COULOMB_VELOCITY)
    d = result.drive
    identified = rnea(identified_model, r.q, r.qd, r.qdd) + drive_torques(
        r.qd, r.qdd, d['viscous'], d['coulomb'], d['armature'],
        result.layout.coulomb_velocity) + d['offset']
    return nominal, identified


def run(args, out=None):
    """Run the command for parsed arguments; returns ``(exit code, timing)``."""
    out = sys.stdout if out is None else out
    require('identify', 'scipy', 'matplotlib', 'cvxpy')
    from .. import identification as idf
    from .writeback import DRIVE_NAME, drive_yaml, identified_urdf, URDF_NAME
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
    if not args.window > 0 or not args.max_gap > 0 or not (
            args.coulomb_velocity is None or args.coulomb_velocity > 0):
        raise AnalysisError('--window, --max-gap and --coulomb-velocity must be positive')
    min_speed = args.min_speed
    if not (np.isfinite(min_speed) and min_speed >= 0):
        raise AnalysisError('--min-speed must be a finite number >= 0, got %r' % min_speed)
    robot, bags = tokens[0], tokens[1:]
    text, model = load_description(robot, xacro_args, args.root_link)
    from ..analysis.pipeline import check_model
    check_model(model)
    states = [read_states(b, args.topic, model, timing) for b in bags]
    checked = [read_states(b, args.topic, model, timing) for b in validate]
    held = hold.choose(model, urdf_limits(text), states, _holds(args.hold))
    if len(held.values) == model.nv:
        raise idf.NotExcitedError('no joint of the model moves in the recordings (%s)'
                                  % '; '.join(held.summary()), model.joint_names)
    if held:
        model = held_model(text, held, args.root_link)
    recordings = [recording(b, s, model, args.window, args.max_gap, timing, held.values)
                  for b, s in zip(bags, states)]
    if validate:
        validation = [recording(b, s, model, args.window, args.max_gap, timing, held.values)
                      for b, s in zip(validate, checked)]
        fit = recordings
        held_out = 'the --validate recordings'
    else:
        fit, validation = split_holdout(recordings)
        held_out = 'the last fifth of the data, held out of the fit'
    keep, every_speed = fitted_rows(model, fit, min_speed, args.window)
    t0 = time.perf_counter()
    widths = args.coulomb_velocity
    if widths is None:
        with idf.blas_threads(1):
            widths = friction_widths(model, fit, not args.no_offset, not args.no_armature)
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
    rows = []
    for r in validation:
        nominal, identified = predictions(model, identified_model, result, r)
        rows.append((r, nominal, identified))
    unconstrained = unconstrained_error(result, validation)
    timing['validation'] = time.perf_counter() - t0
    t0 = time.perf_counter()
    notes = ['Drive identified by python -m rbd_dynamics identify from %s.'
             % ', '.join(os.path.basename(b.rstrip('/')) for b in bags)]
    if not args.no_offset:
        notes.append('Effort offsets (a sensor nuisance, not a node parameter): %s'
                     % ', '.join('%.4g' % v for v in result.drive['offset']))
    drive_text = drive_yaml(model.joint_names, result.drive['viscous'], result.drive['coulomb'],
                            result.drive['armature'], layout.coulomb_velocity, notes)
    written = _write_all(args.out, {
        URDF_NAME: text_out, DRIVE_NAME: drive_text,
        CSV_NAME: lambda path: _write_csv(path, model.joint_names, rows),
        PNG_NAME: lambda path: _plot(path, model.joint_names, rows, args.plot_points)})
    timing['writing'] = time.perf_counter() - t0
    out.write(summary(model, result, stack, rows, held_out, len(bags), timing, min_speed,
                      args.window, every_speed, unconstrained, held))
    out.write('wrote %s\n' % ', '.join(written))
    return 0, timing


def _write_all(directory, files):
    """Write every file to a temporary directory beside ``directory``, then move them in."""
    parent = os.path.dirname(os.path.abspath(directory)) or '.'
    try:
        os.makedirs(parent, exist_ok=True)
        tmp = tempfile.mkdtemp(prefix='.identify-', dir=parent)
    except OSError as err:
        raise AnalysisError('cannot write to %s: %s' % (directory, err.strerror or err)) \
            from None
    written = []
    try:
        for name, content in files.items():
            path = os.path.join(tmp, name)
            if callable(content):
                if not content(path):
                    continue
            else:
                with open(path, 'w') as stream:
                    stream.write(content)
            written.append(name)
        os.makedirs(directory, exist_ok=True)
        for name in written:
            os.replace(os.path.join(tmp, name), os.path.join(directory, name))
    except OSError as err:
        raise AnalysisError('cannot write to %s: %s' % (directory, err.strerror or err)) \
            from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return [os.path.join(directory, name) for name in written]


def _write_csv(path, joint_names, rows):
    header = ['time'] + ['%s.%s' % (kind, n) for n in joint_names
                         for kind in ('measured', 'description', 'identified')]
    with open(path, 'w') as stream:
        stream.write(','.join(header) + '\n')
        for r, nominal, identified in rows:
            table = np.empty((len(r), 1 + 3 * len(joint_names)))
            table[:, 0] = r.time
            table[:, 1::3] = r.effort
            table[:, 2::3] = nominal
            table[:, 3::3] = identified
            np.savetxt(stream, table, fmt='%.9g', delimiter=',')
    return True


def _plot(path, joint_names, rows, points):
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:  # checked at the start (require): a module that broke since
        raise AnalysisError('the plot needs matplotlib: pip install matplotlib') from None
    nv = len(joint_names)
    cols = 2 if nv > 3 else 1
    nrows = (nv + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(6.5 * cols, 2.2 * nrows), squeeze=False,
                             sharex=True)
    offset = 0.0
    for r, nominal, identified in rows:
        step = max(1, len(r) * len(rows) // max(points, 1))
        t = r.time[::step] - r.time[0] + offset
        for j, name in enumerate(joint_names):
            ax = axes[j // cols][j % cols]
            ax.plot(t, r.effort[::step, j], color='0.55', lw=2.2, label='measured')
            ax.plot(t, nominal[::step, j], color='tab:red', lw=0.9, label='description')
            ax.plot(t, identified[::step, j], color='tab:blue', lw=0.9, ls='--',
                    label='identified')
            ax.set_title(name, fontsize=9)
        offset = t[-1] if len(t) else offset
    for j in range(nv, nrows * cols):
        axes[j // cols][j % cols].axis('off')
    axes[0][0].legend(fontsize=8, loc='upper right')
    for ax in axes[-1]:
        ax.set_xlabel('validation time [s]')
    fig.suptitle('measured efforts against the description and the identified model '
                 '[N m or N]', fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


def _total_error(rows):
    """RMS of measured - identified effort over all joints, a share of the RMS effort."""
    effort, _, after = rms_errors(rows, rows[0][0].effort.shape[1]) if rows else (0, 0, 0)
    total = np.sqrt((np.asarray(effort) ** 2).sum())
    return np.sqrt((np.asarray(after) ** 2).sum()) / total if total > 0 else np.nan


def rms_errors(rows, nv):
    """``(rms effort, rms description error, rms identified error)``, each ``(nv,)``."""
    sums = np.zeros((3, nv))
    count = 0
    for r, nominal, identified in rows:
        sums[0] += (r.effort ** 2).sum(axis=0)
        sums[1] += ((r.effort - nominal) ** 2).sum(axis=0)
        sums[2] += ((r.effort - identified) ** 2).sum(axis=0)
        count += len(r)
    return np.sqrt(sums / max(count, 1))


def steady(model, recording, min_speed, window):
    """
    Where each joint of a recording moves steadily (:func:`.identify.moving`).

    At ``min_speed`` or faster through half the differentiation ``window`` on either side.
    """
    from .stack import moving
    dt = np.median(np.diff(recording.time)) if len(recording) > 1 else 0.0
    span = int(round(0.5 * window / dt)) if dt > 0 else 0
    return moving(model, recording.qd, min_speed, span)


def fitted_rows(model, recordings, min_speed, window):
    """
    Return the rows to fit of each recording (:func:`steady`), and the joints fitted whole.

    A joint that moved steadily in under :data:`MIN_STEADY_SHARE` of the states keeps all
    its rows: left out, nothing would determine its own parameters (a gripper's finger that
    the motion moves by millimetres per second).
    """
    keep = [steady(model, r, min_speed, window) for r in recordings]
    total = sum(len(r) for r in recordings)
    counts = sum((k.sum(axis=0) for k in keep), np.zeros(model.nv))
    whole = [j for j in range(model.nv) if counts[j] < MIN_STEADY_SHARE * total]
    for k in keep:
        k[:, whole] = True
    return keep, whole


def moving_errors(model, rows, min_speed, window):
    """
    RMS errors on the moving states: ``(share, description, identified)``.

    Over every joint's samples where it moves steadily (:func:`steady`): the share of the
    samples they are, and the RMS of measured - model effort of the description and of the
    identified model, each a fraction of the RMS effort of all samples.
    """
    sums = np.zeros(3)
    kept = total = 0
    for r, nominal, identified in rows:
        keep = steady(model, r, min_speed, window)
        sums += ((r.effort ** 2).sum(), ((r.effort - nominal)[keep] ** 2).sum(),
                 ((r.effort - identified)[keep] ** 2).sum())
        kept += keep.sum()
        total += keep.size
    if not (kept and sums[0] > 0):
        return 0.0, np.nan, np.nan
    scale = np.sqrt(sums[0] / total)
    return kept / total, np.sqrt(sums[1] / kept) / scale, np.sqrt(sums[2] / kept) / scale


def unconstrained_error(result, recordings, chunk=4096):
    """
    Return the validation error of the unconstrained base parameters.

    The RMS of measured - model effort over all joints and states of ``recordings``, a
    share of the RMS effort, for the weighted least-squares solution ``result.x_base``
    (torques through the regressor; no consistency asked of it).
    """
    layout = result.layout
    sums = np.zeros(2)
    for r in recordings:
        for start in range(0, len(r), chunk):
            rows = slice(start, start + chunk)
            model = layout.columns(r.q[rows], r.qd[rows], r.qdd[rows]) @ result.x_base
            sums += ((r.effort[rows] ** 2).sum(), ((r.effort[rows] - model) ** 2).sum())
    return np.sqrt(sums[1] / sums[0]) if sums[0] > 0 else np.nan


def summary(model, result, stack, rows, held_out, bags, timing, min_speed=0.0,
            window=DEFAULT_WINDOW, every_speed=(), unconstrained=np.nan, held=None):
    """Return the printed summary of an identification."""
    layout = result.layout
    lines = []
    validation = sum(len(r) for r, _, _ in rows)
    lines.append('identified from %d states (%d recording%s); validated on %d states (%s)'
                 % (stack.samples, bags, 's' if bags > 1 else '', validation, held_out))
    if held:
        lines.append('held (fixed joints; their links lumped into the body before them, '
                     'their own <inertial> as described): %s' % '; '.join(held.summary()))
    lines.append('condition number of the base regressor: %.4g (%d base parameters of %d)'
                 % (result.condition, layout.rank, layout.p))
    effort, before, after = rms_errors(rows, model.nv)
    width = max(len(n) for n in model.joint_names + ('joint',))
    lines.append('RMS of measured - model effort on the validation data:')
    lines.append('  %-*s %12s %22s %22s' % (width, 'joint', 'RMS effort', 'description',
                                            'identified'))
    for j, name in enumerate(model.joint_names):
        share = 100.0 / effort[j] if effort[j] > 0 else np.nan
        lines.append('  %-*s %12.4g %12.4g (%5.1f %%) %12.4g (%5.1f %%)'
                     % (width, name, effort[j], before[j], before[j] * share, after[j],
                        after[j] * share))
    total = np.sqrt((effort ** 2).sum())
    if total > 0:
        lines.append('  %-*s %12.4g %12.4g (%5.1f %%) %12.4g (%5.1f %%)'
                     % (width, 'all', total, np.sqrt((before ** 2).sum()),
                        100 * np.sqrt((before ** 2).sum()) / total, np.sqrt((after ** 2).sum()),
                        100 * np.sqrt((after ** 2).sum()) / total))
    if min_speed > 0:
        share, before_moving, after_moving = moving_errors(model, rows, min_speed, window)
        if share > 0:
            lines.append('  moving states only (%.0f %% of the joint samples, at %g rad/s or '
                         '%g m/s or faster): description %.1f %%, identified %.2f %% of the '
                         'RMS effort' % (100 * share, min_speed, 0.1 * min_speed,
                                         100 * before_moving, 100 * after_moving))
        else:
            lines.append('  moving states only: none (no joint of the validation data moved '
                         'at %g rad/s or %g m/s)' % (min_speed, 0.1 * min_speed))
        fitted = stack.fitted.sum() / max(stack.samples * model.nv, 1)
        lines.append('left out of the fit: %.0f %% of the joint samples, slower than %g rad/s '
                     '(%g m/s) within half a differentiation window (a joint at rest sticks: '
                     'its friction is anywhere within +-coulomb)'
                     % (100 * (1 - fitted), min_speed, 0.1 * min_speed))
        if every_speed:
            lines.append('fitted at every speed (moved steadily in under %g %% of the states): '
                         '%s' % (100 * MIN_STEADY_SHARE,
                                 ', '.join(model.joint_names[j] for j in every_speed)))
    d = result.drive
    lines.append('drive: viscous %s; coulomb %s; coulomb_velocity %s; armature %s' % tuple(
        '[%s]' % ', '.join('%.4g' % v for v in values) for values in (
            d['viscous'], d['coulomb'], layout.coulomb_velocity, d['armature'])))
    if ('offset', 0) in layout.drive:
        lines.append('effort offsets (reported, not in drive.yaml): [%s]'
                     % ', '.join('%.4g' % v for v in d['offset']))
    not_armature = sorted(set(layout.inseparable_armature) | set(result.weak_armature))
    if not_armature:
        lines.append("armature not identified (the data cannot tell it from the links' "
                     "inertia; kept at the description's 0): %s"
                     % ', '.join(model.joint_names[j] for j in not_armature))
    if result.undetermined:
        lines.append("undetermined by any motion (the description's values kept): %s"
                     % '; '.join('%s: %s' % (link, ' '.join(names))
                                 for link, names in result.undetermined.items()))
    if result.combined:
        lines.append("determined only in combination with other links' parameters (the "
                     'split closest to the description): %s'
                     % '; '.join('%s: %s' % (link, ' '.join(names))
                                 for link, names in result.combined.items()))
    if result.weakest:
        lines.append('least excited combination: %s'
                     % ', '.join('%s (%.0f %%)' % (name, 100 * share)
                                 for name, share in result.weakest))
    margin = result.margins.min() if len(result.margins) else 0.0
    consistent = margin >= -1e-12  # rounding of a pseudo-inertia on the edge
    lines.append('%s (smallest pseudo-inertia eigenvalue / trace: %.3g); solved in %d '
                 'iterations (%s)'
                 % ('physically consistent: every identified link' if consistent else
                    'WARNING: a link is not physically consistent', margin,
                    result.solver['iterations'], result.solver['status']))
    consistent_error = _total_error(rows)
    lines.append('cost of consistency: validation error %.2f %% consistent (written), %.2f %% '
                 'unconstrained (the base parameters by weighted least squares, not written)'
                 % (100 * consistent_error, 100 * unconstrained))
    if result.solver['exact']:
        lines.append('consistency costs no effort residual: the best fit has a consistent '
                     'completion%s' % ('' if not result.binding else ' (on the edge of '
                                       'consistency: %s)' % ', '.join(result.binding)))
    else:
        binds = []
        if result.binding:
            binds.append('links %s' % ', '.join(result.binding))
        if result.bound:
            binds.append('friction or armature at 0: %s' % ', '.join(result.bound))
        lines.append('consistency binds on: %s (the best fit alone would make them '
                     'inconsistent)' % ('; '.join(binds) or "nothing beyond the solver's "
                                        'tolerance'))
    lines.append('time: %s' % ', '.join('%s %.1f s' % (k, v) for k, v in timing.items()))
    return '\n'.join(lines) + '\n'


def main(argv):
    """Entry point; ``argv`` are the arguments after ``identify``."""
    args = _parser().parse_intermixed_args(argv)
    return exit_code(lambda: run(args)[0])
