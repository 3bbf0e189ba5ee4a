"""The ctypes bindings against the HIP header they claim to mirror.

The header is Debian's libamdhip64-dev (/usr/include/hip). Prototypes are read
from the raw header text (comments, DEPRECATED(...), __attribute__((...)),
__dparm(...), default arguments and multi-line declarations handled); when gcc
is present the same parser also runs on gcc's preprocessed output, and the
properties struct offset is compiled and compared; g++'s type traits say what
each C spelling is (size, pointer, sign, pointee), which ``hip_api.CTYPES`` must match.
"""

import ctypes
import os
import re
import shutil
import subprocess

import pytest

from pykern.runtime import device_registry as devices
from pykern.runtime.hip import api as hip_api
from pykern.runtime.hip import properties as hip_props

HEADER_DIR = "/usr/include/hip"
HEADER = os.path.join(HEADER_DIR, "hip_runtime_api.h")
DRIVER_TYPES = os.path.join(HEADER_DIR, "driver_types.h")

pytestmark = pytest.mark.skipif(not os.path.exists(HEADER), reason="libamdhip64-dev headers not installed")

# Entry points newer than the installed (ROCm 5.2) header.
NEWER_THAN_HEADER = {"hipGetDevicePropertiesR0600", "hipModuleLaunchCooperativeKernel"}  # ROCm 6.x
# hipError_t values added after ROCm 5.2.
NEWER_ERRORS = {"hipErrorInvalidChannelDescriptor": 911, "hipErrorInvalidTexture": 912}

_TYPE_WORDS = {"const", "unsigned", "signed", "int", "char", "void", "float", "double", "long", "short", "size_t", "struct", "enum"}


def _strip_balanced(text, word):
    """Remove ``word(...)`` with balanced parentheses."""
    out, i = [], 0
    pat = re.compile(r"\b" + re.escape(word) + r"\s*\(")
    while True:
        m = pat.search(text, i)
        if not m:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i : m.start()])
        depth, j = 1, m.end()
        while depth and j < len(text):
            depth += {"(": 1, ")": -1}.get(text[j], 0)
            j += 1
        i = j


def clean_header(text):
    # comments, but not "//" inside string literals (URLs in deprecation messages)
    text = re.sub(
        r'("(?:\\.|[^"\\\n])*")|/\*.*?\*/|//[^\n]*',
        lambda m: m.group(1) or " ",
        text,
        flags=re.S,
    )
    text = re.sub(r"\\\n", " ", text)  # macro continuation lines
    text = "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("#"))
    for w in ("DEPRECATED", "__attribute__", "__dparm", "__declspec"):
        text = _strip_balanced(text, w)
    text = re.sub(r'\bextern\s+"C"\s*\{', " ", text)
    for w in ("HIP_PUBLIC_API", "__host__", "__device__", "__HIP_NODISCARD", "DEPRECATED_MSG", "extern"):
        text = re.sub(r"\b" + w + r"\b", " ", text)
    return text


def _norm_type(tokens):
    s = " ".join(tokens)
    s = re.sub(r"\s*\*", "*", s)
    return re.sub(r"\s+", " ", s).strip()


def _param_type(p):
    p = p.split("=")[0].strip()  # C++ default argument
    toks = re.findall(r"[A-Za-z_]\w*|\*|\[\]", p)
    if len(toks) > 1 and re.match(r"[A-Za-z_]", toks[-1]) and toks[-1] not in _TYPE_WORDS:
        toks = toks[:-1]  # the parameter name
    return _norm_type(toks)


def parse_prototypes(text):
    """{name: [(return type, (param types...)), ...]} for every hip* function declaration."""
    decls = {}
    for chunk in text.split(";"):
        chunk = re.split(r"[{}]", chunk)[-1].strip()
        m = re.match(r"^([A-Za-z_][\w\s\*]*?)\s*\b(hip\w+)\s*\((.*)\)\s*$", chunk, re.S)
        if not m:
            continue
        ret = _norm_type(re.findall(r"[A-Za-z_]\w*|\*", m.group(1)))
        params = m.group(3).strip()
        if params in ("", "void"):
            ptypes = ()
        else:
            ptypes = tuple(_param_type(p) for p in params.split(","))
        decls.setdefault(m.group(2), []).append((ret, ptypes))
    return decls


