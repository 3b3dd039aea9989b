"""
xacro files: the library, the command line and the messages when xacro fails or is missing.

``descriptions/two_link.urdf.xacro`` uses a macro, a property and an argument;
``descriptions/two_link.urdf`` is its expansion with ``link_mass:=2.0``, written out by hand.
"""

import builtins
import os
import subprocess
import sys

import numpy as np
import pytest
import rbd_dynamics as rbd
from rbd_dynamics.parsers.files import read_description_file, split_xacro_args
from rbd_dynamics.parsers.urdf import parse_urdf
from support.description_compare import description_differences

pytest.importorskip('xacro')

HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'descriptions')
XACRO = os.path.join(HERE, 'two_link.urdf.xacro')
EXPANDED = os.path.join(HERE, 'two_link.urdf')
BROKEN = os.path.join(HERE, 'broken.urdf.xacro')


def test_xacro_file_equals_its_hand_expansion():
    from_xacro = read_description_file(XACRO, xacro_args={'link_mass': 2.0})
    assert description_differences(parse_urdf(from_xacro), parse_urdf(read_description_file(
        EXPANDED)), rtol=1e-15) == []
    a = rbd.Model.from_urdf_file(XACRO, xacro_args={'link_mass': 2.0})
    b = rbd.Model.from_urdf_file(EXPANDED)
    assert a.joint_names == b.joint_names == ('shoulder', 'elbow')
    np.testing.assert_array_equal(a.effort_limits, [80.0, 40.0])
    np.testing.assert_array_equal(a.damping, b.damping)
    state = np.random.default_rng(3).uniform(-1, 1, (3, 5, a.nv))
    np.testing.assert_allclose(rbd.rnea(a, *state), rbd.rnea(b, *state), rtol=1e-13, atol=1e-13)


def test_xacro_argument_changes_the_model():
    default = parse_urdf(read_description_file(XACRO))  # link_mass defaults to 1.0
    assert default.links['upper'].mass == 1.0
    assert default.links['lower'].mass == 0.5


def test_xacro_that_cannot_be_expanded_names_file_and_xacro_error():
    with pytest.raises(rbd.UrdfError) as info:
        rbd.Model.from_urdf_file(BROKEN)
    message = str(info.value)
    assert 'broken.urdf.xacro' in message and 'xacro cannot expand' in message
    assert 'missing_macro' in message  # xacro's own words name the undefined macro


def test_missing_xacro_file():
    with pytest.raises(rbd.UrdfError, match='no such file'):
        rbd.Model.from_urdf_file(os.path.join(HERE, 'absent.urdf.xacro'))


def test_xacro_arguments_for_a_plain_urdf_are_refused():
    with pytest.raises(rbd.UrdfError, match='only a .xacro file'):
        rbd.Model.from_urdf_file(EXPANDED, xacro_args={'link_mass': '2'})


def test_without_xacro_installed_the_error_says_how_to_get_it(monkeypatch):
    real_import = builtins.__import__

    def no_xacro(name, *args, **kwargs):
        if name == 'xacro' or name.startswith('xacro.'):
            raise ModuleNotFoundError("No module named 'xacro'", name='xacro')
        return real_import(name, *args, **kwargs)

    monkeypatch.delitem(sys.modules, 'xacro', raising=False)
    monkeypatch.setattr(builtins, '__import__', no_xacro)
    with pytest.raises(rbd.UrdfError) as info:
        rbd.Model.from_urdf_file(XACRO)
    message = str(info.value)
    assert 'two_link.urdf.xacro' in message and 'pip install xacro' in message


def test_split_xacro_args():
    rest, mappings = split_xacro_args(['robot.xacro', 'a:=1', '--q', '0', 'b:=x:=y', 'c:='])
    assert rest == ['robot.xacro', '--q', '0']
    assert mappings == {'a': '1', 'b': 'x:=y', 'c': ''}
    with pytest.raises(rbd.UrdfError, match='no name'):
        split_xacro_args([':=1'])


def _cli(*args):
    return subprocess.run([sys.executable, '-m', 'rbd_dynamics'] + list(args),
                          capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, RBD_DYNAMICS_DISABLE_JIT='1'))


def test_command_line_takes_xacro_and_its_arguments():
    from_xacro = _cli(XACRO, 'link_mass:=2.0', '--q', '0.3', '-0.5')
    from_urdf = _cli(EXPANDED, '--q', '0.3', '-0.5')
    assert from_xacro.returncode == 0, from_xacro.stderr
    assert from_urdf.returncode == 0, from_urdf.stderr
    # identical torque table (the first line names the file)
    assert from_xacro.stdout.splitlines()[1:] == from_urdf.stdout.splitlines()[1:]
    assert 'shoulder' in from_xacro.stdout


@pytest.mark.parametrize('args, words', [
    ((BROKEN,), ('broken.urdf.xacro', 'xacro cannot expand')),
    ((EXPANDED, 'link_mass:=2'), ('only a .xacro file',)),
])
def test_command_line_bad_xacro_is_a_message_not_a_traceback(args, words):
    result = _cli(*args)
    assert result.returncode == 1
    assert 'Traceback' not in result.stderr
    for word in words:
        assert word in result.stderr
