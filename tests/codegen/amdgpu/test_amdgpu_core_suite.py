"""Every kernel of the core suite, AOT-compiled for every supported AMDGPU arch,
checked with LLVM's own tools (llvm-readelf-22, llvm-objdump-22), not our parser.

The core suite is every Python kernel that tests/codegen/cpu/test_cpu_kernels.py,
tests/frontend/test_frontend_e2e.py, tests/codegen/cpu/test_codegen_semantics.py and the samples
compile for the cpu target; tests/core_kernels.py runs them in a subprocess and
records each (kernel, argument types, options) -- nothing is copied here, so a
kernel added to those tests is checked here too. Each is compiled with
``pykern.compile(..., arch=A)`` and its code object must be: an ET_DYN ELF for
AMDGPU-HSA whose e_flags name the arch, with the ``<name>.kd`` descriptor, no
undefined symbols, amdhsa metadata whose explicit ``.args`` are exactly the
flat parameters pykern packs (offset, size, kind, in order), no scratch or
spills unless expected, and an ISA that llvm-objdump disassembles.

One test per arch, whose failure lists every bad (kernel, check).

The broad suite (``core_kernels.BROAD_TEST_MODULES``: features added after the
core suite -- raise/assert, complex, float16, random, datetimes, local functions,
optional arguments ...) gets the same checks for BROAD_ARCHS, and ``-m slow``
runs every module that compiles cpu kernels in-process (``--suite all``) for four archs.
"""

from __future__ import annotations

import concurrent.futures as cf
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/

ARCHS = ["gfx90a", "gfx942", "gfx950", "gfx1030", "gfx1100", "gfx1101", "gfx1200", "gfx1201"]
#: the broad suite's archs: one wave64 (CDNA), one wave32 (RDNA)
BROAD_ARCHS = ["gfx942", "gfx1100"]
READELF = shutil.which("llvm-readelf-22")
OBJDUMP = shutil.which("llvm-objdump-22")

#: Kernels that cannot compile for amdgpu: {(kernel key, arch or "*"): reason}.
#: Only the matrix-core sample on an arch without matrix cores. An entry that starts to
#: compile fails the test too (stale entries hide nothing).
EXPECTED_FAILURES: dict = {
    # RDNA2 has no matrix cores: the wmma sample is a CompileError naming the archs that have them
    **{(f"wmma_gemm.make_gemm.<locals>.gemm void({t}[:, ::1], {t}[:, ::1], float32[:, ::1])", "gfx1030"):
       "gfx1030 has no matrix-core instructions" for t in ("bfloat16", "float16")},
}

#: Kernels allowed scratch (``.private_segment_fixed_size`` > 0) or register
#: spills, besides those with local arrays: {kernel key: reason}. Empty: on every
#: arch, no core kernel spills and LLVM promotes every local array to registers.
SCRATCH_EXPECTED: dict = {}

#: Kernel keys look like "test_cpu_kernels.test_x.<locals>.k void(int64[::1])" (plus options).
_BATCH = 48  # code objects per tool invocation


def kernel_key(entry) -> str:
    opts = "".join(f" {k}={v}" for k, v in sorted(entry["options"].items()))
    return f"{entry['module']}.{entry['qualname']} {entry['signature']}{opts}"


# ------------------------------------------------------------- tool output parsing
def _split_files(text: str, header: re.Pattern) -> dict:
    """{file: its part of a multi-file tool output}; ``header`` matches the line
    that starts each file's part, group 1 being the path."""
    parts, cur = {}, None
    for line in text.splitlines():
        m = header.match(line)
        if m:
            cur = m.group(1)
            parts[cur] = []
        elif cur is not None:
            parts[cur].append(line)
    return {k: "\n".join(v) for k, v in parts.items()}


def _scalar(text: str):
    text = text.strip()
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if text in ("[]", "{}"):  # empty flow collections (".args: []" of a kernel without parameters)
        return [] if text == "[]" else {}
    return {"true": True, "false": False}.get(text, text.strip("'\""))


