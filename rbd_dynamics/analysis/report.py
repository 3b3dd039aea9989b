"""The results of an analysis: the torque table, its CSV, its plot and its printed summary."""

import numpy as np

from ..control.setup import first_over_limit

CSV_NAME = 'torques.csv'
PNG_NAME = 'torques.png'
VALUE_FORMAT = '%.12g'  # enough digits that the CSV's tau is rnea of the CSV's q, qd, qdd
TIME_FORMAT = '%.9f'    # s, to the nanosecond of the stamps
_BLOCK_ROWS = 1 << 15   # rows formatted at once when writing the CSV
DEFAULT_PLOT_POINTS = 4000


class TorqueTable:
    """
    States and torques along a recording or a trajectory.

    Attributes
    ----------
    joint_names
        the model's independent joints (the column order).
    time
        ``(n,)`` [s].
    q, qd, qdd
        ``(n, nv)`` positions, velocities, accelerations [rad, rad/s, rad/s^2 or
        m, m/s, m/s^2].
    tau
        ``(n, nv)`` ``rnea(model, q, qd, qdd)`` [N m or N].
    effort
        joint name -> ``(n,)`` recorded effort [N m or N] (only recorded joints).
    effort_limits
        ``(nv,)`` [N m or N], ``inf`` where unlimited, or ``None`` (unknown).
    time_label
        what ``time`` is, for the plot's axis.

    """

    def __init__(self, joint_names, time, q, qd, qdd, tau, effort=None, effort_limits=None,
                 time_label='time [s]'):
        self.joint_names = tuple(joint_names)
        self.time, self.q, self.qd, self.qdd, self.tau = time, q, qd, qdd, tau
        self.effort = dict(effort or {})
        self.effort_limits = (None if effort_limits is None
                              else np.asarray(effort_limits, dtype=float))
        self.time_label = time_label

    def columns(self):
        """``[(header, (n,) values), ...]`` in the order of the CSV."""
        cols = [('time', self.time)]
        for prefix, table in (('q', self.q), ('qd', self.qd), ('qdd', self.qdd),
                              ('tau', self.tau)):
            cols += [('%s.%s' % (prefix, name), table[:, i])
                     for i, name in enumerate(self.joint_names)]
        cols += [('effort.%s' % name, self.effort[name])
                 for name in self.joint_names if name in self.effort]
        return cols

    def limits_share(self):
        """``(nv,)`` peak ``|tau|`` over the effort limit (``nan`` where there is no limit)."""
        peak = np.abs(self.tau).max(axis=0)
        if self.effort_limits is None:
            return np.full(len(self.joint_names), np.nan)
        with np.errstate(divide='ignore', invalid='ignore'):
            return np.where(np.isfinite(self.effort_limits), peak / self.effort_limits, np.nan)

    def first_excess(self):
        """
        Find the first torque beyond its effort limit, as the node judges a trajectory.

        ``(row, joint index)`` of the first ``|tau|`` strictly over its effort limit, first
        in time, then in joint order (:func:`rbd_dynamics.control.setup.first_over_limit`), or
        ``None`` (within the limits, or no limits known).
        """
        if self.effort_limits is None:
            return None
        return first_over_limit(self.tau, self.effort_limits)


def write_csv(path, table):
    """
    Write the table as CSV: a header line of column names, then one line per row.

    Rows are formatted a block at a time with one format string (several times faster than
    ``np.savetxt``, which formats row by row).
    """
    cols = table.columns()
    fmt = ','.join([TIME_FORMAT] + [VALUE_FORMAT] * (len(cols) - 1)) + '\n'
    n = len(table.time)
    with open(path, 'w') as stream:
        stream.write(','.join(name for name, _ in cols) + '\n')
        block = np.empty((min(n, _BLOCK_ROWS), len(cols)))
        for start in range(0, n, _BLOCK_ROWS):
            stop = min(n, start + _BLOCK_ROWS)
            rows = block[:stop - start]
            for j, (_, values) in enumerate(cols):
                rows[:, j] = values[start:stop]
            stream.write((fmt * len(rows)) % tuple(rows.ravel().tolist()))


def _envelope(time, values, points):
    """
    Decimate a series for a plot, keeping its peaks.

    At most about ``points`` samples that keep each bucket's minimum and maximum, so
    decimating a long recording for a plot keeps its peaks.
    """
    n = len(time)
    bucket = int(np.ceil(2 * n / max(points, 2)))
    if bucket <= 1:
        return time, values
    nb = n // bucket
    t = time[:nb * bucket].reshape(nb, bucket)
    v = values[:nb * bucket].reshape(nb, bucket)
    lo, hi = v.argmin(axis=1), v.argmax(axis=1)
    first = np.minimum(lo, hi)
    second = np.maximum(lo, hi)
    idx = np.arange(nb)
    tt = np.column_stack([t[idx, first], t[idx, second]]).ravel()
    vv = np.column_stack([v[idx, first], v[idx, second]]).ravel()
    return np.append(tt, time[nb * bucket:]), np.append(vv, values[nb * bucket:])


