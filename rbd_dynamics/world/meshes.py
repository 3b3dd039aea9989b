"""
Reading a link's collision meshes: STL (binary or ASCII), OBJ and COLLADA, and finding them.

:func:`resolve_mesh` finds the file a URDF's ``filename`` names (``package://``, ``file://``,
a path); :func:`read_mesh` reads its vertices (and triangles). A file that cannot be read raises
:class:`MeshError`, whose message says why.
"""

import os
import struct

import numpy as np

from ..spatial import axis_angle_to_matrix

#: Largest mesh file read [bytes].
MAX_MESH_BYTES = 64 * 1024 * 1024

_FORMATS = ('.stl', '.obj', '.dae')


class MeshError(Exception):
    """A mesh file that cannot be read (the message says why)."""


def read_mesh(path, faces=False):
    """
    Return the vertices ``(n, 3)`` of an STL (binary or ASCII), OBJ or COLLADA mesh, in its units.

    With ``faces``: ``(vertices, triangles)``, the triangles ``(t, 3)`` indices of vertices
    (``None`` for COLLADA, whose triangles are not read).
    """
    ext = os.path.splitext(path)[1].lower()
    if ext not in _FORMATS:
        raise MeshError('%s: the format is not one of %s' % (path, ', '.join(_FORMATS)))
    try:
        size = os.path.getsize(path)
        if size > MAX_MESH_BYTES:
            raise MeshError('%s: %d bytes, more than %d' % (path, size, MAX_MESH_BYTES))
        with open(path, 'rb') as stream:
            data = stream.read()
    except OSError as err:
        raise MeshError('%s: %s' % (path, err.strerror or err)) from None
    reader = {'.stl': _stl, '.obj': _obj, '.dae': _dae}[ext]
    try:
        points, triangles = reader(data)
    except (ValueError, struct.error, IndexError, SyntaxError) as err:
        raise MeshError('%s: not a readable %s file (%s)' % (path, ext[1:].upper(), err)) \
            from None
    points = np.asarray(points, dtype=float).reshape(-1, 3)
    if len(points) == 0 or not np.all(np.isfinite(points)):
        raise MeshError('%s: no finite vertices' % path)
    vertices, inverse = np.unique(points, axis=0, return_inverse=True)
    if not faces:
        return vertices
    if triangles is None:
        return vertices, None
    triangles = inverse.reshape(-1)[np.asarray(triangles, dtype=np.int64)]
    return vertices, triangles


def _stl(data):
    if len(data) >= 84:
        count = struct.unpack_from('<I', data, 80)[0]
        if len(data) == 84 + 50 * count:
            rows = np.frombuffer(data, dtype=np.uint8, offset=84).reshape(count, 50)
            points = rows[:, 12:48].copy().view('<f4').reshape(-1, 3)
            return points, np.arange(len(points)).reshape(-1, 3)
    words = data.decode('ascii', errors='replace').split()
    points = [[float(w) for w in words[k + 1:k + 4]] for k, w in enumerate(words)
              if w == 'vertex']
    whole = len(points) - len(points) % 3
    return points, np.arange(whole).reshape(-1, 3)


def _obj(data):
    points, triangles = [], []
    for line in data.decode('utf-8', errors='replace').splitlines():
        fields = line.split()
        if fields and fields[0] == 'v':
            if len(fields) < 4:
                raise ValueError('a vertex line with fewer than 3 numbers')
            points.append([float(v) for v in fields[1:4]])
        elif fields and fields[0] == 'f':
            # 1-based, negative from the end; a polygon as a fan of triangles
            index = [int(f.split('/')[0]) for f in fields[1:]]
            index = [i - 1 if i > 0 else len(points) + i for i in index]
            triangles += [[index[0], index[k], index[k + 1]] for k in range(1, len(index) - 1)]
    if any(i < 0 or i >= len(points) for tri in triangles for i in tri):
        raise ValueError('a face names a vertex that is not there')
    return points, (triangles if triangles else None)


