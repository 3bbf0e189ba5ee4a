"""A real IPython kernel for the notebook tests (ipykernel via jupyter_client; no server).

``Kernel.run(code)`` executes one cell as a notebook front-end would and returns its
outputs; the kernel runs in its own process with the test's environment (PYKERN_TARGET=cpu,
the test's cache directory, PYTHONPATH with this tree first).
"""

from __future__ import annotations

import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def need_jupyter():
    for mod in ("ipykernel", "jupyter_client", "nbclient", "nbformat"):
        pytest.importorskip(mod)


def kernel_env(cache_dir) -> dict:
    path = os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p)
    return dict(os.environ, PYKERN_TARGET="cpu", PYKERN_CACHE_DIR=str(cache_dir), PYTHONPATH=path,
                PYDEVD_DISABLE_FILE_VALIDATION="1")


class CellError(AssertionError):
    pass


class Kernel:
    def __init__(self, env: dict):
        from jupyter_client.manager import KernelManager

        self.km = KernelManager(kernel_name="python3")
        self.km.start_kernel(env=env)
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=300)

    def run(self, code: str, timeout: float = 300, allow_error: bool = False) -> dict:
        """Execute a cell; ``{"status", "stdout", "error": {ename, evalue, traceback}, "data": [...]}``."""
        out = {"stdout": "", "stderr": "", "error": None, "data": []}

        def hook(msg):
            t, c = msg["msg_type"], msg["content"]
            if t == "stream":
                out[c["name"]] += c["text"]
            elif t == "error":
                out["error"] = c
            elif t in ("execute_result", "display_data"):
                out["data"].append(c["data"])

        reply = self.kc.execute_interactive(code, output_hook=hook, timeout=timeout)
        out["status"] = reply["content"]["status"]
        if out["status"] != "ok" and not allow_error:
            err = out["error"] or reply["content"]
            raise CellError(f"cell failed: {err.get('ename')}: {err.get('evalue')}\n"
                            + "\n".join(err.get("traceback", [])) + "\n" + out["stderr"])
        return out

    def value(self, expr: str):
        """Evaluate ``expr`` in the kernel; its repr read back with ``ast.literal_eval``."""
        import ast

        return ast.literal_eval(self.run(f"print(repr({expr}))")["stdout"].strip().splitlines()[-1])

    def close(self):
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)