def parse_enum(text, name):
    """[(enumerator, value)] of ``typedef enum ... name { ... } name;`` (values resolved)."""
    m = re.search(r"typedef\s+enum\s+(?:\w+\s+)*" + name + r"\s*\{(.*?)\}\s*" + name + r"\s*;", text, re.S)
    assert m, f"enum {name} not found"
    out, values, cur = [], {}, -1
    for item in m.group(1).split(","):
        item = item.strip()
        if not item:
            continue
        n, _, v = item.partition("=")
        n, v = n.strip(), v.strip()
        if v:
            cur = values[v] if v in values else int(v, 0)
        else:
            cur += 1
        values[n] = cur
        out.append((n, cur))
    return out


@pytest.fixture(scope="module")
def header_text():
    with open(HEADER) as f:
        return clean_header(f.read())


@pytest.fixture(scope="module")
def header_decls(header_text):
    return parse_prototypes(header_text)


def test_parser_handles_the_tricky_declarations(header_decls):
    # multi-line, __dparm default, C++ default + C variant, const char* return
    assert ("hipError_t", ("void*", "const void*", "size_t", "hipMemcpyKind", "hipStream_t")) in header_decls["hipMemcpyAsync"]
    assert ("hipError_t", ("hipEvent_t", "hipStream_t")) in header_decls["hipEventRecord"]
    assert header_decls["hipGetErrorString"] == [("const char*", ("hipError_t",))]
    assert len(header_decls["hipModuleLaunchKernel"][0][1]) == 11
    assert len(header_decls) > 200  # the whole API was seen, not a handful


@pytest.mark.parametrize("name", sorted(hip_api.PROTOTYPES))
def test_binding_matches_header(name, header_decls):
    ours = hip_api.PROTOTYPES[name]
    if name in NEWER_THAN_HEADER:
        assert name not in header_decls, f"{name} is in this header now: drop it from NEWER_THAN_HEADER"
        return
    assert name in header_decls, f"{name} is not declared in {HEADER}"
    assert ours in header_decls[name], f"{name}: ours {ours} vs header {header_decls[name]}"
    ret, args = ours
    assert hip_api.ctypes_signature(name) == (hip_api.CTYPES[ret], [hip_api.CTYPES[a] for a in args])


# What the C++ compiler says each spelling is: size, pointer, enum, signed, floating, and what a pointer points to.
_TRAITS_CC = r"""
#define __HIP_PLATFORM_AMD__ 1
#include <cstdio>
#include <type_traits>
#include <hip/hip_runtime_api.h>
template <class T> const char* kind() {
    typedef typename std::remove_cv<T>::type U;
    if (std::is_void<U>::value) return "void";
    if (std::is_function<U>::value) return "function";
    if (std::is_same<U, char>::value) return "char";
    if (std::is_pointer<U>::value) return "pointer";
    if (std::is_class<U>::value) return "struct";
    if (std::is_floating_point<U>::value) return "float";
    if (std::is_enum<U>::value) return "enum";
    return std::is_signed<U>::value ? "signed" : "unsigned";
}
template <class T> std::size_t number_size() {  // 0 unless a number (a pointee may be incomplete)
    const bool number = std::is_arithmetic<T>::value || std::is_enum<T>::value;
    return number ? sizeof(typename std::conditional<number, T, char>::type) : 0;
}
template <class T> void row(const char* s) {
    typedef typename std::remove_pointer<T>::type P;
    std::printf("%s|%zu|%s|%s|%zu\n", s, sizeof(T), kind<T>(), kind<P>(), number_size<P>());
}
int main() {
"""


def _ctypes_kind(ct) -> str:
    """``kind<T>()`` of the C++ program above, for a ctypes type."""
    if ct in (ctypes.c_void_p, ctypes.c_char_p) or (isinstance(ct, type) and issubclass(ct, ctypes._Pointer)):
        return "pointer"
    if ct in (ctypes.c_float, ctypes.c_double):
        return "float"
    return "signed" if ct(-1).value < 0 else "unsigned"


