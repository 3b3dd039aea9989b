"""URDF text for the analytic and property tests: small robots whose dynamics are known."""

import numpy as np


def _v(values):
    return ' '.join('%.17g' % float(v) for v in values)


def inertial(mass, com=(0.0, 0.0, 0.0), ixx=0.0, iyy=0.0, izz=0.0, ixy=0.0, ixz=0.0, iyz=0.0,
             rpy=(0.0, 0.0, 0.0)):
    return ('<inertial><origin xyz="%s" rpy="%s"/><mass value="%s"/>'
            '<inertia ixx="%s" iyy="%s" izz="%s" ixy="%s" ixz="%s" iyz="%s"/></inertial>'
            % ((_v(com), _v(rpy))
               + tuple(_v([x]) for x in (mass, ixx, iyy, izz, ixy, ixz, iyz))))


def link(name, *inertials):
    return '<link name="%s">%s</link>' % (name, ''.join(inertials))


def joint(name, jtype, parent, child, xyz=(0.0, 0.0, 0.0), rpy=(0.0, 0.0, 0.0),
          axis=(0.0, 0.0, 1.0), mimic=None):
    extra = ''
    if mimic is not None:
        extra = '<mimic joint="%s" multiplier="%r" offset="%r"/>' % mimic
    return ('<joint name="%s" type="%s"><parent link="%s"/><child link="%s"/>'
            '<origin xyz="%s" rpy="%s"/><axis xyz="%s"/>%s</joint>'
            % (name, jtype, parent, child, _v(xyz), _v(rpy), _v(axis), extra))


def robot(name, *parts):
    return '<?xml version="1.0"?><robot name="%s">%s</robot>' % (name, ''.join(parts))


def pendulum(mass, length, inertia_c):
    """Return a bob hanging ``length`` below a joint about y, with a fixed ``tip`` link at it."""
    return robot(
        'pendulum',
        link('base'),
        joint('swing', 'revolute', 'base', 'bob', axis=(0, 1, 0)),
        link('bob', inertial(mass, (0, 0, -length), ixx=inertia_c, iyy=inertia_c,
                             izz=inertia_c)),
        joint('tip_joint', 'fixed', 'bob', 'tip', xyz=(0, 0, -length)),
        link('tip'))


def two_link(m1, m2, l1, lc1, lc2, i1, i2):
    """Return the planar two-link arm of the lecture notes: joints about z, links along x."""
    return robot(
        'two_link',
        link('base'),
        joint('shoulder', 'revolute', 'base', 'upper'),
        link('upper', inertial(m1, (lc1, 0, 0), ixx=0.03, iyy=i1 + 0.02, izz=i1)),
        joint('elbow', 'revolute', 'upper', 'fore', xyz=(l1, 0, 0)),
        link('fore', inertial(m2, (lc2, 0, 0), ixx=0.03, iyy=i2 + 0.02, izz=i2)))


def two_link_terms(params, q, qd, g=9.81):
    """
    Return the closed-form ``(M, C, g)`` of :func:`two_link` (gravity along -y of the base).

    The lecture notes' planar arm: ``params = (m1, m2, l1, lc1, lc2, i1, i2)``; ``C`` is the
    Christoffel-symbol matrix.
    """
    m1, m2, l1, r1, r2, i1, i2 = params
    c2, s2 = np.cos(q[1]), np.sin(q[1])
    alpha = i1 + i2 + m1 * r1 ** 2 + m2 * (l1 ** 2 + r2 ** 2)
    beta = m2 * l1 * r2
    delta = i2 + m2 * r2 ** 2
    mass = np.array([[alpha + 2 * beta * c2, delta + beta * c2], [delta + beta * c2, delta]])
    coriolis = np.array([[-beta * s2 * qd[1], -beta * s2 * (qd[0] + qd[1])],
                         [beta * s2 * qd[0], 0.0]])
    c1, c12 = np.cos(q[0]), np.cos(q[0] + q[1])
    gravity = np.array([(m1 * r1 + m2 * l1) * g * c1 + m2 * r2 * g * c12, m2 * r2 * g * c12])
    return mass, coriolis, gravity


def scaled(urdf, factor):
    """
    Return the description ``urdf`` with every length multiplied by ``factor`` (1000: in mm).

    Origins and geometry scale by ``factor``, inertias by ``factor**2`` (the masses stay), and
    whatever a prismatic joint's coordinate carries (limits, mimic offsets) by ``factor``;
    efforts, damping and friction take the unit of length of their joint (N m: ``factor**2``,
    N: ``factor``). The same robot, described in another unit of length: its torques are
    ``factor**2`` and its forces ``factor`` times larger numbers, with gravity given in the
    same unit (``-9.81 * factor``).
    """
    import xml.etree.ElementTree as ET

    root = ET.fromstring(urdf.strip())

    def times(element, name, k):
        if element.get(name) is not None:
            values = [float(v) * k for v in element.get(name).split()]
            element.set(name, _v(values))

    for origin in root.iter('origin'):
        times(origin, 'xyz', factor)
    for inertia in root.iter('inertia'):
        for name in ('ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz'):
            times(inertia, name, factor ** 2)
    for box in root.iter('box'):
        times(box, 'size', factor)
    for shape in list(root.iter('cylinder')) + list(root.iter('sphere')) + \
            list(root.iter('capsule')):
        times(shape, 'radius', factor)
        times(shape, 'length', factor)
    for mesh in root.iter('mesh'):
        mesh.set('scale', mesh.get('scale', '1 1 1'))
        times(mesh, 'scale', factor)
    types = {j.get('name'): j.get('type') for j in root.iter('joint')}
    for j in root.iter('joint'):
        linear = j.get('type') == 'prismatic'
        torque = factor if linear else factor ** 2  # N or N m
        for limit in j.iter('limit'):
            times(limit, 'effort', torque)
            if linear:
                for name in ('lower', 'upper', 'velocity'):
                    times(limit, name, factor)
        for dynamics in j.iter('dynamics'):
            times(dynamics, 'damping', torque)
            times(dynamics, 'friction', torque)
        for mimic in j.iter('mimic'):
            if linear:
                times(mimic, 'offset', factor)
            if linear != (types.get(mimic.get('joint')) == 'prismatic'):
                times(mimic, 'multiplier', factor if linear else 1.0 / factor)
    return ET.tostring(root, encoding='unicode')
