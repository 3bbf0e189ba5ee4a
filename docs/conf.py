"""Sphinx configuration of pykern's documentation (built by tests/docs/test_docs_build.py)."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "_ext"))
sys.path.insert(0, os.path.dirname(HERE))  # this checkout's pykern, not an installed one

project = "pykern"
author = "pykern developers"
extensions = ["myst_parser", "sphinx.ext.autodoc", "pykern_reference", "pykern_notebook"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
myst_enable_extensions = ["colon_fence"]
myst_heading_anchors = 3
exclude_patterns = ["_build"]
# docstrings are written for help(); their cross-references are to names this site may not hold
nitpicky = False
suppress_warnings = ["myst.header"]
try:
    import furo  # noqa: F401

    html_theme = "furo"
except ImportError:  # the build still works (and is tested) with Sphinx's own theme
    html_theme = "alabaster"
html_title = "pykern"
