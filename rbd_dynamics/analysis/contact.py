"""
Contact thresholds calibrated from recorded free motions: the node's observer, run offline.

The node's momentum observer (:class:`rbd_dynamics.control.observer.Observer`, with the node's
own :class:`~rbd_dynamics.control.setup.Setup`: its drive, effort scale and offset, and
``contact.drive``) runs over every joint state of the recordings, which hold the robot's
motions *without* contact. What it gives there is what nothing touching the robot makes: model
error, friction the model does not describe, noise. A threshold has to sit above it.

**Robust to one transient.** A single abrupt stop or start (an emergency stop during the
recording, a joint hitting its limit) makes a residual peak far above the rest, and a threshold
set above it would detect contacts late everywhere else. Each joint's residual is cut into
windows of :data:`WINDOW` seconds; its *typical peak* is the largest of the windows' peaks,
unless that one stands alone, more than :data:`OUTLIER` times the next: then the next. So one
window's transient does not set it, while a peak that recurs (every reversal of the motion)
does. The suggested threshold is :data:`MARGIN` times the typical
peak; where the largest peak is above it (the node would flag that transient), it is said with
its time.

**The gain.** For each gain tried, the threshold follows the residual that gain gives; a
contact torque ``τ`` switched on at once is flagged after ``−ln(1 − h / τ) / K`` (the
residual's first-order lag crossing the threshold ``h``). The gains are compared on the same
step per joint, :data:`STEP_SHARE` of the largest threshold any gain needs above it, and on the
lightest torque each detects at all (its threshold).
"""

import numpy as np

from . import AnalysisError

#: The windows whose peaks are compared [s].
WINDOW = 1.0
#: The suggested threshold over the typical peak.
MARGIN = 2.0
#: A window's peak this many times the next largest stands alone: a single transient.
OUTLIER = 1.5
#: The gains tried by default [1/s].
GAINS = (10.0, 25.0, 50.0, 100.0)
#: The step of contact torque the gains are compared on, over the largest threshold of any gain.
STEP_SHARE = 2.0


class JointFigures:
    """
    One gain's residual over the recordings, per joint (model order).

    Attributes
    ----------
    gain
        ``K`` [1/s].
    largest, at
        ``(nv,)`` the largest ``|r|`` and when [s from the first state of its recording], with
        ``recording`` the index of that recording.
    typical
        ``(nv,)`` the typical peak (:func:`typical_peaks`).
    threshold
        ``(nv,)`` :data:`MARGIN` times ``typical``.
    flagged
        ``(nv,)`` the states whose ``|r|`` exceeds the suggested threshold.
    states
        the states observed.
    time, residual
        the first recording's times [s] and residuals ``(n, nv)`` (for a plot).

    """

    def __init__(self, gain, nv):
        self.gain = gain
        self.largest = np.zeros(nv)
        self.at = np.zeros(nv)
        self.recording = np.zeros(nv, dtype=int)
        self.typical = np.zeros(nv)
        self.threshold = np.zeros(nv)
        self.flagged = np.zeros(nv, dtype=int)
        self.states = 0
        self.time = self.residual = None

    def delay(self, step):
        """Return the time [s] a step of contact torque ``step`` ``(nv,)`` takes to be flagged."""
        ratio = np.divide(self.threshold, step, out=np.full(len(step), np.inf),
                          where=step > 0)
        with np.errstate(divide='ignore', invalid='ignore'):
            out = -np.log1p(-ratio) / self.gain
        return np.where(ratio < 1.0, out, np.inf)


def residuals(setup, recording):
    """
    Run the node's observer over one recording: its residual ``(n, nv)``, model order.

    ``setup`` the node's :class:`~rbd_dynamics.control.setup.Setup` with the observer on;
    ``recording`` a :class:`~rbd_dynamics.identification.recordings.Recording` (efforts in
    the driver's units, as the node receives them).
    """
    from ..control.observer import Observer
    observer = Observer()
    out = np.empty((len(recording), setup.model.nv))
    scale, offset = setup.effort_scale, setup.effort_offset
    stamps = np.round(recording.time * 1e9).astype(np.int64)
    for k in range(len(recording)):
        effort = recording.effort[k] * scale - offset  # as the node takes it (law.compute)
        out[k] = observer.step(setup, recording.q[k], recording.qd[k], effort,
                               int(stamps[k])).residual
    return out


def window_peaks(time, r, window=WINDOW):
    """Return the largest ``|r|`` of each window of ``window`` seconds: ``(windows, nv)``."""
    index = np.floor((time - time[0]) / window).astype(int)
    peaks = np.zeros((index[-1] + 1, r.shape[1]))
    np.maximum.at(peaks, index, np.abs(r))
    return peaks[np.unique(index)]


def typical_peaks(peaks):
    """
    Return each joint's typical peak from its windows' peaks ``(windows, nv)``.

    The largest, unless it stands alone: more than :data:`OUTLIER` times the second largest
    (one transient); then the second largest.
    """
    ordered = np.sort(peaks, axis=0)
    if len(ordered) < 2:
        return ordered[-1]
    return np.where(ordered[-1] > OUTLIER * ordered[-2], ordered[-2], ordered[-1])


def calibrate(setups, recordings, margin=MARGIN, window=WINDOW):
    """
    Return a :class:`JointFigures` per setup (one per gain) over the recordings.

    Raises
    ------
    AnalysisError
        a residual that is not finite (a state the model cannot take).

    """
    figures = []
    for setup in setups:
        nv = setup.model.nv
        fig = JointFigures(setup.contact_gain, nv)
        peaks, magnitudes = [], []
        for index, recording in enumerate(recordings):
            r = residuals(setup, recording)
            if not np.isfinite(r).all():
                raise AnalysisError('%s: the observer gives no finite residual there'
                                    % recording.name)
            magnitude = np.abs(r)
            k = magnitude.argmax(axis=0)
            better = magnitude[k, range(nv)] > fig.largest
            fig.largest = np.where(better, magnitude[k, range(nv)], fig.largest)
            fig.at = np.where(better, recording.time[k] - recording.time[0], fig.at)
            fig.recording = np.where(better, index, fig.recording)
            peaks.append(window_peaks(recording.time, r, window))
            magnitudes.append(magnitude)
            fig.states += len(recording)
            if fig.time is None:
                fig.time, fig.residual = recording.time - recording.time[0], r
        fig.typical = typical_peaks(np.concatenate(peaks))
        fig.threshold = margin * fig.typical
        fig.flagged = sum((m > fig.threshold).sum(axis=0) for m in magnitudes)
        figures.append(fig)
    return figures


def comparison_step(figures):
    """Return the step of contact torque per joint the gains are compared on: ``(nv,)``."""
    return STEP_SHARE * np.max([f.threshold for f in figures], axis=0)


def best(figures):
    """
    Return the :class:`JointFigures` that flags the comparison step soonest.

    Soonest over the joints (the median of their delays); between equal delays (to 1 ms) the
    one with the lower thresholds (lighter contacts detected).
    """
    step = comparison_step(figures)
    delays = [np.median(f.delay(step)) for f in figures]
    order = sorted(range(len(figures)),
                   key=lambda i: (round(delays[i], 3), float(np.sum(figures[i].threshold
                                                                    / np.maximum(step, 1e-300)))))
    return figures[order[0]]


def transients(fig):
    """Return the joints (indices) whose largest residual the suggested threshold leaves out."""
    return [j for j in range(len(fig.largest)) if fig.largest[j] > fig.threshold[j]]
