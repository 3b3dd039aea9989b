#!/usr/bin/env python3
"""
Every performance target with its figure and verdict, from the benchmarks' JSON results.

    python benchmarks/summary.py [--results benchmarks/results] [--write-docs [PATH]]

Reads ``library.json`` (bench_library.py), ``node.json`` (bench_node.py all), ``soak.json``
(bench_node.py soak), ``bag.json`` (bench_bag.py), ``start.json`` (bench_start.py) and
``excite.json`` (bench_excite.py); a missing
file is reported as not measured. Exit code 0 when every target was measured and met.

``--write-docs`` also replaces what lies between the lines ``<!-- summary:begin -->`` and
``<!-- summary:end -->`` of ``PATH`` (default ``docs/performance.md``) with the same verdicts as
a Markdown table, preceded by the machine and the versions of the run.
"""

import argparse
from importlib import metadata
import json
import os
import platform
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DOCS = os.path.join(os.path.dirname(HERE), 'docs', 'performance.md')
BEGIN = '<!-- summary:begin -->'
END = '<!-- summary:end -->'
RSS_FLAT_MB = 2.0  # growth after the first minute that still counts as noise
VERDICTS = {True: 'PASS', False: 'FAIL', None: 'NOT MEASURED'}


def load(directory, name):
    path = os.path.join(directory, name)
    if not os.path.exists(path):
        return None
    with open(path) as stream:
        return json.load(stream)


