"""Build the compiled twins of the pure codecs in place (see brokers/engine/speedups.py).

    .venv/bin/python tools/build_speedups.py          # make run / make test do this when a .pyx changed

Cython turns each ``.pyx`` into C under ``build/cython/``; the extension modules land next to
their ``.pyx`` (``brokers/engine/.../_*_c.cpython-*.so``). Exits non-zero when the build fails:
a machine without a C compiler cannot run ``make``, rather than silently running the pure path.
"""

from __future__ import annotations

import pathlib
import sys

from Cython.Build import cythonize
from setuptools import Extension, setup

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCES = sorted(ROOT.glob("brokers/engine/**/_*_c.pyx"))


def main() -> None:
    extensions = [
        Extension(
            ".".join(src.relative_to(ROOT).with_suffix("").parts),
            [str(src.relative_to(ROOT))],
            extra_compile_args=["-O2"],
        )
        for src in SOURCES
    ]
    modules = cythonize(extensions, build_dir="build/cython", quiet=True, compiler_directives={"language_level": 3})
    setup(
        name="gantry-speedups",
        ext_modules=modules,
        script_args=["--quiet", "build_ext", "--inplace", "--build-temp", "build/temp"],
    )


if __name__ == "__main__":
    import os

    os.chdir(ROOT)
    sys.exit(main())
