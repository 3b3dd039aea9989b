"""
The floating-base demo: a Unitree G1 standing in MuJoCo, its arms and torso moving under PD.

    python scripts/floating_demo.py [--out floating_output] [--plot floating_output/...png]
        [--seconds 8.5] [--feedforward]

The G1 of example-robot-data (29 joints) stands on a floor on its own two feet (a free joint,
box soles), every joint held by PD. After 0.5 s standing still, the shoulders raise the arms
forward and lower them again while the waist leans the torso forward by 0.1 rad and back, one
cycle every 4 s. Three runs, the same scene (:mod:`support.floating_scene`):

1. PD alone: zero feedforward, what a whole-body stack sending no torque does. The arms sag
   under gravity and the torso leans further than asked.
2. PD + the node's gravity compensation (its ``~/gravity_compensation``: ``Controller.compute``
   in this process, with ``command_output: gravity_compensation``): the torques that hold the
   posture on the contacts, from the pelvis IMU simulated by MuJoCo (its readings as a driver
   publishes them), both ankle roll links as surface contacts.
3. The same with the feet's force/torque sensors (at the ankle roll links, the foot's own mass
   compensated, low-passed at 0.2 Hz) and no contacts.

Prints, for each run, the arm joints' tracking error (RMS and largest), the torso's lean error
in the world (its pitch against the desired waist pitch), the pelvis's lowest height, the
largest feedforward and the law's unbalanced base wrench, and writes the plot (matplotlib, if
installed). ``--feedforward`` adds the node's ``~/feedforward`` instead, from the measured base
acceleration (accelerometer, differentiated gyro) and the raw feet's wrenches: on a standing
robot the base's acceleration is made by the torques themselves, and the runs with the law
diverge (reported as such; docs/floating_base.md).
"""

import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def plot(path, results, joints, runs):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    from support.floating_scene import groups
    arms = groups(joints, 'shoulder', 'elbow', 'wrist')
    fig, axes = plt.subplots(2, 1, figsize=(10, 8), sharex=True)
    for label, result in results.items():
        error = np.degrees(np.sqrt(np.mean(result.error[:, arms] ** 2, axis=1)))
        axes[0].plot(result.t, error, lw=1, label=runs[label])
        axes[1].plot(result.t, np.degrees(result.torso), lw=1, label=runs[label])
    axes[1].plot(result.t, np.degrees(result.torso_desired), 'k--', lw=1, label='desired')
    axes[0].set_ylabel("arm joints' tracking error, RMS over joints [deg]")
    axes[0].set_title('G1 standing in MuJoCo: arms raised and lowered, torso leaning')
    axes[1].set_ylabel('torso pitch in the world [deg]')
    axes[1].set_xlabel('simulated time [s]')
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.legend(loc='upper right')
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--out', default='floating_output', help='folder for the plot')
    parser.add_argument('--plot', default=None,
                        help='the plot to write (default: floating_base.png in --out)')
    parser.add_argument('--seconds', type=float, default=8.5, help='simulated time of a run')
    parser.add_argument('--feedforward', action='store_true',
                        help="add the node's ~/feedforward (measured base acceleration, raw "
                        "feet's wrenches) instead of its gravity compensation")
    args = parser.parse_args()
    sys.path.insert(0, os.path.join(REPO, 'test'))
    from support import floating_scene as scene
    path = scene.description_path()
    if path is None:
        sys.exit('floating_demo: example-robot-data is not installed (pip install '
                 'example-robot-data)')
    with open(path) as stream:
        text = stream.read()
    model = scene.load_model(text)
    joints = model.joint_names[1:]
    inputs = {'output': 'feedforward', 'wrench_cutoff': None} if args.feedforward else {}
    os.makedirs(args.out, exist_ok=True)
    if args.plot is None:
        args.plot = os.path.join(args.out, 'floating_base.png')
    results, figures, failed = {}, {}, {}
    output = scene.OUTPUTS['feedforward' if args.feedforward else 'gravity']
    runs = {label: what.replace('%s', output) for label, what in scene.RUNS.items()}
    for label, what in runs.items():
        print('%s: %g s of simulated time ...' % (what, args.seconds), flush=True)
        try:
            result = scene.run(label, text, model, args.seconds, **inputs)
        except RuntimeError as exc:
            failed[label] = str(exc)
            print('  %s' % exc)
            continue
        results[label] = result
        figures[label] = scene.Figures(result, joints)
        if label != 'pd':
            print("  the law's compute time: %.3f ms per step"
                  % (1e3 * result.compute / len(result.t)))
    print('\nG1 standing, %g s: arms raised by %g rad and lowered, torso leaned by %g rad, '
          'every %g s' % (args.seconds, -scene.RAISE, scene.LEAN, scene.PERIOD))
    print('  %-56s %9s %9s %10s %10s %9s %9s %11s'
          % ('run', 'arm RMS', 'arm max', 'torso RMS', 'torso max', 'pelvis', 'tau max',
             'unbalanced'))
    print('  %-56s %9s %9s %10s %10s %9s %9s %11s'
          % ('', '[deg]', '[deg]', '[deg]', '[deg]', 'min [m]', '[N m]', '|w| RMS'))
    for label, what in runs.items():
        if label in failed:
            print('  %-56s diverged: %s' % (what, failed[label]))
            continue
        f = figures[label]
        print('  %-56s %9.3f %9.3f %10.3f %10.3f %9.3f %9.2f %11s'
              % (what, np.degrees(f.arm_rms), np.degrees(f.arm_max), np.degrees(f.torso_rms),
                 np.degrees(f.torso_max), f.height_min, f.torque_max,
                 '-' if np.isnan(f.unbalanced_rms) else '%.3g' % f.unbalanced_rms))
    if 'pd' in figures:
        for label in ('contacts', 'sensors'):
            if label in figures:
                print("  %s: the arms' RMS error %.1f times smaller than PD alone's"
                      % (label, figures['pd'].arm_rms / figures[label].arm_rms))
    try:
        plot(args.plot, results, joints, runs)
        print('plot: %s' % args.plot)
    except ImportError:
        print('matplotlib is not installed: no plot')


if __name__ == '__main__':
    main()
