"""
How every kernel is compiled: numba's ``njit``, cached, without its reference-counting runtime.

Every compiled function of the package is built by :func:`kernel`. Without numba's runtime
(the kernels only read and write arrays they are given) passing an array costs a call much
less. :data:`layout_of` and :data:`eom_layout_of` are the layout's readers compiled inline,
their 2-D views made by :func:`rows_view` without numba's ``reshape`` (a call into numba's
helpers that the optimiser must keep even for a view the kernel never reads). Imported only
where numba is (:data:`rbd_dynamics.compiled.AVAILABLE`).
"""

import sys
import types as types_module

from numba import njit, types
from numba.core import cgutils
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array

from .layout import decode, decode_eom


def kernel(**options):
    """
    Compile a kernel the one way every function here is compiled.

    ``njit``, cached, and without numba's reference-counting runtime where this numba
    version can leave it out: a function that two kinds of caller share would otherwise be
    cached for one kind and loaded for the other. A product and the sum it feeds may be
    contracted into one fused multiply-add (``fastmath={'contract'}``, nothing else of fast
    math): on a processor that has the instruction the kernels' many ``a * b + c`` cost one
    rounding instead of two and take less time; results then differ from an unfused build by
    rounding errors (two products that cancel exactly can leave 1e-17 instead of 0).
    """
    try:
        return njit(cache=True, _nrt=False, fastmath={'contract'}, **options)
    except (KeyError, TypeError):  # pragma: no cover - numba without that option
        return njit(cache=True, fastmath={'contract'}, **options)


@intrinsic
def rows_view(typingctx, flat, count, width):
    """Compiled :func:`rows`: the view's shape and strides set directly (no helper)."""
    if not (isinstance(flat, types.Array) and flat.ndim == 1 and flat.layout == 'C'):
        return None
    result = flat.copy(ndim=2, layout='C')

    def codegen(context, builder, signature, args):
        src = make_array(signature.args[0])(context, builder, args[0])
        dst = make_array(signature.return_type)(context, builder)
        count = context.cast(builder, args[1], signature.args[1], types.intp)
        width = context.cast(builder, args[2], signature.args[2], types.intp)
        itemsize = src.itemsize
        populate_array(dst, data=src.data, shape=cgutils.pack_array(builder, [count, width]),
                       strides=cgutils.pack_array(builder, [builder.mul(width, itemsize),
                                                            itemsize]),
                       itemsize=itemsize, meminfo=src.meminfo, parent=src.parent)
        # a view: a new reference to the source's memory where numba counts references
        # (the kernels are built without that runtime where numba can leave it out)
        return impl_ret_borrowed(context, builder, signature.return_type, dst._getvalue())

    return result(flat, count, width), codegen


def compiled_reader(reader):
    """
    Compile the layout reader ``reader`` (inlined) with :func:`rows` as ``rows_view``.

    numba takes a function's globals as constants: a copy of ``reader`` with that one
    global swapped (an overload of :func:`rows` would be compiled apart, where the build
    without the runtime refuses to return a view it made).
    """
    scope = dict(sys.modules[reader.__module__].__dict__, rows=rows_view)
    return kernel(inline='always')(types_module.FunctionType(reader.__code__, scope,
                                                             reader.__name__))


layout_of = compiled_reader(decode)
eom_layout_of = compiled_reader(decode_eom)
