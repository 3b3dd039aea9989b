"""
Helpers shared by the tests.

Robot descriptions, node processes and peers, the simulator's test side, and the tolerances.

Import them as ``from support.ros import NodeProcess`` (``test/`` is on ``sys.path`` through
its ``conftest.py``). Test modules import helpers only, never each other.
"""

#: Absolute tolerance [N m] of torques that went through a message (float64 end to end: the
#: node's answer equals the library's up to rounding).
TOL = 1e-9
