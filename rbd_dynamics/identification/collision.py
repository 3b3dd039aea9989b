"""
The world an excitation must stay in: capsules around the links and the regions they keep out of.

Every ``<collision>`` element of a link (box, cylinder, sphere, or a mesh in STL, OBJ or
COLLADA) becomes a *capsule*, the set of points within a radius of a segment, fixed in the
link's frame, that contains the shape (a mesh that two to four capsules hold much tighter
becomes those, :func:`fit_capsules`). The segment lies along the shape's principal axis that
gives the smallest capsule; its ends are pulled in as far as the shape allows. A capsule
contains its shape, so a clearance between capsules is a lower bound of the clearance between
the shapes; the distance between two capsules is the distance between their segments less the
radii, which costs a few arithmetic operations for any pose and has a gradient everywhere two
capsules are apart.

The clearances kept, each at least ``clearance`` [m]:

- between the capsules of every pair of links except links of one rigid body (joined by fixed
  joints), links joined by one moving joint (adjacent) and the pairs an SRDF's
  ``<disable_collisions>`` names;
- above the *floor*, the plane ``z = 0`` of the root link (``--no-floor``: none), for every link
  whose height can change (links that only turn about vertical axes are mounted where they are);
- from each plane and box of a *keep-out* file (:func:`read_keep_out`), for every link that
  moves (links fixed to the root stay where they are mounted).

A mesh that cannot be found or read leaves its link unchecked, with a warning (the summary
names the links).
"""

import math
import os
import struct

import numpy as np

from ..analysis import AnalysisError, read_yaml
from ..dynamics import forward_pass, full_positions
from ..parsers.description import UrdfError
from ..parsers.urdf import parse_xml
from ..spatial import axis_angle_to_matrix, rpy_to_matrix

#: Default clearance between capsules, and from the floor and keep-out regions [m].
DEFAULT_CLEARANCE = 0.03
#: Largest mesh file read [bytes].
MAX_MESH_BYTES = 64 * 1024 * 1024
#: A shape is split in two capsules when they take less than this share of one's volume.
SPLIT_GAIN = 0.8
#: Points on a cylinder's rims when a capsule is fitted to it.
RIM_POINTS = 64
#: Sharpness of the smooth minimum over time the optimiser constrains [1/m]; it is below the
#: true minimum by at most ``log(samples) / SMOOTH_MIN`` (1.8 mm for 200 samples).
SMOOTH_MIN = 3000.0
#: How much closer than at the start pose links that start near the clearance may come [m]
#: (more than the smooth minimum's shortfall over 200 samples, 1.8 mm).
START_SLACK = 0.002

_FORMATS = ('.stl', '.obj', '.dae')


class MeshError(Exception):
    """A mesh file that cannot be read (the message says why)."""


# Meshes ----------------------------------------------------------------------------------------

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


# Capsules --------------------------------------------------------------------------------------

def fit_capsule(points, fine=True):
    """
    Return ``(a, b, radius)``: a capsule containing ``points`` ``(n, 3)``.

    ``fine``: ``False`` centres the circles on the middle of the extent (a quick estimate).

    Of the capsules along the three principal axes of the points (each centred on the axis
    through the centre of the smallest circle around the points' projection across it, with
    that circle's radius and the shortest segment for that radius), the one of least volume.
    """
    points = _hull(np.asarray(points, dtype=float).reshape(-1, 3))
    mean = points.mean(axis=0)
    X = points - mean
    _, _, axes = np.linalg.svd(X, full_matrices=False) if len(X) > 1 else (0, 0, np.eye(3))
    axes = np.vstack([axes, np.eye(3)])[:3] if len(axes) < 3 else axes
    best = None
    for k in range(3):
        axis = axes[k]
        across = axes[[i for i in range(3) if i != k]]
        uv = X @ across.T
        centre = _enclosing_centre(uv) if fine else 0.5 * (uv.min(axis=0) + uv.max(axis=0))
        offset = mean + centre @ across
        Y = points - offset
        t = Y @ axis
        d = np.linalg.norm(Y - np.outer(t, axis), axis=1)
        radius = float(d.max())
        h = np.sqrt(np.maximum(radius ** 2 - d ** 2, 0.0))
        lo, hi = float((t + h).min()), float((t - h).max())
        if lo > hi:
            lo = hi = 0.5 * (lo + hi)
        volume = math.pi * radius ** 2 * (hi - lo) + 4.0 / 3.0 * math.pi * radius ** 3
        if best is None or volume < best[0]:
            best = (volume, offset + lo * axis, offset + hi * axis, radius)
    return best[1], best[2], best[3]


