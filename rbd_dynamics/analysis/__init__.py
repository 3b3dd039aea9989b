"""
Offline analysis: joint torques along recorded joint states and planned trajectories.

Nothing here needs ROS: bags are read with ``rosbags`` (MCAP and SQLite 3 storage, CDR decoded by
its own type store) and trajectories with PyYAML. The command line::

    python -m rbd_dynamics bag ROBOT BAG [--topic /joint_states] [--out DIR] [name:=value ...]
    python -m rbd_dynamics trajectory ROBOT FILE [--out DIR] [name:=value ...]

Modules: :mod:`.bag` (reading a bag), :mod:`.merge` (joint states merged by name into
the model's order), :mod:`.differentiate` (Savitzky-Golay derivatives), :mod:`.planned`
(a ``JointTrajectory`` saved as YAML), :mod:`.report` (CSV, plot, summary) and :mod:`.cli`.
Identification (``excite``, ``identify``) is :mod:`rbd_dynamics.identification`; it reads its
recordings with these modules and reports errors with :class:`AnalysisError`.
"""


import sys

#: Exit code of a command for input it cannot use.
EXIT_INPUT = 1
#: Exit code of ``identify`` when the motion does not determine the base parameters.
EXIT_NOT_EXCITED = 3


class AnalysisError(ValueError):
    """Input the analysis cannot use; the message names the problem (exit :attr:`exit_code`)."""

    exit_code = EXIT_INPUT


def read_yaml(path, what):
    """
    Return the content of the YAML file ``path``; ``what`` says what it is (``keep-out file``).

    Raises
    ------
    AnalysisError
        the file cannot be read, or is not YAML (the message says what and names the file).

    """
    import yaml
    where = '%s %s' % (what, path)
    try:
        with open(path) as stream:
            return yaml.safe_load(stream)
    except OSError as err:
        raise AnalysisError('%s: %s' % (where, err.strerror or err)) from None
    except (yaml.YAMLError, UnicodeDecodeError) as err:
        raise AnalysisError('%s is not YAML: %s' % (where, err)) from None


def exit_code(command, *args):
    """
    Run ``command(*args)``, a command's body; return its exit code.

    An :class:`AnalysisError` prints its message (no traceback) and gives its ``exit_code``;
    Ctrl-C gives 130.
    """
    try:
        return command(*args)
    except AnalysisError as err:
        print('error: %s' % err, file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print('interrupted', file=sys.stderr)
        return 130


def require(command, *modules):
    """
    Check that ``modules`` import; else raise :class:`AnalysisError` naming the extra to install.

    ``identify`` and ``excite`` need SciPy (and ``identify`` cvxpy for its consistent solve and
    matplotlib for its plot): without
    them a command stops before it reads or writes anything.
    """
    import importlib
    missing = []
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name)
    if missing:
        raise AnalysisError('%s needs %s: pip install "rbd_dynamics[analysis]" (or, in a ROS '
                            'workspace, rosdep install rbd_dynamics)'
                            % (command, ' and '.join(missing)))
