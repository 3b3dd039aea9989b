"""
URDF reading: hardened XML parsing into a :class:`~rbd_dynamics.parsers.description.Description`.

Only what the dynamics needs is read: links with their ``<inertial>``, joints with origin, axis,
``<mimic>``, the effort and position range of ``<limit>`` and ``<dynamics damping friction>``.
Visuals, collisions, materials, transmissions and ``<gazebo>`` tags are skipped.

A description arrives from the ROS graph, which anyone on the network may publish to, so the XML
is parsed defensively: its size is bounded (``max_bytes``), entity declarations (the
"billion laughs" and quadratic blow-up attacks) and external entities are refused, and element
nesting is bounded. Every problem raises :class:`UrdfError` naming the element.
"""

import math
import xml.parsers.expat

import numpy as np

from .description import Description, finite_number, finite_vector, UrdfError
from ..joints import check_joint_type
from ..spatial import inertia_tensor, rpy_to_matrix

#: Largest description accepted by default [bytes] (real URDFs are a few hundred kB at most).
MAX_DESCRIPTION_BYTES = 8 * 1024 * 1024

#: The attributes of ``<inertia>``, in the order :func:`add_inertial_link` takes them.
INERTIA_KEYS = ('ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz')

#: Deepest element nesting accepted (a URDF needs 4 or 5 levels).
MAX_DEPTH = 64


class _Element:
    __slots__ = ('tag', 'attrib', 'children', 'line')

    def __init__(self, tag, attrib, line):
        self.tag = tag
        self.attrib = attrib
        self.children = []
        self.line = line

    def find(self, tag):
        for child in self.children:
            if child.tag == tag:
                return child
        return None


_UTF8_BOM = b'\xef\xbb\xbf'


def _refuse_entities(*_args):
    raise UrdfError('robot description: XML entity declarations are not accepted')