def _enclosing_centre(uv, iterations=400):
    """
    Return the centre of (nearly) the smallest circle around the 2-D points ``uv``.

    Badoiu and Clarkson's iteration from the middle of the extent: step towards the farthest
    point by ``1 / (k + 1)``; the best centre seen is kept (never worse than the middle).
    """
    centre = 0.5 * (uv.min(axis=0) + uv.max(axis=0))
    best, radius = centre.copy(), np.linalg.norm(uv - centre, axis=1).max()
    for k in range(1, iterations):
        distance = np.linalg.norm(uv - centre, axis=1)
        far = int(np.argmax(distance))
        if distance[far] < radius:
            best, radius = centre.copy(), distance[far]
        centre = centre + (uv[far] - centre) / (k + 1)
    return best


def fit_capsules(points, triangles=None, depth=2):
    """
    Return capsules ``[(a, b, radius, points), ...]`` whose union contains a shape.

    One capsule (:func:`fit_capsule`) where ``triangles`` is ``None``. Otherwise the triangles
    are cut in two by a plane across the principal axis, at a fifth, a third or half of the
    extent from either end, whichever gives the least volume; when the two capsules take less
    than :data:`SPLIT_GAIN` of the one's volume, each part is cut again, ``depth`` times. A part
    holds the pieces of the triangles on its side of the plane (a triangle that crosses it is
    clipped there), so the union of the parts' capsules holds every triangle.
    """
    points = np.asarray(points, dtype=float)
    whole = fit_capsule(points)
    if triangles is None or depth <= 0 or len(triangles) < 4:
        return [whole + (points,)]
    X = points - points.mean(axis=0)
    axis = np.linalg.svd(X, full_matrices=False)[2][0]
    t = points @ axis
    best = None
    for share in (0.2, 1.0 / 3.0, 0.5, 2.0 / 3.0, 0.8):
        cut = t.min() + share * np.ptp(t)
        parts = [_clip(points, triangles, axis, cut, side) for side in (-1.0, 1.0)]
        if min(len(p[1]) for p in parts) == 0:
            continue
        volume = sum(_volume(fit_capsule(p[0], fine=False)) for p in parts)
        if best is None or volume < best[0]:
            best = (volume, parts)
    if best is None or best[0] > SPLIT_GAIN * _volume(fit_capsule(points, fine=False)):
        return [whole + (points,)]
    out = []
    for part_points, part_triangles in best[1]:
        out += fit_capsules(part_points, part_triangles, depth - 1)
    return out


def _clip(points, triangles, axis, cut, side):
    """
    Return the part ``(points, triangles)`` of a mesh where ``side * (p . axis - cut) <= 0``.

    Triangles that cross the plane are clipped to it (the polygon left is split into
    triangles); the points are those the part's triangles use.
    """
    h = side * (points @ axis - cut)                     # <= 0: on the kept side
    inside = h[triangles] <= 0.0
    keep = triangles[inside.all(axis=1)].tolist()
    new_points = []
    index = len(points)
    for tri in triangles[inside.any(axis=1) & ~inside.all(axis=1)]:
        polygon = []
        for k in range(3):
            i, j = tri[k], tri[(k + 1) % 3]
            if h[i] <= 0.0:
                polygon.append(i)
            if (h[i] <= 0.0) != (h[j] <= 0.0):          # the edge crosses the plane
                w = h[i] / (h[i] - h[j])
                new_points.append(points[i] + w * (points[j] - points[i]))
                polygon.append(index)
                index += 1
        keep += [[polygon[0], polygon[k], polygon[k + 1]] for k in range(1, len(polygon) - 1)]
    every = np.vstack([points] + new_points) if new_points else points
    keep = np.array(keep, dtype=np.int64).reshape(-1, 3)
    used = np.unique(keep)
    renumber = np.full(len(every), -1, dtype=np.int64)
    renumber[used] = np.arange(len(used))
    return every[used], renumber[keep]


def _volume(capsule):
    a, b, radius = capsule
    return math.pi * radius ** 2 * float(np.linalg.norm(b - a)) + 4.0 / 3.0 * math.pi * radius ** 3


