"""
What ``identify`` reports: predictions on the validation data, errors, summary, CSV and plot.

The output files are written all at once or not at all
(:func:`rbd_dynamics.analysis.write_all`).
"""

import numpy as np

from .recordings import MIN_STEADY_SHARE, steady
from ..analysis import AnalysisError
from ..analysis.differentiate import DEFAULT_WINDOW, sample_step
from ..drive import COULOMB_VELOCITY

CSV_NAME = 'identification.csv'
PNG_NAME = 'identification.png'


def predictions(model, identified_model, result, recording):
    """
    Return the ``(description, identified)`` efforts ``(n, nv)`` along a recording.

    The description's with its ``<dynamics>`` friction at the node's default width; the
    identified model's with the identified drive and widths, and the effort offsets.
    """
    from ..drive import drive_torques
    from ..dynamics import rnea
    r = recording
    nominal = rnea(model, r.q, r.qd, r.qdd) + drive_torques(
        r.qd, r.qdd, model.damping, model.friction, 0.0, COULOMB_VELOCITY)
    d = result.drive
    identified = rnea(identified_model, r.q, r.qd, r.qdd) + drive_torques(
        r.qd, r.qdd, d['viscous'], d['coulomb'], d['armature'],
        result.layout.coulomb_velocity) + d['offset']
    return nominal, identified


def unconstrained_error(result, recordings, chunk=4096):
    """
    Return the validation error of the unconstrained base parameters.

    The RMS of measured - model effort over all joints and states of ``recordings``, a
    share of the RMS effort, for the weighted least-squares solution ``result.x_base``
    (torques through the regressor; no consistency asked of it).
    """
    layout = result.layout
    sums = np.zeros(2)
    for r in recordings:
        for start in range(0, len(r), chunk):
            rows = slice(start, start + chunk)
            model = layout.columns(r.q[rows], r.qd[rows], r.qdd[rows]) @ result.x_base
            sums += ((r.effort[rows] ** 2).sum(), ((r.effort[rows] - model) ** 2).sum())
    return np.sqrt(sums[1] / sums[0]) if sums[0] > 0 else np.nan


def _total_error(rows):
    """RMS of measured - identified effort over all joints, a share of the RMS effort."""
    effort, _, after = rms_errors(rows, rows[0][0].effort.shape[1]) if rows else (0, 0, 0)
    total = np.sqrt((np.asarray(effort) ** 2).sum())
    return np.sqrt((np.asarray(after) ** 2).sum()) / total if total > 0 else np.nan


def rms_errors(rows, nv):
    """``(rms effort, rms description error, rms identified error)``, each ``(nv,)``."""
    sums = np.zeros((3, nv))
    count = 0
    for r, nominal, identified in rows:
        sums[0] += (r.effort ** 2).sum(axis=0)
        sums[1] += ((r.effort - nominal) ** 2).sum(axis=0)
        sums[2] += ((r.effort - identified) ** 2).sum(axis=0)
        count += len(r)
    return np.sqrt(sums / max(count, 1))


def moving_errors(model, rows, min_speed, window):
    """
    RMS errors on the moving states: ``(share, description, identified)``.

    Over every joint's samples where it moves steadily (:func:`steady`): the share of the
    samples they are, and the RMS of measured - model effort of the description and of the
    identified model, each a fraction of the RMS effort of all samples.
    """
    sums = np.zeros(3)
    kept = total = 0
    for r, nominal, identified in rows:
        keep = steady(model, r, min_speed, window)
        sums += ((r.effort ** 2).sum(), ((r.effort - nominal)[keep] ** 2).sum(),
                 ((r.effort - identified)[keep] ** 2).sum())
        kept += keep.sum()
        total += keep.size
    if not (kept and sums[0] > 0):
        return 0.0, np.nan, np.nan
    scale = np.sqrt(sums[0] / total)
    return kept / total, np.sqrt(sums[1] / kept) / scale, np.sqrt(sums[2] / kept) / scale


