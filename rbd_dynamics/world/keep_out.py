"""Where the robot may not go: keep-out regions in a YAML file; the link pairs an SRDF frees."""

import numpy as np

from ..analysis import AnalysisError, read_yaml
from ..parsers.description import UrdfError
from ..parsers.urdf import parse_xml
from ..spatial import rpy_to_matrix


class KeepOut:
    """
    Regions in the root link's frame that no link may enter.

    ``planes`` ``(normal, offset)`` keep ``normal . x >= offset``; ``boxes`` ``(centre,
    half_size, R)`` keep every point outside the box whose axes are the columns of ``R``.
    """

    def __init__(self, planes=(), boxes=()):
        self.planes, self.boxes = list(planes), list(boxes)


KEEP_OUT_FORMAT = """planes:                 # the robot stays on the side the normal points to
  - point: [0, 0, 0]      # a point of the plane [m]
    normal: [0, 0, 1]
boxes:                  # no link enters a box
  - center: [0.8, 0, 0.3] # [m]
    size: [0.4, 1.2, 0.6] # edge lengths [m]
    rpy: [0, 0, 0]        # optional: the box's axes [rad]"""


def read_keep_out(path):
    """
    Read a keep-out file (YAML, :data:`KEEP_OUT_FORMAT`, in the root link's frame).

    Raises
    ------
    AnalysisError
        an unreadable file or an entry that is not of that form (the message says which).

    """
    data = read_yaml(path, 'keep-out file')
    if data is None:
        data = {}
    if not isinstance(data, dict) or set(data) - {'planes', 'boxes'}:
        raise AnalysisError('keep-out file %s: expected a mapping of planes and boxes:\n%s'
                            % (path, KEEP_OUT_FORMAT))
    keep = KeepOut()
    for kind in ('planes', 'boxes'):
        entries = data.get(kind) or []
        if not isinstance(entries, list):
            raise AnalysisError('keep-out file %s: %s must be a list' % (path, kind))
        for k, entry in enumerate(entries):
            where = 'keep-out file %s: %s[%d]' % (path, kind, k)
            keys = ('point', 'normal') if kind == 'planes' else ('center', 'size', 'rpy')
            if not isinstance(entry, dict) or set(entry) - set(keys):
                raise AnalysisError('%s: expected the keys %s' % (where, ', '.join(keys)))
            values = {}
            for key in keys:
                value = entry.get(key, [0, 0, 0] if key == 'rpy' else None)
                try:
                    vector = np.array(value, dtype=float)
                except (TypeError, ValueError):
                    vector = np.zeros(0)
                if vector.shape != (3,) or not np.all(np.isfinite(vector)):
                    raise AnalysisError('%s: %s must be three numbers, got %r'
                                        % (where, key, value))
                values[key] = vector
            if kind == 'planes':
                norm = np.linalg.norm(values['normal'])
                if norm == 0:
                    raise AnalysisError('%s: the normal is zero' % where)
                normal = values['normal'] / norm
                keep.planes.append((normal, float(normal @ values['point'])))
            else:
                if np.any(values['size'] <= 0):
                    raise AnalysisError('%s: the size must be positive' % where)
                keep.boxes.append((values['center'], 0.5 * values['size'],
                                   rpy_to_matrix(values['rpy'])))
    return keep


def read_srdf_pairs(text):
    """
    Return the link pairs of an SRDF's ``<disable_collisions>``, as frozensets.

    Raises
    ------
    AnalysisError
        the text is not well-formed XML.

    """
    try:
        root = parse_xml(text)
    except UrdfError as err:
        raise AnalysisError('the SRDF: %s' % str(err).replace('robot description', 'the SRDF')) \
            from None
    return {frozenset((e.attrib.get('link1'), e.attrib.get('link2')))
            for e in root.children if e.tag == 'disable_collisions'}
