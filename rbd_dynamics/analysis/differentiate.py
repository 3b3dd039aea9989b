"""
Smoothed time derivatives of sampled signals: Savitzky-Golay differentiation in NumPy.

A Savitzky-Golay derivative fits a polynomial of degree ``order`` by least squares to the
``2m + 1`` samples centred on each sample and takes the fit's derivative there. On a uniform
grid that is a convolution with a fixed kernel; the kernel is antisymmetric, so the filter is
centred and has no lag. The first and last ``m`` samples, where no centred window fits, take
the derivative of the fit to the first (last) window at their own position: no samples are
lost and nothing is padded, at the price of more noise in those ``m`` samples.

The default is a cubic fit over a window of 0.05 s (set in seconds, so the filter means the
same at any sample rate). A cubic's derivative is exact for polynomials up to degree 3, so a
smooth motion passes nearly unchanged: at 1 kHz the gain on the derivative is 0.999 at 5 Hz,
0.99 at 10 Hz, 0.95 at 15 Hz and 0.71 at 25 Hz, and falls to 0.06 at 40 Hz. White noise of
standard deviation ``s`` on the differentiated signal becomes noise of about ``24 s`` (per second)
on the derivative at 1 kHz (``35 s`` at 500 Hz; ``95 s`` at 100 Hz, where the window holds only
5 samples). Joint motions of a robot arm stay well below 10 Hz; the window trades the noise of
velocity sensors (and of positions differentiated twice) against that band. A shorter window
(``--window``) keeps faster motion, a longer one removes more noise.

Samples that are not uniformly spaced (drivers jitter, publishers with different rates merged
into one time base, a dropped sample) are interpolated linearly onto a uniform grid, the
derivative is taken there, and interpolated back onto the sample times.

The window in samples has one rule (:func:`half_width`): half the window over the sample step
(:func:`sample_step`), rounded. The step is the median's, refined over the span: a dropped
sample, or a pause between the segments of a recording, does not move it, and samples that
jitter about one rate get the mean of their steps. The uniform grid is the span in those steps
(the samples themselves where they are uniform).
"""

import numpy as np

DEFAULT_WINDOW = 0.05  # s
DEFAULT_ORDER = 3


def _fit_matrix(m, order):
    """
    Least-squares polynomial fit of a window, as a matrix.

    ``(order + 1, 2m + 1)`` least-squares map from the samples at offsets ``-m..m`` to the
    coefficients of the fitted polynomial in the offset (a pseudo-inverse).
    """
    offsets = np.arange(-m, m + 1, dtype=float)
    vander = offsets[:, None] ** np.arange(order + 1)
    return np.linalg.pinv(vander)


def _derivative_rows(m, order, at):
    """
    Weights of the fitted polynomial's derivative at given offsets.

    ``(len(at), 2m + 1)`` weights: the derivative (per sample step) at offsets ``at`` of the
    polynomial fitted to the window's samples.
    """
    fit = _fit_matrix(m, order)
    at = np.asarray(at, dtype=float)
    powers = np.arange(1, order + 1)
    slope = powers * at[:, None] ** (powers - 1)  # d/dx of x**p at each offset
    return slope @ fit[1:]


def savgol_derivative(y, dt, half_width, order=DEFAULT_ORDER):
    """
    Savitzky-Golay first derivative of uniformly sampled signals.

    Parameters
    ----------
    y
        ``(n,)`` or ``(n, k)`` samples, one column per signal.
    dt
        sample period [s].
    half_width
        ``m``: the window holds ``2m + 1`` samples. It is reduced to fit ``n`` (and
        the order to fit the window); ``n`` must be at least 3.
    order
        degree of the fitted polynomial.

    Returns
    -------
    ``dy/dt``, shaped like ``y``.

    """
    y = np.asarray(y, dtype=float)
    column = y.ndim == 1
    y2 = y[:, None] if column else y
    n = y2.shape[0]
    if n < 3:
        raise ValueError('a derivative needs at least 3 samples, got %d' % n)
    m = int(max(1, min(half_width, (n - 1) // 2)))
    order = int(min(order, 2 * m))
    width = 2 * m + 1
    centre = _derivative_rows(m, order, [0.0])[0] / dt
    out = np.empty_like(y2)
    kernel = centre[::-1]  # np.convolve flips its second argument
    for j in range(y2.shape[1]):
        out[m:n - m, j] = np.convolve(y2[:, j], kernel, mode='valid')
    head = _derivative_rows(m, order, np.arange(-m, 0)) / dt
    tail = _derivative_rows(m, order, np.arange(1, m + 1)) / dt
    out[:m] = head @ y2[:width]
    out[n - m:] = tail @ y2[n - width:]
    return out[:, 0] if column else out


def sample_step(t):
    """
    Return the sample step of increasing times ``t`` [s]; 0 for one time.

    The median step decides how many nominal steps each step is (a dropped sample's is two, a
    pause's many, a step split by another publisher's sample counts as its share); the span
    over their number is the step. For samples that jitter about one rate that is the span
    over ``n - 1``, the mean; a dropped sample or a pause does not move it.
    """
    steps = np.diff(t)
    if not len(steps):
        return 0.0
    median = float(np.median(steps))
    if not median > 0:
        return median
    return float((t[-1] - t[0]) / np.rint(steps / median).sum())


def half_width(t, window):
    """
    Return the samples on either side of a sample within a derivative ``window`` [s].

    At times ``t``: ``round(window / 2 / step)`` with their step (:func:`sample_step`); 0 for
    one time. The window of :func:`derivative`, and of any test of what it spans.
    """
    step = sample_step(t)
    return int(round(0.5 * window / step)) if step > 0 else 0


def derivative(t, y, window=DEFAULT_WINDOW, order=DEFAULT_ORDER):
    """
    Smoothed derivative of signals sampled at increasing times (one segment, no gaps).

    Parameters
    ----------
    t
        ``(n,)`` strictly increasing sample times [s], ``n >= 3``.
    y
        ``(n, k)`` samples.
    window
        length of the fitting window [s] (at least 3 samples are used).
    order
        degree of the fitted polynomial.

    Returns
    -------
    ``(n, k)`` derivative at the times ``t``.

    """
    t = np.asarray(t, dtype=float)
    m = half_width(t, window)
    span = t[-1] - t[0]
    count = max(int(round(span / sample_step(t))), 2)  # the grid: the span in whole steps
    dt = span / count
    if count == len(t) - 1 and np.all(np.abs(np.diff(t) - dt) <= 1e-6 * dt):
        return savgol_derivative(y, dt, m, order)  # uniform: the samples are the grid
    grid = t[0] + dt * np.arange(count + 1)
    grid[-1] = t[-1]
    resampled = np.column_stack([np.interp(grid, t, y[:, j]) for j in range(y.shape[1])])
    slope = savgol_derivative(resampled, dt, m, order)
    return np.column_stack([np.interp(t, grid, slope[:, j]) for j in range(y.shape[1])])
