"""Array fields of packed records (numpy's default, unaligned structured dtypes) used as
arrays: ``pw = r['password']; pw[p]``, passed to device functions, sliced -- numba types them
as unaligned arrays; pykern loads and stores their elements with alignment 1."""

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_uncached")

# packed: 'vals' sits at byte 1, so its float64 elements are misaligned in every record
PACKED = np.dtype([("tag", "u1"), ("vals", "<f8", 3), ("n", "<i4"), ("word", "<i4", 5)])


@cuda.jit(device=True)
def count_in(word, n, letter):
    c = 0
    for p in range(n):
        if word[p] == letter:
            c += 1
    return c


@cuda.jit
def packed_fields(recs, letter, counts, sums):
    i = cuda.grid(1)
    r = recs[i]  # before the bounds check, as real programs do: a view, nothing is read
    if i < len(recs):
        word = r["word"]
        counts[i] = count_in(word, r["n"], letter)
        vals = r.vals
        s = 0.0
        for k in range(vals.shape[0]):
            s += vals[k]
        sums[i] = s
        tail = vals[1:]
        tail[0] = s  # a store through a slice of the unaligned view
        word[0] += 1


def _records(n):
    rng = np.random.default_rng(3)
    a = np.zeros(n, PACKED)
    a["tag"] = rng.integers(0, 255, n)
    a["vals"] = rng.random((n, 3))
    a["n"] = rng.integers(0, 6, n)
    a["word"] = rng.integers(97, 100, (n, 5))
    return a


def test_packed_record_array_fields_as_arrays():
    assert PACKED.fields["vals"][1] == 1 and not PACKED.isalignedstruct
    a = _records(37)
    ref = a.copy()
    counts = np.zeros(37, np.int64)
    sums = np.zeros(37)
    packed_fields[2, 32](a, 98, counts, sums)
    want_counts = [int((ref["word"][i, : ref["n"][i]] == 98).sum()) for i in range(37)]
    np.testing.assert_array_equal(counts, want_counts)
    np.testing.assert_allclose(sums, ref["vals"].sum(1), rtol=1e-15)
    np.testing.assert_allclose(a["vals"][:, 1], sums, rtol=1e-15)
    np.testing.assert_array_equal(a["vals"][:, [0, 2]], ref["vals"][:, [0, 2]])
    np.testing.assert_array_equal(a["word"][:, 0], ref["word"][:, 0] + 1)
    np.testing.assert_array_equal(a["tag"], ref["tag"])


def test_unaligned_type_keeps_its_own_specialisation():
    """The device function is compiled for the unaligned view and for a plain array alike."""
    word = np.array([98, 97, 98, 98, 0], np.int32)
    out = np.zeros(2, np.int64)

    @cuda.jit
    def both(recs, w, out):
        out[0] = count_in(recs[0]["word"], 5, 98)
        out[1] = count_in(w, 5, 98)

    recs = np.zeros(1, PACKED)
    recs["word"][0] = word
    both[1, 1](recs, word, out)
    np.testing.assert_array_equal(out, [3, 3])


@cuda.jit
def whole_view_ops(recs, out):
    v = recs[0].vals
    out[0] = v.sum()
    t = 0.0
    for x in v:
        t += x * x
    out[1] = t
    v[:] = 2.5
    w = recs[0].word
    w[1] += 7
    out[2] = w[1]


def test_unaligned_view_whole_array_operations():
    recs = np.zeros(1, PACKED)
    recs["vals"][0] = [1.0, 2.0, 4.0]
    recs["word"][0, 1] = 5
    out = np.zeros(3)
    whole_view_ops[1, 1](recs, out)
    np.testing.assert_array_equal(out, [7.0, 21.0, 12.0])
    np.testing.assert_array_equal(recs["vals"][0], [2.5, 2.5, 2.5])
    assert recs["word"][0, 1] == 12


def test_unaligned_elements_claim_alignment_one():
    ir = whole_view_ops.inspect_llvm()
    text = ir if isinstance(ir, str) else "\n".join(ir.values())
    accesses = [ln for ln in text.splitlines() if "load double" in ln or "store double 2.5" in ln]
    assert accesses and all("align 1" in ln for ln in accesses), accesses