def parse_yaml_block(lines: list):
    """The small YAML subset llvm-readelf prints for AMDGPU metadata: block
    mappings, block sequences, plain scalars.

    >>> parse_yaml_block(["a:", "  - .x: 1", "    .y: b", "c: 2", "d: []"])
    {'a': [{'.x': 1, '.y': 'b'}], 'c': 2, 'd': []}
    """
    toks = []  # (indent, "-" or "key" or "scalar", key, value)
    for raw in lines:
        if not raw.strip() or raw.strip() in ("---", "..."):
            continue
        ind = len(raw) - len(raw.lstrip(" "))
        body = raw.strip()
        while body.startswith("- ") or body == "-":
            toks.append((ind, "-", None, None))
            ind += 2
            body = body[2:].lstrip() if body != "-" else ""
        if not body:
            continue
        m = re.match(r"^([^:]+):(?:\s+(.*))?$", body)
        toks.append((ind, "key", m.group(1), m.group(2)) if m else (ind, "scalar", None, body))

    def node(i, ind):
        if i >= len(toks):
            return None, i
        t_ind, kind, _, val = toks[i]
        if kind == "-":
            seq = []
            while i < len(toks) and toks[i][0] == t_ind and toks[i][1] == "-":
                v, i = node(i + 1, t_ind + 2)
                seq.append(v)
            return seq, i
        if kind == "scalar":
            return _scalar(val), i + 1
        mapping = {}
        while i < len(toks) and toks[i][0] == t_ind and toks[i][1] == "key":
            _, _, key, val = toks[i]
            i += 1
            if val is not None and val != "":
                mapping[key] = _scalar(val)
            elif i < len(toks) and (toks[i][0] > t_ind or (toks[i][0] == t_ind and toks[i][1] == "-")):
                mapping[key], i = node(i, toks[i][0])
            else:
                mapping[key] = None
        return mapping, i

    return node(0, 0)[0]


_SYM = re.compile(r"^\s*(\d+):\s+([0-9a-fA-F]+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*(.*)$")


def parse_readelf_gnu(text: str) -> dict:
    """Facts from ``llvm-readelf --file-headers --notes --dyn-syms --symbols`` of one file."""
    facts = {"symbols": {}, "metadata": None}

    def field(name):
        m = re.search(rf"^\s*{re.escape(name)}:\s+(.*)$", text, re.M)
        return m.group(1).strip() if m else None

    facts["type"] = field("Type")
    facts["osabi"] = field("OS/ABI")
    facts["machine"] = field("Machine")
    flags = field("Flags") or ""
    facts["flags"] = [f.strip() for f in flags.split(",")[1:]]
    table = None
    md_lines, in_md = [], False
    for line in text.splitlines():
        m = re.match(r"^Symbol table '([^']+)'", line)
        if m:
            table = facts["symbols"].setdefault(m.group(1), [])
            continue
        if "AMDGPU Metadata:" in line:
            in_md, table = True, None
            continue
        if in_md:
            if line.strip() == "...":
                in_md = False
            else:
                md_lines.append(line)
            continue
        if table is not None:
            m = _SYM.match(line)
            if m:
                table.append(dict(num=int(m.group(1)), type=m.group(4), bind=m.group(5), ndx=m.group(7),
                                  name=m.group(8).strip()))
            elif not line.strip():
                table = None
    if md_lines:
        facts["metadata"] = parse_yaml_block(md_lines)
    return facts


def parse_readelf_llvm_flags(text: str) -> list:
    """The e_flags names from ``llvm-readelf --elf-output-style=LLVM --file-headers``."""
    m = re.search(r"Flags \[[^\n]*\n(.*?)\n\s*\]", text, re.S)
    return re.findall(r"(EF_AMDGPU_\w+)", m.group(1)) if m else []


def _run(cmd: list) -> str:
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise AssertionError(f"{' '.join(cmd[:4])} ... failed ({r.returncode}): {r.stderr[-2000:]}")
    return r.stdout


