"""Mandelbrot set: one thread per pixel, written to mandelbrot.png (users like to look)."""

import os
import struct
import sys
import zlib

import numpy as np

import pykern as cuda
from _util import report, timed


@cuda.jit
def mandel(xmin, xmax, ymin, ymax, max_iter, image):
    x, y = cuda.grid(2)
    h, w = image.shape
    if x < w and y < h:
        cr = xmin + x * (xmax - xmin) / w
        ci = ymin + y * (ymax - ymin) / h
        zr = 0.0
        zi = 0.0
        n = 0
        while n < max_iter and zr * zr + zi * zi <= 4.0:
            zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
            n += 1
        image[y, x] = n


def reference(xmin, xmax, ymin, ymax, max_iter, h, w):
    cr = xmin + np.arange(w) * (xmax - xmin) / w
    ci = ymin + np.arange(h) * (ymax - ymin) / h
    c = cr[None, :] + 1j * ci[:, None]
    z = np.zeros_like(c)
    out = np.zeros(c.shape, np.int32)
    alive = np.ones(c.shape, bool)
    for n in range(max_iter):
        alive &= (z.real ** 2 + z.imag ** 2) <= 4.0
        out += alive
        z = np.where(alive, z * z + c, z)
    return out


def write_png(path, gray):
    h, w = gray.shape
    raw = b"".join(b"\x00" + gray[r].tobytes() for r in range(h))

    def chunk(tag, data):
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


def main(w=480, h=320, max_iter=100, out="mandelbrot.png"):
    image = cuda.device_array((h, w), np.int32)
    args = (-2.2, 1.0, -1.2, 1.2, max_iter)
    t = timed(lambda: mandel[((w + 15) // 16, (h + 15) // 16), (16, 16)](*args, image))
    got = image.copy_to_host()
    want = reference(*args, h, w)
    gray = (255 - (got * 255 // max_iter)).astype(np.uint8)
    write_png(out, gray)
    # boundary pixels may flip with rounding order; the set itself must match
    report("mandelbrot", np.mean(got == want) > 0.999, t, f"{w}x{h} -> {os.path.abspath(out)}")


if __name__ == "__main__":
    main(out=sys.argv[1] if len(sys.argv) > 1 else "mandelbrot.png")
