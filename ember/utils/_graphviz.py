"""Writing a graph's Graphviz dot source to a file, rendered when the extension asks for an image.

`.dot` / `.gv` files get the source as it is. `.svg`, `.png`, `.pdf` are rendered by Graphviz's `dot`
program when it is on PATH; ember bundles no renderer (Graphviz is a C program; its Python packages call
the same executable), so without it the call fails saying so, after writing the source beside the
requested file, which any Graphviz viewer or https://dreampuf.github.io/GraphvizOnline opens.
"""

from __future__ import annotations

import os
import shutil
import subprocess

__all__ = ["save_dot"]

_IMAGES = {".svg": "svg", ".png": "png", ".pdf": "pdf", ".jpg": "jpg", ".jpeg": "jpg"}


def save_dot(source: str, path) -> str:
    """Write dot `source` to `path` (rendered for image extensions); return the path written."""
    path = os.fspath(path)
    stem, ext = os.path.splitext(path)
    fmt = _IMAGES.get(ext.lower())
    if fmt is None:
        with open(path, "w") as f:
            f.write(source)
        return path
    dot = shutil.which("dot")
    if dot is None:
        with open(stem + ".dot", "w") as f:
            f.write(source)
        raise RuntimeError(f"rendering a graph as {fmt} needs Graphviz's `dot` program on PATH "
                           f"(https://graphviz.org/download/); the dot source was written to {stem}.dot")
    done = subprocess.run([dot, f"-T{fmt}", "-o", path], input=source.encode(), capture_output=True)
    if done.returncode != 0:
        raise RuntimeError(f"dot failed to render {path}: {done.stderr.decode(errors='replace').strip()}")
    return path
