"""
The robot's world, as an excitation sees it: capsules around the links and where they may not go.

Every ``<collision>`` element of a link (box, cylinder, sphere, or a mesh in STL, OBJ or
COLLADA, :mod:`.meshes`) becomes one or a few capsules (:mod:`.capsules`); :class:`Collisions`
(:mod:`.collisions`) keeps their clearances from each other, from the floor and from the
keep-out regions of a YAML file or the pairs an SRDF frees (:mod:`.keep_out`). NumPy only
(SciPy's convex hull where it is installed).
"""

from .capsules import capsule_volume, fit_capsule, fit_capsules, RIM_POINTS, shape_points
from .collisions import closest_points, Collisions, DEFAULT_CLEARANCE, SMOOTH_MIN, START_SLACK
from .keep_out import KEEP_OUT_FORMAT, KeepOut, read_keep_out, read_srdf_pairs
from .meshes import MeshError, read_mesh, resolve_mesh

__all__ = [
    'capsule_volume', 'closest_points', 'Collisions', 'DEFAULT_CLEARANCE', 'fit_capsule',
    'fit_capsules', 'KEEP_OUT_FORMAT', 'KeepOut', 'MeshError', 'read_keep_out', 'read_mesh',
    'read_srdf_pairs', 'resolve_mesh', 'RIM_POINTS', 'shape_points', 'SMOOTH_MIN', 'START_SLACK',
]