def shape_points(geometry, mesh_points=None):
    """
    Points whose capsule contains one URDF ``<geometry>`` (in the shape's own frame).

    ``mesh_points``: a mesh's vertices (already scaled); ``None`` for the primitives.
    Returns ``(points, radius_extra)``: a sphere is its centre with its radius as the extra.
    """
    if geometry.tag == 'box':
        half = 0.5 * np.array(_floats(geometry, 'size', 3))
        corners = np.array([[i, j, k] for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)])
        return corners * half, 0.0
    if geometry.tag == 'cylinder':
        radius, length = (_floats(geometry, name, 1)[0] for name in ('radius', 'length'))
        angle = np.linspace(0.0, 2.0 * math.pi, RIM_POINTS, endpoint=False)
        # the rim polygon's edges come within cos(pi / n) of the radius: scale it out
        rim = np.stack([np.cos(angle), np.sin(angle)], axis=1) * radius \
            / math.cos(math.pi / RIM_POINTS)
        return np.vstack([np.hstack([rim, np.full((RIM_POINTS, 1), z)])
                          for z in (-0.5 * length, 0.5 * length)]), 0.0
    if geometry.tag == 'sphere':
        return np.zeros((1, 3)), _floats(geometry, 'radius', 1)[0]
    return mesh_points, 0.0


def _floats(element, name, count, default=None):
    text = element.attrib.get(name)
    if text is None:
        if default is None:
            raise AnalysisError('<%s> (line %d) has no %s' % (element.tag, element.line, name))
        return list(default)
    try:
        values = [float(v) for v in text.split()]
    except ValueError:
        values = []
    if len(values) != count or not all(math.isfinite(v) for v in values):
        raise AnalysisError('<%s> (line %d): %s=%r is not %d numbers'
                            % (element.tag, element.line, name, text, count))
    return values


# Finding meshes --------------------------------------------------------------------------------

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


# Keep-out regions ------------------------------------------------------------------------------

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
    data = read_yaml(path, '--keep-out')
    if data is None:
        data = {}
    if not isinstance(data, dict) or set(data) - {'planes', 'boxes'}:
        raise AnalysisError('--keep-out %s: expected a mapping of planes and boxes:\n%s'
                            % (path, KEEP_OUT_FORMAT))
    keep = KeepOut()
    for kind in ('planes', 'boxes'):
        entries = data.get(kind) or []
        if not isinstance(entries, list):
            raise AnalysisError('--keep-out %s: %s must be a list' % (path, kind))
        for k, entry in enumerate(entries):
            where = '--keep-out %s: %s[%d]' % (path, kind, k)
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
        raise AnalysisError('--srdf: %s' % str(err).replace('robot description', 'the SRDF')) \
            from None
    return {frozenset((e.attrib.get('link1'), e.attrib.get('link2')))
            for e in root.children if e.tag == 'disable_collisions'}


# The model -------------------------------------------------------------------------------------

