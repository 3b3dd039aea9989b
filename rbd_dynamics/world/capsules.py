"""
Capsules around shapes: the set of points within a radius of a segment that holds a shape.

The segment of :func:`fit_capsule` lies along the shape's principal axis that gives the
smallest capsule; its ends are pulled in as far as the shape allows. A mesh that two to four
capsules hold much tighter becomes those (:func:`fit_capsules`). :func:`shape_points` gives the
points of a URDF ``<geometry>`` that its capsule must hold.
"""

import math

import numpy as np

from ..parsers.urdf import numbers

#: A shape is split in two capsules when they take less than this share of one's volume.
SPLIT_GAIN = 0.8
#: Points on a cylinder's rims when a capsule is fitted to it.
RIM_POINTS = 64


def fit_capsule(points, fine=True):
    """
    Return ``(a, b, radius)``: a capsule containing ``points`` ``(n, 3)``.

    ``fine``: ``False`` centres the circles on the middle of the extent (a quick estimate).

    Of the capsules along the three principal axes of the points (each centred on the axis
    through the centre of the smallest circle around the points' projection across it, with
    that circle's radius and the shortest segment for that radius), the one of least volume.
    """
    points = convex_hull(np.asarray(points, dtype=float).reshape(-1, 3))
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
        volume = sum(capsule_volume(fit_capsule(p[0], fine=False)) for p in parts)
        if best is None or volume < best[0]:
            best = (volume, parts)
    if best is None or best[0] > SPLIT_GAIN * capsule_volume(fit_capsule(points, fine=False)):
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


def capsule_volume(capsule):
    """Return the volume of a capsule ``(a, b, radius)`` [m^3]."""
    a, b, radius = capsule
    return math.pi * radius ** 2 * float(np.linalg.norm(b - a)) + 4.0 / 3.0 * math.pi * radius ** 3


def shape_points(geometry, mesh_points=None):
    """
    Points whose capsule contains one URDF ``<geometry>`` (in the shape's own frame).

    ``mesh_points``: a mesh's vertices (already scaled); ``None`` for the primitives.
    Returns ``(points, radius_extra)``: a sphere is its centre with its radius as the extra.
    """
    if geometry.tag == 'box':
        half = 0.5 * np.array(numbers(geometry, 'size', 3))
        corners = np.array([[i, j, k] for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)])
        return corners * half, 0.0
    if geometry.tag == 'cylinder':
        radius, length = (numbers(geometry, name, 1)[0] for name in ('radius', 'length'))
        angle = np.linspace(0.0, 2.0 * math.pi, RIM_POINTS, endpoint=False)
        # the rim polygon's edges come within cos(pi / n) of the radius: scale it out
        rim = np.stack([np.cos(angle), np.sin(angle)], axis=1) * radius \
            / math.cos(math.pi / RIM_POINTS)
        return np.vstack([np.hstack([rim, np.full((RIM_POINTS, 1), z)])
                          for z in (-0.5 * length, 0.5 * length)]), 0.0
    if geometry.tag == 'sphere':
        return np.zeros((1, 3)), numbers(geometry, 'radius', 1)[0]
    return mesh_points, 0.0


def convex_hull(points):
    """Return the vertices of the convex hull of ``points`` (all of them where it is flat)."""
    if len(points) < 5:
        return points
    try:
        from scipy.spatial import ConvexHull
        return points[ConvexHull(points).vertices]
    except Exception:  # noqa: B902 (qhull: flat or degenerate points, all of them are kept)
        return points
