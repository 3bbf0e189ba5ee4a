"""The documentation builds with no warning (sphinx-build -W) and links its pages together."""

import re


def test_docs_build_without_warnings(built_docs):
    index = (built_docs / "index.html").read_text()
    for page in ("getting-started", "porting", "user/index", "reference/index", "developer/index", "changelog"):
        assert (built_docs / f"{page}.html").is_file(), page
        assert f'href="{page}.html' in index, f"index does not link {page}"


def test_user_guide_has_a_page_per_topic(built_docs):
    topics = ["kernels", "memory", "device-functions", "python-numpy", "math-libdevice", "atomics-waves",
              "cooperative-groups", "ufuncs", "random", "types", "cache", "aot-cli", "dask", "debugging",
              "performance"]
    guide = (built_docs / "user" / "index.html").read_text()
    for t in topics:
        assert re.search(rf'href="{t}\.html"', guide), t
