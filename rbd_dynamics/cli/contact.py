"""
``python -m rbd_dynamics contact ROBOT BAG [BAG ...] [--params-file FILE] [--gain K ...] ...``.

(``[--margin F] [--out DIR] [name:=value ...]`` and the options of ``--help``.)
Runs the node's contact observer over recorded free motions (:mod:`.contact`), prints per joint
the largest residual, its typical peak and the suggested threshold for each gain tried, picks
the gain that flags a contact soonest, and writes ``DIR/contact.yaml`` (node parameters
``contact.*``, for ``--params-file``) and ``DIR/contact.png`` (with matplotlib). Exit codes: 0
written, 1 unusable input (the message names it), 2 a command line that does not parse.
"""

import os
import sys

import numpy as np

from .common import add_recording_options, recordings_parser, robot_and_bags
from ..analysis import AnalysisError, exit_code
from ..analysis.contact import best, calibrate, comparison_step, GAINS, MARGIN, STEP_SHARE, \
    transients, WINDOW
from ..analysis.robot import load_description

YAML_NAME = 'contact.yaml'
PNG_NAME = 'contact.png'

_HELP = """Contact thresholds from recordings of the robot's motions without contact: runs the
node's momentum observer (with the drive, effort scale and offset of --params-file, as the node
would) over every joint state, and per joint finds the largest residual and its typical peak (the
largest of its %g s windows' peaks, or the second largest where the largest stands alone: one
stop or start transient does not set it). The
suggested threshold is --margin times the typical peak. Each --gain is tried; the one that flags
a step of contact torque soonest is written. Writes DIR/%s (contact.observer, contact.gain,
contact.threshold: node parameters for --params-file beside the robot's own) and DIR/%s.""" % (
    WINDOW, YAML_NAME, PNG_NAME)


def _parser():
    parser = recordings_parser(
        'contact', _HELP, 'ROBOT BAG [BAG ...] [--params-file FILE] [--gain K [K ...]] '
        '[--margin F] [--out DIR] [options] [name:=value ...]',
        'rosbag2 recordings of free motions with efforts')
    parser.add_argument('--params-file', metavar='FILE',
                        help="the node's parameters file (joints, drive.*, drive.effort_scale, "
                             "drive.effort_offset, contact.drive): identify's drive.yaml, or "
                             "the robot's own")
    parser.add_argument('--gain', type=float, nargs='+', default=None, metavar='K',
                        help='observer gains to try [1/s] (default: %s)'
                             % ' '.join('%g' % g for g in GAINS))
    parser.add_argument('--margin', type=float, default=MARGIN,
                        help='threshold over the typical peak (default: %(default)s)')
    add_recording_options(parser)
    parser.add_argument('--out', default='.', metavar='DIR',
                        help='directory for %s and %s (default: the current one)'
                        % (YAML_NAME, PNG_NAME))
    parser.add_argument('--root-link', default=None, help='root of the model')
    return parser


def node_parameters(path):
    """Return a node parameters file's parameters, flat (``drive.viscous``...), or ``{}``."""
    if path is None:
        return {}
    from ..analysis.parameters_file import flat_parameters
    return flat_parameters(path, '--params-file')


def setups(model, params, gains):
    """Return the node's :class:`~rbd_dynamics.control.setup.Setup` with the observer, per gain."""
    from ..control.config import Config
    from ..control.setup import Setup
    out = []
    for gain in gains:
        values = dict(params, **{'contact.observer': True, 'contact.gain': gain,
                                 'contact.threshold': [], 'contact.reaction': 'none'})
        try:
            out.append(Setup(model, Config.from_parameters(values)))
        except (TypeError, ValueError) as err:
            raise AnalysisError('--params-file: %s' % err) from None
    return out


def run(args, out=None):
    """Run the command for parsed arguments; the exit code."""
    out = sys.stdout if out is None else out
    from ..identification.recordings import read_states, recording
    from ..analysis import write_all
    from ..analysis.pipeline import check_model
    robot, bags, xacro_args = robot_and_bags('contact', args.inputs)
    gains = list(args.gain or GAINS)
    if not all(np.isfinite(g) and g > 0 for g in gains):
        raise AnalysisError('--gain must be positive numbers, got %s' % gains)
    if not (np.isfinite(args.margin) and args.margin >= 1.0):
        raise AnalysisError('--margin must be a number >= 1, got %g' % args.margin)
    if not args.window > 0 or not args.max_gap > 0:
        raise AnalysisError('--window and --max-gap must be positive')
    _, model = load_description(robot, xacro_args, args.root_link)
    check_model(model)
    configured = setups(model, node_parameters(args.params_file), gains)
    recordings = []
    for path in bags:
        try:
            recordings.append(recording(path, read_states(path, args.topic, model), model,
                                        args.window, args.max_gap))
        except AnalysisError as err:
            raise AnalysisError(str(err).replace(
                'record them too, or hold them at a position',
                'the observer needs every joint of the model with its effort')) from None
    sys.stderr.write('contact: the observer over %d states at %d gain%s ...\n'
                     % (sum(len(r) for r in recordings), len(gains),
                        '' if len(gains) == 1 else 's'))
    figures = calibrate(configured, recordings, args.margin)
    chosen = best(figures)
    setup = configured[figures.index(chosen)]
    written = write_all(args.out, {
        YAML_NAME: contact_yaml(setup, chosen, bags, args.margin),
        PNG_NAME: lambda path: _plot(path, model, chosen, recordings[0].name)})
    out.write(summary(model, figures, chosen, recordings))
    out.write('wrote %s\n' % ', '.join(written))
    return 0