def _dae(data):
    """
    Vertices of a COLLADA document, as placed by its scene.

    Every ``<instance_geometry>`` of the visual scene takes its geometry's positions through the
    transforms of the nodes above it (``matrix``, ``translate``, ``rotate``, ``scale``); a
    document without a scene gives its geometries as they are. ``<unit meter>`` scales and a
    ``Y_UP`` or ``X_UP`` axis is turned to Z up, as ROS's mesh loaders do.
    """
    from xml.etree import ElementTree
    root = ElementTree.fromstring(data)

    def tag(element):
        return element.tag.rsplit('}', 1)[-1]

    unit, up = 1.0, 'Z_UP'
    geometries = {}
    for element in root.iter():
        name = tag(element)
        if name == 'unit' and 'meter' in element.attrib:
            unit = float(element.attrib['meter'])
        elif name == 'up_axis' and element.text:
            up = element.text.strip()
        elif name == 'geometry':
            geometries[element.attrib.get('id', '')] = _geometry_positions(element, tag)
    placed = []

    def visit(node, transform):
        for child in node:
            name = tag(child)
            if name in ('matrix', 'translate', 'rotate', 'scale'):
                transform = transform @ _node_transform(name, child.text)
        for child in node:
            name = tag(child)
            if name == 'instance_geometry':
                points = geometries.get(child.attrib.get('url', '').lstrip('#'))
                if points is not None and len(points):
                    placed.append(points @ transform[:3, :3].T + transform[:3, 3])
            elif name == 'node':
                visit(child, transform)

    scenes = [e for e in root.iter() if tag(e) == 'visual_scene']
    for scene in scenes:
        visit(scene, np.eye(4))
    if not scenes:
        placed = [p for p in geometries.values() if len(p)]
    points = np.vstack(placed) if placed else np.zeros((0, 3))
    if up == 'Y_UP':
        points = points @ np.array([[1.0, 0, 0], [0, 0, -1.0], [0, 1.0, 0]]).T
    elif up == 'X_UP':
        points = points @ np.array([[0, 0, -1.0], [0, 1.0, 0], [1.0, 0, 0]]).T
    return points * unit, None


def _geometry_positions(geometry, tag):
    sources, positions = {}, []
    for element in geometry.iter():
        name = tag(element)
        if name == 'source':
            for child in element:
                if tag(child) == 'float_array':
                    sources[element.attrib.get('id', '')] = child.text or ''
        elif name == 'input' and element.attrib.get('semantic') == 'POSITION':
            positions.append(element.attrib.get('source', '').lstrip('#'))
    values = [float(v) for name in positions if name in sources for v in sources[name].split()]
    if len(values) % 3:
        raise ValueError('a position array whose length is not a multiple of 3')
    return np.array(values, dtype=float).reshape(-1, 3)


def _node_transform(name, text):
    values = [float(v) for v in (text or '').split()]
    out = np.eye(4)
    if name == 'matrix' and len(values) == 16:
        out = np.array(values).reshape(4, 4)
    elif name == 'translate' and len(values) == 3:
        out[:3, 3] = values
    elif name == 'scale' and len(values) == 3:
        out[:3, :3] = np.diag(values)
    elif name == 'rotate' and len(values) == 4:
        axis = np.array(values[:3])
        norm = np.linalg.norm(axis)
        if norm > 0:
            out[:3, :3] = axis_angle_to_matrix(axis / norm, np.radians(values[3]))
    else:
        raise ValueError('a <%s> that is not %d numbers' % (
            name, {'matrix': 16, 'rotate': 4}.get(name, 3)))
    return out


def resolve_mesh(filename, base_dir):
    """
    Return the file a URDF's mesh ``filename`` names, or ``None``.

    ``package://PKG/...`` is looked up with ament_index, then in ``AMENT_PREFIX_PATH``'s and
    ``ROS_PACKAGE_PATH``'s entries, then in the directories above ``base_dir`` (the
    description's folder: a folder named ``PKG`` or holding ``PKG`` or ``share/PKG``);
    ``file://`` and plain paths are taken as they are, relative ones from ``base_dir``.
    """
    if filename.startswith('package://'):
        package, _, rest = filename[len('package://'):].partition('/')
        for root in _package_roots(package, base_dir):
            path = os.path.join(root, rest)
            if os.path.isfile(path):
                return path
        return None
    if filename.startswith('file://'):
        filename = filename[len('file://'):]
    path = filename if os.path.isabs(filename) else os.path.join(base_dir or '.', filename)
    return path if os.path.isfile(path) else None


def _package_roots(package, base_dir):
    try:
        from ament_index_python.packages import get_package_share_directory
        yield get_package_share_directory(package)
    except Exception:  # noqa: B902 (not installed, or no such package: look further)
        pass
    for variable, suffix in (('AMENT_PREFIX_PATH', ('share', package)),
                             ('ROS_PACKAGE_PATH', (package,))):
        for entry in os.environ.get(variable, '').split(os.pathsep):
            if entry:
                yield os.path.join(entry, *suffix)
    if base_dir:
        folder = os.path.abspath(base_dir)
        while True:
            if os.path.basename(folder) == package:
                yield folder
            yield os.path.join(folder, package)
            yield os.path.join(folder, 'share', package)
            up = os.path.dirname(folder)
            if up == folder:
                break
            folder = up
