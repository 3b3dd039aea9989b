"""
The simulated robot as it really is: its description with links heavier, lighter, off-centre.

A description is the robot's CAD estimate; the robot differs. The simulated driver runs the
description it is given with per-link changes (:func:`changed_description`), while the node and
the offline tools keep the unchanged one, the way they would meet a real arm.
"""

import xml.etree.ElementTree as ET

import numpy as np


def _numbers(values):
    return ' '.join('%.17g' % float(v) for v in values)


def changed_description(urdf_text, links, mass_scale=(), com_shift=()):
    """
    Return the URDF with the inertials of ``links`` changed.

    Parameters
    ----------
    urdf_text
        the description.
    links
        names of the links to change (each must have an ``<inertial>``).
    mass_scale
        empty (none), one factor for every link, or one per link: the mass and the rotational
        inertia about the centre of mass are multiplied by it (a uniformly denser link).
    com_shift
        empty (none), or three numbers per link: added to the centre of mass, in the
        inertial's axes [m].

    Raises
    ------
    ValueError
        an unknown link, a link without an inertial, lists of other lengths, a factor that is
        not positive or values that are not finite.

    """
    links = list(links)
    scale = np.asarray(mass_scale, dtype=float).reshape(-1)
    shift = np.asarray(com_shift, dtype=float).reshape(-1)
    if scale.size not in (0, 1, len(links)):
        raise ValueError('mass_scale has %d entries; give one, or one per link (%d)'
                         % (scale.size, len(links)))
    if shift.size not in (0, 3 * len(links)):
        raise ValueError('com_shift has %d entries; give three per link (%d)'
                         % (shift.size, 3 * len(links)))
    if not (np.all(np.isfinite(scale)) and np.all(np.isfinite(shift))):
        raise ValueError('mass_scale and com_shift must be finite')
    if np.any(scale <= 0.0):
        raise ValueError('mass_scale must be positive, got %s' % scale.tolist())
    scale = np.broadcast_to(scale, (len(links),)) if scale.size else np.ones(len(links))
    shift = shift.reshape(len(links), 3) if shift.size else np.zeros((len(links), 3))
    root = ET.fromstring(urdf_text)
    elements = {link.get('name'): link for link in root.iter('link')}
    unknown = [n for n in links if n not in elements]
    if unknown:
        raise ValueError('links %s are not in the description' % unknown)
    for name, factor, delta in zip(links, scale, shift):
        inertial = elements[name].find('inertial')
        if inertial is None or inertial.find('mass') is None:
            raise ValueError('link %r has no inertial to change' % name)
        mass = inertial.find('mass')
        mass.set('value', '%.17g' % (float(mass.get('value')) * factor))
        tensor = inertial.find('inertia')
        if tensor is not None:
            for key in ('ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz'):
                tensor.set(key, '%.17g' % (float(tensor.get(key, '0')) * factor))
        origin = inertial.find('origin')
        if origin is None:
            origin = ET.SubElement(inertial, 'origin', {'xyz': '0 0 0', 'rpy': '0 0 0'})
        xyz = np.array([float(v) for v in origin.get('xyz', '0 0 0').split()])
        origin.set('xyz', _numbers(xyz + delta))
    return ET.tostring(root, encoding='unicode')


def random_changes(urdf_text, seed=0, mass=0.3, com=0.02, skip=()):
    """
    Draw the changes of a "true" arm: ``(links, mass_scale, com_shift)`` for every inertial.

    Every link with an ``<inertial>`` (except ``skip``): a factor ``1 +- U(mass / 2, mass)``
    (either sign) and a centre of mass moved by ``U(com / 2, com)`` [m] in a random
    direction, the arguments of :func:`changed_description` and of the simulated driver's
    ``true_arm.*`` parameters.
    """
    rng = np.random.default_rng(seed)
    root = ET.fromstring(urdf_text)
    links = [link.get('name') for link in root.iter('link')
             if link.find('inertial') is not None and link.get('name') not in skip]
    count = len(links)
    scale = 1.0 + rng.choice([-1.0, 1.0], count) * rng.uniform(0.5 * mass, mass, count)
    direction = rng.normal(size=(count, 3))
    shift = (direction / np.linalg.norm(direction, axis=1)[:, None]
             * rng.uniform(0.5 * com, com, count)[:, None])
    return links, scale.tolist(), shift.ravel().tolist()