def contact_yaml(setup, fig, bags, margin):
    """
    Return the node parameters file of the chosen gain's thresholds.

    The thresholds in the order of the node's ``joints`` (those of ``--params-file``, else the
    model's), which the file names in a comment and does not set: loaded after the robot's own
    parameters, it must not reorder them.
    """
    from ..analysis.parameters_file import parameters_text
    joints = [setup.model.joint_names[i] for i in setup.rows]
    return parameters_text({'contact': {
        'observer': True, 'gain': float(fig.gain),
        'threshold': [float('%.6g' % v) for v in fig.threshold[setup.rows]]}}, [
        "contact thresholds from %s (python -m rbd_dynamics contact): %g times each joint's "
        'typical' % (', '.join(os.path.basename(b.rstrip('/')) for b in bags), margin),
        "peak of the residual in those free motions; load it beside the robot's parameters.",
        'contact.threshold is in the order of joints: [%s]' % ', '.join(joints)])


def summary(model, figures, chosen, recordings):
    """Return the printed report."""
    width = max(len(n) for n in model.joint_names + ('joint',))
    step = comparison_step(figures)
    lines = ['%d states in %d recording%s, %.1f s; residual windows of %g s'
             % (chosen.states, len(recordings), '' if len(recordings) == 1 else 's',
                sum(r.time[-1] - r.time[0] for r in recordings), WINDOW),
             'gains compared on a step of contact torque per joint of [%s] N m (N) (%g times '
             'the largest threshold of any gain):' % (', '.join('%.3g' % v for v in step),
                                                      STEP_SHARE)]
    lines.append('  %8s %22s %20s %s' % ('gain', 'flagged after (median)', 'states over',
                                         'thresholds [N m|N]'))
    for fig in figures:
        delay = fig.delay(step)
        lines.append('  %8g %19.1f ms %20d [%s]%s'
                     % (fig.gain, 1e3 * np.median(delay), int(fig.flagged.sum()),
                        ', '.join('%.3g' % v for v in fig.threshold),
                        '  <- written' if fig is chosen else ''))
    lines.append('gain %g 1/s, per joint:' % chosen.gain)
    lines.append('  %-*s %14s %10s %14s %14s %14s'
                 % (width, 'joint', 'largest |r|', 'at [s]', 'typical peak', 'threshold',
                    'flagged after'))
    delay = chosen.delay(step)
    for j, name in enumerate(model.joint_names):
        lines.append('  %-*s %14.4g %10.2f %14.4g %14.4g %11.1f ms'
                     % (width, name, chosen.largest[j], chosen.at[j], chosen.typical[j],
                        chosen.threshold[j], 1e3 * delay[j]))
    left = transients(chosen)
    if left:
        lines.append('left out of the thresholds, one transient each (the node would flag '
                     'it): %s' % '; '.join(
                         '%s %.4g at %.2f s of %s (%.1f times its threshold)'
                         % (model.joint_names[j], chosen.largest[j], chosen.at[j],
                            os.path.basename(recordings[chosen.recording[j]].name.rstrip('/')),
                            chosen.largest[j] / max(chosen.threshold[j], 1e-300))
                         for j in left))
    if chosen.time is not None and chosen.time[-1] < 2 * WINDOW:
        lines.append('warning: under %g s of motion: the typical peak is the largest one; '
                     "record the task's motions for longer" % (2 * WINDOW))
    return '\n'.join(lines) + '\n'


def _plot(path, model, fig, name):
    try:
        import matplotlib
    except ImportError:
        return False
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    nv = model.nv
    figure, axes = plt.subplots(nv, 1, figsize=(9, 1.6 * nv + 0.8), sharex=True, squeeze=False)
    for j, ax in enumerate(axes[:, 0]):
        ax.plot(fig.time, fig.residual[:, j], lw=0.7, label='residual r')
        for sign in (1, -1):
            ax.axhline(sign * fig.threshold[j], color='r', lw=0.8,
                       label='threshold' if sign > 0 else None)
        ax.set_ylabel('%s\n[%s]' % (model.joint_names[j],
                                    'N' if model.joint_types[j] == 'prismatic' else 'N m'),
                      fontsize=8)
        ax.grid(alpha=0.3)
    axes[0, 0].legend(loc='upper right', fontsize=8)
    axes[-1, 0].set_xlabel('time from the first state [s]')
    figure.suptitle('%s: the observer at %g 1/s, and the suggested thresholds'
                    % (os.path.basename(name.rstrip('/')), fig.gain), fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    plt.close(figure)
    return True


def main(argv):
    """Entry point; ``argv`` are the arguments after ``contact``."""
    return exit_code(run, _parser().parse_intermixed_args(argv))
