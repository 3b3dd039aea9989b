"""
Identified parameters written back: the description with new ``<inertial>`` and a drive file.

**Bodies of several links.** The regressor has ten parameters per *body*: a link with a moving
joint and every link attached beyond it by fixed joints (a flange, a force/torque sensor, a
tool). Torques cannot tell which of those links carries the mass, so the written URDF puts
the whole change on the body's **own link** (the child link of its moving joint) and leaves
every link beyond the fixed joints as the description has it. The links beyond a wrist
force/torque sensor therefore keep their description, which is what the sensor's payload
compensation (``compensate_payload``) uses; if what is wrong is the tool itself, correct the
tool's link (or declare it as a payload) and identify again. The identification constrains
the own link's part to be physically consistent, so every written ``<inertial>`` is.

Everything else in the document — joints, limits, names, visuals, collisions, comments,
other elements — is kept as it is; the ``<inertial>`` of an own link is replaced by one with
the centre of mass in ``<origin xyz>``, ``rpy="0 0 0"`` and the inertia about the centre of
mass in the link's axes.
"""

import json
import xml.etree.ElementTree as ET

import numpy as np

from ..analysis import AnalysisError
from ..spatial import link_inertial

URDF_NAME = 'identified.urdf'
DRIVE_NAME = 'drive.yaml'
DESCRIPTION_NAME = 'description.yaml'
#: The parameters file's node key: any node name (the node may be started under another).
NODE_KEY = '/**'


def _number(value):
    return '%.17g' % float(value)


def _inertial_element(mass, com, inertia, tail=None):
    element = ET.Element('inertial')
    element.text = tail
    ET.SubElement(element, 'origin', {'xyz': ' '.join(_number(c) for c in com),
                                      'rpy': '0 0 0'})
    ET.SubElement(element, 'mass', {'value': _number(mass)})
    ET.SubElement(element, 'inertia', {
        'ixx': _number(inertia[0, 0]), 'ixy': _number(inertia[0, 1]),
        'ixz': _number(inertia[0, 2]), 'iyy': _number(inertia[1, 1]),
        'iyz': _number(inertia[1, 2]), 'izz': _number(inertia[2, 2])})
    return element


def identified_urdf(text, own_links):
    """
    Return the URDF ``text`` with the ``<inertial>`` of some links replaced.

    Parameters
    ----------
    text
        the description (``str`` or ``bytes``; xacro already expanded).
    own_links
        ``{link name: (10,) parameters about the link's origin in its axes}``.

    Raises
    ------
    AnalysisError
        the text is not XML, or a link is not in it.

    """
    parser = ET.XMLParser(target=ET.TreeBuilder(insert_comments=True))
    try:
        root = ET.fromstring(text, parser=parser)
    except ET.ParseError as err:
        raise AnalysisError('the description is not XML: %s' % err) from None
    links = {element.get('name'): element for element in root.iter('link')}
    for name, theta in own_links.items():
        if name not in links:
            raise AnalysisError('link %r is not in the description' % name)
        link = links[name]
        mass, com, inertia = link_inertial(theta)
        old = link.find('inertial')
        # the whitespace before the link's first child is its children's indentation
        indent = link.text if link.text and not link.text.strip() else '\n    '
        new = _inertial_element(mass, com, inertia)
        _indent(new, indent)
        if old is not None:
            new.tail = old.tail
            link[list(link).index(old)] = new
        else:
            new.tail = indent if len(link) else indent[:-2] or '\n'
            link.text = indent
            link.insert(0, new)
    body = ET.tostring(root, encoding='unicode')
    return '<?xml version="1.0"?>\n' + body + '\n'


def _indent(element, indent):
    """Indent ``element``'s children one level deeper than ``indent`` (a newline and spaces)."""
    inner = indent + '  '
    element.text = inner
    for child in element:
        child.tail = inner
    element[-1].tail = indent


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


def description_lines(text):
    """
    Return ``robot_description: ...`` as lines of a parameters file (under ``ros__parameters``).

    A literal block, its indentation given (``|2``: two more than the key), so that the text
    reaches the node exactly, a first line that starts with spaces included.
    """
    body = ['      ' + line if line else '' for line in text.rstrip('\n').split('\n')]
    return ['    robot_description: |2'] + body


def description_yaml(text, notes=(), root_link=None):
    """Return a node parameters file that gives the node the description ``text``."""
    head = ['# %s' % note for note in notes] + ['%s:' % NODE_KEY, '  ros__parameters:']
    if root_link:
        head.append('    root_link: %s' % json.dumps(root_link))
    return '\n'.join(head + description_lines(text)) + '\n'


def drive_yaml(joint_names, viscous, coulomb, armature, coulomb_velocity, notes=(),
               description=None, effort_scale=None, effort_offset=None):
    """
    Return a node parameters file with the identified drive (``--params-file`` as it is).

    ``notes`` are comment lines put at the top (what was identified, the offsets). With
    ``description`` (URDF text), the file carries it as ``robot_description``, a literal block:
    the text reaches the node exactly, whatever it holds (``-p robot_description:=...`` on
    the command line is parsed as YAML, and a comment with ``: `` in it breaks it). With
    ``effort_scale`` (one per joint), the file carries ``drive.effort_scale`` too, and with
    ``effort_offset`` (one per joint) ``drive.effort_offset``.
    """
    def values(array):
        return '[%s]' % ', '.join(yaml_number(v) for v in array)

    lines = ['# %s' % note for note in notes]
    lines += ['# Set drive.compensate: true to add the drive torques to ~/feedforward.',
              '# The contact observer takes them off the measured efforts (contact.drive: auto, '
              'on with these),',
              '# as the efforts it was identified from contained them.',
              '%s:' % NODE_KEY, '  ros__parameters:']
    if description is not None:
        lines += description_lines(description)
    lines += ['    joints: [%s]' % ', '.join(json.dumps(name) for name in joint_names),
              '    drive:',
              '      viscous: %s' % values(viscous),
              '      coulomb: %s' % values(coulomb),
              '      coulomb_velocity: %s' % values(np.broadcast_to(
                  np.asarray(coulomb_velocity, dtype=float), (len(joint_names),))),
              '      armature: %s' % values(armature)]
    if effort_scale is not None:
        lines.append('      effort_scale: %s' % values(effort_scale))
    if effort_offset is not None:
        lines.append('      effort_offset: %s' % values(effort_offset))
    return '\n'.join(lines) + '\n'
