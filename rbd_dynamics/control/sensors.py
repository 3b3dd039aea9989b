"""A force/torque sensor of the torque law: its configuration, latest reading and tare bias."""


class Sensor:
    """
    A force/torque sensor: its configuration, latest reading and tare bias.

    Attributes
    ----------
    name
        the sensor's name.
    frame
        link override ('' = the reading's own frame).
    timeout_ns
        older readings are dropped; 0: never.
    compensate
        add the modelled wrench of the bodies beyond the frame.
    reading
        ``None`` or ``(arrival [ns], link, (6,) wrench applied on the robot)``, the
        bias not removed.
    bias
        ``None`` or ``(link, (6,))``: what :meth:`Controller.tare` found; removed from
        every reading on that link.

    """

    def __init__(self, name, frame='', timeout=0.1, compensate=False):
        self.name = name
        self.frame = frame
        self.timeout_ns = int(timeout * 1e9)
        self.compensate = compensate
        self.reading = None
        self.bias = None

    def fresh(self, now_ns):
        """Return the reading if it is not older than the timeout, else ``None``."""
        reading = self.reading
        if reading is None or (self.timeout_ns and now_ns - reading[0] > self.timeout_ns):
            return None
        return reading
