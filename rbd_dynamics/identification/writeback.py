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
mass in the link's axes. :func:`identified_urdf` is the package's one edit of that kind.

The drive and description files are node parameters files: their parameters are chosen here,
the file is :mod:`rbd_dynamics.analysis.parameters_file`'s.
"""

import xml.etree.ElementTree as ET

import numpy as np

from ..analysis import AnalysisError
from ..analysis.parameters_file import Block, parameters_text
from ..spatial import link_inertial

URDF_NAME = 'identified.urdf'
DRIVE_NAME = 'drive.yaml'
DESCRIPTION_NAME = 'description.yaml'


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


def _floats(values):
    return [float(v) for v in values]


def description_yaml(text, notes=(), root_link=None):
    """Return a node parameters file that gives the node the description ``text``."""
    params = {'root_link': root_link} if root_link else {}
    params['robot_description'] = Block(text)
    return parameters_text(params, notes)


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
    notes = list(notes) + [
        'Set drive.compensate: true to add the drive torques to ~/feedforward.',
        'The contact observer takes them off the measured efforts (contact.drive: auto, on '
        'with these),',
        'as the efforts it was identified from contained them.']
    params = {} if description is None else {'robot_description': Block(description)}
    drive = {'viscous': _floats(viscous), 'coulomb': _floats(coulomb),
             'coulomb_velocity': _floats(np.broadcast_to(
                 np.asarray(coulomb_velocity, dtype=float), (len(joint_names),))),
             'armature': _floats(armature)}
    if effort_scale is not None:
        drive['effort_scale'] = _floats(effort_scale)
    if effort_offset is not None:
        drive['effort_offset'] = _floats(effort_offset)
    params.update(joints=[str(name) for name in joint_names], drive=drive)
    return parameters_text(params, notes)