class Collisions:
    """
    Capsules on a model's links and the clearances an excitation keeps (see the module).

    Attributes
    ----------
    links
        link of each capsule.
    a, b, radius
        each capsule's segment ends in its body's coordinates ``(C, 3)`` and radius ``(C,)``.
    pairs
        ``(n, 2)`` capsule indices whose clearance is kept.
    floored
        capsule indices kept above the floor (empty without one).
    keep_out
        the :class:`KeepOut` regions (the floor is its first plane when there is one).
    unchecked
        ``{link: [reason, ...]}`` links with collision geometry that is not checked (a mesh
        not found or not read, a link not in the model); their other shapes are.
    clearance
        the clearance asked for [m].
    kept
        the least clearance kept along the motion, one per clearance (see :meth:`settle`).

    """

    def __init__(self, model, urdf_text, base_dir=None, srdf_text=None, keep_out=None,
                 floor=True, clearance=DEFAULT_CLEARANCE):
        self.model, self.clearance = model, float(clearance)
        self.unchecked = {}
        self.kept = self.clearance
        links, a, b, radius, hull, extras = [], [], [], [], [], []
        for link, points, extra, faces in self._shapes(urdf_text, base_dir):
            if link not in model.link_body:
                self._unchecked(link, 'not in the model (above its root link)')
                continue
            X = model.link_X[link]           # body -> link coordinates
            E = X[:3, :3]
            p = -E.T @ X[3:, :3]              # skew(link origin in body coordinates)
            origin = np.array([p[2, 1], p[0, 2], p[1, 0]])
            for pa, pb, r, part in fit_capsules(points, faces):
                links.append(link)
                a.append(origin + E.T @ pa)
                b.append(origin + E.T @ pb)
                radius.append(r + extra)
                hull.append(origin + _hull(part) @ E)
                extras.append(extra)
        self.links = tuple(links)
        # each shape's convex hull vertices, for the planes (a plane meets a hull at a vertex)
        self.hull = np.vstack(hull) if hull else np.zeros((0, 3))
        self.hull_shape = np.repeat(np.arange(len(hull)), [len(h) for h in hull])
        self.hull_start = np.cumsum([0] + [len(h) for h in hull])[:-1].astype(np.int64)
        self.hull_extra = np.array(extras, dtype=float)
        self.a = np.array(a, dtype=float).reshape(-1, 3)
        self.b = np.array(b, dtype=float).reshape(-1, 3)
        self.radius = np.array(radius, dtype=float)
        self.body = np.array([model.link_body[name] for name in links], dtype=np.int64)
        disabled = read_srdf_pairs(srdf_text) if srdf_text else set()
        parent = model.parent
        pairs = []
        for i in range(len(links)):
            for j in range(i + 1, len(links)):
                bi, bj = self.body[i], self.body[j]
                if bi == bj or frozenset((links[i], links[j])) in disabled:
                    continue
                if (bi >= 0 and parent[bi] == bj) or (bj >= 0 and parent[bj] == bi):
                    continue
                pairs.append((i, j))
        self.pairs = np.array(pairs, dtype=np.int64).reshape(-1, 2)
        self.keep_out = keep_out if keep_out is not None else KeepOut()
        self.floor = bool(floor)
        if self.floor:
            self.keep_out = KeepOut([(np.array([0.0, 0.0, 1.0]), 0.0)] + self.keep_out.planes,
                                    self.keep_out.boxes)
        self.floored = np.array([c for c in range(len(links)) if self._can_fall(self.body[c])],
                                dtype=np.int64)
        # keep-out regions concern the links that move (those fixed to the root stay put)
        self.moving = np.flatnonzero(self.body >= 0)
        # the independent coordinates' map: vf = G v
        G = np.zeros((model.nvf, model.nv))
        if model.has_mimic:
            G[np.arange(model.nvf), model.v_src] = model.v_mult
        else:
            G[:] = np.eye(model.nv)
        self._G = G

    def settle(self, start):
        """
        Fit the checks to the start pose ``(nv,)``; return the link pairs left out.

        Capsules fit loosely around a joint, so links next-but-one in the tree (one body between
        them) may overlap where the real shapes do not; such pairs that overlap at the start pose
        are left out (as an SRDF's pairs in collision by default). Every other clearance must
        hold at the start pose; along the motion each keeps :attr:`kept`: the clearance, or
        for links that start less than :data:`START_SLACK` farther apart, that much less than
        at the start.

        Raises
        ------
        AnalysisError
            a clearance does not hold at the start pose (the message names it).

        """
        g = self.clearances(np.asarray(start, dtype=float)[None])[0]
        parent = self.model.parent
        keep, dropped, total = [], {}, {}
        for k, (i, j) in enumerate(self.pairs):
            bi, bj = self.body[i], self.body[j]
            grand = any(b >= 0 and parent[b] >= 0 and parent[parent[b]] == other
                        for b, other in ((bi, bj), (bj, bi)))
            name = '%s and %s' % (self.links[i], self.links[j])
            total[name] = total.get(name, 0) + 1
            if grand and g[k] < self.clearance:
                dropped[name] = dropped.get(name, 0) + 1
            else:
                keep.append(k)
        self.pairs = self.pairs[keep].reshape(-1, 2)
        g = self.clearances(np.asarray(start, dtype=float)[None])[0]
        self.kept = np.minimum(self.clearance, g - START_SLACK)
        names = self.names()
        low = [(g[k], names[k]) for k in np.argsort(g) if g[k] < self.clearance]
        if low:
            seen = []
            for value, name in low:
                if name not in [n for _, n in seen]:
                    seen.append((value, name))
            raise AnalysisError(
                'the start pose is not clear (%s; %g m needed): give --start a pose where the '
                'robot stands free, e.g. the one it is in (or --keep-out, --no-floor, --srdf, '
                '--clearance)' % ('; '.join('%s %.3f m apart' % (n, v) for v, n in seen[:4]),
                                  self.clearance))
        # a link's shape may be several capsules: say when only some of their pairs are left out
        return [name if count == total[name] else '%s (%d of %d capsule pairs)'
                % (name, count, total[name]) for name, count in dropped.items()]

    def _unchecked(self, link, reason):
        self.unchecked.setdefault(link, [])
        if reason not in self.unchecked[link]:
            self.unchecked[link].append(reason)

    def _shapes(self, urdf_text, base_dir):
        root = parse_xml(urdf_text)
        for element in root.children:
            if element.tag != 'link':
                continue
            name = element.attrib.get('name')
            for collision in (c for c in element.children if c.tag == 'collision'):
                geometry = collision.find('geometry')
                shape = None if geometry is None else next(iter(geometry.children), None)
                if shape is None:
                    continue
                mesh, faces = None, None
                if shape.tag == 'mesh':
                    filename = shape.attrib.get('filename', '')
                    path = resolve_mesh(filename, base_dir)
                    if path is None:
                        self._unchecked(name, 'mesh %s not found' % filename)
                        continue
                    try:
                        mesh, faces = read_mesh(path, faces=True)
                        mesh = mesh * _floats(shape, 'scale', 3, (1.0, 1.0, 1.0))
                    except MeshError as err:
                        self._unchecked(name, str(err))
                        continue
                elif shape.tag not in ('box', 'cylinder', 'sphere'):
                    self._unchecked(name, 'geometry <%s> is not known' % shape.tag)
                    continue
                points, extra = shape_points(shape, mesh)
                origin = collision.find('origin')
                xyz = _floats(origin, 'xyz', 3, (0, 0, 0)) if origin is not None else [0] * 3
                rpy = _floats(origin, 'rpy', 3, (0, 0, 0)) if origin is not None else [0] * 3
                yield name, np.asarray(xyz) + points @ rpy_to_matrix(rpy).T, extra, faces

    def _can_fall(self, body):
        """Whether a joint on the body's path changes heights in the root frame."""
        model = self.model
        q0 = np.zeros((1, model.nq))
        Xup = forward_pass(model, full_positions(model, q0))[0]
        chain = []
        j = body
        while j >= 0:
            chain.append(j)
            j = model.parent[j]
        E = np.eye(3)
        for j in reversed(chain):
            E = Xup[j, 0, :3, :3] @ E
            joint = model.joints[j]
            if joint.jtype in ('revolute', 'continuous'):
                if np.linalg.norm((E.T @ np.asarray(joint.axis))[:2]) > 1e-9:
                    return True
            elif joint.jtype == 'prismatic':
                if abs((E.T @ np.asarray(joint.axis))[2]) > 1e-9:
                    return True
            else:
                return True
        return False

    @property
    def count(self):
        """Return the number of clearances kept per pose."""
        return len(self.names())

    def names(self):
        """Return what each clearance of :meth:`clearances` is, for messages."""
        out = ['%s and %s' % (self.links[i], self.links[j]) for i, j in self.pairs]
        for k, _ in enumerate(self.keep_out.planes):
            which = self.floored if (k == 0 and self.floor) else self.moving
            plane = 'the floor' if (k == 0 and self.floor) else 'keep-out plane %d' % (
                k - self.floor)
            out += ['%s and %s' % (self.links[c], plane) for c in which]
        for k, _ in enumerate(self.keep_out.boxes):
            out += ['%s and keep-out box %d' % (self.links[c], k) for c in self.moving]
        return out

    def _poses(self, q):
        """Body rotations ``E`` ``(nb, B, 3, 3)`` (root -> body) and origins ``(nb, B, 3)``."""
        model = self.model
        Xup, S = forward_pass(model, full_positions(model, q))[:2]
        count = q.shape[0]
        E = np.empty((model.nb, count, 3, 3))
        r = np.empty((model.nb, count, 3))
        for i in range(model.nb):
            Ei = Xup[i, :, :3, :3]
            m = -np.swapaxes(Ei, -1, -2) @ Xup[i, :, 3:, :3]   # skew(origin in parent coords)
            pi = np.stack([m[:, 2, 1], m[:, 0, 2], m[:, 1, 0]], axis=-1)
            p = model.parent[i]
            if p < 0:
                E[i], r[i] = Ei, pi
            else:
                E[i] = Ei @ E[p]
                r[i] = r[p] + np.einsum('bji,bj->bi', E[p], pi)
        return E, r, S

    def _points(self, E, r, shapes, local, count):
        """Points ``local`` ``(N, 3)`` of the shapes ``shapes`` ``(N,)`` in the root frame."""
        out = np.empty((count, len(local), 3))
        bodies = self.body[shapes]
        for body in np.unique(bodies):
            sel = bodies == body
            if body < 0:
                out[:, sel] = local[sel]
            else:
                # one matrix product for all states: (n, 3) x (3, B * 3)
                turned = local[sel] @ np.swapaxes(E[body], 0, 1).reshape(3, -1)
                out[:, sel] = r[body][:, None] + np.swapaxes(
                    turned.reshape(-1, count, 3), 0, 1)
        return out

    def _hull_of(self, c):
        start = self.hull_start[c]
        return self.hull[start:start + np.count_nonzero(self.hull_shape == c)]

    def _ends(self, E, r, count):
        """Capsule ends in the root frame ``(B, C, 2, 3)``."""
        shapes = np.repeat(np.arange(len(self.links)), 2)
        local = np.stack([self.a, self.b], axis=1).reshape(-1, 3)
        return self._points(E, r, shapes, local, count).reshape(count, -1, 2, 3)

    def _point_jacobians(self, E, r, S, bodies, points):
        """``d point / d q`` ``(B, K, 3, nv)`` of root-frame ``points`` ``(B, K, 3)`` on bodies."""
        model = self.model
        count = points.shape[0]
        Jf = np.zeros((count, points.shape[1], 3, model.nvf))
        for j in range(model.nb):
            # the points on body j or beyond it
            on = [k for k, b in enumerate(bodies) if self._beyond(b, j)]
            if not on:
                continue
            cols = slice(model.v_start[j], model.v_start[j] + model.joints[j].nv)
            Et = np.swapaxes(E[j], -1, -2)
            w = (Et @ S[j][:, :3])[:, None]                 # (B, 1, 3, nv_j) root axes
            v = (Et @ S[j][:, 3:])[:, None]
            arm = points[:, on] - r[j][:, None]             # (B, k, 3)
            Jf[:, on, :, cols] = v + np.cross(w, arm[..., None], axis=2)
        return Jf @ self._G

    def _beyond(self, body, j):
        while body >= 0:
            if body == j:
                return True
            body = self.model.parent[body]
        return False

    def _end_jacobians(self, E, r, S, ends):
        """``d end / d q`` ``(B, C, 2, 3, nv)`` in the independent coordinates."""
        count = ends.shape[0]
        bodies = np.repeat(self.body, 2)
        J = self._point_jacobians(E, r, S, bodies, ends.reshape(count, -1, 3))
        return J.reshape(count, len(self.links), 2, 3, -1)

    def clearances(self, q, gradient=False):
        """
        Clearances ``(B, count)`` [m] at positions ``q`` ``(B, nv)`` (and their gradients).

        The clearances are those of :meth:`names`; with ``gradient``, also ``(B, count, nv)``.
        """
        q = np.asarray(q, dtype=float).reshape(-1, self.model.nv)
        count = q.shape[0]
        E, r, S = self._poses(q)
        ends = self._ends(E, r, count)
        J = self._end_jacobians(E, r, S, ends) if gradient else None
        values, grads = [], []
        if len(self.pairs):
            i, j = self.pairs[:, 0], self.pairs[:, 1]
            s, t, p1, p2 = _closest(ends[:, i, 0], ends[:, i, 1], ends[:, j, 0], ends[:, j, 1])
            delta = p1 - p2
            dist = np.linalg.norm(delta, axis=-1)
            values.append(dist - self.radius[i] - self.radius[j])
            if gradient:
                n = delta / np.maximum(dist, 1e-12)[..., None]
                J1 = (1 - s)[..., None, None] * J[:, i, 0] + s[..., None, None] * J[:, i, 1]
                J2 = (1 - t)[..., None, None] * J[:, j, 0] + t[..., None, None] * J[:, j, 1]
                grads.append(np.einsum('bpk,bpkv->bpv', n, J1 - J2))
        for k, (normal, offset) in enumerate(self.keep_out.planes):
            which = self.floored if (k == 0 and self.floor) else self.moving
            low = np.empty((count, len(which)))
            lowest = np.empty((count, len(which), 3))
            for n, c in enumerate(which):
                body, local = self.body[c], self._hull_of(c)
                if body < 0:
                    height = np.broadcast_to(local @ normal, (count, len(local)))
                    base = np.zeros(count)
                else:
                    # normal . (r + E^T p) = normal . r + (E normal) . p, for all vertices p
                    base = r[body] @ normal
                    height = base[:, None] + (E[body] @ normal) @ local.T
                at = np.argmin(height, axis=1)
                low[:, n] = height[np.arange(count), at] - offset - self.hull_extra[c]
                lowest[:, n] = local[at] if body < 0 else \
                    r[body] + np.einsum('bji,bj->bi', E[body], local[at])
            values.append(low)
            if gradient:
                Jp = self._point_jacobians(E, r, S, self.body[which], lowest)
                grads.append(np.einsum('k,bckv->bcv', normal, Jp))
        moving = self.moving
        for centre, half, R in self.keep_out.boxes:
            value, grad = _box_clearance(ends[:, moving], None if J is None else J[:, moving],
                                         centre, half, R, self.radius[moving])
            values.append(value)
            if gradient:
                grads.append(grad)
        value = np.concatenate(values, axis=1) if values else np.zeros((count, 0))
        if not gradient:
            return value
        grad = np.concatenate(grads, axis=1) if grads else np.zeros((count, 0, self.model.nv))
        return value, grad

    def reach(self, q):
        """
        ``(B, C, nv)``: how far [m] any point of each capsule moves per unit of each joint.

        An upper bound: the distance from a revolute joint's axis to the capsule's farthest
        point, 1 for a prismatic joint, times the mimic multiplier.
        """
        q = np.asarray(q, dtype=float).reshape(-1, self.model.nv)
        E, r, S = self._poses(q)
        ends = self._ends(E, r, q.shape[0])
        J = self._end_jacobians(E, r, S, ends)            # (B, C, 2, 3, nv)
        # |d end| per end, plus the radius times the joint's turning rate
        turn = np.zeros((q.shape[0], len(self.links), self.model.nv))
        model = self.model
        for c, body in enumerate(self.body):
            j = body
            while j >= 0:
                cols = list(range(model.v_start[j], model.v_start[j] + model.joints[j].nv))
                w = np.linalg.norm(S[j][:, :3], axis=1)    # (B, nv_j)
                turn[:, c] += (w @ np.abs(self._G[cols])) * self.radius[c]
                j = model.parent[j]
        return np.linalg.norm(J, axis=3).max(axis=2) + turn

    def smooth_min(self, q, P):
        """
        Smooth minimum over the samples of each clearance, and its gradient.

        ``q`` ``(S, nv)`` positions at the optimiser's samples, ``P`` ``(S, m)`` their basis
        (``q_j = start_j + P z_j``). Returns ``(values (count,), gradient (count, nv * m))``;
        each value is at most the true minimum over the samples.
        """
        g, dg = self.clearances(q, gradient=True)              # (S, K), (S, K, nv)
        low = g.min(axis=0)
        w = np.exp(-SMOOTH_MIN * (g - low))
        total = w.sum(axis=0)
        value = low - np.log(total) / SMOOTH_MIN
        w /= total
        grad = np.einsum('sk,skv,sm->kvm', w, dg, P)
        return value, grad.reshape(g.shape[1], -1)

    def check(self, q, qd_step):
        """
        First violation of the motion ``q`` ``(n, nv)`` sampled finely, or ``None``.

        ``qd_step`` ``(n, nv)``: the positions' change to the next sample (bounds how far the
        capsules move in between). A violation is ``(index, name, clearance)``: a clearance
        below :attr:`kept` at a sample, or between samples a bound that does not stay
        above 0.
        """
        if self.count == 0:
            return None
        g = self.clearances(q)
        low = g < self.kept - 1e-9
        if low.any():
            k, c = np.argwhere(low)[0]
            return int(k), self.names()[c], float(g[k, c])
        move = np.einsum('bcv,bv->bc', self.reach(q), np.abs(qd_step))   # (n, C)
        # the reach is taken at the sample: a quarter more covers its change over the step
        bound = g - 1.25 * self._movement(move)
        bad = bound <= 0
        if bad.any():
            k, c = np.argwhere(bad)[0]
            return int(k), self.names()[c], float(bound[k, c])
        return None

    def _movement(self, move):
        """How much each clearance can shrink when the capsules move by ``move`` ``(n, C)``."""
        parts = []
        if len(self.pairs):
            parts.append(move[:, self.pairs[:, 0]] + move[:, self.pairs[:, 1]])
        for k, _ in enumerate(self.keep_out.planes):
            which = self.floored if (k == 0 and self.floor) else self.moving
            parts.append(move[:, which])
        for _ in self.keep_out.boxes:
            parts.append(move[:, self.moving])
        return np.concatenate(parts, axis=1)


