"""What the README promises about the library's errors, warnings, sub-trees and command line."""

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
import rbd_dynamics as rbd
from rbd_dynamics.resources import demo_urdf_path
from support.urdf_builders import inertial, joint, link, robot, two_link

G = 9.81


def test_unknown_link_is_a_key_error_and_a_value_error_listing_the_links(model):
    q = np.zeros(model.nq)
    for call in (lambda: rbd.rnea(model, q, q, q, {'no_such_link': np.zeros(6)}),
                 lambda: rbd.gravity_torques(model, q, {'no_such_link': np.zeros(6)}),
                 lambda: rbd.payload_wrench(model, 'no_such_link', q)):
        with pytest.raises(rbd.UnknownLinkError) as info:
            call()
        assert isinstance(info.value, KeyError) and isinstance(info.value, ValueError)
        message = str(info.value)
        assert 'no_such_link' in message
        assert all(name in message for name in model.link_names), message
    with pytest.raises(KeyError):
        rbd.rnea(model, q, q, q, {'no_such_link': np.zeros(6)})
    with pytest.raises(ValueError):
        rbd.rnea(model, q, q, q, {'no_such_link': np.zeros(6)})


def _arm(ixx):
    return robot('arm', link('base'), joint('j', 'revolute', 'base', 'body', axis=(0, 1, 0)),
                 link('body', inertial(1.0, (0.2, 0.0, 0.0), ixx=ixx, iyy=0.01, izz=0.01)))


def test_an_inconsistent_inertia_loads_with_a_warning():
    with pytest.warns(rbd.InertiaWarning, match='body'):
        model = rbd.Model.from_urdf(_arm(ixx=0.5))  # ixx > iyy + izz: no real body
    assert len(model.warnings) == 1 and 'body' in model.warnings[0]
    # it loads and computes: 1 kg held level 0.2 m out along x, about y
    assert rbd.gravity_torques(model, [0.0])[0] == pytest.approx(-G * 0.2, rel=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        assert rbd.Model.from_urdf(_arm(ixx=0.015)).warnings == ()


def test_a_root_link_gives_the_sub_tree_below_it():
    """
    A root link gives the sub-tree below it.

    root_link='upper' of the two-link arm: only the elbow and the links below 'upper'; with
    the shoulder at rest at zero the elbow torque is the full arm's.
    """
    text = two_link(1.7, 1.1, 0.55, 0.3, 0.22, 0.04, 0.02)
    full = rbd.Model.from_urdf(text, gravity=(0, -G, 0))
    sub = rbd.Model.from_urdf(text, gravity=(0, -G, 0), root_link='upper')
    assert sub.root_link == 'upper'
    assert sub.link_names == ('upper', 'fore') and sub.joint_names == ('elbow',)
    rng = np.random.default_rng(21)
    for q, qd, qdd in rng.uniform(-3, 3, (10, 3)):
        expected = rbd.rnea(full, [0.0, q], [0.0, qd], [0.0, qdd])[1]
        assert rbd.rnea(sub, [q], [qd], [qdd])[0] == pytest.approx(expected, rel=1e-12,
                                                                   abs=1e-12)
    with pytest.raises(rbd.UnknownLinkError):  # 'base' is above the new root
        rbd.rnea(sub, [0.0], [0.0], [0.0], {'base': np.zeros(6)})
    with pytest.raises(rbd.UrdfError, match='root_link'):
        rbd.Model.from_urdf(text, root_link='no_such_link')


@pytest.mark.slow
def test_the_command_line_prints_the_library_torques(model):
    q = np.linspace(-0.8, 0.9, model.nq)
    qd = np.linspace(0.5, -0.5, model.nv)
    qdd = np.linspace(-1.0, 2.0, model.nv)
    wrench = [1.0, -2.0, 3.0, 0.1, 0.2, -0.3]
    command = [sys.executable, '-m', 'rbd_dynamics', demo_urdf_path()]
    for flag, values in (('--q', q), ('--qd', qd), ('--qdd', qdd)):
        command += [flag] + [repr(float(v)) for v in values]
    command += ['--wrench', 'ft_frame'] + [repr(v) for v in wrench]
    out = subprocess.run(command, capture_output=True, text=True, timeout=600, check=True,
                         cwd=os.path.dirname(os.path.abspath(__file__))).stdout
    rows = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[0] in model.joint_names:
            rows[parts[0]] = [float(x) for x in parts[1:]]
    assert list(rows) == list(model.joint_names), out
    printed = np.array([rows[name] for name in model.joint_names])
    f_ext = {'ft_frame': wrench}
    np.testing.assert_allclose(printed[:, 0], q, rtol=0, atol=1e-5)
    np.testing.assert_allclose(printed[:, 1], rbd.rnea(model, q, qd, qdd, f_ext), rtol=0,
                               atol=1e-5)
    np.testing.assert_allclose(printed[:, 2], rbd.gravity_torques(model, q, f_ext), rtol=0,
                               atol=1e-5)
    bad = subprocess.run(command[:4] + ['--q', '1', '2'], capture_output=True, text=True,
                         timeout=600)
    assert bad.returncode != 0 and 'needs %d numbers' % model.nq in bad.stderr


def test_a_mimic_on_a_fixed_joint_is_a_description_warning_not_an_inertia_one():
    text = robot('arm', link('base'), joint('j', 'revolute', 'base', 'body', axis=(0, 1, 0)),
                 link('body', inertial(1.0, (0.2, 0.0, 0.0), 0.01, 0.01, 0.01)),
                 joint('tool_joint', 'fixed', 'body', 'tool', mimic=('j', 1.0, 0.0)),
                 link('tool'))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        model = rbd.Model.from_urdf(text)
    assert [w.category for w in caught] == [rbd.DescriptionWarning]
    assert 'tool_joint' in str(caught[0].message)
    assert model.warnings == (str(caught[0].message),)
    assert issubclass(rbd.InertiaWarning, rbd.DescriptionWarning)


def test_warnings_point_at_the_line_that_built_the_model(tmp_path):
    text = _arm(ixx=0.5)
    path = tmp_path / 'arm.urdf'
    path.write_text(text)
    desc = rbd.parse_urdf(text)
    builders = {'from_urdf': lambda: rbd.Model.from_urdf(text),
                'from_urdf_file': lambda: rbd.Model.from_urdf_file(str(path)),
                'from_description': lambda: rbd.Model.from_description(desc),
                'Model': lambda: rbd.Model(desc)}
    for name, build in builders.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            build()
        assert [w.category for w in caught] == [rbd.InertiaWarning], name
        assert caught[0].filename == __file__, (name, caught[0].filename)
