"""pykern's errors in scripts: the user's frames and the message, not the compiler's
insides (issue 14 item 3); PYKERN_FULL_TRACEBACK=1 restores every frame."""

import os
import subprocess
import sys
import textwrap

import pytest

from frontend_helpers import IMPORTS, TRY_EXCEPT_SRC, child_env

TRY_KERNEL = IMPORTS + TRY_EXCEPT_SRC  # the try at line 7, the launch at line 12


def run_script(tmp_path, text, **env):
    path = tmp_path / "user_script.py"
    path.write_text(textwrap.dedent(text))
    e = child_env(PYKERN_CACHE="off", **env)
    e.pop("PYKERN_FULL_TRACEBACK", None) if "PYKERN_FULL_TRACEBACK" not in env else None
    r = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=e, timeout=300)
    assert r.returncode == 1, r.stdout + r.stderr
    return r.stderr.rstrip("\n").splitlines()


def pykern_frames(lines):
    return [ln for ln in lines if ln.lstrip().startswith("File ") and os.sep + "pykern" + os.sep in ln]


def test_compile_error_from_a_launch_is_short(tmp_path):
    lines = run_script(tmp_path, TRY_KERNEL)
    text = "\n".join(lines)
    assert 'user_script.py", line 12, in <module>' in text and "tries[1, 4](np.zeros(4))" in text
    assert "CompileError: " in text and "user_script.py:7:5: error: try/except" in text
    assert "    try:" in text and "^" in text and "hint: kernels cannot catch exceptions" in text
    assert len(pykern_frames(lines)) == 1 and "PYKERN_FULL_TRACEBACK=1" in text  # says how to see the rest
    assert len(lines) <= 11, text  # was 37 lines, 30 of them pykern's frames


def test_full_traceback_setting_keeps_every_frame(tmp_path):
    lines = run_script(tmp_path, TRY_KERNEL, PYKERN_FULL_TRACEBACK="1")
    assert any("lower_ast.py" in ln for ln in lines) and len(pykern_frames(lines)) > 5


def test_errors_keep_raise_semantics(tmp_path):
    lines = run_script(tmp_path, TRY_KERNEL.replace("tries[1, 4](np.zeros(4))", '''
try:
    tries[1, 4](np.zeros(4))
except cuda.CompileError as e:
    assert e.line == 7 and e.hint and e.__traceback__ is not None
    raise SystemExit(1)
'''))
    assert lines == []


def test_debug_bounds_error_names_the_kernel_line(tmp_path):
    lines = run_script(tmp_path, IMPORTS + '''
@cuda.jit(cache=False, debug=True)
def off_by_one(a):
    i = cuda.grid(1)
    a[i + 1] = 1.0

off_by_one[1, 4](np.zeros(4))
''')
    text = "\n".join(lines)
    # a bounds error is a KernelIndexError (a KernelRuntimeError and an IndexError, as numba's)
    assert "KernelIndexError: " in text and "user_script.py:7" in text and "a[i + 1] = 1.0" in text
    assert len(pykern_frames(lines)) == 1 and len(lines) <= 7, text


def test_a_kernels_own_exception_is_short_too(tmp_path):
    lines = run_script(tmp_path, IMPORTS + '''
@cuda.jit(cache=False, debug=True)
def checked(a):
    i = cuda.grid(1)
    assert i < 3, "past the end"
    a[i] = 1.0

checked[1, 4](np.zeros(4))
''')
    text = "\n".join(lines)
    # the user's own class and message, the place as a note
    assert "AssertionError: past the end" in text and "user_script.py:7: `assert i < 3" in text, text
    assert len(pykern_frames(lines)) == 1 and len(lines) <= 8, text


@pytest.mark.parametrize("call", ['bad.inspect_asm("void(float32[::1])", arch="gfx942")',
                                  'bad.compile("void(float32[::1])")',
                                  'cuda.jit("void(float32[::1])")(bad.py_func)',
                                  'cuda.compile(bad, "void(float32[::1])", arch="gfx1100")'])
def test_other_entry_points_are_short_too(tmp_path, call):
    lines = run_script(tmp_path, IMPORTS + f'''
@cuda.jit(cache=False)
def bad(a):
    with open("x"):
        a[0] = 1

{call}
''')
    text = "\n".join(lines)
    assert "CompileError: " in text and "user_script.py:6:" in text
    assert len(pykern_frames(lines)) <= 1 and len(lines) <= 11, text