def _hull(points):
    """Return the vertices of the convex hull of ``points`` (all of them where it is flat)."""
    if len(points) < 5:
        return points
    try:
        from scipy.spatial import ConvexHull
        return points[ConvexHull(points).vertices]
    except Exception:  # noqa: B902 (qhull: flat or degenerate points, all of them are kept)
        return points


def _closest(a0, a1, b0, b1):
    """
    Closest points of segments ``[a0, a1]`` and ``[b0, b1]`` (``(..., 3)`` each).

    Returns ``(s, t, p, q)``: parameters in ``[0, 1]`` and points ``p = a0 + s (a1 - a0)``,
    ``q = b0 + t (b1 - b0)``.
    """
    d1, d2, r = a1 - a0, b1 - b0, a0 - b0
    a = np.einsum('...k,...k', d1, d1)
    e = np.einsum('...k,...k', d2, d2)
    f = np.einsum('...k,...k', d2, r)
    c = np.einsum('...k,...k', d1, r)
    b = np.einsum('...k,...k', d1, d2)
    tiny = 1e-18
    denom = a * e - b * b
    s = np.where(denom > tiny * np.maximum(a * e, tiny),
                 np.clip((b * f - c * e) / np.where(denom > 0, denom, 1.0), 0.0, 1.0), 0.0)
    # the second segment a point: the first one's point nearest to it
    s = np.where(e > tiny, s, np.clip(-c / np.where(a > tiny, a, 1.0), 0.0, 1.0))
    s = np.where(a > tiny, s, 0.0)
    t = np.where(e > tiny, (b * s + f) / np.where(e > tiny, e, 1.0), 0.0)
    # t outside [0, 1]: clamp it and recompute s for the clamped t
    t_clamped = np.clip(t, 0.0, 1.0)
    s = np.where((t != t_clamped) & (a > tiny),
                 np.clip((b * t_clamped - c) / np.where(a > tiny, a, 1.0), 0.0, 1.0), s)
    t = t_clamped
    p = a0 + s[..., None] * d1
    q = b0 + t[..., None] * d2
    return s, t, p, q