def summary(model, result, stack, rows, held_out, bags, timing, min_speed=0.0,
            window=DEFAULT_WINDOW, every_speed=(), unconstrained=np.nan, held=None):
    """Return the printed summary of an identification."""
    layout = result.layout
    lines = []
    validation = sum(len(r) for r, _, _ in rows)
    lines.append('identified from %d states (%d recording%s); validated on %d states (%s)'
                 % (stack.samples, bags, 's' if bags > 1 else '', validation, held_out))
    if held:
        lines.append('held (fixed joints; their links lumped into the body before them, '
                     'their own <inertial> as described): %s' % '; '.join(held.summary()))
    lines.append('condition number of the base regressor: %.4g (%d base parameters of %d)'
                 % (result.condition, layout.rank, layout.p))
    effort, before, after = rms_errors(rows, model.nv)
    width = max(len(n) for n in model.joint_names + ('joint',))
    lines.append('RMS of measured - model effort on the validation data:')
    lines.append('  %-*s %12s %22s %22s' % (width, 'joint', 'RMS effort', 'description',
                                            'identified'))
    lines.append('  %-*s %12s %22s %22s' % (width, '', '[N m|N]', '[N m|N] (share)',
                                            '[N m|N] (share)'))
    for j, name in enumerate(model.joint_names):
        share = 100.0 / effort[j] if effort[j] > 0 else np.nan
        lines.append('  %-*s %12.4g %12.4g (%5.1f %%) %12.4g (%5.1f %%)'
                     % (width, name, effort[j], before[j], before[j] * share, after[j],
                        after[j] * share))
    total = np.sqrt((effort ** 2).sum())
    if total > 0:
        lines.append('  %-*s %12.4g %12.4g (%5.1f %%) %12.4g (%5.1f %%)'
                     % (width, 'all', total, np.sqrt((before ** 2).sum()),
                        100 * np.sqrt((before ** 2).sum()) / total, np.sqrt((after ** 2).sum()),
                        100 * np.sqrt((after ** 2).sum()) / total))
    if min_speed > 0:
        share, before_moving, after_moving = moving_errors(model, rows, min_speed, window)
        if share > 0:
            lines.append('  moving states only (%.0f %% of the joint samples, at %g rad/s or '
                         '%g m/s or faster): description %.1f %%, identified %.2f %% of the '
                         'RMS effort' % (100 * share, min_speed, 0.1 * min_speed,
                                         100 * before_moving, 100 * after_moving))
        else:
            lines.append('  moving states only: none (no joint of the validation data moved '
                         'at %g rad/s or %g m/s)' % (min_speed, 0.1 * min_speed))
        fitted = stack.fitted.sum() / max(stack.samples * model.nv, 1)
        lines.append('left out of the fit: %.0f %% of the joint samples, slower than %g rad/s '
                     '(%g m/s) within half a differentiation window (a joint at rest sticks: '
                     'its friction is anywhere within +-coulomb)'
                     % (100 * (1 - fitted), min_speed, 0.1 * min_speed))
        if every_speed:
            lines.append('fitted at every speed (moved steadily in under %g %% of the states): '
                         '%s' % (100 * MIN_STEADY_SHARE,
                                 ', '.join(model.joint_names[j] for j in every_speed)))
    d = result.drive
    lines.append('drive: viscous %s; coulomb %s; coulomb_velocity %s; armature %s' % tuple(
        '[%s]' % ', '.join('%.4g' % v for v in values) for values in (
            d['viscous'], d['coulomb'], layout.coulomb_velocity, d['armature'])))
    if ('offset', 0) in layout.drive:
        lines.append('effort offsets (drive.effort_offset in drive.yaml): [%s]'
                     % ', '.join('%.4g' % v for v in d['offset']))
    not_armature = sorted(set(layout.inseparable_armature) | set(result.weak_armature))
    if not_armature:
        lines.append("armature not identified (the data cannot tell it from the links' "
                     "inertia; kept at the description's 0): %s"
                     % ', '.join(model.joint_names[j] for j in not_armature))
    if result.undetermined:
        lines.append("undetermined by any motion (the description's values kept): %s"
                     % '; '.join('%s: %s' % (link, ' '.join(names))
                                 for link, names in result.undetermined.items()))
    if result.combined:
        lines.append("determined only in combination with other links' parameters (the "
                     'split closest to the description): %s'
                     % '; '.join('%s: %s' % (link, ' '.join(names))
                                 for link, names in result.combined.items()))
    if result.weakest:
        lines.append('least excited combination: %s'
                     % ', '.join('%s (%.0f %%)' % (name, 100 * share)
                                 for name, share in result.weakest))
    margin = result.margins.min() if len(result.margins) else 0.0
    consistent = margin >= -1e-12  # rounding of a pseudo-inertia on the edge
    lines.append('%s (smallest pseudo-inertia eigenvalue / trace: %.3g); solved in %d '
                 'iterations (%s)'
                 % ('physically consistent: every identified link' if consistent else
                    'WARNING: a link is not physically consistent', margin,
                    result.solver['iterations'], result.solver['status']))
    consistent_error = _total_error(rows)
    lines.append('cost of consistency: validation error %.2f %% consistent (written), %.2f %% '
                 'unconstrained (the base parameters by weighted least squares, not written)'
                 % (100 * consistent_error, 100 * unconstrained))
    if result.solver['exact']:
        lines.append('consistency costs no effort residual: the best fit has a consistent '
                     'completion%s' % ('' if not result.binding else ' (on the edge of '
                                       'consistency: %s)' % ', '.join(result.binding)))
    else:
        binds = []
        if result.binding:
            binds.append('links %s' % ', '.join(result.binding))
        if result.bound:
            binds.append('friction or armature at 0: %s' % ', '.join(result.bound))
        if binds:
            lines.append('consistency binds on: %s (the best fit alone would make them '
                         'inconsistent)' % '; '.join(binds))
        else:
            lines.append("consistency binds on nothing beyond the solver's tolerance")
    lines.append('time: %s' % ', '.join('%s %.1f s' % (k, v) for k, v in timing.items()))
    return '\n'.join(lines) + '\n'


