"""
Recordings for identification: read, held joints chosen, merged and differentiated, split.

The joint states of each bag are read as ``bag`` reads them (:mod:`rbd_dynamics.analysis.bag`),
the joints to hold are chosen from the fitted recordings (:mod:`.hold`), and every bag is merged
by name and differentiated with the model fitted (the held joints fixed in it). The last fifth
of the data is held out for validation unless validation recordings are given; a joint's rows
where it does not move steadily are left out of the fit (:func:`fitted_rows`).
"""

import sys
import time

import numpy as np

from . import hold
from ..analysis import AnalysisError
from ..analysis.differentiate import DEFAULT_WINDOW, half_width
from ..analysis.merge import DEFAULT_MAX_GAP
from ..analysis.robot import model_of

HOLDOUT = 0.2  # share of the data held out for validation without --validate
#: A joint that moved steadily in fewer states than this share is fitted at every speed.
MIN_STEADY_SHARE = 0.01


class Recording:
    """States of one bag: ``time`` ``(n,)``, ``q``, ``qd``, ``qdd``, ``effort`` ``(n, nv)``."""

    def __init__(self, name, time, q, qd, qdd, effort):
        self.name = name
        self.time, self.q, self.qd, self.qdd, self.effort = time, q, qd, qdd, effort

    def __len__(self):
        return len(self.time)

    def part(self, rows):
        """Return the rows ``rows`` (a slice) of this recording."""
        return Recording(self.name, self.time[rows], self.q[rows], self.qd[rows],
                         self.qdd[rows], self.effort[rows])


def held_model(text, held, root_link=None):
    """Return the model fitted: the description with the ``held`` joints fixed (compiled)."""
    return model_of(hold.held_description(text, held.values),
                    'the description with %s held' % ', '.join(held.values), root_link)


def read_states(path, topic, model, timing=None):
    """
    Read the joint states of one bag: a :class:`~rbd_dynamics.analysis.bag.BagJointStates`.

    Raises
    ------
    AnalysisError
        unreadable or empty bag, joints the description does not have.

    """
    from ..analysis.bag import ProgressPrinter, read_joint_states
    t0 = time.perf_counter()
    states = read_joint_states(path, topic, ProgressPrinter(sys.stderr, 'reading'))
    if not states.messages:
        raise AnalysisError('%s has no messages on %s' % (path, topic))
    if not states.groups:
        raise AnalysisError('%s: no usable joint states on %s (%s)' % (
            path, topic, '; '.join('%d messages: %s' % (n, r)
                                   for r, n in sorted(states.skipped.items()))))
    if not any(g.effort is not None for g in states.groups):
        raise AnalysisError('%s has no efforts: identification needs the measured efforts (the '
                            'effort field of the joint states)' % path)
    recorded = {n for g in states.groups for n in g.names}
    foreign = sorted(recorded - set(model.joint_names) - set(model.mimic))
    if foreign:
        raise AnalysisError('%s records joints the description does not have: %s (is it a '
                            'recording of this robot? its joints: %s)'
                            % (path, ', '.join(foreign), ', '.join(model.joint_names)))
    if timing is not None:
        timing['reading'] = timing.get('reading', 0.0) + time.perf_counter() - t0
    return states


def recording(path, states, model, window=DEFAULT_WINDOW, max_gap=DEFAULT_MAX_GAP,
              timing=None, held=(), quiet=False):
    """
    Merge and differentiate one bag's joint states as ``bag`` does: a :class:`Recording`.

    ``model`` is the model fitted; every one of its joints must be recorded with its effort.
    ``held`` names the description's joints that are fixed in it (the held joints and the
    mimic joints that follow them): that the bag records them is no news. ``quiet``: the
    merge's notes are not printed (a recording differentiated again).

    Raises
    ------
    AnalysisError
        a joint of the model missing, no efforts, too few states.

    """
    from ..analysis.merge import merge_joint_states
    from ..analysis.pipeline import state_derivatives
    t0 = time.perf_counter()
    try:
        merged = merge_joint_states(states.groups, model, max_gap)
    except AnalysisError as err:
        text = str(err).replace(
            '(hold them at a position)',
            '(identification needs every moving joint of the model recorded with its effort: '
            'record them too, or hold them at a position)')
        raise AnalysisError('%s: %s' % (path, text)) from None
    no_effort = [n for n in model.joint_names if n not in merged.effort]
    if no_effort:
        raise AnalysisError('%s has no efforts for %s: identification needs the measured '
                            'efforts (the effort field of the joint states)'
                            % (path, ', '.join(no_effort)))
    qd, qdd = state_derivatives(merged, window)
    effort = np.column_stack([merged.effort[n] for n in model.joint_names])
    if timing is not None:
        timing['differentiation'] = timing.get('differentiation', 0.0) \
            + time.perf_counter() - t0
    for note in () if quiet else merged.notes:
        if note.startswith('ignored joints the model does not have: ') and set(
                note.split(': ', 1)[1].split(', ')) <= set(held):
            continue  # the held joints, said in the summary
        print('warning: %s: %s' % (path, note), file=sys.stderr)
    return Recording(path, merged.time, merged.q, qd, qdd, effort)


def read_recording(path, topic, model, window=DEFAULT_WINDOW, max_gap=DEFAULT_MAX_GAP,
                   timing=None):
    """Read, merge and differentiate one bag of every joint of ``model`` (:func:`recording`)."""
    return recording(path, read_states(path, topic, model, timing), model, window, max_gap,
                     timing)


def split_holdout(recordings, share=HOLDOUT):
    """``(fit, validation)`` recordings: the last ``share`` of all states held out."""
    total = sum(len(r) for r in recordings)
    cut = int(round(total * (1.0 - share)))
    fit, validation, start = [], [], 0
    for r in recordings:
        stop = start + len(r)
        if stop <= cut:
            fit.append(r)
        elif start >= cut:
            validation.append(r)
        else:
            fit.append(r.part(slice(0, cut - start)))
            validation.append(r.part(slice(cut - start, None)))
        start = stop
    return fit, validation


def steady(model, recording, min_speed, window):
    """
    Where each joint of a recording moves steadily (:func:`.stack.moving`).

    At ``min_speed`` or faster through half the differentiation ``window`` on either side (the
    samples of :func:`~rbd_dynamics.analysis.differentiate.half_width`, as the derivatives).
    """
    from .stack import moving
    return moving(model, recording.qd, min_speed, half_width(recording.time, window))


def fitted_rows(model, recordings, min_speed, window):
    """
    Return the rows to fit of each recording (:func:`steady`), and the joints fitted whole.

    A joint that moved steadily in under :data:`MIN_STEADY_SHARE` of the states keeps all
    its rows: left out, nothing would determine its own parameters (a gripper's finger that
    the motion moves by millimetres per second).
    """
    keep = [steady(model, r, min_speed, window) for r in recordings]
    total = sum(len(r) for r in recordings)
    counts = sum((k.sum(axis=0) for k in keep), np.zeros(model.nv))
    whole = [j for j in range(model.nv) if counts[j] < MIN_STEADY_SHARE * total]
    for k in keep:
        k[:, whole] = True
    return keep, whole
