"""The desired input of the torque law, in model order."""


class Desired:
    """
    A desired input in model order: accelerations, optional positions and velocities.

    Attributes
    ----------
    qdd
        ``(n,)`` accelerations (zero for joints outside the configured ``joints``).
    q
        ``(n,)`` positions, or ``None`` when the input carried none.
    qd
        ``(n,)`` velocities, or ``None``.
    mask
        ``(n,)`` bool, the joints the input covers (the PD terms act on these only).

    """

    __slots__ = ('qdd', 'q', 'qd', 'mask')

    def __init__(self, qdd, q=None, qd=None, mask=None):
        self.qdd = qdd
        self.q = q
        self.qd = qd
        self.mask = mask
