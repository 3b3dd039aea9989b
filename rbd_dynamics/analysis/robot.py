"""
A robot description file as a compiled model, for the programs that read one.

The file is a ``.urdf``, or a ``.xacro`` expanded with its ``name:=value`` arguments; errors are
:class:`~rbd_dynamics.analysis.AnalysisError` with a message that names the file.
"""

from . import AnalysisError


def load_model(path, xacro_args=None, root_link=None):
    """
    Load the model of a description file (:func:`load_description`, the text left out).

    Raises
    ------
    AnalysisError
        the file cannot be read or is not a usable description.

    """
    return load_description(path, xacro_args, root_link)[1]


def load_description(path, xacro_args=None, root_link=None):
    """
    Return ``(urdf text, model)`` of a description file, the model compiled.

    A ``.urdf`` / ``.xacro`` file with xacro's ``name:=value`` arguments ``xacro_args``
    (``{name: value}``; only a ``.xacro`` file takes them).

    Raises
    ------
    AnalysisError
        the file cannot be read or is not a usable description.

    """
    from ..parsers.files import read_description_file
    try:
        text = read_description_file(path, xacro_args=xacro_args or None)
    except OSError as err:
        raise AnalysisError('cannot read %s: %s' % (path, err.strerror or err)) from None
    except Exception as err:  # UrdfError, and whatever xacro raises for its input
        raise AnalysisError('cannot load %s: %s' % (path, err)) from None
    return text, model_of(text, path, root_link)


def model_of(text, name, root_link=None):
    """
    Return the compiled model of URDF ``text`` (``name`` says what it is, for messages).

    The batch kernels are loaded from numba's cache at once, compiled (and said) on a first run.

    Raises
    ------
    AnalysisError
        the text is not a usable description.

    """
    from ..model import Model
    from ..precompile import CompileProgress
    try:
        model = Model.from_urdf(text, root_link=root_link or None, compiled=False)
    except Exception as err:  # UrdfError
        raise AnalysisError('cannot load %s: %s' % (name, err)) from None
    progress = CompileProgress()
    model.compile(progress=progress)
    progress.finish()
    return model
