"""
Recorded joint states merged by name into the model's order, on one time base.

How a bag's messages become state rows (every step is vectorised over the messages):

1. **Stamps.** Each message's time is its header stamp, or the time the bag received it where
   the stamp is zero. Messages are sorted by that time (publishers interleave in a bag); a
   joint reported twice at one time keeps its last value.
2. **Time base.** The rows are the distinct times of all messages that carry a joint of the
   model, from the first time at which every independent joint has been seen to the last
   time at which every joint is still reported (nothing is extrapolated).
3. **Merging by name.** Every joint's values (position, velocity, effort) are interpolated
   linearly from its own samples onto the rows, so a joint published by another driver, at
   another rate or phase, is not held stale between its messages. Continuous joints are
   unwrapped first.
4. **Gaps.** A joint whose own samples around a row are further apart than ``max_gap`` times
   its sample period (:func:`.differentiate.sample_step`) is unknown there: that row is dropped.
   Rows further apart than ``max_gap`` times the shortest period of the joints split the
   recording into segments; derivatives are never taken across a gap. Segments of fewer than 3
   rows are dropped (no derivative exists there).
5. **Velocities** are the recorded ones where a joint's messages carry them; a joint whose
   messages never do gets the derivative of its positions (see :mod:`.differentiate`).
"""

import numpy as np

from . import AnalysisError
from .differentiate import sample_step

DEFAULT_MAX_GAP = 5.0  # sample periods


class JointSeries:
    """
    One joint's samples from every message that names it, sorted by time.

    Attributes
    ----------
    time
        ``(n,)`` [s] strictly increasing, relative to the recording's origin.
    position, velocity, effort
        ``(n,)`` values; ``velocity`` / ``effort`` are ``None``
        where no message carried them, else taken from the messages that did (with their
        own ``velocity_time`` / ``effort_time``).

    """

    def __init__(self, time, position, velocity, velocity_time, effort, effort_time):
        self.time, self.position = time, position
        self.velocity, self.velocity_time = velocity, velocity_time
        self.effort, self.effort_time = effort, effort_time

    def period(self):
        """Sample period [s] (:func:`.differentiate.sample_step`); ``inf`` for one sample."""
        return sample_step(self.time) if len(self.time) > 1 else np.inf


def _sorted_unique(time, value):
    """
    Sort samples by time and keep the last of equal times, finite values only.

    A recording from one publisher is already in order: then nothing is copied.
    """
    finite = np.isfinite(value)
    if not finite.all():
        time, value = time[finite], value[finite]
    steps = np.diff(time)
    if (steps > 0).all():
        return time, value
    if not (steps >= 0).all():
        order = np.argsort(time, kind='stable')
        time, value = time[order], value[order]
    last = np.ones(len(time), dtype=bool)
    last[:-1] = time[1:] != time[:-1]
    return time[last], value[last]


def joint_series(groups, times, name, continuous=False):
    """
    Return the samples of joint ``name`` from every group that carries it (``None`` if none).

    Parameters
    ----------
    groups
        :class:`~.bag.JointStateGroup` list.
    times
        ``(n,)`` message times [s] of each group.
    name
        the joint.
    continuous
        unwrap the positions (an angle without limits).

    """
    parts = {'position': [], 'velocity': [], 'effort': []}
    for group, time in zip(groups, times):
        if name not in group.names:
            continue
        col = group.names.index(name)
        for field in parts:
            table = getattr(group, field)
            if table is not None:
                parts[field].append((time, table[:, col]))
    if not parts['position']:
        return None

    def joined(field):
        if not parts[field]:
            return None, None
        if len(parts[field]) == 1:
            time, value = _sorted_unique(*parts[field][0])
        else:
            time, value = _sorted_unique(np.concatenate([p[0] for p in parts[field]]),
                                         np.concatenate([p[1] for p in parts[field]]))
        return value, time

    position, time = joined('position')
    if not len(time):
        return None
    if continuous:
        position = np.unwrap(position)
    return JointSeries(time, position, *joined('velocity'), *joined('effort'))


class MergedStates:
    """
    Joint states on one time base, in the model's order.

    Attributes
    ----------
    origin_ns
        the recording time of ``time == 0`` [ns] (the first row).
    time
        ``(n,)`` row times [s] since ``origin_ns``.
    segment
        ``(n,)`` int segment number of each row (gaps separate segments).
    q, qd
        ``(n, nv)`` positions and velocities; ``qd`` columns of joints without recorded
        velocities are zero here (see :func:`~.pipeline.state_derivatives`).
    recorded_velocity
        ``(nv,)`` bool, the joint's velocities come from the bag.
    effort
        joint name -> ``(n,)`` recorded effort, for the joints whose messages had some.
    ``notes``
        what was ignored or dropped, one sentence each.

    """

    def __init__(self, origin_ns, time, segment, q, qd, recorded_velocity, effort, notes):
        self.origin_ns = origin_ns
        self.time, self.segment = time, segment
        self.q, self.qd = q, qd
        self.recorded_velocity = recorded_velocity
        self.effort = effort
        self.notes = notes

    def segments(self):
        """``[(start, stop), ...]`` row ranges of the segments."""
        edges = np.flatnonzero(np.diff(self.segment)) + 1
        bounds = np.concatenate([[0], edges, [len(self.time)]])
        return list(zip(bounds[:-1], bounds[1:]))


