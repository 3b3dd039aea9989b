#!/usr/bin/env python3
"""
The bag analysis against the bag reader alone, measured in one run.

    python benchmarks/bench_bag.py [--duration 3600] [--rate 1000] [--storage mcap]
        [--out benchmarks/results/bag.json]

Writes a recording of the demo arm (8 independent joints: 7 arm joints and a finger; position,
velocity and effort) at ``--rate`` Hz for ``--duration`` s into a temporary directory, then
times, on that bag:

- the reference: the ``rosbags`` reader alone, iterating the topic and deserializing every
  message;
- the stages of ``python -m rbd_dynamics bag`` (the functions its command line calls): read
  and deserialize (into per-layout arrays), merge by name, differentiate, RNEA (one batch
  call), write the CSV, draw the PNG.

It prints each stage's time and states per second and the whole tool's time over the
reference's. Targets: the whole tool within 3x the reader alone; the RNEA stage at least one
million states per second. Benchmarks are not tests: nothing asserts a time.
"""

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time

import numpy as np

import rbd_dynamics as rbd
from rbd_dynamics.analysis import pipeline, report
from rbd_dynamics.analysis.bag import JOINT_STATE_TYPE, open_bag, read_joint_states, \
    topic_connections
from rbd_dynamics.analysis.merge import merge_joint_states
from rbd_dynamics.resources import demo_urdf_path

TOPIC = '/joint_states'
T0_NS = 1700000000 * 10 ** 9


def write_recording(path, model, duration, rate, storage):
    """
    Write a 1-publisher recording of smooth motion: ``(messages, seconds to write)``.

    The CDR bytes of every message are built with NumPy from one serialized template (the
    stamp and the three arrays patched in place), so writing an hour takes minutes, not the
    hour of serializing each message.
    """
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import get_typestore, Stores
    store = get_typestore(Stores.ROS2_JAZZY)
    types = store.types
    nv = model.nv
    marker = 1000.0 + np.arange(3 * nv, dtype=float)  # distinctive values to find in the bytes
    template = types[JOINT_STATE_TYPE](
        header=types['std_msgs/msg/Header'](
            stamp=types['builtin_interfaces/msg/Time'](sec=0x5a5a5a5a, nanosec=0x3c3c3c3c),
            frame_id=''),
        name=list(model.joint_names), position=marker[:nv], velocity=marker[nv:2 * nv],
        effort=marker[2 * nv:])
    raw = bytes(store.serialize_cdr(template, JOINT_STATE_TYPE))
    offsets = [raw.find(np.float64(v).tobytes()) for v in marker[::nv]]
    sec_at = raw.find(np.uint32(0x5a5a5a5a).tobytes())
    nanosec_at = raw.find(np.uint32(0x3c3c3c3c).tobytes())

    n = int(round(duration * rate))
    rng = np.random.default_rng(0)
    freq = rng.uniform(0.2, 1.0, nv)
    amp = np.where(np.array(model.joint_types) == 'prismatic', 0.015, 0.8)
    centre = np.where(np.array(model.joint_types) == 'prismatic', 0.02, 0.0)
    start = time.perf_counter()
    plugin = {'mcap': StoragePlugin.MCAP, 'sqlite3': StoragePlugin.SQLITE3}[storage]
    with Writer(path, version=9, storage_plugin=plugin) as writer:
        conn = writer.add_connection(TOPIC, JOINT_STATE_TYPE, typestore=store)
        block = 100000
        for first in range(0, n, block):
            k = np.arange(first, min(n, first + block))
            t = k / rate
            arg = 2 * np.pi * freq * t[:, None]
            q = centre + amp * np.sin(arg)
            qd = amp * 2 * np.pi * freq * np.cos(arg)
            qdd = -amp * (2 * np.pi * freq) ** 2 * np.sin(arg)
            effort = rbd.rnea(model, q, qd, qdd)
            stamp = T0_NS + np.round(t * 1e9).astype(np.int64)
            data = np.tile(np.frombuffer(raw, dtype=np.uint8), (len(k), 1))
            data[:, sec_at:sec_at + 4] = (stamp // 10 ** 9).astype('<u4')[:, None].view(
                np.uint8)
            data[:, nanosec_at:nanosec_at + 4] = (stamp % 10 ** 9).astype('<u4')[:, None].view(
                np.uint8)
            for at, values in zip(offsets, (q, qd, effort)):
                data[:, at:at + 8 * nv] = values.astype('<f8').view(np.uint8)
            for row, received in zip(data, stamp + 150000):
                writer.write(conn, int(received), row.tobytes())
    return n, time.perf_counter() - start


