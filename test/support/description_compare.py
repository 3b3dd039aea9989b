"""Compare two :class:`rbd_dynamics.Description` objects field by field."""

import numpy as np


def description_differences(a, b, rtol=1e-12):
    """
    List what differs between two descriptions, as readable lines (empty when they agree).

    Links: names (document order), mass, centre of mass and inertia; joints: names (document
    order), type, parent, child, origin, axis, effort limit, damping, friction and mimic.
    """
    out = []
    if list(a.links) != list(b.links):
        out.append('links: %s != %s' % (list(a.links), list(b.links)))
    if list(a.joints) != list(b.joints):
        out.append('joints: %s != %s' % (list(a.joints), list(b.joints)))

    def close(x, y):
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        if x.shape != y.shape or not np.array_equal(np.isinf(x), np.isinf(y)):
            return False
        x, y = x[np.isfinite(x)], y[np.isfinite(y)]  # equal infinities (no effort limit)
        scale = max(1.0, float(np.max(np.abs(x), initial=0.0)))
        return np.allclose(x, y, rtol=0.0, atol=rtol * scale)

    for name in set(a.links) & set(b.links):
        la, lb = a.links[name], b.links[name]
        for field in ('mass', 'com', 'inertia'):
            if not close(getattr(la, field), getattr(lb, field)):
                out.append('link %r %s: %s != %s' % (name, field, getattr(la, field),
                                                     getattr(lb, field)))
    for name in set(a.joints) & set(b.joints):
        ja, jb = a.joints[name], b.joints[name]
        for field in ('jtype', 'parent', 'child'):
            if getattr(ja, field) != getattr(jb, field):
                out.append('joint %r %s: %r != %r' % (name, field, getattr(ja, field),
                                                      getattr(jb, field)))
        for field in ('xyz', 'rpy', 'axis', 'effort', 'damping', 'friction'):
            if not close(getattr(ja, field), getattr(jb, field)):
                out.append('joint %r %s: %s != %s' % (name, field, getattr(ja, field),
                                                      getattr(jb, field)))
        if (ja.mimic is None) != (jb.mimic is None) or (
                ja.mimic is not None and (ja.mimic[0] != jb.mimic[0]
                                          or not close(ja.mimic[1:], jb.mimic[1:]))):
            out.append('joint %r mimic: %s != %s' % (name, ja.mimic, jb.mimic))
    return sorted(out)
