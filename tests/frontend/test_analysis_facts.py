"""``frontend/analysis.py`` is the one home of the transitive facts: the flags the frontend
records on each function and the facts codegen lowers with are the same computation."""

from frontend_helpers import lower

from pykern.codegen import get_target
from pykern.codegen.contract import CompileOptions
from pykern.codegen.lowering.module import lower_module
from pykern.frontend import analysis

SRC = """
@device
def sync_then(x, i):
    cuda.syncthreads()
    return x[i]

@device
def boom(x, i):
    if x[i] < 0:
        raise ValueError("negative")
    return x[i]

@device
def plain(x, i):
    return x[i] + 1.0

def k(x):
    d = cuda.shared.array(0, np.float32)
    i = cuda.threadIdx.x
    d[i] = sync_then(x, i) + plain(x, i) + boom(x, i)
"""


def _facts_by_pyname(module):
    facts = analysis.function_facts(module)
    return {fn.pyname or fn.name: facts[name] for name, fn in [*module.functions.items(),
                                                                (module.kernel.name, module.kernel)]}


def test_flags_and_codegen_facts_are_one_computation():
    module = lower(SRC, "void(float32[::1])")
    by_name = _facts_by_pyname(module)
    assert by_name["sync_then"] == (True, False, False, False)
    assert by_name["boom"] == (False, False, False, True)
    assert by_name["plain"] == (False, False, False, False)
    assert by_name["k"] == (True, False, True, True)  # through its callees, and its own dynamic shared array
    for fn in [*module.functions.values(), module.kernel]:
        assert (fn.uses_barrier, fn.uses_wave_ops, fn.uses_dynamic_shared, fn.raises) == \
            by_name[fn.pyname or fn.name]
    lowered = lower_module(module, get_target("cpu"), CompileOptions(wave_size=64))
    info = lowered.info
    assert (info.uses_barrier, info.uses_wave_ops, info.uses_dynamic_shared) == (True, False, True)
    assert info.function_uses == {n: f[:3] for n, f in analysis.function_facts(module).items()}


def test_the_walk_reaches_every_node_once():
    module = lower(SRC, "void(float32[::1])")
    nodes = list(analysis.walk(module.kernel.body))
    assert len(nodes) == len({id(n) for n in nodes})
    assert {type(n).__name__ for n in nodes} >= {"AllocArray", "Call", "Store", "Assign"}
    assert analysis.is_dynamic_shape((0,)) and analysis.is_dynamic_shape(0) and not analysis.is_dynamic_shape((4,))