def merge_joint_states(groups, model, max_gap=DEFAULT_MAX_GAP, hold=None):
    """
    Merge the groups of :func:`~.bag.read_joint_states` into the model's order.

    Parameters
    ----------
    groups
        :class:`~.bag.JointStateGroup` list.
    model
        the :class:`~rbd_dynamics.Model` (1-DoF joints: ``nq == nv``).
    max_gap
        a gap is longer than this many sample periods.
    hold
        ``{joint: position}`` for joints the bag does not carry, held there at rest.

    Returns
    -------
    :class:`MergedStates`.

    Raises
    ------
    AnalysisError
        none of the model's joints appear, some never appear (and are not
        held), or fewer than 3 rows remain.

    """
    hold = dict(hold or {})
    names = model.joint_names
    notes = []
    recorded = {n for g in groups for n in g.names}
    known = set(names) | set(model.mimic)
    unknown = sorted(recorded - known)
    if unknown:
        notes.append('ignored joints the model does not have: %s' % ', '.join(unknown))
    if not recorded & set(names):
        raise AnalysisError("none of the model's joints (%s) appear in the joint states; "
                            'they name %s' % (', '.join(names), ', '.join(sorted(recorded))
                                              or 'no joints'))
    missing = [n for n in names if n not in recorded and n not in hold]
    if missing:
        raise AnalysisError('joint(s) %s never appear in the joint states (hold them at a '
                            'position)' % ', '.join(missing))
    live = [g for g in groups if set(g.names) & set(names)]
    origin_ns = int(min(g.stamp.min() for g in live))
    times = [(g.stamp - origin_ns) * 1e-9 for g in live]
    types = dict(zip(names, model.joint_types))
    series = {n: joint_series(live, times, n, types[n] == 'continuous')
              for n in names if n not in hold or n in recorded}
    empty = [n for n, s in series.items() if s is None]
    if empty:
        raise AnalysisError('joint(s) %s have no finite positions' % ', '.join(empty))

    start = max(s.time[0] for s in series.values())
    stop = min(s.time[-1] for s in series.values())
    stamps = times[0] if len(times) == 1 else np.concatenate(times)
    if not (np.diff(stamps) > 0).all():
        stamps = np.unique(stamps)
    time = stamps[(stamps >= start) & (stamps <= stop)]
    keep = np.ones(len(time), dtype=bool)
    for name, s in series.items():
        keep &= ~_stale(s.time, time, max_gap * s.period())
    if not keep.all():
        notes.append('dropped %d rows where a joint had a gap of more than %g sample periods'
                     % (np.count_nonzero(~keep), max_gap))
    breaks = np.zeros(len(time), dtype=bool)
    breaks[1:] = ~keep[:-1]  # a dropped row ends its segment
    shortest = min(s.period() for s in series.values())
    breaks[1:] |= np.diff(time) > max_gap * shortest
    segment = np.cumsum(breaks)[keep]
    time = time[keep]
    segment, keep_rows = _drop_short_segments(segment, notes)
    time = time[keep_rows]
    if len(time) < 3:
        raise AnalysisError('fewer than 3 joint states remain once every joint has been seen '
                            '(%d rows)' % len(time))

    nv = len(names)
    q = np.empty((len(time), nv))
    qd = np.zeros((len(time), nv))
    recorded_velocity = np.zeros(nv, dtype=bool)
    effort = {}
    for i, name in enumerate(names):
        s = series.get(name)
        if s is None:
            q[:, i] = float(hold[name])
            recorded_velocity[i] = True  # at rest: the zero velocity is known
            continue
        q[:, i] = _at(time, s.time, s.position)
        if s.velocity is not None:
            qd[:, i] = _at(time, s.velocity_time, s.velocity)
            recorded_velocity[i] = True
        if s.effort is not None:
            effort[name] = _at(time, s.effort_time, s.effort)
    first_ns = origin_ns + int(round(time[0] * 1e9))
    return MergedStates(first_ns, time - time[0], segment, q, qd, recorded_velocity, effort,
                        notes)


def _at(time, sample_time, value):
    """
    Interpolate ``value`` linearly at ``time``.

    ``value`` interpolated linearly at ``time`` (taken as is where the times are the
    samples' own, as with a single publisher).
    """
    if len(sample_time) == len(time) and np.array_equal(sample_time, time):
        return value
    return np.interp(time, sample_time, value)


def _stale(sample_time, time, gap):
    """
    Mark the rows that fall in a gap between samples.

    ``(len(time),)`` bool: rows between two samples further apart than ``gap`` [s] (rows
    lie within the samples' time span); a row at a sample's own time is never stale.
    """
    if not np.isfinite(gap) or len(sample_time) < 2 or np.diff(sample_time).max() <= gap:
        return np.zeros(len(time), dtype=bool)
    below = np.clip(np.searchsorted(sample_time, time, side='right') - 1, 0,
                    len(sample_time) - 2)
    lo, hi = sample_time[below], sample_time[below + 1]
    return (time > lo) & (time < hi) & (hi - lo > gap)


def _drop_short_segments(segment, notes):
    """Renumber segments from 0 and drop those of fewer than 3 rows: ``(segment, kept)``."""
    if not len(segment):
        return segment, np.zeros(0, dtype=bool)
    _, inverse, counts = np.unique(segment, return_inverse=True, return_counts=True)
    kept = counts[inverse] >= 3
    if not kept.all():
        notes.append('dropped %d rows in %d segments of fewer than 3 states between gaps'
                     % (np.count_nonzero(~kept), np.count_nonzero(counts < 3)))
    _, segment = np.unique(inverse[kept], return_inverse=True)
    return segment, kept