#: An effort limit is drawn when it is at most this many times a panel's peak torque.
LIMIT_IN_VIEW = 1.5


def plot_png(path, table, title='', points=DEFAULT_PLOT_POINTS):
    """
    Plot the torques against time to a PNG file.

    Plot the torques against time, one panel per joint, with the recorded efforts and the
    effort limits (dashed where they are within :data:`LIMIT_IN_VIEW` times the peak, else
    their value written in the panel: each panel is scaled to its data); saved as PNG
    (matplotlib's Agg backend, no display needed).

    Parameters
    ----------
    path
        the PNG file to write.
    table
        the :class:`TorqueTable` to plot.
    title
        the figure's title (empty: ``joint torques``).
    points
        samples drawn per curve at most (min/max envelope of longer recordings).

    """
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib import pyplot

    nv = len(table.joint_names)
    fig, axes = pyplot.subplots(nv, 1, sharex=True, squeeze=False,
                                figsize=(9.0, 1.0 + 1.3 * nv), dpi=80)
    for i, name in enumerate(table.joint_names):
        ax = axes[i, 0]
        if name in table.effort:
            ax.plot(*_envelope(table.time, table.effort[name], points), color='tab:orange',
                    lw=0.8, label='measured effort')
        ax.plot(*_envelope(table.time, table.tau[:, i], points), color='tab:blue', lw=0.9,
                label='model torque')
        limit = None if table.effort_limits is None else table.effort_limits[i]
        if limit is not None and np.isfinite(limit):
            # scaled to the data: the limits drawn where they are in view, else said
            peak = np.abs(table.tau[:, i]).max() if len(table.tau) else 0.0
            if name in table.effort and len(table.effort[name]):
                peak = max(peak, np.nanmax(np.abs(table.effort[name])))
            if limit <= LIMIT_IN_VIEW * peak:
                for sign in (1, -1):
                    ax.axhline(sign * limit, color='tab:red', ls='--', lw=0.8,
                               label='effort limit' if sign > 0 else None)
            else:
                ax.text(0.995, 0.95, 'effort limit \u00b1%.4g, out of view' % limit,
                        transform=ax.transAxes, ha='right', va='top', fontsize=7,
                        color='tab:red', bbox={'facecolor': 'white', 'alpha': 0.7,
                                               'edgecolor': 'none', 'pad': 1.0})
        ax.set_ylabel(name, fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    handles = {}
    for ax in axes[:, 0]:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    top = 1.0 - 0.45 / fig.get_figheight()  # room for a title line and a legend line
    fig.suptitle(title or 'joint torques', fontsize=9, x=0.01, y=0.995, ha='left', va='top')
    fig.legend(list(handles.values()), list(handles), loc='upper right', fontsize=8, ncol=3,
               bbox_to_anchor=(0.99, 1.0 - 0.3 / fig.get_figheight()), frameon=False)
    axes[-1, 0].set_xlabel(table.time_label)
    fig.supylabel('torque [N m or N]', fontsize=8)
    fig.tight_layout(rect=(0, 0, 1, top))
    fig.savefig(path)
    pyplot.close(fig)


def summary(table):
    """
    Summarise the torques joint by joint.

    Per-joint lines: peak ``|tau|`` and when, that peak's share of the effort limit and,
    for recorded efforts, the RMS of measured minus model effort.
    """
    width = max([len('joint')] + [len(n) for n in table.joint_names])
    # efforts in N m (revolute joints) or N (prismatic)
    lines = ['%-*s %18s %10s %14s %8s %21s' % (width, 'joint', 'peak |tau| [N m|N]', 'at [s]',
                                               'limit [N m|N]', 'share',
                                               'rms(meas-tau) [N m|N]')]
    peak_row = np.abs(table.tau).argmax(axis=0)
    share = table.limits_share()
    for i, name in enumerate(table.joint_names):
        peak = abs(table.tau[peak_row[i], i])
        limit = (table.effort_limits[i] if table.effort_limits is not None
                 else float('nan'))
        limit_text = '%14.4g' % limit if np.isfinite(limit) else '%14s' % '-'
        share_text = '%7.1f%%' % (100 * share[i]) if np.isfinite(share[i]) else '%8s' % '-'
        if name in table.effort:
            rms = np.sqrt(np.mean((table.effort[name] - table.tau[:, i]) ** 2))
            rms_text = '%21.4g' % rms
        else:
            rms_text = '%21s' % '-'
        lines.append('%-*s %18.4g %10.3f %s %s %s' % (width, name, peak,
                                                      table.time[peak_row[i]], limit_text,
                                                      share_text, rms_text))
    return '\n'.join(lines)