def inspect_code_objects(groups: list) -> dict:
    """{file: {"gnu": facts, "llvm_flags": [...], "disasm": text}} from
    llvm-readelf-22 and llvm-objdump-22, several files per invocation, two
    invocations at a time. ``groups``: lists of files of one arch each --
    llvm-objdump-22 given files of several archs decodes them all as the
    first one's arch (printing undecodable words as ``.long``)."""
    batches = [g[i:i + _BATCH] for g in groups for i in range(0, len(g), _BATCH)]
    files = [f for g in groups for f in g]
    file_hdr = re.compile(r"^File: (.*)$")
    dis_hdr = re.compile(r"^(\S.*):\s+file format ")
    jobs = []
    for b in batches:
        jobs.append(("gnu", [READELF, "--file-headers", "--notes", "--dyn-syms", "--symbols", *b], file_hdr, b))
        jobs.append(("llvm", [READELF, "--elf-output-style=LLVM", "--file-headers", *b], file_hdr, b))
        jobs.append(("dis", [OBJDUMP, "-d", *b], dis_hdr, b))

    def one(job):
        kind, cmd, hdr, b = job
        out = _run(cmd)
        parts = _split_files(out, hdr) if len(b) > 1 or kind == "dis" else {b[0]: out}
        return kind, parts

    result = {f: {} for f in files}
    with cf.ThreadPoolExecutor(max_workers=2) as ex:
        for kind, parts in ex.map(one, jobs):
            for f, text in parts.items():
                if f not in result:
                    continue
                if kind == "gnu":
                    result[f]["gnu"] = parse_readelf_gnu(text)
                elif kind == "llvm":
                    result[f]["llvm_flags"] = parse_readelf_llvm_flags(text)
                else:
                    result[f]["disasm"] = text
    return result


