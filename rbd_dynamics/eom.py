"""
The equations of motion term by term: ``M(q) qdd + C(q, qd) qd + g(q) = tau``.

One module per term, each a NumPy reference implementation batched over any leading dimensions like
:func:`~rbd_dynamics.rnea`, which hand states to the compiled path
(:mod:`rbd_dynamics.compiled`, the same algorithms in world coordinates) when the model has one,
as :func:`~rbd_dynamics.rnea` does: a single state of float64 vectors goes straight to a
compiled entry point, everything else takes the general way, which converts, validates and
reports errors. Both paths give the same numbers:

- :func:`mass_matrix` (:mod:`rbd_dynamics.crba`): the composite-rigid-body algorithm
  (Featherstone Table 6.2);
- :func:`coriolis_matrix` (:mod:`rbd_dynamics.coriolis`): the factorisation of Echeandia &
  Wensing (2021), the one Pinocchio's ``computeCoriolisMatrix`` uses, in body coordinates;
- :func:`jacobian` (:mod:`rbd_dynamics.jacobians`): the geometric Jacobian of a link frame's
  origin, linear part first;
- :func:`regressor` (:mod:`rbd_dynamics.regressors`): the torques as a linear function of the
  inertial parameters (:meth:`~rbd_dynamics.Model.inertial_parameters`).

Every function works in full coordinates (one entry per body joint, mimic joints included) and
folds the result with the mimic map ``vf = G v`` (``G`` from ``model.v_src``, ``model.v_mult``):
``M = G^T Mf G``, ``C = G^T Cf G``, ``J = Jf G``, ``Y = G^T Yf``. Each call reads
``model.runtime`` once, so payloads count and a payload changed meanwhile on another thread is
seen wholly or not at all.

Notation: in body coordinates, body ``i`` moves with ``v_i = J_i vf``, where the body Jacobian
``J_i`` ``(6, nvf)`` holds ``i_X_j S_j`` in the columns of every joint ``j`` on the path from the
root to ``i`` (Eq. 3.6 in Featherstone's chapter 3, written per body).
"""

from .coriolis import coriolis_matrix, coriolis_matrix_reference
from .crba import mass_matrix, mass_matrix_reference
from .jacobians import jacobian, jacobian_reference
from .regressors import body_force_regressor, regressor, regressor_reference

__all__ = ['body_force_regressor', 'coriolis_matrix', 'coriolis_matrix_reference', 'jacobian',
           'jacobian_reference', 'mass_matrix', 'mass_matrix_reference', 'regressor',
           'regressor_reference']