def _box_clearance(ends, J, centre, half, R, radius, iterations=40):
    """Clearance of each capsule from one box: ``(B, C)`` and its gradient ``(B, C, nv)``."""
    local = (ends - centre) @ R                    # box coordinates (B, C, 2, 3)

    def signed(p):
        d = np.abs(p) - half
        outside = np.linalg.norm(np.maximum(d, 0.0), axis=-1)
        return outside + np.minimum(d.max(axis=-1), 0.0)

    # the signed distance is convex along the segment: a golden-section search finds its least
    lo = np.zeros(local.shape[:2])
    hi = np.ones(local.shape[:2])
    golden = (math.sqrt(5.0) - 1.0) / 2.0
    for _ in range(iterations):
        m1 = hi - golden * (hi - lo)
        m2 = lo + golden * (hi - lo)
        f1 = signed(local[:, :, 0] + m1[..., None] * (local[:, :, 1] - local[:, :, 0]))
        f2 = signed(local[:, :, 0] + m2[..., None] * (local[:, :, 1] - local[:, :, 0]))
        left = f1 <= f2
        hi = np.where(left, m2, hi)
        lo = np.where(left, lo, m1)
    s = 0.5 * (lo + hi)
    p = local[:, :, 0] + s[..., None] * (local[:, :, 1] - local[:, :, 0])
    value = signed(p) - radius
    # gradient of the signed distance at p (box coordinates), then to the root frame
    d = np.abs(p) - half
    outside = np.maximum(d, 0.0)
    norm = np.linalg.norm(outside, axis=-1, keepdims=True)
    inside_face = np.eye(3)[d.argmax(axis=-1)]
    n_local = np.where(norm > 0, outside / np.where(norm > 0, norm, 1.0), inside_face) \
        * np.sign(np.where(p == 0, 1.0, p))
    n = n_local @ R.T
    Jp = (1 - s)[..., None, None] * J[:, :, 0] + s[..., None, None] * J[:, :, 1] \
        if J is not None else None
    grad = np.einsum('bck,bckv->bcv', n, Jp) if Jp is not None else None
    return value, grad
