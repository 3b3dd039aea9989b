"""
The node parameters file: read and written here only.

A ROS 2 parameters file, the form ``--ros-args --params-file`` and the launch file give the node::

    # comments
    /**:
      ros__parameters:
        joints: ["joint1", "joint2"]
        drive:
          viscous: [0.5, 1.0]

The tools read one (:func:`read_parameters`, :func:`flat_parameters`): under any node key
(``/**``, ``rbd_dynamics``...) its first ``ros__parameters``, or a plain mapping of the
parameters. They write one (:func:`parameters_text`, :func:`write_parameters`): under
``/**`` (the node may be started under another name), comment lines at the top, one parameter a
line, a mapping's parameters nested below it, the values as flow YAML: a text as a JSON string,
a float with the digits that read back as it (:func:`yaml_number`; one not finite as JSON
writes it, which the node reads), a list in brackets, and :class:`Block` text as a literal
block.
"""

import json
import math
import numbers

from . import AnalysisError, read_yaml, write_file

#: The parameters file's node key: any node name (the node may be started under another).
NODE_KEY = '/**'
#: The indentation of one level of parameters.
INDENT = '  '


class Block(str):
    """A text written as a YAML literal block: it reaches the node exactly as it is."""


def yaml_number(value):
    """
    Return a float as YAML reads it back as that float, exactly (``repr`` digits).

    ``repr`` writes ``1e-05``, which YAML 1.1 (PyYAML) reads as a string: the mantissa gets its
    dot, ``1.0e-05``.
    """
    text = repr(float(value))
    mantissa, e, exponent = text.partition('e')
    if e and '.' not in mantissa:
        text = '%s.0e%s' % (mantissa, exponent)
    return text


def _value(value):
    """Return a parameter's value as flow YAML."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return yaml_number(value) if math.isfinite(value) else json.dumps(float(value))
    if isinstance(value, str):
        return json.dumps(value)
    return '[%s]' % ', '.join(_value(item) for item in value)


def _block_lines(text, indent):
    """
    Return a literal block's lines after its key, its indentation given (``|2``).

    Two more than the key's, so that the text reaches the node exactly, a first line that
    starts with spaces included.
    """
    inner = indent + INDENT
    return [' |2'] + [inner + line if line else '' for line in text.rstrip('\n').split('\n')]


def _lines(params, indent):
    lines = []
    for name, value in params.items():
        if isinstance(value, dict):
            lines.append('%s%s:' % (indent, name))
            lines += _lines(value, indent + INDENT)
        elif isinstance(value, Block):
            head, *body = _block_lines(value, indent)
            lines.append('%s%s:%s' % (indent, name, head))
            lines += body
        else:
            lines.append('%s%s: %s' % (indent, name, _value(value)))
    return lines


def parameters_text(params, notes=(), node=NODE_KEY):
    """
    Return a node parameters file's text: ``notes`` as comments at the top, then ``params``.

    ``params`` is ``{name: value}`` in the order written: a ``dict`` value holds the parameters
    below that name (``{'drive': {'viscous': [...]}}`` is ``drive.viscous``), a :class:`Block`
    is written as a literal block, else a bool, a number, a text or a list of them. ``node`` is
    the node key (default :data:`NODE_KEY`, every node).
    """
    lines = ['# %s' % note for note in notes]
    lines += ['%s:' % node, '%sros__parameters:%s' % (INDENT, '' if params else ' {}')]
    lines += _lines(params, 2 * INDENT)
    return '\n'.join(lines) + '\n'


def write_parameters(path, params, notes=(), node=NODE_KEY):
    """
    Write a node parameters file whole (:func:`~rbd_dynamics.analysis.write_file`).

    The arguments after ``path`` are those of :func:`parameters_text`.

    Raises
    ------
    OSError
        the file cannot be written (the old one, if any, is left as it was).

    """
    write_file(path, parameters_text(params, notes, node))


def read_parameters(path, what='the parameters file'):
    """
    Return the parameters of a node parameters file, nested as the file has them.

    Its first ``ros__parameters`` under any node key; a file without one gives its content as
    it is (a plain mapping of parameters, or what the caller finds is not one).

    Raises
    ------
    AnalysisError
        the file cannot be read, or is not YAML (``what`` says what it is in the message).

    """
    data = read_yaml(path, what)
    if isinstance(data, dict):
        for value in data.values():
            if isinstance(value, dict) and isinstance(value.get('ros__parameters'), dict):
                return value['ros__parameters']
    return data


def flat_parameters(path, what='the parameters file'):
    """
    Return a node parameters file's parameters, flat by their node names (``drive.viscous``).

    Raises
    ------
    AnalysisError
        an unreadable file, or not a parameters file.

    """
    data = read_parameters(path, what)
    if not isinstance(data, dict):
        raise AnalysisError('%s %s: expected a node parameters file' % (what, path))
    flat = {}

    def walk(tree, prefix):
        for key, value in tree.items():
            if isinstance(value, dict):
                walk(value, prefix + str(key) + '.')
            else:
                flat[prefix + str(key)] = value
    walk(data, '')
    return flat