def validation_times(rows):
    """
    Return the time of every validation state, as the CSV and the plot show it [s].

    A recording's own time, from its first state (the held-out fifth of a recording starts
    where the fit ends); several validation recordings one after another, each from where the
    one before ended (plus its sample step).
    """
    out, start = [], None
    for r, _, _ in rows:
        if start is None:
            out.append(np.asarray(r.time, dtype=float))
        else:
            out.append(np.asarray(r.time, dtype=float) - r.time[0] + start)
        if len(out[-1]):
            start = out[-1][-1] + sample_step(out[-1])
    return out


def write_prediction_csv(path, joint_names, rows):
    """Write the measured, description and identified efforts of validation ``rows`` as CSV."""
    header = ['time'] + ['%s.%s' % (kind, n) for n in joint_names
                         for kind in ('measured', 'description', 'identified')]
    with open(path, 'w') as stream:
        stream.write(','.join(header) + '\n')
        for (r, nominal, identified), time in zip(rows, validation_times(rows)):
            table = np.empty((len(r), 1 + 3 * len(joint_names)))
            table[:, 0] = time
            table[:, 1::3] = r.effort
            table[:, 2::3] = nominal
            table[:, 3::3] = identified
            np.savetxt(stream, table, fmt='%.9g', delimiter=',')
    return True


def plot_predictions(path, joint_names, rows, points):
    """Plot the efforts of :func:`write_prediction_csv`, ``points`` samples per curve at most."""
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:  # checked at the start (require): a module that broke since
        raise AnalysisError('the plot needs matplotlib: pip install matplotlib') from None
    nv = len(joint_names)
    cols = 2 if nv > 3 else 1
    nrows = (nv + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(6.5 * cols, 2.2 * nrows), squeeze=False,
                             sharex=True)
    for (r, nominal, identified), time in zip(rows, validation_times(rows)):
        step = max(1, len(r) * len(rows) // max(points, 1))
        t = time[::step]
        for j, name in enumerate(joint_names):
            ax = axes[j // cols][j % cols]
            ax.plot(t, r.effort[::step, j], color='0.55', lw=2.2, label='measured')
            ax.plot(t, nominal[::step, j], color='tab:red', lw=0.9, label='description')
            ax.plot(t, identified[::step, j], color='tab:blue', lw=0.9, ls='--',
                    label='identified')
            ax.set_title(name, fontsize=9)
    for j in range(nv, nrows * cols):
        axes[j // cols][j % cols].axis('off')
    axes[0][0].legend(fontsize=8, loc='upper right')
    for ax in axes[-1]:
        ax.set_xlabel("time since the recording's first state [s] (validation data)")
    fig.suptitle('measured efforts against the description and the identified model '
                 '[N m or N]', fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True