def reader_alone(path):
    """
    Time the reference reader alone.

    The reference: iterate the topic and deserialize every message: ``((wall, cpu) [s],
    messages)``.
    """
    start, cpu = time.perf_counter(), time.process_time()
    reader = open_bag(path)
    try:
        conns = topic_connections(reader, TOPIC, path)
        deserialize = reader.typestore.deserialize_cdr
        count = 0
        for _, _, raw in reader.messages(connections=conns):
            deserialize(raw, JOINT_STATE_TYPE)
            count += 1
    finally:
        reader.close()
    return (time.perf_counter() - start, time.process_time() - cpu), count


def tool_stages(path, model, out_dir):
    """
    Time each stage of the command line.

    The command line's stages, each timed: ``[(stage, (wall, cpu) [s])]`` and the number of
    states (cpu: this process's processor time, all threads; on a shared machine the wall time
    also holds the time other processes had the cores).
    """
    times = []

    def timed(stage, fn, *args):
        start, cpu = time.perf_counter(), time.process_time()
        result = fn(*args)
        times.append((stage, (time.perf_counter() - start, time.process_time() - cpu)))
        return result

    states = timed('read and deserialize', read_joint_states, path, TOPIC)
    merged = timed('merge by name', merge_joint_states, states.groups, model)
    qd, qdd = timed('differentiate', pipeline.state_derivatives, merged)
    tau = timed('RNEA (batch)', rbd.rnea, model, merged.q, qd, qdd)
    table = report.TorqueTable(model.joint_names, merged.time, merged.q, qd, qdd, tau,
                               merged.effort, model.effort_limits)
    timed('write CSV', report.write_csv, os.path.join(out_dir, report.CSV_NAME), table)
    timed('plot PNG', report.plot_png, os.path.join(out_dir, report.PNG_NAME), table)
    return times, len(table.time)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--duration', type=float, default=3600.0, help='recording length [s]')
    parser.add_argument('--rate', type=float, default=1000.0, help='joint states per second')
    parser.add_argument('--storage', choices=('mcap', 'sqlite3'), default='mcap')
    parser.add_argument('--out', default=None, help='JSON file for the figures')
    args = parser.parse_args(argv)

    model = rbd.Model.from_urdf_file(demo_urdf_path())
    rbd.rnea(model, np.zeros((256, model.nq)), np.zeros((256, model.nv)),
             np.zeros((256, model.nv)))  # the batch kernels load (or compile) outside the timing
    work = tempfile.mkdtemp(prefix='bench_bag_')
    try:
        bag = os.path.join(work, 'bag')
        count, write_s = write_recording(bag, model, args.duration, args.rate, args.storage)
        size = sum(os.path.getsize(os.path.join(bag, f)) for f in os.listdir(bag))
        print('recording: %d joint states (%g s at %g Hz, %s, %.0f MB), written in %.1f s'
              % (count, args.duration, args.rate, args.storage, size / 1e6, write_s))
        ref_s, ref_count = reader_alone(bag)
        stages, rows = tool_stages(bag, model, work)
        csv_mb = os.path.getsize(os.path.join(work, report.CSV_NAME)) / 1e6
    finally:
        shutil.rmtree(work, ignore_errors=True)

    total = tuple(sum(s[i] for _, s in stages) for i in (0, 1))
    print('\n%-26s %10s %10s %16s' % ('stage', 'wall [s]', 'cpu [s]', 'states / s (wall)'))
    for stage, (wall, cpu), n in ([('reference: reader alone', ref_s, ref_count)]
                                  + [(stage, s, rows) for stage, s in stages]
                                  + [('whole tool', total, rows)]):
        print('%-26s %10.2f %10.2f %16.0f' % (stage, wall, cpu, n / wall))
    rnea_rate = rows / dict(stages)['RNEA (batch)'][0]
    ratio, cpu_ratio = total[0] / ref_s[0], total[1] / ref_s[1]
    print('\nCSV: %d rows, %.0f MB' % (rows, csv_mb))
    print('whole tool / reader alone: %.2fx wall, %.2fx cpu (target <= 3x): %s'
          % (ratio, cpu_ratio, 'met' if ratio <= 3 else 'NOT met'))
    print('RNEA stage: %.2f million states/s (target >= 1): %s'
          % (rnea_rate / 1e6, 'met' if rnea_rate >= 1e6 else 'NOT met'))
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, 'w') as stream:
            json.dump({'machine': platform.platform(), 'cpus': os.cpu_count(),
                       'states': rows, 'duration_s': args.duration, 'rate_hz': args.rate,
                       'storage': args.storage, 'reference_s': ref_s,
                       'stages_s': dict(stages), 'tool_s': total, 'ratio': ratio,
                       'cpu_ratio': cpu_ratio,
                       'rnea_states_per_s': rnea_rate, 'csv_mb': csv_mb}, stream, indent=1)
    return 0


if __name__ == '__main__':
    sys.exit(main())