def _median(values):
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    n = len(values)
    return values[n // 2] if n % 2 else 0.5 * (values[n // 2 - 1] + values[n // 2])


def start_rows(start):
    """Rows of ``start.json`` (bench_start.py): first answers and precompile."""
    rows = []
    limits = (('jazzy', 20.0), ('humble', 90.0))
    for label, limit in limits:
        entry = (start or {}).get(label)
        if entry is None:
            rows.append(('precompile, %s numba <= %g s' % (label, limit), '-', None))
            continue
        if entry.get('cli_ratio') is not None:
            rows.append(('command line, first answer from an empty cache (%s) <= 2x '
                         "Pinocchio's one-shot script" % entry['versions'],
                         '%.2fx (%.2f vs %.2f s)' % (entry['cli_ratio'],
                                                     _median(entry['cli_cold_s']),
                                                     _median(entry['pinocchio_s'])),
                         entry['cli_ratio'] <= 2.0))
        spent = _median(entry['precompile_s'])
        rows.append(('precompile from an empty cache (%s) <= %g s' % (entry['versions'], limit),
                     '%.1f s' % spent, spent <= limit))
    compiled = [v for v in (start or {}).get('node_compiled_s') or [] if v is not None]
    rows.append(('node after precompile, description -> compiled path in use <= 2 s',
                 'max %.2f s of %d (diagnostics at 1 Hz)' % (max(compiled), len(compiled))
                 if compiled else '-', max(compiled) <= 2.0 if compiled else None))
    return rows


def stall_rows(node):
    """Rows of the stall mode (bench_node.py stall): what each event adds to the quiet gap."""
    rows = []
    for kind in ('warm', 'cold'):
        entry = ((node or {}).get('stall') or {}).get(kind)
        if not entry:
            rows.append(('no event adds more than 10 ms to the largest output gap, %s cache'
                         % kind, '-', None))
            continue
        added = entry['added_ms']
        worst = max(added, key=added.get)
        rows.append(('no event adds more than 10 ms to the largest output gap, %s cache'
                     % kind, 'worst %s: %+.1f ms (quiet %.1f ms; median of %d runs)'
                     % (worst, added[worst], entry['median_ms']['quiet'], len(entry['runs'])),
                     added[worst] <= 10.0))
    return rows


def targets(library, node, soak, bag=None, start=None, identify=None):
    """Return the ``(what, measured, met)`` rows; ``met`` is None when the figure is missing."""
    rows = []
    for case, target in (('rnea, 7-DoF arm (panda)', '<= 1.0x pin.rnea'),
                         ('rnea, 32-DoF humanoid (talos_reduced)', '<= 1.0x pin.rnea'),
                         ('gravity_torques, 7-DoF arm (panda)',
                          '<= 1.0x pin.computeGeneralizedGravity'),
                         ('gravity_torques, 32-DoF humanoid (talos_reduced)',
                          '<= 1.0x pin.computeGeneralizedGravity'),
                         ('rnea batch of 10,000 / state, 7-DoF arm (panda)',
                          '<= 0.5x a loop over pin.rnea'),
                         ('rnea batch of 10,000 / state, 32-DoF humanoid (talos_reduced)',
                          '<= 0.5x a loop over pin.rnea')) + tuple(
            ('%s, %s' % (name, robot), target)
            for name, target in (('mass_matrix', '<= 1.0x pin.crba'),
                                 ('coriolis_matrix', '<= 1.0x pin.computeCoriolisMatrix'),
                                 ('jacobian', '<= 1.0x pin.computeFrameJacobian'),
                                 ('jacobian local',
                                  '<= 1.0x pin.computeFrameJacobian (LOCAL)'),
                                 ('regressor', '<= 1.0x pin.computeJointTorqueRegressor'),
                                 ('link_pose', '<= 1.0x pin.framesForwardKinematics + oMf'),
                                 ('link_acceleration', '<= 1.0x pin.forwardKinematics + '
                                  'getFrameClassicalAcceleration'),
                                 ('regressor batch of 2,000 / state',
                                  '<= 0.5x a loop over pin.computeJointTorqueRegressor'))
            for robot in ('7-DoF arm (panda)', '32-DoF humanoid (talos_reduced)')):
        entry = (library or {}).get(case)
        rows.append(('%s %s' % (case, target),
                     '%.2fx [%.2f-%.2f]' % (entry['ratio'], entry['ratio_spread']['p10'],
                                            entry['ratio_spread']['p90']) if entry else '-',
                     entry['pass'] if entry else None))
    build = (library or {}).get('model build, tiago_dual')
    rows.append(('model build, %s-joint robot <= 100 ms' % (build['joints'] if build else 100),
                 '%.1f ms' % (build['seconds']['median'] * 1e3) if build else '-',
                 build['pass'] if build else None))
    latency = (node or {}).get('latency')
    if latency:
        rows.append(('node latency p50 <= 1.5x a bare relay',
                     '%.2fx (%.0f vs %.0f us)' % (latency['ratio_p50'],
                                                  latency['node']['p50_us'],
                                                  latency['relay']['p50_us']),
                     latency['ratio_p50'] <= 1.5))
        rows.append(('node latency p99 <= 2x a bare relay',
                     '%.2fx (%.0f vs %.0f us)' % (latency['ratio_p99'],
                                                  latency['node']['p99_us'],
                                                  latency['relay']['p99_us']),
                     latency['ratio_p99'] <= 2.0))
        rows.append(('node dropped outputs == 0',
                     '%d of %d (relay %d of %d)' % (latency['node']['dropped'],
                                                    latency['node']['sent'],
                                                    latency['relay']['dropped'],
                                                    latency['relay']['sent']),
                     latency['node']['dropped'] == 0))
        task = latency.get('task')
        if task and 'ratio_p50' in task:
            rows.append(('node with the task law (operational space): p50 <= 1.5x, p99 <= 2x '
                         'a bare relay, 0 dropped',
                         'p50 %.2fx, p99 %.2fx (%.0f, %.0f us), %d of %d dropped'
                         % (task['ratio_p50'], task['ratio_p99'], task['p50_us'],
                            task['p99_us'], task['dropped'], task['sent']),
                         task['ratio_p50'] <= 1.5 and task['ratio_p99'] <= 2.0
                         and task['dropped'] == 0))
        else:
            rows.append(('node with the task law: latency against a bare relay', '-', None))
    else:
        rows += [('node latency and drops', '-', None)]
    for kind, limit in (('warm', 2.0), ('cold', 10.0)):
        values = (node or {}).get('startup_%s_s' % kind)
        compiled = [v for v in (node or {}).get('compiled_path_%s_s' % kind) or []
                    if v is not None]
        ok = bool(values) and all(v is not None and v <= limit for v in values)
        rows.append(('node start, description -> first torque, %s cache <= %g s' % (kind, limit),
                     'max %.2f s of %d%s' % (
                         max(v for v in values if v is not None), len(values),
                         ' (compiled path in use after %.1f s)' % max(compiled)
                         if compiled else '')
                     if values and any(v is not None for v in values) else '-',
                     ok if values else None))
    rows += stall_rows(node) + start_rows(start)
    report = (soak or {}).get('soak')
    if report and report['minutes']:
        minutes = report['minutes']
        rows.append(('node RSS flat over %d min at 1 kHz (growth <= %g MB)'
                     % (len(minutes), RSS_FLAT_MB),
                     '%.1f -> %.1f MB, %d dropped of %d' % (
                         minutes[0]['rss_mb'], minutes[-1]['rss_mb'], report['dropped'],
                         sum(m['sent'] for m in minutes)),
                     report['rss_growth_mb'] <= RSS_FLAT_MB and report['exit_code'] == 0))
    else:
        rows.append(('node RSS flat after 10 min at 1 kHz', '-', None))
    if bag:
        what = '%.0f-minute recording at %g Hz' % (bag['duration_s'] / 60.0, bag['rate_hz'])
        rows.append(('bag tool, %s: whole tool <= 3x the reader alone' % what,
                     '%.2fx (%.1f vs %.1f s)' % (bag['ratio'], bag['tool_s'][0],
                                                 bag['reference_s'][0]),
                     bag['ratio'] <= 3.0))
        rows.append(('bag tool, %s: RNEA stage >= 1 million states/s' % what,
                     '%.2f million/s' % (bag['rnea_states_per_s'] / 1e6),
                     bag['rnea_states_per_s'] >= 1e6))
    else:
        rows.append(('bag tool on a one-hour recording', '-', None))
    if identify:
        rows.append(('identify, %d states (%.0f min at %g Hz), end to end <= %g s'
                     % (identify['states'], identify['duration_s'] / 60.0,
                        identify['rate_hz'], identify['target_s']),
                     '%.1f s (regressor %.1f s, peak %.0f MB)'
                     % (identify['wall_s'], identify['stages_s'].get('regressor', 0.0),
                        identify['peak_rss_mb']),
                     identify['wall_s'] <= identify['target_s']))
    else:
        rows.append(('identify on 10 minutes at 1 kHz <= 60 s', '-', None))
    return rows


def _installed(distribution):
    """Return the installed version of ``distribution``, or ``'not installed'``."""
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return 'not installed'


def machine_line(library):
    """
    Return the line naming the machine and the versions a run used.

    Parameters
    ----------
    library : dict or None
        The contents of ``library.json``; its ``machine`` entry wins over this interpreter's
        own environment, which fills in what the file does not record.

    Returns
    -------
    str
        One line of Markdown.

    """
    machine = (library or {}).get('machine') or {}
    return ('Machine: %s, %s CPUs, %s; Python %s, NumPy %s, numba %s, Pinocchio %s.' % (
        machine.get('processor') or platform.processor() or platform.machine(),
        machine.get('cpus') or os.cpu_count(),
        machine.get('platform') or platform.platform(),
        machine.get('python') or platform.python_version(),
        machine.get('numpy') or _installed('numpy'),
        machine.get('numba') or _installed('numba'),
        machine.get('pinocchio') or _installed('pin')))


def markdown(rows, library):
    """
    Return the text that goes between the summary markers of the performance page.

    Parameters
    ----------
    rows : list of tuple
        ``(what, measured, met)`` as :func:`targets` returns them.
    library : dict or None
        The contents of ``library.json`` (for the machine line).

    Returns
    -------
    str
        Lines of Markdown, each ending with a newline.

    """
    run = 'scripts/bench.sh --quick (shorter blocks, a 2-minute soak)' \
        if (library or {}).get('quick') else 'scripts/bench.sh'
    lines = ['Written by benchmarks/summary.py from the last run of %s.' % run, '',
             machine_line(library), '',
             '| target | figure | verdict |',
             '| --- | --- | --- |']
    for what, measured, met in rows:
        lines.append('| %s | %s | %s |' % (what.replace('|', '\\|'),
                                           measured.replace('|', '\\|'), VERDICTS[met]))
    return '\n'.join(lines) + '\n'


def write_docs(path, text):
    """
    Replace the lines between the summary markers of ``path`` with ``text``.

    Raises
    ------
    ValueError
        When ``path`` lacks either marker line, or has them in the wrong order.

    """
    with open(path) as stream:
        lines = stream.read().split('\n')
    try:
        begin = lines.index(BEGIN)
        end = lines.index(END, begin + 1)
    except ValueError:
        raise ValueError('%s has no lines %s ... %s to write between' % (path, BEGIN, END))
    lines[begin + 1:end] = text.rstrip('\n').split('\n')
    with open(path, 'w') as stream:
        stream.write('\n'.join(lines))


def excite_rows(excite):
    """Rows of ``excite.json`` (bench_excite.py): the excitation design, end to end."""
    if not excite:
        return [('excite on the 7-DoF demo arm <= 60 s', '-', None)]
    return [('excite, %g s on the 7-DoF demo arm <= %g s'
             % (excite['duration_s'], excite['target_s']),
             '%.1f s (design %.1f s, %d iterations, condition number %.3g)'
             % (excite['wall_s'], excite['design_s'], excite['iterations'],
                excite['condition']),
             excite['wall_s'] <= excite['target_s'])]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--results', default=os.path.join(HERE, 'results'))
    parser.add_argument('--write-docs', nargs='?', const=DOCS, default=None, metavar='PATH',
                        help='write the table into PATH between the summary markers '
                             '(default: %(const)s)')
    args = parser.parse_args()
    library = load(args.results, 'library.json')
    rows = targets(library, load(args.results, 'node.json'),
                   load(args.results, 'soak.json'), load(args.results, 'bag.json'),
                   load(args.results, 'start.json'), load(args.results, 'identify.json'))
    rows += excite_rows(load(args.results, 'excite.json'))
    width = max(len(what) for what, _, _ in rows)
    for what, measured, met in rows:
        print('%-*s  %-52s %s' % (width, what, measured, VERDICTS[met]))
    failed = [what for what, _, met in rows if met is not True]
    print('every target met' if not failed else '%d of %d targets not met or not measured'
          % (len(failed), len(rows)))
    if args.write_docs:
        try:
            write_docs(args.write_docs, markdown(rows, library))
        except (OSError, ValueError) as exc:
            print('--write-docs: %s' % exc, file=sys.stderr)
            return 2
        print('table written to %s' % args.write_docs)
    return 0 if not failed else 1


if __name__ == '__main__':
    sys.exit(main())