# ------------------------------------------------------------------- the build
def build_suite(tmp_path_factory, suite: str, archs: list, timeout: int = 900) -> dict:
    """Collect and compile ``suite`` (tests/core_kernels.py --suite=...) for ``archs``
    in a subprocess, then inspect every code object with the LLVM tools."""
    if not (READELF and OBJDUMP):
        pytest.skip("llvm-readelf-22 / llvm-objdump-22 not installed (Debian package llvm-22)")
    out = tmp_path_factory.mktemp(f"{suite}_suite")
    env = dict(os.environ, PYKERN_TARGET="cpu", PYKERN_CACHE="off", PYKERN_CACHE_DIR=str(out / "cache"))
    r = subprocess.run([sys.executable, os.path.join(HERE, "core_kernels.py"), f"--suite={suite}", str(out), *archs],
                       env=env, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        pytest.fail(f"collecting/compiling the {suite} suite failed ({r.returncode}):\n"
                    f"{r.stdout[-3000:]}\n{r.stderr[-5000:]}")
    with open(out / "manifest.json") as f:
        manifest = json.load(f)
    groups = [[e["archs"][a]["file"] for e in manifest["kernels"] if "file" in e["archs"].get(a, {})] for a in archs]
    manifest["tools"] = inspect_code_objects(groups)
    manifest["log"] = r.stdout[-3000:]
    return manifest


@pytest.fixture(scope="module")
def core_build(tmp_path_factory):
    """The core suite for every arch."""
    return build_suite(tmp_path_factory, "core", ARCHS)


@pytest.fixture(scope="module")
def broad_build(tmp_path_factory):
    """The broad suite (core_kernels.BROAD_TEST_MODULES) for BROAD_ARCHS."""
    return build_suite(tmp_path_factory, "broad", BROAD_ARCHS)


def test_core_suite_was_collected(core_build):
    """The core tests ran green on cpu (else their kernel list may be short), every
    sample contributed its kernels, and both kernel-test modules contributed."""
    m = core_build
    assert m["pytest_rc"] == 0, f"core tests failed on cpu (pytest rc {m['pytest_rc']}); kernel list may be incomplete:\n{m['log']}"
    assert not m["sample_problems"], f"samples failed: {m['sample_problems']}"
    from core_kernels import SKIP_SAMPLES

    samples = {f[:-3] for f in os.listdir(os.path.join(os.path.dirname(HERE), "samples"))
               if f.endswith(".py") and not f.startswith("_")} - set(SKIP_SAMPLES)
    missing = (samples | {"test_cpu_kernels", "test_frontend_e2e"}) - set(m["modules"])
    assert not missing, f"no kernel recorded from {sorted(missing)}"
    assert len(m["kernels"]) >= 40, f"only {len(m['kernels'])} kernels collected"


def _expected_failure(key, arch):
    return EXPECTED_FAILURES.get((key, arch)) or EXPECTED_FAILURES.get((key, "*"))


#: (pykern ``CompiledKernel.resources`` key, amdhsa metadata key) that must agree.
RESOURCE_FIELDS = [("vgprs", ".vgpr_count"), ("agprs", ".agpr_count"), ("sgprs", ".sgpr_count"),
                   ("lds_bytes", ".group_segment_fixed_size"), ("scratch_bytes", ".private_segment_fixed_size"),
                   ("vgpr_spills", ".vgpr_spill_count"), ("sgpr_spills", ".sgpr_spill_count"),
                   ("wave_size", ".wavefront_size"), ("kernarg_size", ".kernarg_segment_size"),
                   ("max_block_size", ".max_flat_workgroup_size"), ("dynamic_stack", ".uses_dynamic_stack")]


def scratch_by_design(entry, tool_facts, md) -> bool:
    """Kernels whose scratch use is not a code-quality problem: ``opt=False``
    (nothing is promoted to registers), recursion (a real call stack:
    ``.uses_dynamic_stack``) and ``print()`` (ockl's ``__ockl_hostcall_internal``,
    which every HIP printf calls, is ``optnone noinline`` in the ROCm device
    libraries: it keeps its frame in scratch)."""
    if entry["options"].get("opt") in (False, 0) or md.get(".uses_dynamic_stack") is True:
        return True
    return "<__ockl_hostcall_internal>:" in tool_facts.get("disasm", "")


def check_kernel(entry, arch, facts, tools) -> list:
    """Every problem of one (kernel, arch) code object, as text."""
    bad = []
    f = facts["file"]
    sym = facts["symbol"]
    t = tools.get(f, {})
    g = t.get("gnu")
    if g is None:
        return ["llvm-readelf printed nothing for it"]
    # ELF header
    if g["type"] is None or not g["type"].startswith("DYN"):
        bad.append(f"e_type {g['type']!r}, want DYN")
    if g["osabi"] is None or "AMDGPU" not in g["osabi"] or "HSA" not in g["osabi"]:
        bad.append(f"OS/ABI {g['osabi']!r}, want AMDGPU - HSA")
    if g["machine"] != "EM_AMDGPU":
        bad.append(f"machine {g['machine']!r}")
    if arch not in g["flags"]:
        bad.append(f"e_flags name {g['flags']}, not {arch}")
    mach = f"EF_AMDGPU_MACH_AMDGCN_{arch.upper()}"
    if mach not in t.get("llvm_flags", []):
        bad.append(f"e_flags {t.get('llvm_flags')} lack {mach}")
    # symbols
    syms = g["symbols"]
    for table in (".dynsym", ".symtab"):
        rows = syms.get(table)
        if not rows:
            bad.append(f"no {table}")
            continue
        kd = [s for s in rows if s["name"] == f"{sym}.kd"]
        if not kd or kd[0]["ndx"] == "UND" or kd[0]["type"] != "OBJECT" or kd[0]["bind"] != "GLOBAL":
            bad.append(f"{table}: kernel descriptor {sym}.kd missing or not a defined global object: {kd}")
        fn = [s for s in rows if s["name"] == sym]
        if not fn or fn[0]["ndx"] == "UND" or fn[0]["type"] != "FUNC":
            bad.append(f"{table}: kernel {sym} missing or not a defined function: {fn}")
        und = [s["name"] for s in rows if s["ndx"] == "UND" and (s["num"] != 0 or s["name"])]
        if und:
            bad.append(f"{table}: undefined symbols {und}")
    # metadata note
    md = g["metadata"]
    if not isinstance(md, dict) or not md.get("amdhsa.kernels"):
        return bad + ["no amdhsa metadata note"]
    target = str(md.get("amdhsa.target", ""))
    if not re.fullmatch(rf"amdgcn-amd-amdhsa--{arch}(:.*)?", target):
        bad.append(f"amdhsa.target {target!r}")
    ks = md["amdhsa.kernels"]
    if len(ks) != 1:
        bad.append(f"{len(ks)} kernels in the metadata")
    k = ks[0]
    if k.get(".name") != sym or k.get(".symbol") != f"{sym}.kd" or facts["md_symbol"] != f"{sym}.kd":
        bad.append(f"metadata names {k.get('.name')!r}/{k.get('.symbol')!r} (pykern: {facts['md_symbol']!r}), want {sym!r}")
    explicit = [a for a in (k.get(".args") or []) if not str(a.get(".value_kind", "")).startswith("hidden_")]
    got = [(a.get(".offset"), a.get(".size")) for a in explicit]
    want = [(p[1], p[2]) for p in facts["params"]]
    if got != want:
        bad.append(f"explicit .args (offset, size) {got} != pykern's flat params {want}")
    else:
        kinds = [a.get(".value_kind") for a in explicit]
        want_kinds = ["global_buffer" if p[3] == "data" else "by_value" for p in facts["params"]]
        if kinds != want_kinds:
            bad.append(f".args value kinds {kinds} != {want_kinds}")
    end = max((p[1] + p[2] for p in facts["params"]), default=0)
    if not isinstance(k.get(".kernarg_segment_size"), int) or k[".kernarg_segment_size"] < end:
        bad.append(f".kernarg_segment_size {k.get('.kernarg_segment_size')} < {end}")
    wave = 64 if arch.startswith("gfx9") else 32
    if k.get(".wavefront_size") != wave:
        bad.append(f".wavefront_size {k.get('.wavefront_size')}, want {wave}")
    key = kernel_key(entry)
    scratch_ok = entry.get("uses_local_arrays") or key in SCRATCH_EXPECTED or scratch_by_design(entry, t, k)
    private = k.get(".private_segment_fixed_size")
    if private != facts["md_private"]:
        bad.append(f".private_segment_fixed_size {private} but pykern's metadata says {facts['md_private']}")
    if not scratch_ok:
        if private != 0:
            bad.append(f".private_segment_fixed_size {private}, want 0 (no local arrays)")
        # debug=True's bounds checks keep many uniform values (extents, indices) live for
        # their cold error paths: SGPRs spilled to VGPR lanes (no memory) are accepted there
        spills = (".vgpr_spill_count",) if entry["options"].get("debug") else (".vgpr_spill_count", ".sgpr_spill_count")
        for c in spills:
            if k.get(c, 0) != 0:
                bad.append(f"{c} {k.get(c)}, want 0")
    # pykern's resource report is read from the same code object: it must agree
    res = facts.get("resources") or {}
    for ours, theirs in RESOURCE_FIELDS:
        if ours in res and theirs in k and res[ours] != k[theirs]:
            bad.append(f"resources[{ours!r}] = {res[ours]} but readelf's {theirs} = {k[theirs]}")
    # disassembly
    dis = t.get("disasm", "")
    if f"<{sym}>:" not in dis:
        bad.append(f"llvm-objdump shows no <{sym}>")
    elif "s_endpgm" not in dis:
        bad.append("no s_endpgm in the disassembly")
    if "<unknown>" in dis or re.search(r"^\s+\.long\s", dis, re.M):
        bad.append("llvm-objdump met words it cannot decode as this arch's instructions")
    return bad


def suite_problems(build: dict, arch: str) -> tuple:
    """(problems as text, number of code objects checked) of one arch of a build."""
    problems, checked = [], 0
    for entry in build["kernels"]:
        key = kernel_key(entry)
        where = f"{key}  [{entry['origins'][0]}]"
        facts = entry["archs"].get(arch)
        expected = _expected_failure(key, arch)
        if facts is None:
            problems.append(f"{where}: not compiled for {arch}")
            continue
        if "error" in facts:
            if not expected:
                problems.append(f"{where}: compile failed: {facts['error'][:600]}")
            continue
        if expected:
            problems.append(f"{where}: compiles now; remove its EXPECTED_FAILURES entry ({expected})")
        checked += 1
        problems += [f"{where}: {p}" for p in check_kernel(entry, arch, facts, build["tools"])]
    return problems, checked


@pytest.mark.parametrize("arch", ARCHS)
def test_core_kernels_code_objects(core_build, arch):
    problems, checked = suite_problems(core_build, arch)
    assert not problems, f"{len(problems)} problem(s) on {arch}:\n" + "\n".join(problems)
    assert checked >= 40, f"only {checked} code objects checked on {arch}"


def test_broad_suite_was_collected(broad_build):
    """The broad modules ran green on cpu and each contributed kernels."""
    m = broad_build
    assert m["pytest_rc"] == 0, f"broad tests failed on cpu (pytest rc {m['pytest_rc']}):\n{m['log']}"
    from core_kernels import BROAD_TEST_MODULES

    origins = {o.split("::")[0] for e in m["kernels"] for o in e["origins"]}
    missing = sorted(set(BROAD_TEST_MODULES) - origins)
    assert not missing, f"no kernel recorded from {missing}"


@pytest.mark.parametrize("arch", BROAD_ARCHS)
def test_broad_kernels_code_objects(broad_build, arch):
    problems, checked = suite_problems(broad_build, arch)
    assert not problems, f"{len(problems)} problem(s) on {arch}:\n" + "\n".join(problems)
    assert checked >= 100, f"only {checked} code objects checked on {arch}"


ALL_ARCHS = ["gfx90a", "gfx942", "gfx1100", "gfx1201"]


@pytest.fixture(scope="module")
def all_build(tmp_path_factory):
    """Every kernel any test module compiles in-process on cpu (core_kernels
    ``--suite all``: 870 kernels, about 7 minutes on 2 busy cores)."""
    return build_suite(tmp_path_factory, "all", ALL_ARCHS, timeout=3600)


@pytest.mark.slow
@pytest.mark.parametrize("arch", ALL_ARCHS)
def test_all_test_kernels_code_objects(all_build, arch):
    # code objects first: a cpu test failing in this long run (a flaky hypothesis health
    # check, say) only shortens the kernel list, and says so after
    build = all_build
    problems, checked = suite_problems(build, arch)
    assert not problems, f"{len(problems)} problem(s) on {arch}:\n" + "\n".join(problems)
    assert checked >= 800, f"only {checked} code objects checked on {arch}"
    assert build["pytest_rc"] == 0, f"tests failed on cpu (pytest rc {build['pytest_rc']}):\n{build['log']}"


def test_keys_of_expectation_tables_exist(core_build, broad_build):
    """EXPECTED_FAILURES / SCRATCH_EXPECTED name kernels that still exist."""
    keys = {kernel_key(e) for b in (core_build, broad_build) for e in b["kernels"]}
    stale = [k for k, _ in EXPECTED_FAILURES if k not in keys] + [k for k in SCRATCH_EXPECTED if k not in keys]
    assert not stale, f"expectation entries for kernels no longer in the core suite: {stale}"


def test_suite_module_lists_name_existing_modules():
    """Every broad module exists and is not in the core list; ``--suite all`` takes
    every test module but the skipped ones, this one included in the skips."""
    import core_kernels as ck

    for m in ck.BROAD_TEST_MODULES:
        assert os.path.exists(os.path.join(os.path.dirname(HERE), m)), m
    assert not set(ck.BROAD_TEST_MODULES) & set(ck.CORE_TEST_MODULES)
    every = ck.suite_modules("all")
    assert set(ck.CORE_TEST_MODULES + ck.BROAD_TEST_MODULES) <= set(every)
    assert "tests/codegen/amdgpu/test_amdgpu_core_suite.py" not in every


def test_scratch_by_design_names_only_its_three_reasons():
    plain = dict(options={})
    assert not scratch_by_design(plain, {"disasm": "<k>:\n s_endpgm"}, {".uses_dynamic_stack": False})
    assert scratch_by_design(dict(options={"opt": 0}), {}, {})
    assert scratch_by_design(plain, {}, {".uses_dynamic_stack": True})
    assert scratch_by_design(plain, {"disasm": "<__ockl_hostcall_internal>:\n"}, {})
