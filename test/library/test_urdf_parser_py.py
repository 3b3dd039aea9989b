"""
Cross-check against urdf_parser_py.

urdf_parser_py (``urdfdom_py``) against our reader on every description example-robot-data
ships, and ``Model.from_urdf_robot`` against ``Model.from_urdf``.

Both readers must give the same links (mass, centre of mass, inertia) and joints (type, parent,
child, origin, axis, effort limit, damping, friction, mimic). urdf_parser_py refuses some
descriptions over elements the dynamics does not read (a texture without a file name, a
transmission without a type); that list is checked, so that a change in either is noticed.
"""

import contextlib
import io
import warnings

import numpy as np
import pytest
import rbd_dynamics as rbd
from rbd_dynamics.parsers.urdf_parser_py import description_from_urdf_robot
from support.description_compare import description_differences
from support.robots import all_urdfs, robot_id

urdf = pytest.importorskip('urdf_parser_py.urdf')

# Descriptions urdf_parser_py 1.2 refuses, with the start of its error (ur3.urdf is empty).
REFUSED_BY_URDF_PARSER_PY = {
    'icub': 'Required attribute not set in XML: filename',  # <texture> without filename
    'icub/icub_reduced': 'Required attribute not set in XML: filename',
    'pr2': 'Could not perform duck-typed parsing',  # <transmission> without <type>
    'romeo/romeo_laas_small': 'Required attribute not set in XML: filename',
    'ur/ur3': 'Required attribute not set in XML: name',
}

PATHS = all_urdfs()


def _read_with_urdf_parser_py(text):
    with contextlib.redirect_stderr(io.StringIO()):  # it prints every unknown element
        return urdf.URDF.from_xml_string(text)


def _read_both(path):
    with open(path, 'rb') as stream:
        text = stream.read()
    try:
        robot = _read_with_urdf_parser_py(text)
    except Exception as err:  # urdf_parser_py raises ParseError, AssertionError, ...
        return text, None, '%s: %s' % (type(err).__name__, err)
    return text, robot, None


@pytest.fixture(scope='module')
def outcomes():
    return {robot_id(path): _read_both(path) for path in PATHS}


def test_descriptions_urdf_parser_py_refuses(outcomes):
    if not PATHS:
        pytest.skip('example-robot-data is not installed')
    refused = {rid: err for rid, (_, robot, err) in outcomes.items() if robot is None}
    for rid, err in sorted(refused.items()):
        print('urdf_parser_py refuses %s: %s' % (rid, err.splitlines()[0][:160]))
    assert sorted(refused) == sorted(REFUSED_BY_URDF_PARSER_PY)
    for rid, words in REFUSED_BY_URDF_PARSER_PY.items():
        assert words in refused[rid]


@pytest.mark.parametrize('path', PATHS, ids=[robot_id(p) for p in PATHS])
def test_both_readers_agree(path, outcomes):
    text, robot, _ = outcomes[robot_id(path)]
    if robot is None:
        assert robot_id(path) in REFUSED_BY_URDF_PARSER_PY
        return
    try:
        ours = rbd.parse_urdf(text)
    except rbd.UrdfError as err:
        pytest.fail('our reader refuses what urdf_parser_py reads: %s' % err)
    assert description_differences(ours, description_from_urdf_robot(robot)) == []


@pytest.mark.parametrize('path', PATHS, ids=[robot_id(p) for p in PATHS])
def test_from_urdf_robot_gives_the_same_torques(path, outcomes):
    text, robot, _ = outcomes[robot_id(path)]
    if robot is None:
        return
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', rbd.InertiaWarning)
        try:
            expected_model = rbd.Model.from_urdf(text, compiled=False)
        except rbd.UrdfError as err:  # a broken description: refused the same way
            with pytest.raises(rbd.UrdfError) as info:
                rbd.Model.from_urdf_robot(robot, compiled=False)
            assert str(info.value) == str(err)
            return
        model = rbd.Model.from_urdf_robot(robot, compiled=False)
    assert model.joint_names == expected_model.joint_names
    rng = np.random.default_rng(7)
    q = rng.uniform(-1, 1, (4, model.nq))
    qd, qdd = rng.uniform(-1, 1, (2, 4, model.nv))
    np.testing.assert_allclose(rbd.rnea(model, q, qd, qdd), rbd.rnea(expected_model, q, qd, qdd),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(model.effort_limits, expected_model.effort_limits)
    np.testing.assert_array_equal(model.damping, expected_model.damping)
    np.testing.assert_array_equal(model.friction, expected_model.friction)


def test_not_a_robot_is_refused():
    with pytest.raises(rbd.UrdfError, match='urdf_parser_py'):
        rbd.Model.from_urdf_robot('<robot/>')