def parse_xml(text, max_bytes=MAX_DESCRIPTION_BYTES):
    """
    Parse XML into a light element tree, refusing entities, oversize and deep nesting.

    Parameters
    ----------
    text
        the document, ``str`` or ``bytes``.
    max_bytes
        the largest accepted size [bytes] (of the UTF-8 encoding for ``str``).

    Returns
    -------
    The root element.

    Raises
    ------
    UrdfError
        the text is not acceptable XML.

    """
    if isinstance(text, str):
        data = text.encode('utf-8', errors='replace')
    elif isinstance(text, (bytes, bytearray)):
        data = bytes(text)
    else:
        raise UrdfError('robot description must be str or bytes, got %s' % type(text).__name__)
    if len(data) > max_bytes:
        raise UrdfError('robot description is %d bytes, more than the limit of %d bytes'
                        % (len(data), max_bytes))
    # urdfdom (TinyXML2) skips a byte order mark and whitespace before the XML declaration;
    # expat refuses a declaration that is not at the very start.
    if data.startswith(_UTF8_BOM):
        data = data[len(_UTF8_BOM):]
    data = data.lstrip(b' \t\r\n')
    if not data:
        raise UrdfError('robot description is empty')

    parser = xml.parsers.expat.ParserCreate()
    parser.SetParamEntityParsing(xml.parsers.expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.EntityDeclHandler = _refuse_entities
    parser.UnparsedEntityDeclHandler = _refuse_entities
    parser.ExternalEntityRefHandler = _refuse_entities
    stack = []
    roots = []

    def start(tag, attrib):
        if len(stack) >= MAX_DEPTH:
            raise UrdfError('robot description: elements nested deeper than %d levels' % MAX_DEPTH)
        element = _Element(tag, attrib, parser.CurrentLineNumber)
        if stack:
            stack[-1].children.append(element)
        else:
            roots.append(element)
        stack.append(element)

    def end(_tag):
        stack.pop()

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    try:
        parser.Parse(data, True)
    except xml.parsers.expat.ExpatError as err:
        raise UrdfError('robot description is not well-formed XML: %s' % err) from None
    if not roots:
        raise UrdfError('robot description has no XML element')
    return roots[0]


def numbers(element, attr, size, default=None, where=None):
    """
    Return ``size`` finite numbers of attribute ``attr`` of ``element`` as an array.

    ``default`` where the element or the attribute is absent (``None``: it must be there);
    ``where`` names the element in messages (by default its tag and line).

    Raises
    ------
    UrdfError
        the attribute is absent without a default, or is not ``size`` finite numbers.

    """
    if where is None and element is not None:
        where = '<%s> (line %d)' % (element.tag, element.line)
    if element is None or attr not in element.attrib:
        if default is None:
            raise UrdfError('%s has no %s' % (where, attr))
        return np.array(default, dtype=float)
    raw = element.attrib[attr]
    parts = raw.split()
    if len(parts) != size:
        raise UrdfError('%s: %s="%s" must hold %d numbers' % (where, attr, raw, size))
    return finite_vector([_to_float(p, where, attr) for p in parts], size, '%s %s' % (where, attr))


def _to_float(text, where, attr):
    # The number formats of urdfdom's C++ stream parsing: '1e-3', '+1', '.5', '1.' are numbers;
    # '1,5' and '0x10' are not, nor is Python's '1_0'.
    try:
        if '_' in text:
            raise ValueError(text)
        return float(text)
    except ValueError:
        raise UrdfError('%s: %s has %r, which is not a number' % (where, attr, text)) from None


def _scalar(element, attr, default, where):
    if element is None or attr not in element.attrib:
        return default
    return finite_number(_to_float(element.attrib[attr], where, attr), '%s %s' % (where, attr))


def _origin(element, where):
    origin = element.find('origin')
    xyz = numbers(origin, 'xyz', 3, (0.0, 0.0, 0.0), where + ' origin')
    rpy = numbers(origin, 'rpy', 3, (0.0, 0.0, 0.0), where + ' origin')
    return xyz, rpy


def _name(element, kind):
    name = element.attrib.get('name', '')
    if not name:
        raise UrdfError('a <%s> element (line %d) has no name' % (kind, element.line))
    return name


def _read_link(desc, element):
    name = _name(element, 'link')
    inertial = element.find('inertial')
    if inertial is None:
        desc.add_link(name)
        return
    where = 'link %r inertial' % name
    xyz, rpy = _origin(inertial, where)
    mass_el = inertial.find('mass')
    mass = _scalar(mass_el, 'value', 0.0, where + ' mass')
    inertia_el = inertial.find('inertia')
    moments = [_scalar(inertia_el, key, 0.0, where + ' inertia') for key in INERTIA_KEYS]
    add_inertial_link(desc, name, mass, xyz, rpy, moments)


def add_inertial_link(desc, name, mass, xyz, rpy, moments):
    """
    Add a link with a URDF ``<inertial>`` to a description.

    Parameters
    ----------
    desc
        the :class:`Description` to add to.
    name
        link name.
    mass
        [kg].
    xyz, rpy
        ``(3,)`` the inertial frame in the link frame [m, rad].
    moments
        ``(ixx, ixy, ixz, iyy, iyz, izz)`` about the centre of mass, in the inertial
        frame's axes [kg m^2].

    Raises
    ------
    UrdfError
        an unusable value (the message names the link).

    """
    inertia = inertia_tensor(finite_vector(moments, 6, 'link %r inertia' % name))
    rot = rpy_to_matrix(finite_vector(rpy, 3, 'link %r inertial origin rpy' % name))
    desc.add_link(name, mass=mass, com=xyz, inertia=rot @ inertia @ rot.T)


def _read_joint(desc, element):
    name = _name(element, 'joint')
    where = 'joint %r' % name
    jtype = element.attrib.get('type', '')
    check_joint_type(jtype, where, urdf=True, error=UrdfError)
    links = {}
    for role in ('parent', 'child'):
        tag = element.find(role)
        if tag is None or not tag.attrib.get('link'):
            raise UrdfError('%s: missing <%s link="..."/>' % (where, role))
        links[role] = tag.attrib['link']
    xyz, rpy = _origin(element, where)
    axis = numbers(element.find('axis'), 'xyz', 3, (1.0, 0.0, 0.0), where + ' axis')
    mimic = None
    mimic_el = element.find('mimic')
    if mimic_el is not None:
        master = mimic_el.attrib.get('joint', '')
        if not master:
            raise UrdfError('%s: <mimic> has no joint attribute' % where)
        mimic = (master, _scalar(mimic_el, 'multiplier', 1.0, where + ' mimic'),
                 _scalar(mimic_el, 'offset', 0.0, where + ' mimic'))
    limit = element.find('limit')
    dynamics = element.find('dynamics')
    desc.add_joint(name, jtype, links['parent'], links['child'], xyz=xyz, rpy=rpy, axis=axis,
                   mimic=mimic, effort=_scalar(limit, 'effort', 0.0, where + ' limit'),
                   damping=_scalar(dynamics, 'damping', 0.0, where + ' dynamics'),
                   friction=_scalar(dynamics, 'friction', 0.0, where + ' dynamics'),
                   lower=_scalar(limit, 'lower', None, where + ' limit'),
                   upper=_scalar(limit, 'upper', None, where + ' limit'))


def joint_limits(text):
    """
    Return ``{joint: (lower, upper, velocity)}`` of each joint's ``<limit>`` in a URDF text.

    A value that is absent or not a finite number is ``None`` (the text's structure is checked
    by :func:`parse_urdf`; this reads what a tool may use of it, the velocity limit too).
    """
    out = {}
    for element in parse_xml(text).children:
        if element.tag != 'joint':
            continue
        limit = element.find('limit')
        values = []
        for attr in ('lower', 'upper', 'velocity'):
            raw = None if limit is None else limit.attrib.get(attr)
            try:
                value = float(raw) if raw is not None else None
            except ValueError:
                value = None
            values.append(value if value is not None and math.isfinite(value) else None)
        out[element.attrib.get('name')] = tuple(values)
    return out


def parse_urdf(text, max_bytes=MAX_DESCRIPTION_BYTES):
    """
    Read a URDF document into a :class:`Description`.

    Parameters
    ----------
    text
        URDF XML (``str`` or ``bytes``).
    max_bytes
        the largest accepted size [bytes].

    Returns
    -------
    The links and joints, in document order.

    Raises
    ------
    UrdfError
        the document is unusable; the message names the element.

    """
    root = parse_xml(text, max_bytes=max_bytes)
    if root.tag != 'robot':
        raise UrdfError('robot description: the root element is <%s>, expected <robot>' % root.tag)
    desc = Description(root.attrib.get('name', ''))
    for element in root.children:
        if element.tag == 'link':
            _read_link(desc, element)
        elif element.tag == 'joint':
            _read_joint(desc, element)
    if not desc.links:
        raise UrdfError('robot description %r has no <link>' % desc.name)
    return desc
