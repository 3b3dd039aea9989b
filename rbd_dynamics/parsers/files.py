"""
Description files: a ``.urdf`` read as it is, a ``.xacro`` expanded with xacro.

xacro is an optional dependency, imported only when a ``.xacro`` file is read; without it the
error says how to install it.
"""

import os

from .description import UrdfError
from .urdf import MAX_DESCRIPTION_BYTES


#: How to install xacro, for the message when it is missing.
XACRO_INSTALL_HINT = ('pip install xacro, or on a ROS install apt install ros-<distro>-xacro '
                      '(rosdep key: xacro)')


def read_description_file(path, xacro_args=None, max_bytes=MAX_DESCRIPTION_BYTES):
    """
    Read the URDF text of a file, expanded with xacro when its name ends in ``.xacro``.

    Parameters
    ----------
    path
        a ``.urdf`` file, or a ``.xacro`` file (``robot.urdf.xacro``).
    xacro_args
        xacro's ``name:=value`` arguments as ``{name: value}``; only for ``.xacro``.
    max_bytes
        a plain file is read up to one byte past this size, which the parser then
        refuses [bytes].

    Returns
    -------
    The URDF document: ``str`` from xacro, ``bytes`` from a plain file.

    Raises
    ------
    UrdfError
        xacro is not installed, or cannot expand the file (the message names the file
        and gives xacro's own error), or ``xacro_args`` were given for a plain file.
    OSError
        the file cannot be read.

    """
    path = os.fspath(path)
    if not path.endswith('.xacro'):
        if xacro_args:
            raise UrdfError('%s: xacro arguments (%s) given, but only a .xacro file takes them'
                            % (path, ', '.join(sorted(xacro_args))))
        with open(path, 'rb') as stream:
            return stream.read(max_bytes + 1)
    try:
        import xacro
    except ImportError as err:
        raise UrdfError('%s: a .xacro file needs the xacro package (%s): %s'
                        % (path, XACRO_INSTALL_HINT, err)) from None
    if not os.path.isfile(path):
        raise UrdfError('%s: no such file' % path)
    mappings = {str(name): str(value) for name, value in (xacro_args or {}).items()}
    try:
        document = xacro.process_file(os.path.abspath(path), mappings=mappings)
        return document.toxml()
    except Exception as err:  # xacro raises its own, expat's, NameError, ... on bad input
        raise UrdfError('%s: xacro cannot expand it: %s'
                        % (path, str(err) or type(err).__name__)) from None


def split_xacro_args(tokens):
    """
    Separate xacro's ``name:=value`` arguments from the other command-line tokens.

    Parameters
    ----------
    tokens
        command-line arguments.

    Returns
    -------
    ``(other tokens in order, {name: value})``.

    Raises
    ------
    UrdfError
        an argument with an empty name.

    """
    rest, mappings = [], {}
    for token in tokens:
        name, sep, value = token.partition(':=')
        if not sep or token.startswith('-'):
            rest.append(token)
        elif not name:
            raise UrdfError('xacro argument %r has no name (expected name:=value)' % token)
        else:
            mappings[name] = value
    return rest, mappings
