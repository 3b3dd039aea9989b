"""
Efforts in the driver's units: ``drive.effort_scale`` read from a node parameters file.

A driver that reports motor current (or a vendor unit) needs a scale per joint, the joint
torque per unit of its effort (the torque constant times the gear ratio, its sign included).
The node takes it as ``drive.effort_scale`` in ``joints`` order; the tools read it from the same
kind of file (:func:`~rbd_dynamics.analysis.parameters_file.read_parameters`): a node
parameters file (``NODE: ros__parameters: ...``, any node key, ``/**`` included) or a plain
mapping, with ``drive: effort_scale:`` (or the flat key
``drive.effort_scale``) and ``joints`` (absent: the description's independent joints, as the
node's default).
"""

import math

from ..analysis import AnalysisError
from ..analysis.parameters_file import read_parameters


def _get(params, dotted):
    if dotted in params:
        return params[dotted]
    node = params
    for part in dotted.split('.'):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def read_effort_scale(path, joint_names, what='the effort scale file'):
    """
    Return ``{joint: scale}`` from a parameters file's ``drive.effort_scale``.

    Parameters
    ----------
    path
        the file.
    joint_names
        the description's independent joints (the order when the file gives no ``joints``).
    what
        what the file is, in the messages (a command gives its option).

    Raises
    ------
    AnalysisError
        an unreadable file, no ``drive.effort_scale``, a length that is not that of ``joints``,
        a zero or non-finite scale, or joints that are not the description's (named).

    """
    where = '%s %s' % (what, path)
    params = read_parameters(path, what)
    if not isinstance(params, dict):
        raise AnalysisError('%s: expected a node parameters file with drive.effort_scale'
                            % where)
    scale = _get(params, 'drive.effort_scale')
    joints = _get(params, 'joints') or list(joint_names)
    if not isinstance(scale, list) or not scale:
        raise AnalysisError('%s has no drive.effort_scale (a list, one scale per joint of '
                            '`joints`)' % where)
    if not isinstance(joints, list) or not all(isinstance(n, str) for n in joints):
        raise AnalysisError('%s: joints must be a list of joint names' % where)
    if len(scale) != len(joints):
        raise AnalysisError('%s: drive.effort_scale has %d entries, joints has %d'
                            % (where, len(scale), len(joints)))
    unknown = [n for n in joints if n not in joint_names]
    if unknown:
        raise AnalysisError('%s names joints the description does not have: %s (its joints: '
                            '%s)' % (where, ', '.join(unknown), ', '.join(joint_names)))
    out = {}
    for name, value in zip(joints, scale):
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value) or value == 0:
            raise AnalysisError('%s: the effort scale of %s must be a finite non-zero number, '
                                'got %r' % (where, name, value))
        out[name] = float(value)
    return out


#: The drive parameters a parameters file may set, with their defaults' names.
DRIVE_KEYS = ('viscous', 'coulomb', 'armature', 'coulomb_velocity', 'effort_scale',
              'effort_offset')


def scaled_joints(path, joint_names, what='the parameters file'):
    """
    Return the joints a parameters file's ``drive.effort_scale`` covers, or ``None`` (none).

    ``None`` where the file gives no scale (every effort in N m or N); else its ``joints`` (the
    description's where it names none).
    """
    params = read_parameters(path, what)
    if not isinstance(params, dict) or not _get(params, 'drive.effort_scale'):
        return None
    return list(_get(params, 'joints') or joint_names)


def read_drive(path, model, what='the parameters file'):
    """
    Return the drive of a node parameters file, per joint in ``model.joint_names`` order.

    ``{'viscous', 'coulomb', 'armature', 'coulomb_velocity', 'effort_scale',
    'effort_offset'}`` arrays ``(nv,)``: the file's values (``drive.*`` in its ``joints``
    order; ``coulomb_velocity`` one number or one per joint), else the description's damping
    and friction, no armature, the node's default width, a scale of 1 and no offset.
    ``path`` ``None``: all defaults.

    Raises
    ------
    AnalysisError
        an unreadable file, or lists that do not match ``joints``, or values that are not finite
        numbers (negative friction, a width not above 0, a zero scale).

    """
    import numpy as np
    from ..drive import COULOMB_VELOCITY
    out = {'viscous': np.array(model.damping, dtype=float),
           'coulomb': np.array(model.friction, dtype=float),
           'armature': np.zeros(model.nv), 'coulomb_velocity': np.full(model.nv, COULOMB_VELOCITY),
           'effort_scale': np.ones(model.nv), 'effort_offset': np.zeros(model.nv)}
    if path is None:
        return out
    where = '%s %s' % (what, path)
    params = read_parameters(path, what)
    if not isinstance(params, dict):
        raise AnalysisError('%s: expected a node parameters file' % where)
    joints = _get(params, 'joints') or list(model.joint_names)
    index = {name: j for j, name in enumerate(model.joint_names)}
    if not any(name in index for name in joints):
        raise AnalysisError('%s names none of the joints of the model (%s)'
                            % (where, ', '.join(model.joint_names)))
    for key in DRIVE_KEYS:
        values = _get(params, 'drive.' + key)
        if values is None or values == []:
            continue
        if key == 'coulomb_velocity' and not isinstance(values, list):
            values = [values] * len(joints)
        if not isinstance(values, list) or len(values) != len(joints):
            raise AnalysisError('%s: drive.%s must be a list of %d numbers (joints), got %r'
                                % (where, key, len(joints), values))
        for name, value in zip(joints, values):
            bad = isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value) or (key == 'effort_scale' and value == 0) \
                or (key == 'coulomb_velocity' and value <= 0) \
                or (key in ('viscous', 'coulomb', 'armature') and value < 0)
            if bad:
                raise AnalysisError('%s: drive.%s of %s is not acceptable: %r'
                                    % (where, key, name, value))
            if name in index:  # joints the model holds are not part of it
                out[key][index[name]] = float(value)
    return out
