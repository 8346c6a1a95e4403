"""Workload files for the PyTorch peer benchmark, with NumPy only.

Reads the two layouts the peer trains on, exactly as gnnbed reads them:

  planetoid-tsv  a directory as in workloads/datasets/*/ (meta.tsv, edges.tsv with every undirected
                 edge once, features_sparse.tsv non-zeros or features.bin float32 rows,
                 labels.tsv, split.tsv); workloads/load_planetoid_tsv.cpp is gnnbed's reader
  binary         gnnbed's binary workload file (docs/binary_format.md) with stored features, as
                 `workload convert --features stored --output F.bin` writes it

and writes the first, for the generated bag-of-words graph (generate_bow_sbm): a stochastic block
model with class-dependent sparse binary features, a pure function of its parameters and seed.

A Workload holds the in-neighbour CSR (indptr, indices: the in-neighbours of v are
indices[indptr[v]:indptr[v+1]], as gnnbed's Graph), labels (-1 = none), the split, and the
features either sparse (COO rows, cols, values) or dense (num_nodes x dim float32).
"""
import os
import struct

import numpy as np


class DataError(Exception):
    """A file that cannot be read as the layout says: the message names the file and field."""


class Workload:
    def __init__(self, name, num_nodes, indptr, indices, labels, num_classes, train, val, test,
                 dim, sparse=None, dense=None):
        self.name = name
        self.num_nodes = num_nodes
        self.indptr = indptr
        self.indices = indices
        self.labels = labels
        self.num_classes = num_classes
        self.train, self.val, self.test = train, val, test
        self.dim = dim
        self.sparse = sparse  # (rows, cols, values) or None
        self.dense = dense    # num_nodes x dim float32 array or None

    @property
    def num_edges(self):
        return int(self.indptr[-1])

    def summary(self):
        nonzeros = (len(self.sparse[2]) if self.sparse is not None
                    else int(np.count_nonzero(self.dense)) if self.dense is not None else 0)
        return {"name": self.name, "num_nodes": self.num_nodes, "num_edges": self.num_edges,
                "feature_dim": self.dim, "feature_nonzeros": nonzeros,
                "features": "sparse" if self.sparse is not None else "dense",
                "num_classes": self.num_classes, "num_train": len(self.train),
                "num_val": len(self.val), "num_test": len(self.test)}


def _numbers(path, columns, what):
    """The whitespace-separated numbers of a TSV file as a (lines x columns) float64 array."""
    try:
        with open(path, "rb") as f:
            text = f.read()
    except OSError as error:
        raise DataError(f"{path}: cannot read ({error.strerror})") from None
    values = np.fromstring(text, dtype=np.float64, sep=" ")
    lines = text.count(b"\n") + (0 if text.endswith(b"\n") or not text else 1)
    if values.size != lines * columns:
        raise DataError(f"{path}: expected {columns} numeric fields ({what}) on each of "
                        f"{lines} lines, read {values.size} numbers")
    return values.reshape(lines, columns)


def _ids(values, path, field, limit):
    ids = values.astype(np.int64)
    if np.any(ids != values) or (ids.size and (ids.min() < 0 or ids.max() >= limit)):
        raise DataError(f"{path}: field '{field}' holds a value that is not an id in [0, {limit})")
    return ids


