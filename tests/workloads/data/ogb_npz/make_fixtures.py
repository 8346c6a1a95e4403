#!/usr/bin/env python3
"""Writes the .npz fixtures of tests/workloads/test_loaders.cpp (LoadOgbNpz) with the standard
library only (no NumPy here): .npy arrays built byte by byte, zipped as np.savez (stored) and
np.savez_compressed (deflated) write them, one archive with zip64 records as NumPy writes for
members past 4 GiB. The tiny graph is test_loaders.cpp's OgbTree: 6 nodes, edges 0-1, 1-2, 3-4,
4-0, two features per node, labels 0 3 nan 1 2 0.

    python3 make_fixtures.py OUTPUT_DIR
"""
import math
import struct
import sys
import zipfile
from pathlib import Path

EDGES = [(0, 1), (1, 2), (3, 4), (4, 0)]
FEATURES = [0.5, -1, 1, 2, 0, 0, 3.25, 4, -5, 0.6, 7, 8]
LABELS = [0, 3, math.nan, 1, 2, 0]


def npy(descr, shape, values, fortran=False, version=1):
    """A .npy file: magic, version, header dictionary padded to 64 bytes, little-endian data."""
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }" % (
        descr, "True" if fortran else "False", dims)
    prefix = 10 if version == 1 else 12
    header += " " * ((64 - (prefix + len(header) + 1) % 64) % 64) + "\n"
    length = struct.pack("<H" if version == 1 else "<I", len(header))
    code = {"<i8": "q", "<i4": "i", "<f8": "d", "<f4": "f", "<f2": "e", ">f4": "f"}[descr]
    order = ">" if descr.startswith(">") else "<"
    data = struct.pack(order + code * len(values), *values)
    return b"\x93NUMPY" + bytes([version, 0]) + length + header.encode() + data


def write(path, members, compression, zip64=False):
    # zipfile writes zip64 sizes, offsets and end records past ZIP64_LIMIT (4 GiB): lowered, a
    # tiny archive has them all, as NumPy's archives of arrays past 4 GiB do.
    limit = zipfile.ZIP64_LIMIT
    zipfile.ZIP64_LIMIT = 64 if zip64 else limit
    try:
        with zipfile.ZipFile(path, "w", compression=compression) as archive:
            for name, content in members.items():
                with archive.open(name + ".npy", "w", force_zip64=zip64) as member:
                    member.write(content)
    finally:
        zipfile.ZIP64_LIMIT = limit


def main(out):
    out.mkdir(parents=True, exist_ok=True)
    sources = [s for s, _ in EDGES]
    targets = [t for _, t in EDGES]
    interleaved = [v for edge in EDGES for v in edge]
    deflated = zipfile.ZIP_DEFLATED
    stored = zipfile.ZIP_STORED
    # As np.savez_compressed: C order, int64 ids, float32 features, labels (N, 1) float64.
    write(out / "deflated-data.npz", {
        "edge_index": npy("<i8", (2, 4), sources + targets),
        "node_feat": npy("<f4", (6, 2), FEATURES),
        "num_nodes_list": npy("<i8", (1,), [6]),
        "num_edges_list": npy("<i8", (1,), [4])}, deflated)
    write(out / "deflated-node-label.npz", {"node_label": npy("<f8", (6, 1), LABELS)}, deflated)
    # As np.savez with zip64 records: Fortran-order int32 ids, float64 features, labels (N,).
    write(out / "zip64-data.npz", {
        "num_nodes_list": npy("<i4", (1,), [6], version=2),
        "edge_index": npy("<i4", (2, 4), interleaved, fortran=True),
        "node_feat": npy("<f8", (6, 2), FEATURES)}, stored, zip64=True)
    write(out / "zip64-node-label.npz", {"node_label": npy("<f4", (6,), LABELS)}, stored, True)
    # As past 4 GiB: the end record's directory offset saturated, the zip64 record holding it.
    data = bytearray((out / "zip64-data.npz").read_bytes())
    end = data.rfind(b"PK\x05\x06")
    data[end + 16:end + 20] = b"\xff\xff\xff\xff"
    (out / "zip64-data.npz").write_bytes(bytes(data))
    # Bad inputs, each wrong in one way.
    write(out / "bad-id-data.npz", {
        "edge_index": npy("<i8", (2, 4), sources + [1, 2, 6, 0]),
        "num_nodes_list": npy("<i8", (1,), [6])}, deflated)
    write(out / "big-endian-node-label.npz", {"node_label": npy(">f4", (6,), LABELS)}, stored)
    write(out / "half.npz", {"values": npy("<f2", (5,), [1.5, -2, 65504, 2 ** -24, math.inf])},
          stored)
    data = bytearray((out / "zip64-node-label.npz").read_bytes())
    # Node 2's label, a NaN that stays one: only the checksum can tell.
    at = data.find(b"\x93NUMPY") + 128 + 8
    data[at] ^= 0xFF
    (out / "bad-crc-node-label.npz").write_bytes(bytes(data))
    (out / "truncated-data.npz").write_bytes((out / "deflated-data.npz").read_bytes()[:100])


if __name__ == "__main__":
    main(Path(sys.argv[1]))
