"""Thread control of the OpenBLAS libraries loaded (NumPy's, SciPy's), for small factors."""

_OPENBLAS_SETTERS = ('openblas_set_num_threads', 'openblas_set_num_threads64_',
                     'scipy_openblas_set_num_threads', 'scipy_openblas_set_num_threads64_')
_OPENBLAS_GETTERS = tuple(name.replace('set_', 'get_') for name in _OPENBLAS_SETTERS)


def _openblas_libraries():
    """``[(get, set)]`` thread functions of the OpenBLAS libraries loaded (NumPy's, SciPy's)."""
    import ctypes
    try:
        with open('/proc/self/maps') as stream:
            paths = {line.split()[-1] for line in stream
                     if 'openblas' in line.lower() and '.so' in line}
    except OSError:  # not Linux
        return []
    out = []
    for path in sorted(p for p in paths if p.startswith('/')):
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        for get, put in zip(_OPENBLAS_GETTERS, _OPENBLAS_SETTERS):
            if hasattr(library, get) and hasattr(library, put):
                out.append((getattr(library, get), getattr(library, put)))
                break
    return out


class blas_threads:  # noqa: N801 (used like a function: with blas_threads(1): ...)
    """
    Limit the OpenBLAS libraries' threads within a ``with`` block.

    The factors here are small (about a hundred columns): on two cores shared with other work,
    BLAS threads contend and every decomposition takes many times longer than on one
    thread. Where the BLAS is not OpenBLAS (or the platform not Linux) this does nothing.
    """

    def __init__(self, count=1):
        self.count = int(count)
        self.saved = []

    def __enter__(self):
        try:
            for get, put in _openblas_libraries():
                self.saved.append((put, int(get())))
                put(self.count)
        except Exception:  # a library that does not behave as OpenBLAS: leave it alone
            pass
        return self

    def __exit__(self, *exc):
        for put, count in self.saved:
            put(count)
        self.saved = []
        return False