def in_neighbour_csr(num_nodes, src, dst):
    """CSR of in-neighbours for the directed entries src -> dst, sorted within each row."""
    order = np.lexsort((src, dst))
    indices = src[order].astype(np.int64)
    counts = np.bincount(dst, minlength=num_nodes)
    indptr = np.zeros(num_nodes + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    return indptr, indices


def read_planetoid_tsv(directory):
    meta_path = os.path.join(directory, "meta.tsv")
    meta = {}
    try:
        with open(meta_path, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    key, _, value = line.rstrip("\n").partition("\t")
                    meta[key] = value
    except OSError as error:
        raise DataError(f"{meta_path}: cannot read ({error.strerror})") from None
    for key in ("num_nodes", "num_classes", "feature_format"):
        if key not in meta:
            raise DataError(f"{meta_path}: missing key '{key}'")
    n = int(meta["num_nodes"])
    num_classes = int(meta["num_classes"])

    path = os.path.join(directory, "edges.tsv")
    edges = _numbers(path, 2, "src, dst")
    a = _ids(edges[:, 0], path, "src", n)
    b = _ids(edges[:, 1], path, "dst", n)
    loop = a == b
    # Every undirected edge once: both directions, a self loop once (as load_planetoid_tsv).
    src = np.concatenate([a, b[~loop]])
    dst = np.concatenate([b, a[~loop]])
    indptr, indices = in_neighbour_csr(n, src, dst)

    path = os.path.join(directory, "labels.tsv")
    rows = _numbers(path, 2, "node, class")
    labels = np.full(n, -1, dtype=np.int64)
    labels[_ids(rows[:, 0], path, "node", n)] = rows[:, 1].astype(np.int64)

    path = os.path.join(directory, "split.tsv")
    try:
        with open(path, encoding="utf-8") as f:
            parts = [line.rstrip("\n").split("\t") for line in f if line.strip()]
    except OSError as error:
        raise DataError(f"{path}: cannot read ({error.strerror})") from None
    split = {"train": [], "val": [], "test": []}
    for number, fields in enumerate(parts, 1):
        if len(fields) != 2 or fields[1] not in split:
            raise DataError(f"{path}:{number}: field 'split': expected node<TAB>train|val|test")
        split[fields[1]].append(int(fields[0]))

    feature_format = meta["feature_format"]
    dim = 0 if feature_format == "MISSING" else int(meta["num_features"])
    sparse = dense = None
    if feature_format.startswith("features_sparse.tsv"):
        path = os.path.join(directory, "features_sparse.tsv")
        cells = _numbers(path, 3, "node, feature, value")
        sparse = (_ids(cells[:, 0], path, "node", n), _ids(cells[:, 1], path, "feature", dim),
                  cells[:, 2].astype(np.float32))
    elif feature_format.startswith("features.bin"):
        path = os.path.join(directory, "features.bin")
        dense = np.memmap(path, dtype="<f4", mode="c", shape=(n, dim))
    elif feature_format != "MISSING":
        raise DataError(f"{meta_path}: feature_format '{feature_format}' is not one of "
                        "features_sparse.tsv, features.bin, MISSING")
    name = os.path.basename(os.path.normpath(os.path.abspath(directory)))
    return Workload(name, n, indptr, indices, labels, num_classes,
                    *(np.array(split[p], dtype=np.int64) for p in ("train", "val", "test")),
                    dim, sparse=sparse, dense=dense)


# docs/binary_format.md: the header's fields up to the section table, and the 7 sections.
_HEADER = struct.Struct("<8sIIQQqqqqqiIIiQfI128s")
_SECTIONS = ("offsets", "sources", "labels", "train", "val", "test", "features")


def read_gnnbed_binary(path):
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            header = f.read(4096)
    except OSError as error:
        raise DataError(f"{path}: cannot read ({error.strerror})") from None
    if len(header) < 4096:
        raise DataError(f"{path}: field 'header': shorter than the 4096-byte header")
    (magic, version, byte_order, header_bytes, file_bytes, n, num_edges, num_train, num_val,
     num_test, num_classes, flags, feature_kind, dim, _seed, _signal, _reserved,
     name) = _HEADER.unpack_from(header, 0)
    if magic != b"GNNBEDW1":
        raise DataError(f"{path}: field 'magic': not a gnnbed binary workload")
    if version != 1 or byte_order != 0x01020304 or header_bytes != 4096:
        raise DataError(f"{path}: field 'format_version': version {version}, byte order "
                        f"{byte_order:#x}; this reader knows version 1, little-endian")
    if file_bytes != size:
        raise DataError(f"{path}: field 'file_bytes': says {file_bytes}, the file has {size}")
    if feature_kind not in (1, 3):
        raise DataError(f"{path}: field 'feature_kind': {feature_kind}; the peer needs stored "
                        "features (write the file with `workload convert --features stored`)")
    # Kind 3: sparse rows, the features section holding CSR offsets (int64, n + 1), columns (int32)
    # and values (float32), the non-zero count in the header's feature_seed field.
    nonzeros = _seed if feature_kind == 3 else 0
    table = struct.unpack_from("<14Q", header, 232)
    counts = {"offsets": (n + 1, "<i8"), "sources": (num_edges, "<i4"),
              "labels": (n if flags & 1 else 0, "<i4"), "train": (num_train, "<i4"),
              "val": (num_val, "<i4"), "test": (num_test, "<i4"),
              "features": ((n + 1) * 8 + nonzeros * 8, "u1") if feature_kind == 3
              else (n * dim, "<f4")}
    arrays = {}
    for s, section in enumerate(_SECTIONS):
        offset, length = table[2 * s], table[2 * s + 1]
        count, dtype = counts[section]
        if length != count * np.dtype(dtype).itemsize or offset + length > size:
            raise DataError(f"{path}: section '{section}': {length} bytes at {offset}, expected "
                            f"{count} x {np.dtype(dtype).itemsize} inside {size} bytes")
        arrays[section] = np.memmap(path, dtype=dtype, mode="c", offset=offset,
                                    shape=(count,)) if count else np.zeros(0, dtype=dtype)
    labels = (arrays["labels"].astype(np.int64) if flags & 1
              else np.full(n, -1, dtype=np.int64))
    features = {"dense": arrays["features"].reshape(n, dim)} if feature_kind == 1 else {
        "sparse": _csr_section(arrays["features"], n, nonzeros)}
    return Workload(name.split(b"\0", 1)[0].decode("utf-8"), n,
                    np.asarray(arrays["offsets"], dtype=np.int64),
                    np.asarray(arrays["sources"], dtype=np.int64), labels, num_classes,
                    *(np.asarray(arrays[p], dtype=np.int64) for p in ("train", "val", "test")),
                    dim, **features)


def _csr_section(raw, n, nonzeros):
    """(rows, cols, values) of a sparse features section (offsets, columns, values)."""
    offsets = np.frombuffer(raw, dtype="<i8", count=n + 1)
    cols = np.frombuffer(raw, dtype="<i4", count=nonzeros, offset=(n + 1) * 8)
    values = np.frombuffer(raw, dtype="<f4", count=nonzeros, offset=(n + 1) * 8 + nonzeros * 4)
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(offsets))
    return rows, cols.astype(np.int64), values.astype(np.float32)


def read_workload(layout, path):
    if layout == "planetoid-tsv":
        return read_planetoid_tsv(path)
    if layout == "binary":
        return read_gnnbed_binary(path)
    raise DataError(f"layout '{layout}' is not one of planetoid-tsv, binary")


# The generated bag-of-words graph. Bump GENERATOR_VERSION whenever the output for given
# parameters changes, so that cached directories of the old version are not reused.
GENERATOR_VERSION = 1
BOW_DEFAULTS = {"num_nodes": 30000, "num_features": 8000, "num_classes": 10,
                "average_degree": 16.0, "homophily": 0.5, "words_per_node": 35.0,
                "topic_words": 50, "topic_fraction": 0.4, "train_per_class": 20,
                "num_val": 500, "num_test": 5000, "seed": 1}


def bow_sbm_directory_name(params):
    p = {**BOW_DEFAULTS, **params}
    return ("bow-sbm-v{v}-n{num_nodes}-f{num_features}-c{num_classes}-d{average_degree:g}"
            "-h{homophily:g}-w{words_per_node:g}-t{topic_words}-q{topic_fraction:g}"
            "-tr{train_per_class}-va{num_val}-te{num_test}-s{seed}").format(v=GENERATOR_VERSION,
                                                                           **p)


def generate_bow_sbm(params):
    """A co-authorship-like graph: uniform labels; undirected edges whose two ends share a class
    with probability `homophily` (else two different classes), duplicates and self loops dropped;
    binary bag-of-words features, each node drawing about `words_per_node` words, a fraction
    `topic_fraction` of them from its class's `topic_words` words and the rest from a Zipf-like
    background over every word; a split of `train_per_class` training nodes per class, then
    `num_val` and `num_test` nodes, at random."""
    p = {**BOW_DEFAULTS, **params}
    rng = np.random.default_rng(p["seed"])
    n, f, c = p["num_nodes"], p["num_features"], p["num_classes"]
    labels = rng.integers(0, c, size=n)
    members = [np.flatnonzero(labels == k) for k in range(c)]

    draws = int(round(n * p["average_degree"] / 2 * 1.02)) + 16  # a margin for duplicates
    u = rng.integers(0, n, size=draws)
    same = rng.random(draws) < p["homophily"]
    other = (labels[u] + rng.integers(1, c, size=draws)) % c
    target_class = np.where(same, labels[u], other)
    v = np.empty(draws, dtype=np.int64)
    for k in range(c):
        pick = target_class == k
        v[pick] = members[k][rng.integers(0, len(members[k]), size=int(pick.sum()))]
    low, high = np.minimum(u, v), np.maximum(u, v)
    keys = np.unique(low[low != high] * n + high[low != high])
    wanted = int(round(n * p["average_degree"] / 2))
    keys = np.sort(rng.choice(keys, size=min(wanted, len(keys)), replace=False))
    src, dst = keys // n, keys % n

    background = 1.0 / np.arange(1, f + 1) ** 0.8
    background = rng.permutation(background / background.sum())
    topics = [rng.choice(f, size=p["topic_words"], replace=False) for _ in range(c)]
    words = np.maximum(1, rng.poisson(p["words_per_node"], size=n))
    node_of_word = np.repeat(np.arange(n), words)
    from_topic = rng.random(len(node_of_word)) < p["topic_fraction"]
    column = rng.choice(f, size=len(node_of_word), p=background)
    topic_table = np.stack(topics)
    topic_pick = rng.integers(0, p["topic_words"], size=len(node_of_word))
    column = np.where(from_topic, topic_table[labels[node_of_word], topic_pick], column)
    cells = np.unique(node_of_word * f + column)

    order = rng.permutation(n)
    train = np.concatenate([order[labels[order] == k][:p["train_per_class"]] for k in range(c)])
    rest = order[~np.isin(order, train)]
    val = rest[:p["num_val"]]
    test = rest[p["num_val"]:p["num_val"] + p["num_test"]]
    return {"num_nodes": n, "num_features": f, "num_classes": c, "labels": labels,
            "src": src, "dst": dst, "cells": cells, "train": train, "val": val, "test": test,
            "params": p}


def write_planetoid_tsv(graph, directory):
    """Writes `graph` (generate_bow_sbm's) in the planetoid-tsv layout, into a temporary beside
    `directory` renamed over it when complete."""
    parent = os.path.dirname(os.path.abspath(directory))
    os.makedirs(parent, exist_ok=True)
    temporary = f"{os.path.abspath(directory)}.tmp{os.getpid()}"
    os.makedirs(temporary, exist_ok=True)
    n, f = graph["num_nodes"], graph["num_features"]
    cells = graph["cells"]

    def write(name, columns, formats):
        np.savetxt(os.path.join(temporary, name), np.column_stack(columns), fmt=formats,
                   delimiter="\t")

    write("edges.tsv", [graph["src"], graph["dst"]], "%d")
    write("features_sparse.tsv", [cells // f, cells % f, np.ones(len(cells), dtype=np.int64)],
          "%d")
    write("labels.tsv", [np.arange(n), graph["labels"]], "%d")
    parts = np.concatenate([np.full(len(graph[s]), i) for i, s in
                            enumerate(("train", "val", "test"))])
    nodes = np.concatenate([graph["train"], graph["val"], graph["test"]])
    order = np.argsort(nodes)
    names = np.array(["train", "val", "test"])
    with open(os.path.join(temporary, "split.tsv"), "w", encoding="utf-8") as out:
        out.writelines(f"{v}\t{names[s]}\n" for v, s in zip(nodes[order], parts[order]))
    meta = [("num_nodes", n), ("num_features", f), ("num_classes", graph["num_classes"]),
            ("num_undirected_edges", len(graph["src"])), ("num_self_loops", 0),
            ("num_feature_nonzeros", len(cells)),
            ("feature_format", "features_sparse.tsv (node<TAB>feature<TAB>value, non-zeros only)"),
            ("num_unlabeled_nodes", 0), ("num_train", len(graph["train"])),
            ("num_val", len(graph["val"])), ("num_test", len(graph["test"])),
            ("edges_format", "edges.tsv: src<TAB>dst, src<=dst, each undirected edge once"),
            ("generator", "experiments/peer/peer_data.py generate_bow_sbm version "
                          f"{GENERATOR_VERSION}"),
            ("generator_parameters", " ".join(f"{k}={v}" for k, v in
                                              sorted(graph["params"].items())))]
    with open(os.path.join(temporary, "meta.tsv"), "w", encoding="utf-8") as out:
        out.writelines(f"{key}\t{value}\n" for key, value in meta)
    os.rename(temporary, directory)
