"""
The parameter table in code is the one source: the docs' table and the config file follow it.

``rbd_dynamics/control/config.py`` declares every parameter (the node gives each its rclpy type
in ``rbd_dynamics/ros/parameters.py``); ``docs/node.md`` carries the table
:func:`~rbd_dynamics.control.config.markdown_table` prints, and ``config/rbd_dynamics.yaml``
sets every parameter to its declared default (lists that default to empty are shown
commented out, as an example to fill in).
"""

import os
import re

import pytest

pytest.importorskip('rclpy')
yaml = pytest.importorskip('yaml')

from rbd_dynamics.control import config as parameters  # noqa: E402
from rbd_dynamics.ros.parameters import parameter_type  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BEGIN, END = '<!-- parameters:begin -->\n', '<!-- parameters:end -->'


def _flatten(tree, prefix=''):
    out = {}
    for key, value in tree.items():
        if isinstance(value, dict):
            out.update(_flatten(value, prefix + key + '.'))
        else:
            out[prefix + key] = value
    return out


def test_the_docs_table_is_the_code_table():
    with open(os.path.join(ROOT, 'docs', 'node.md')) as stream:
        page = stream.read()
    table = page[page.index(BEGIN) + len(BEGIN):page.index(END)]
    assert table == parameters.markdown_table(), \
        'docs/node.md: regenerate with python -m rbd_dynamics.control.config'


def test_every_declared_parameter_is_in_the_table():
    table = parameters.markdown_table()
    names = re.findall(r'^\| `([^`]+)` \|', table, re.MULTILINE)
    assert names == [spec.name for spec in parameters.all_specs()]
    assert len(names) == len(set(names))


def test_the_config_file_sets_every_parameter_to_its_default():
    path = os.path.join(ROOT, 'config', 'rbd_dynamics.yaml')
    with open(path) as stream:
        text = stream.read()
    document = yaml.safe_load(text)
    values = _flatten(document['/**']['ros__parameters'])
    specs = {spec.name: spec for spec in parameters.PARAMETERS}
    unknown = sorted(set(values) - set(specs))
    assert not unknown, 'not declared by the node: %s' % unknown
    for name, value in values.items():
        assert value == specs[name].default, (name, value, specs[name].default)
    commented = set(re.findall(r'^\s*#\s*([a-z_]+):', text, re.MULTILINE))
    for name, spec in specs.items():
        if name not in values:
            # an empty list cannot show an example value: it is there, commented out
            assert spec.default == [] and name.split('.')[-1] in commented, \
                '%s is missing from config/rbd_dynamics.yaml' % name


def test_every_parameter_has_its_rclpy_type():
    """The node declares each parameter with the rclpy type its default has."""
    python_types = {Parameter.Type.BOOL: bool, Parameter.Type.INTEGER: int,
                    Parameter.Type.DOUBLE: float, Parameter.Type.STRING: str,
                    Parameter.Type.DOUBLE_ARRAY: list, Parameter.Type.STRING_ARRAY: list}
    for spec in parameters.all_specs():
        assert isinstance(spec.default, python_types[parameter_type(spec)]), spec.name
