"""Which matrix-fragment configurations each AMD GPU family runs on its matrix cores.

One home for the table the frontend (a configuration no GPU has is refused at the call) and the
amdgpu target (the instruction of each configuration, or a CompileError naming what the arch
offers) both read. A configuration is ``(m, n, k, input type, accumulator type)`` with type
names as pykern spells them. The cpu target runs every configuration of every family.

Example::

    >>> (16, 16, 16, "float16", "float32") in CONFIGS["cdna"]
    True
    >>> family("gfx1100"), family("gfx1030")
    ('rdna3', None)
"""

from __future__ import annotations

_HALF = [(16, 16, 16, t, "float32") for t in ("float16", "bfloat16")]

#: family -> the configurations it offers (each is one instruction per multiply-accumulate)
CONFIGS = {
    # v_mfma_*: gfx90a (MI200), gfx942 (MI300), gfx950 (MI350); wave64
    "cdna": frozenset(_HALF + [(32, 32, 8, t, "float32") for t in ("float16", "bfloat16")] + [
        (16, 16, 4, "float32", "float32"),
        (16, 16, 4, "float64", "float64"),
        (16, 16, 16, "int8", "int32"),
    ]),
    # v_wmma_*: gfx11 (RDNA3), wave32
    "rdna3": frozenset(_HALF + [(16, 16, 16, "float16", "float16"), (16, 16, 16, "int8", "int32")]),
    # v_wmma_*: gfx12 (RDNA4), wave32
    "rdna4": frozenset(_HALF + [(16, 16, 16, "float16", "float16"), (16, 16, 16, "int8", "int32")]),
}

#: configurations one processor offers beyond its family's
ARCH_EXTRA = {
    # CDNA4 doubles k per instruction: v_mfma_f32_16x16x32_{f16,bf16} (MI350)
    "gfx950": frozenset((16, 16, 32, t, "float32") for t in ("float16", "bfloat16")),
}

ALL = frozenset().union(*CONFIGS.values(), *ARCH_EXTRA.values())


def configs(arch: str) -> frozenset:
    """The configurations ``arch`` runs on its matrix cores (empty when it has none).

    >>> (16, 16, 32, "float16", "float32") in configs("gfx950"), (16, 16, 32, "float16", "float32") in configs("gfx942")
    (True, False)
    """
    fam = family(arch)
    return (CONFIGS[fam] if fam else frozenset()) | ARCH_EXTRA.get(arch, frozenset())


def family(arch: str):
    """The matrix-core family of a gfx processor name, or None when it has no matrix cores."""
    if arch in ("gfx90a", "gfx940", "gfx941", "gfx942", "gfx950"):
        return "cdna"
    if arch.startswith("gfx11"):
        return "rdna3"
    if arch.startswith("gfx12"):
        return "rdna4"
    return None


def describe(configs) -> str:
    """``16x16x16 float16->float32, ...`` (sorted), for error messages."""
    return ", ".join(f"{m}x{n}x{k} {a}->{c}" for m, n, k, a, c in sorted(configs))
