"""
Offline analysis: joint torques along recorded joint states and planned trajectories.

Nothing here needs ROS: bags are read with ``rosbags`` (MCAP and SQLite 3 storage, CDR decoded by
its own type store) and trajectories with PyYAML. The command line::

    python -m rbd_dynamics bag ROBOT BAG [--topic /joint_states] [--out DIR] [name:=value ...]
    python -m rbd_dynamics trajectory ROBOT FILE [--out DIR] [name:=value ...]
    python -m rbd_dynamics identify ROBOT BAG [BAG ...] [--validate BAG ...] [--out DIR] ...

Modules: :mod:`.bag` (reading a bag), :mod:`.merge` (joint states merged by name into
the model's order), :mod:`.differentiate` (Savitzky-Golay derivatives), :mod:`.planned`
(a ``JointTrajectory`` saved as YAML), :mod:`.report` (CSV, plot, summary) and :mod:`.cli`.

Identification (``python -m rbd_dynamics identify ROBOT BAG ...``, docs/identification.md):
:mod:`.identify` (stacked regressor, base parameters, consistent parameters; SciPy),
:mod:`.writeback` (``identified.urdf``, ``drive.yaml``) and :mod:`.identify_cli`.
"""


class AnalysisError(ValueError):
    """Input the analysis cannot use; the message names the problem."""