def _pointee_kind(ct) -> str:
    if ct is ctypes.c_char_p:
        return "char"
    if ct is ctypes.c_void_p:
        return "void"  # or a struct, read through a raw buffer (the properties struct)
    return _ctypes_kind(ct._type_)


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")
def test_ctypes_match_what_the_compiler_says(tmp_path):
    used = {c for n, (ret, args) in hip_api.PROTOTYPES.items() if n not in NEWER_THAN_HEADER for c in (ret, *args)}
    spellings = sorted(used - {"void"})
    src = tmp_path / "traits.cc"
    src.write_text(_TRAITS_CC + "".join(f'    row<{c}>("{c}");\n' for c in spellings) + "}\n")
    exe = tmp_path / "traits"
    subprocess.run(["g++", str(src), "-o", str(exe)], check=True, capture_output=True)
    rows = [line.split("|") for line in subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.splitlines()]
    assert [r[0] for r in rows] == spellings
    for c, size, kind, pointee, pointee_size in rows:
        ct = hip_api.CTYPES[c]
        assert ctypes.sizeof(ct) == int(size), c
        if kind == "enum":
            assert ct is ctypes.c_int, c  # an enum passes as C's int
        else:
            assert _ctypes_kind(ct) == kind, c
        if kind == "pointer":
            # a struct is read through a raw buffer; a function pointer is a CFUNCTYPE cast to void*
            want = "void" if pointee in ("void", "struct", "function") else pointee
            assert _pointee_kind(ct) == want, (c, pointee)
            if issubclass(ct, ctypes._Pointer) and int(pointee_size):
                assert ctypes.sizeof(ct._type_) == int(pointee_size), c


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
def test_parser_agrees_with_the_preprocessor(tmp_path, header_decls):
    src = tmp_path / "h.c"
    src.write_text("#define __HIP_PLATFORM_AMD__ 1\n#include <hip/hip_runtime_api.h>\n")
    pre = subprocess.run(["gcc", "-E", "-P", str(src)], capture_output=True, text=True, check=True).stdout
    pp = parse_prototypes(clean_header(pre))
    for name in hip_api.PROTOTYPES:
        if name in NEWER_THAN_HEADER:
            continue
        assert hip_api.PROTOTYPES[name] in pp[name], (name, pp[name])


def test_error_table_matches_header_enum(header_text):
    entries = parse_enum(header_text, "hipError_t")
    header = dict(entries)
    assert header["hipErrorNoDevice"] == 100 and header["hipErrorTbd"] == 1054
    for n, v in entries:
        assert hip_api.ERRORS.get(n) == v, f"{n} = {v} in the header, {hip_api.ERRORS.get(n)} here"
    extra = {n: v for n, v in hip_api.ERRORS.items() if n not in header}
    assert extra == NEWER_ERRORS
    # the canonical name of a value is the first one the header declares
    first = {}
    for n, v in entries:
        first.setdefault(v, n)
    for v, n in first.items():
        assert hip_api.ERROR_NAMES[v] == n


def test_device_attribute_values_match_header(header_text):
    values = dict(parse_enum(header_text, "hipDeviceAttribute_t"))
    for n, v in hip_api.DEVICE_ATTRIBUTES.items():
        assert values[n] == v, n


def test_memcpy_kind_and_defines_match_header():
    with open(DRIVER_TYPES) as f:
        kinds = dict(parse_enum(clean_header(f.read()), "hipMemcpyKind"))
    assert kinds["hipMemcpyHostToDevice"] == hip_api.hipMemcpyHostToDevice
    assert kinds["hipMemcpyDeviceToHost"] == hip_api.hipMemcpyDeviceToHost
    assert kinds["hipMemcpyDeviceToDevice"] == hip_api.hipMemcpyDeviceToDevice
    with open(HEADER) as f:
        raw = f.read()
    for n, v in hip_api.DEFINES.items():
        m = re.search(r"#define\s+" + n + r"\s+\(*(?:\(void\s*\*\))?\s*(0x[0-9a-fA-F]+|\d+)", raw)
        assert m, n
        assert int(m.group(1), 0) == v, n


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
def test_properties_struct_offset_matches_compiler(tmp_path):
    src = tmp_path / "off.c"
    src.write_text(
        "#define __HIP_PLATFORM_AMD__ 1\n#include <stddef.h>\n#include <stdio.h>\n#include <hip/hip_runtime_api.h>\n"
        'int main(void){printf("%zu %zu\\n", offsetof(hipDeviceProp_t, gcnArchName), offsetof(hipDeviceProp_t, maxSharedMemoryPerMultiProcessor));return 0;}\n'
    )
    exe = tmp_path / "off"
    subprocess.run(["gcc", str(src), "-o", str(exe)], check=True, capture_output=True)
    gcn, maxsh = map(int, subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split())
    assert hip_props.GCN_ARCH_NAME_OFFSET["hipGetDeviceProperties"] == gcn
    assert hip_props._PropsR0000.maxSharedMemoryPerMultiProcessor.offset == maxsh


def test_gcn_arch_name_parsing_and_code_object_choice():
    assert hip_props.parse_gcn_arch_name("gfx90a:sramecc+:xnack-") == ("gfx90a", ("sramecc+", "xnack-"))
    assert hip_props.parse_gcn_arch_name("gfx1100") == ("gfx1100", ())
    assert devices.code_object_version_for(50221153) == 4  # ROCm 5.2 (this machine's library)
    assert devices.code_object_version_for(60032830) == 5  # ROCm 6.0
    assert devices.code_object_version_for(70000000) == 5
