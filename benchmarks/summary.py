#!/usr/bin/env python3
"""
Every performance target with its figure and verdict, from the benchmarks' JSON results.

    python benchmarks/summary.py [--results benchmarks/results]

Reads ``library.json`` (bench_library.py), ``node.json`` (bench_node.py all), ``soak.json``
(bench_node.py soak) and ``bag.json`` (bench_bag.py); a missing file is reported as not
measured. Exit code 0 when every target
was measured and met.
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RSS_FLAT_MB = 2.0  # growth after the first minute that still counts as noise


def load(directory, name):
    path = os.path.join(directory, name)
    if not os.path.exists(path):
        return None
    with open(path) as stream:
        return json.load(stream)


def targets(library, node, soak, bag=None):
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
                          '<= 0.5x a loop over pin.rnea')):
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
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--results', default=os.path.join(HERE, 'results'))
    args = parser.parse_args()
    rows = targets(load(args.results, 'library.json'), load(args.results, 'node.json'),
                   load(args.results, 'soak.json'), load(args.results, 'bag.json'))
    width = max(len(what) for what, _, _ in rows)
    for what, measured, met in rows:
        verdict = {True: 'PASS', False: 'FAIL', None: 'NOT MEASURED'}[met]
        print('%-*s  %-52s %s' % (width, what, measured, verdict))
    failed = [what for what, _, met in rows if met is not True]
    print('every target met' if not failed else '%d of %d targets not met or not measured'
          % (len(failed), len(rows)))
    return 0 if not failed else 1


if __name__ == '__main__':
    sys.exit(main())
