"""
The clearances an excitation keeps: capsules on a model's links, the floor, keep-out regions.

The clearances kept, each at least ``clearance`` [m]:

- between the capsules of every pair of links except links of one rigid body (joined by fixed
  joints), links joined by one moving joint (adjacent) and the pairs an SRDF's
  ``<disable_collisions>`` names;
- above the *floor*, the plane ``z = 0`` of the root link (or none), for every link whose
  height can change (links that only turn about vertical axes are mounted where they are);
- from each plane and box of a *keep-out* file (:func:`~.keep_out.read_keep_out`), for every
  link that moves (links fixed to the root stay where they are mounted).

A capsule contains its shape, so a clearance between capsules is a lower bound of the
clearance between the shapes; the distance between two capsules is the distance between their
segments less the radii, which costs a few arithmetic operations for any pose and has a
gradient everywhere two capsules are apart. A mesh that cannot be found or read leaves its link
unchecked, with a warning (the summary names the links).
"""

import math

import numpy as np

from .capsules import convex_hull, fit_capsules, shape_points
from .keep_out import KeepOut, read_srdf_pairs
from .meshes import MeshError, read_mesh, resolve_mesh
from ..analysis import AnalysisError
from ..dynamics import forward_pass, full_positions, mimic_matrix
from ..parsers.description import UrdfError
from ..parsers.urdf import numbers, parse_xml
from ..spatial import plux_parts, rpy_to_matrix

#: Default clearance between capsules, and from the floor and keep-out regions [m].
DEFAULT_CLEARANCE = 0.03
#: Sharpness of the smooth minimum over time the optimiser constrains [1/m]; it is below the
#: true minimum by at most ``log(samples) / SMOOTH_MIN`` (1.8 mm for 200 samples).
SMOOTH_MIN = 3000.0
#: How much closer than at the start pose links that start near the clearance may come [m]
#: (more than the smooth minimum's shortfall over 200 samples, 1.8 mm).
START_SLACK = 0.002


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
        try:
            shapes = list(self._shapes(urdf_text, base_dir))
        except UrdfError as err:  # (a <geometry> or <origin> without its numbers)
            raise AnalysisError(str(err)) from None
        for link, points, extra, faces in shapes:
            if link not in model.link_body:
                self._unchecked(link, 'not in the model (above its root link)')
                continue
            E, origin = plux_parts(model.link_X[link])  # body -> link; origin in the body
            for pa, pb, r, part in fit_capsules(points, faces):
                links.append(link)
                a.append(origin + E.T @ pa)
                b.append(origin + E.T @ pb)
                radius.append(r + extra)
                hull.append(origin + convex_hull(part) @ E)
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
        # the independent coordinates' map: vf = G v (the identity without mimic joints)
        G = mimic_matrix(model)
        self._G = np.eye(model.nv) if G is None else G

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
                'the start pose is not clear (%s; %g m needed): start where the robot stands '
                'free, e.g. in the pose it is in (or change the keep-out regions, the floor, the '
                'SRDF or the clearance)'
                % ('; '.join('%s %.3f m apart' % (n, v) for v, n in seen[:4]), self.clearance))
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
                        mesh = mesh * numbers(shape, 'scale', 3, (1.0, 1.0, 1.0))
                    except MeshError as err:
                        self._unchecked(name, str(err))
                        continue
                elif shape.tag not in ('box', 'cylinder', 'sphere'):
                    self._unchecked(name, 'geometry <%s> is not known' % shape.tag)
                    continue
                points, extra = shape_points(shape, mesh)
                origin = collision.find('origin')
                xyz = numbers(origin, 'xyz', 3, (0, 0, 0)) if origin is not None else [0] * 3
                rpy = numbers(origin, 'rpy', 3, (0, 0, 0)) if origin is not None else [0] * 3
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
            Ei, pi = plux_parts(Xup[i])  # parent -> body; origin in parent coordinates
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
            s, t, p1, p2 = closest_points(ends[:, i, 0], ends[:, i, 1], ends[:, j, 0],
                                          ends[:, j, 1])
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
            value, grad = box_clearance(ends[:, moving], None if J is None else J[:, moving],
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


def closest_points(a0, a1, b0, b1):
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


def box_clearance(ends, J, centre, half, R, radius, iterations=40):
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
