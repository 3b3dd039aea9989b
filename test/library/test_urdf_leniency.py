"""
Harmless deviations that urdfdom (robot_state_publisher's reader) accepts are accepted too.

urdfdom reads XML with TinyXML2 and numbers with a C++ stream in the classic locale that must
consume the whole text (``strToDouble`` in urdf_parser's pose.cpp): ``1e-3``, ``+1``, ``.5`` and
``1.`` are numbers, ``1,5`` and ``0x10`` are not. Every hostile description
(``test/test_hostile_descriptions.py``) stays refused.
"""

import numpy as np
import pytest

import rbd_dynamics as rbd

ARM = """<?xml version="1.0"?>
<robot name="arm">
  <link name="base"/>
  <link name="upper">
    <inertial>
      <origin xyz="{com}" rpy="0 0 0"/>
      <mass value="{mass}"/>
      <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.01"/>
    </inertial>
  </link>
  <joint name="shoulder" type="revolute">
    <parent link="base"/>
    <child link="upper"/>
    <origin xyz="0 0 0.1"/>
    <axis xyz="0 1 0"/>
  </joint>
</robot>
"""


def _arm(com='0 0 0.2', mass='2.0'):
    return ARM.format(com=com, mass=mass)


def _gravity(text):
    model = rbd.Model.from_urdf(text, compiled=False)
    return rbd.gravity_torques(model, [0.3])


REFERENCE = None


def _reference():
    global REFERENCE
    if REFERENCE is None:
        REFERENCE = _gravity(_arm())
    return REFERENCE


@pytest.mark.parametrize('prefix', ['\n', '   \n\t', '\ufeff', '\ufeff\n  '],
                         ids=['newline', 'spaces-tab', 'bom', 'bom-whitespace'])
def test_whitespace_and_bom_before_the_declaration(prefix):
    np.testing.assert_array_equal(_gravity(prefix + _arm()), _reference())
    np.testing.assert_array_equal(_gravity((prefix + _arm()).encode('utf-8')), _reference())


@pytest.mark.parametrize('mass, value', [
    ('2', 2.0), ('+2', 2.0), ('2.', 2.0), ('.5', 0.5), ('2e0', 2.0), ('2E+0', 2.0),
    ('2000e-3', 2.0), (' 2.0 ', 2.0),
])
def test_number_formats(mass, value):
    expected = _gravity(_arm(mass=repr(value)))
    np.testing.assert_array_equal(_gravity(_arm(mass=mass)), expected)


@pytest.mark.parametrize('com', ['0  0   0.2', '  0 0 0.2  ', '0\t0\t0.2', '0\n 0\n 0.2',
                                 '0 0 +.2', '0. 0 2e-1'])
def test_vector_whitespace_and_formats(com):
    np.testing.assert_allclose(_gravity(_arm(com=com)), _reference(), rtol=1e-15, atol=0)


@pytest.mark.parametrize('mass', ['1,5', '0x10', '1_0', '2 kg', '', 'nan', 'inf'])
def test_numbers_urdfdom_refuses_are_refused(mass):
    with pytest.raises(rbd.UrdfError, match='upper'):
        rbd.Model.from_urdf(_arm(mass=mass), compiled=False)


@pytest.mark.parametrize('com', ['0 0', '0 0 0.2 1', '0,0,0.2'])
def test_vectors_of_the_wrong_size_are_refused(com):
    with pytest.raises(rbd.UrdfError, match='upper'):
        rbd.Model.from_urdf(_arm(com=com), compiled=False)


def test_unknown_elements_and_attributes_are_skipped():
    text = _arm().replace(
        '<link name="base"/>',
        '<link name="base" colour="red"><sensor name="x"/></link><ros2_control name="hw"/>'
        '<gazebo reference="upper"><mu1>0.5</mu1></gazebo>').replace(
        '<mass value="2.0"/>', '<mass value="2.0" unit="kg"/><note>heavy</note>')
    np.testing.assert_array_equal(_gravity(text), _reference())


def test_missing_optional_attributes_take_urdf_defaults():
    text = ARM.replace('<origin xyz="{com}" rpy="0 0 0"/>', '<origin/>').replace(
        '<axis xyz="0 1 0"/>', '').format(mass='2.0')
    model = rbd.Model.from_urdf(text, compiled=False)
    # no xyz: the centre of mass at the origin; no axis: URDF's default x axis
    np.testing.assert_allclose(rbd.gravity_torques(model, [0.3]), [0.0], atol=1e-15)
    assert model.joint_names == ('shoulder',)
