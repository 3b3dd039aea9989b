"""
Descriptions from urdf_parser_py (``urdfdom_py``): a parsed ``urdf_parser_py.urdf.Robot``.

A program that already holds the robot as urdf_parser_py parsed it (from the parameter server,
from ``URDF.from_xml_string``) turns it into a :class:`~rbd_dynamics.description.Description`
here, field by field, without writing XML again. urdf_parser_py itself is not imported: any
object with its attributes works.
"""

from .description import Description, UrdfError
from .urdf import add_inertial_link, INERTIA_KEYS
from ..joints import check_joint_type


def _or(value, default):
    return default if value is None else value


def _pose(origin):
    if origin is None:
        return (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
    return _or(origin.xyz, (0.0, 0.0, 0.0)), _or(origin.rpy, (0.0, 0.0, 0.0))


def _add_link(desc, link):
    inertial = link.inertial
    if inertial is None:
        desc.add_link(link.name)
        return
    xyz, rpy = _pose(inertial.origin)
    inertia = inertial.inertia
    moments = [0.0 if inertia is None else _or(getattr(inertia, key), 0.0)
               for key in INERTIA_KEYS]
    add_inertial_link(desc, link.name, _or(inertial.mass, 0.0), xyz, rpy, moments)


def _add_joint(desc, joint):
    where = 'joint %r' % joint.name
    check_joint_type(joint.type, where, urdf=True, error=UrdfError)
    xyz, rpy = _pose(joint.origin)
    mimic = joint.mimic
    if mimic is not None:
        mimic = (mimic.joint, _or(mimic.multiplier, 1.0), _or(mimic.offset, 0.0))
    limit, dynamics = joint.limit, joint.dynamics
    desc.add_joint(joint.name, joint.type, joint.parent, joint.child, xyz=xyz, rpy=rpy,
                   axis=_or(joint.axis, (1.0, 0.0, 0.0)), mimic=mimic,
                   effort=0.0 if limit is None else _or(limit.effort, 0.0),
                   damping=0.0 if dynamics is None else _or(dynamics.damping, 0.0),
                   friction=0.0 if dynamics is None else _or(dynamics.friction, 0.0),
                   lower=None if limit is None else limit.lower,
                   upper=None if limit is None else limit.upper)


def description_from_urdf_robot(robot):
    """
    Convert a robot parsed by urdf_parser_py to a :class:`Description`.

    Parameters
    ----------
    robot
        a ``urdf_parser_py.urdf.Robot``: its links (inertial origin, mass, inertia) and
        joints (type, parent, child, origin, axis, limit effort, lower and upper, dynamics,
        mimic) are read;
        a missing value takes the URDF default, as the XML reader does (except that
        urdf_parser_py gives a ``<limit>`` without ``lower``/``upper`` the range 0 .. 0).

    Returns
    -------
    The links and joints, in the robot's order.

    Raises
    ------
    UrdfError
        a value is unusable (the message names the link or joint), or ``robot`` is
        not such an object.

    """
    try:
        name, links, joints = _or(robot.name, ''), list(robot.links), list(robot.joints)
    except (AttributeError, TypeError):
        raise UrdfError('expected a urdf_parser_py.urdf.Robot, got %s'
                        % type(robot).__name__) from None
    desc = Description(name)
    for link in links:
        _add_link(desc, link)
    for joint in joints:
        _add_joint(desc, joint)
    if not desc.links:
        raise UrdfError('robot %r has no link' % name)
    return desc
