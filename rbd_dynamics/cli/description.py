"""
``python -m rbd_dynamics description ROBOT [name:=value ...] [--out FILE]``.

Writes a node parameters file that gives the node a description: ``robot_description`` as a
YAML literal block, the text exactly as it is (a ``.xacro`` expanded first), for
``--params-file`` where no robot_state_publisher publishes it (a ROS 2 environment from the
Python registry has none) and where ``-p robot_description:="$(cat robot.urdf)"`` fails (rcl
parses a ``-p`` value as YAML, and a text holding ``": "`` is refused). The description is read
and its model built first: a file the node would refuse is refused here. Exit codes: 0 written,
1 an unusable description (the message says why; nothing written), 2 a command line that does
not parse.
"""

import argparse
import os
import sys

from ..analysis import AnalysisError, exit_code, write_file
from ..analysis.robot import load_description


def _parser():
    parser = argparse.ArgumentParser(prog='python -m rbd_dynamics description',
                                     description=__doc__.split('\n\n')[1].strip())
    parser.add_argument('robot', metavar='ROBOT', help='robot description (.urdf or .xacro)')
    parser.add_argument('xacro_args', nargs='*', metavar='name:=value', help='xacro arguments')
    parser.add_argument('--out', default=None, metavar='FILE',
                        help='the parameters file to write (default: standard output)')
    parser.add_argument('--root-link', default=None,
                        help="root of the model: checked, and written as the node's root_link")
    return parser


def run(args):
    """Run the command for parsed arguments; the exit code."""
    from .common import xacro_assignments
    from ..analysis.pipeline import check_model
    from ..identification.writeback import description_yaml
    text, model = load_description(args.robot, xacro_assignments(args.xacro_args),
                                   args.root_link)
    check_model(model)  # (the node refuses what joint states cannot carry, so does this)
    if isinstance(text, bytes):  # (a file's bytes, as the parser takes them)
        try:
            text = text.decode('utf-8')
        except UnicodeDecodeError as err:
            raise AnalysisError('%s is not UTF-8 text: %s' % (args.robot, err)) from None
    content = description_yaml(text, ['robot_description of %s (model %r, %d joint '
                                      'coordinates): give it to the node with --params-file'
                                      % (os.path.basename(args.robot), model.name, model.nv)],
                               root_link=args.root_link)
    if args.out is None:
        sys.stdout.write(content)
        return 0
    try:
        write_file(args.out, content)
    except OSError as err:
        raise AnalysisError('cannot write %s: %s' % (args.out, err.strerror or err)) from None
    print('wrote %s' % args.out, file=sys.stderr)
    return 0


def main(argv):
    """Entry point; ``argv`` are the arguments after ``description``."""
    return exit_code(run, _parser().parse_intermixed_args(argv))
