"""
What the commands share: their common options, and reading what those options give.

Each command is a module of this package with a ``main(argv)`` that ``python -m rbd_dynamics``
calls; the work itself is done by the library (:mod:`rbd_dynamics.analysis`,
:mod:`rbd_dynamics.identification`), which names no command-line flag.
"""

import argparse

import numpy as np

from ..analysis import AnalysisError
from ..analysis.differentiate import DEFAULT_WINDOW
from ..analysis.merge import DEFAULT_MAX_GAP
from ..analysis.report import DEFAULT_PLOT_POINTS


def assignments(items, separator, what):
    """``['a=1', ...]`` -> ``{'a': '1'}``; raises AnalysisError on an item without it."""
    out = {}
    for item in items or ():
        name, sep, value = item.partition(separator)
        if not sep or not name:
            raise AnalysisError('%s %r is not NAME%sVALUE' % (what, item, separator))
        out[name] = value
    return out


def xacro_assignments(items):
    """Return ``{name: value}`` of ``name:=value`` command-line items (xacro arguments)."""
    return assignments(items, ':=', 'xacro argument')


def holds(items):
    """``--hold NAME=VALUE`` items -> ``{name: value}`` (finite numbers)."""
    given = assignments(items, '=', '--hold')
    try:
        values = {name: float(value) for name, value in given.items()}
    except ValueError:
        raise AnalysisError('--hold needs a number: %s' % ' '.join(items)) from None
    if not all(np.isfinite(v) for v in values.values()):
        raise AnalysisError('--hold needs finite numbers: %s' % ' '.join(items))
    return values


def add_plot_options(parser):
    """Add ``--root-link`` and ``--plot-points``: a command that models and plots a recording."""
    parser.add_argument('--root-link', default=None, help='root of the model')
    parser.add_argument('--plot-points', type=int, default=DEFAULT_PLOT_POINTS,
                        help='samples per plotted curve at most (default: %(default)s)')


def recordings_parser(command, description, usage, recordings):
    """
    Return the parser of a command on a description and recordings (``ROBOT BAG [BAG ...]``).

    ``usage`` follows the program's name; ``recordings`` says what the bags are.
    """
    parser = argparse.ArgumentParser(prog='python -m rbd_dynamics %s' % command,
                                     description=description, usage='%(prog)s ' + usage)
    parser.add_argument('inputs', nargs='+', metavar='ROBOT BAG',
                        help='robot description (.urdf or .xacro), %s, xacro arguments'
                        % recordings)
    return parser


def robot_and_bags(command, inputs):
    """
    Return ``(robot, bags, xacro arguments)`` of a :func:`recordings_parser`'s ``inputs``.

    Raises
    ------
    AnalysisError
        a malformed xacro argument, or no bag.

    """
    from ..parsers.files import split_xacro_args
    try:
        tokens, xacro_args = split_xacro_args(inputs)
    except Exception as err:
        raise AnalysisError(str(err)) from None
    if len(tokens) < 2:
        raise AnalysisError('%s needs a robot description and at least one bag' % command)
    return tokens[0], tokens[1:], xacro_args


def add_recording_options(parser, window=DEFAULT_WINDOW, window_default='%(default)s'):
    """
    Add how joint states are read: ``--topic``, ``--window``, ``--max-gap``.

    ``window``: ``--window``'s default (``None``: the command chooses), ``window_default`` what
    its help says of it.
    """
    parser.add_argument('--topic', default='/joint_states',
                        help='sensor_msgs/JointState topic (default: %(default)s)')
    parser.add_argument('--window', type=float, default=window,
                        help='Savitzky-Golay window for derivatives [s] (default: %s)'
                        % window_default)
    parser.add_argument('--max-gap', type=float, default=DEFAULT_MAX_GAP,
                        help='longer pauses, in sample periods, split a recording '
                             '(default: %(default)s)')


def stamp_text(ns):
    """Return a stamp [ns] as a person reads it: ``1732800000.123456789 s``, or ``1 ns``."""
    if abs(ns) < 1000000000:  # (a simulation's clock, which starts at 0)
        return '%d ns' % ns if abs(ns) < 1000000 else '%.6g s' % (ns * 1e-9)
    return '%d.%09d s' % divmod(ns, 1000000000)
