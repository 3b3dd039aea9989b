"""
Offline analysis: joint torques along recorded joint states and planned trajectories.

Nothing here needs ROS: bags are read with ``rosbags`` (MCAP and SQLite 3 storage, CDR decoded by
its own type store) and trajectories with PyYAML. The command line::

    python -m rbd_dynamics bag ROBOT BAG [--topic /joint_states] [--out DIR] [name:=value ...]
    python -m rbd_dynamics trajectory ROBOT FILE [--out DIR] [name:=value ...]

Modules: :mod:`.bag` (reading a bag), :mod:`.merge` (joint states merged by name into
the model's order), :mod:`.differentiate` (Savitzky-Golay derivatives), :mod:`.planned`
(the trajectory file), :mod:`.parameters_file` (the node parameters file) and :mod:`.report`
(CSV, plot, summary); the commands are :mod:`rbd_dynamics.cli`. Here, what they share:
:class:`AnalysisError`, YAML read (:func:`read_yaml`) and files written whole
(:func:`write_file`, :func:`write_all`).
Identification (``excite``, ``identify``) is :mod:`rbd_dynamics.identification`; it reads its
recordings with these modules and reports errors with :class:`AnalysisError`.
"""

import os
import shutil
import sys
import tempfile

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


#: The temporary directory's prefix, inside the directory written to (on its file system).
TEMP_PREFIX = '.identify-'


def write_file(path, text):
    """
    Write ``text`` to the file ``path`` whole: a reader finds the old file or the new one.

    The text is written to a temporary directory beside ``path`` (on its file system) and moved
    in with :func:`os.replace`; on an error nothing is left but the old file. The directory
    itself is not created.

    Raises
    ------
    OSError
        the file or its directory cannot be written.

    """
    tmp = tempfile.mkdtemp(prefix=TEMP_PREFIX, dir=os.path.dirname(path) or '.')
    try:
        staged = os.path.join(tmp, os.path.basename(path))
        with open(staged, 'w') as stream:
            stream.write(text)
        os.replace(staged, path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def write_all(directory, files):
    """
    Write every file into ``directory``: all of them, or on any error none.

    ``files`` is ``{name: text or writer(path) -> bool}`` (a writer returning false writes
    nothing). They are written to a temporary directory inside ``directory`` (so on its file
    system, created if need be) and moved in at the end; on an error the files moved so far,
    the temporary directory and a ``directory`` this call created are removed again.
    """
    created = not os.path.isdir(directory)
    try:
        os.makedirs(directory, exist_ok=True)
        tmp = tempfile.mkdtemp(prefix=TEMP_PREFIX, dir=directory)
    except OSError as err:
        raise AnalysisError('cannot write to %s: %s' % (directory, err.strerror or err)) \
            from None
    written, moved = [], []
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
        for name in written:
            os.replace(os.path.join(tmp, name), os.path.join(directory, name))
            moved.append(name)
    except OSError as err:
        for name in moved:
            try:
                os.remove(os.path.join(directory, name))
            except OSError:
                pass
        moved = []
        raise AnalysisError('cannot write to %s: %s' % (directory, err.strerror or err)) \
            from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if created and not moved:
            shutil.rmtree(directory, ignore_errors=True)
    return [os.path.join(directory, name) for name in written]


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
