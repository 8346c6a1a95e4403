#!/usr/bin/python3
"""The PyTorch peer of gnnbed's `train`: the same models, on the same files, with the same
settings, written as a PyTorch user would write them, to measure gnnbed against.

  torch_peer.py --layout planetoid-tsv --path workloads/datasets/cora --model gcn --threads 2
  torch_peer.py --layout binary --path csbm.bin --model sage --hidden 32 --batch-size 1000 \\
                --fanouts 25,10 --epochs 10 --threads 2 --output peer.json

Models (gnnbed's exec/nn, docs/models.md): layers with Glorot-uniform weights and zero biases,
dropout before every layer (the input features too), ReLU between layers, softmax cross-entropy
over the training nodes (a batch's seeds), Adam with L2 weight decay added to the weights'
gradients (not the biases'). GCN: h' = D^-1/2 (A + I) D^-1/2 h W + b. GraphSAGE-mean:
h'_v = h_v W_self + mean_{u in N(v)} h_u W_neigh + b. Each layer multiplies by its weight before
aggregating when that narrows the rows (out < in), as gnnbed and DGL do; sparse input features
(a bag of words) are always multiplied first, with torch.sparse.mm over their CSR matrix. Sparse
products run through torch.sparse.mm with the transposed matrix kept for the backward pass.

Mini-batches (batch size > 0): the training nodes in a new random order every epoch, in batches
of --batch-size (the last one shorter); for every batch, neighbours sampled hop by hop from the
seeds, uniformly without replacement (Floyd's algorithm, vectorised over the nodes of a hop) up to
the hop's fanout, into DGL-style blocks whose first source nodes are the destinations.
Evaluation: the whole graph, full neighbourhoods, no dropout.

Dropout masks come from 16-bit uniforms cut out of 64-bit torch.randint words (--dropout-masks
packed): F.dropout's bernoulli_ draws one mt19937 number per entry, serially, on torch builds
without MKL such as Debian's, which made it half of a products-like epoch (docs/peer.md).
--dropout-masks bernoulli uses F.dropout. The time spent on masks is recorded per epoch.

The epoch time is training only (sampling, gathering features, forward, backward, optimiser step),
as gnnbed's; the result holds every epoch's and the median after --warmup-epochs. Peak memory is
the process's peak resident set (ru_maxrss), loading included.
"""
import argparse
import datetime
import json
import os
import platform
import resource
import socket
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peer_data  # noqa: E402

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    torch = None

# torch 1.13 warns on every CSR tensor it makes that CSR support is in beta.
warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")

# Exit status when torch is missing, so that callers (the benchmark, ctest) can tell "skipped".
EXIT_NO_TORCH = 77


def sparse_csr(crow, col, values, shape):
    """A CSR tensor. torch 1.13's checked constructor insists on sorted columns within each row,
    which a block's relabelled sources are not, and the products do not need."""
    make = getattr(torch, "_sparse_csr_tensor_unsafe", None) or torch.sparse_csr_tensor
    return make(crow, col, values, size=shape)


class CsrMatrix:
    """A sparse matrix as torch CSR, with its transpose built on first use (backward). Matrices
    made by with_values share the transpose's pattern, so that the input features, whose values
    change under dropout every epoch, sort their entries once."""

    def __init__(self, crow, col, values, shape, pattern=None):
        self.crow, self.col, self.values, self.shape = crow, col, values, shape
        self.tensor = sparse_csr(crow, col, values, shape)
        self._pattern = pattern if pattern is not None else {}
        self._transposed = None

    def transposed(self):
        if self._transposed is None:
            p = self._pattern
            if not p:
                order = torch.sort(self.col, stable=True).indices
                rows = torch.repeat_interleave(torch.arange(self.shape[0]),
                                               self.crow[1:] - self.crow[:-1])
                crow = torch.zeros(self.shape[1] + 1, dtype=torch.int64)
                torch.cumsum(torch.bincount(self.col, minlength=self.shape[1]), 0, out=crow[1:])
                p.update(order=order, crow=crow, col=rows[order])
            self._transposed = sparse_csr(p["crow"], p["col"], self.values[p["order"]],
                                          (self.shape[1], self.shape[0]))
        return self._transposed

    def with_values(self, values):
        return CsrMatrix(self.crow, self.col, values, self.shape, self._pattern)


class SparseProduct(torch.autograd.Function if torch else object):
    """y = A x for a constant sparse A; the backward pass multiplies by A's transpose."""

    @staticmethod
    def forward(ctx, x, matrix):
        ctx.matrix = matrix
        return torch.sparse.mm(matrix.tensor, x)

    @staticmethod
    def backward(ctx, grad):
        if not ctx.needs_input_grad[0]:
            return None, None
        return torch.sparse.mm(ctx.matrix.transposed(), grad), None


def spmm(matrix, x):
    return SparseProduct.apply(x, matrix)


def csr_from_entries(num_rows, num_cols, rows, cols, values):
    """CSR from (row, col, value) entries in NumPy: sorted by row then column, duplicates summed."""
    keys = rows.astype(np.int64) * num_cols + cols.astype(np.int64)
    unique, inverse = np.unique(keys, return_inverse=True)
    summed = np.zeros(len(unique), dtype=np.float64)
    np.add.at(summed, inverse, values)
    r = unique // num_cols
    crow = np.zeros(num_rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(r, minlength=num_rows), out=crow[1:])
    return CsrMatrix(torch.from_numpy(crow), torch.from_numpy(unique % num_cols),
                     torch.from_numpy(summed.astype(np.float32)), (num_rows, num_cols))


def gcn_matrix(w):
    """gnnbed's gcn_aggregation over the whole graph: entry (v, u) = 1 / sqrt(d_in(v) d_out(u))
    for every in-edge u -> v and a self loop, degrees counting the self loop."""
    n = w.num_nodes
    counts = np.diff(w.indptr)
    d_in = counts + 1.0
    d_out = np.bincount(w.indices, minlength=n) + 1.0
    dst = np.repeat(np.arange(n), counts)
    rows = np.concatenate([dst, np.arange(n)])
    cols = np.concatenate([w.indices, np.arange(n)])
    values = 1.0 / np.sqrt(d_in[rows] * d_out[cols])
    return csr_from_entries(n, n, rows, cols, values)


def mean_matrix(w):
    """gnnbed's mean_aggregation over the whole graph: entry (v, u) = 1 / d_in(v)."""
    n = w.num_nodes
    counts = np.diff(w.indptr)
    values = np.repeat(1.0 / np.maximum(counts, 1), counts).astype(np.float32)
    return CsrMatrix(torch.from_numpy(w.indptr.copy()), torch.from_numpy(w.indices.copy()),
                     torch.from_numpy(values), (n, n))


class Features:
    """The input features: a sparse CSR matrix (bag of words, multiplied by the first weight with
    torch.sparse.mm; dropout masks its stored values) or a dense tensor."""

    def __init__(self, w, normalize, keep_sparse):
        self.dim = w.dim
        self.sparse = None
        self.dense = None
        if w.sparse is not None:
            rows, cols, values = w.sparse
            values = values.astype(np.float64)
            if normalize:
                sums = np.bincount(rows, weights=values, minlength=w.num_nodes)
                values = values / np.where(sums == 0, 1.0, sums)[rows]
            matrix = csr_from_entries(w.num_nodes, w.dim, rows, cols, values)
            if keep_sparse:
                self.sparse = matrix
            else:
                self.dense = matrix.tensor.to_dense()
        else:
            dense = torch.from_numpy(w.dense)
            if normalize:
                sums = dense.double().sum(1, keepdim=True)
                dense = (dense / torch.where(sums == 0, torch.ones_like(sums), sums)).float()
            self.dense = dense


def packed_dropout_mask(shape, rate, generator):
    """Dropout's mask, kept entries scaled by 1 / (1 - rate), from 16-bit uniforms cut out of
    64-bit random words: a quarter of the generator calls of F.dropout, whose bernoulli_ draws one
    mt19937 number per entry on builds without MKL (Debian's) where MKL's builds draw them
    vectorised. The rate is rounded to a multiple of 1/65536 (0.5 exactly)."""
    count = 1
    for size in shape:
        count *= size
    words = torch.randint(-2**63, 2**63 - 1, ((count + 3) // 4,), dtype=torch.int64,
                          generator=generator)
    uniform = words.view(torch.int16)[:count].view(shape)
    threshold = int(round(rate * 65536)) - 32768
    return (uniform >= threshold).to(torch.float32).mul_(1.0 / (1.0 - rate))


class GnnModel(torch.nn.Module if torch else object):
    """gnnbed's Model: dropout before every layer, ReLU between layers."""

    def __init__(self, kind, dims, dropout, generator, masks="packed"):
        super().__init__()
        self.kind = kind
        self.dropout = dropout
        self.masks = masks
        self.generator = generator
        self.weights = torch.nn.ParameterList()
        self.biases = torch.nn.ParameterList()
        self.dims = dims
        self.dropout_seconds = 0.0  # time spent drawing dropout masks, reported per epoch
        for l in range(len(dims) - 1):
            names = ("W_self", "W_neigh") if kind == "sage" else ("W",)
            for _ in names:
                limit = (6.0 / (dims[l] + dims[l + 1])) ** 0.5
                w = torch.empty(dims[l], dims[l + 1])
                w.uniform_(-limit, limit, generator=generator)
                self.weights.append(torch.nn.Parameter(w))
            self.biases.append(torch.nn.Parameter(torch.zeros(dims[l + 1])))

    def num_layers(self):
        return len(self.dims) - 1

    def layer_weights(self, l):
        per = 2 if self.kind == "sage" else 1
        return [self.weights[per * l + i] for i in range(per)]

    def dropped(self, x):
        if self.masks == "bernoulli":
            return F.dropout(x, self.dropout, True)
        return x * packed_dropout_mask(x.shape, self.dropout, self.generator)

    def apply_dropout(self, x, training):
        if not training or self.dropout == 0:
            return x
        started = time.perf_counter()
        if isinstance(x, CsrMatrix):
            # A sparse matrix: its stored values, as Kipf's sparse_dropout.
            x = x.with_values(self.dropped(x.values))
        else:
            x = self.dropped(x)
        self.dropout_seconds += time.perf_counter() - started
        return x

    def layer(self, l, aggregate, h, num_dst):
        """Layer l on sources h (a dense tensor, or a CsrMatrix of sparse features); `aggregate`
        multiplies by the layer's (num_dst x num_src) aggregation matrix."""
        weights = self.layer_weights(l)
        transform_first = isinstance(h, CsrMatrix) or self.dims[l + 1] < self.dims[l]

        def times(x, weight):
            return spmm(x, weight) if isinstance(x, CsrMatrix) else x @ weight

        neighbour = weights[-1]
        out = (aggregate(times(h, neighbour)) if transform_first
               else aggregate(h) @ neighbour)
        if self.kind == "sage":
            if isinstance(h, CsrMatrix):
                raise ValueError("GraphSAGE with sparse input features: load them dense")
            out = out + h[:num_dst] @ weights[0]
        return out + self.biases[l]

    def forward(self, blocks, features, training):
        """blocks: per layer (aggregation CsrMatrix, num_dst)."""
        h = features
        for l, (matrix, num_dst) in enumerate(blocks):
            h = self.apply_dropout(h, training)
            h = self.layer(l, lambda x, m=matrix: spmm(m, x), h, num_dst)
            if l < self.num_layers() - 1:
                h = F.relu(h)
        return h


class Sampler:
    """Uniform neighbour sampling without replacement, hop by hop from the seeds, into blocks
    whose first sources are the destinations (DGL's and gnnbed's layout)."""

    def __init__(self, w, fanouts, generator):
        self.indptr = torch.from_numpy(w.indptr)
        self.indices = torch.from_numpy(w.indices)
        self.fanouts = fanouts
        self.generator = generator
        self.local = torch.full((w.num_nodes,), -1, dtype=torch.int64)

    def floyd(self, degrees, fanout):
        """For rows of these degrees (all > fanout): `fanout` distinct positions in [0, degree)
        each, drawn by Floyd's algorithm, one vectorised step per pick."""
        chosen = torch.empty((len(degrees), fanout), dtype=torch.int64)
        for i in range(fanout):
            top = degrees - fanout + i
            t = (torch.rand(len(degrees), generator=self.generator, dtype=torch.float64) *
                 (top + 1)).long().minimum(top)
            if i > 0:
                t = torch.where((chosen[:, :i] == t[:, None]).any(1), top, t)
            chosen[:, i] = t
        return chosen

    def block(self, dst, fanout):
        begin = self.indptr[dst]
        degrees = self.indptr[dst + 1] - begin
        take = degrees if fanout < 0 else degrees.clamp(max=fanout)
        crow = torch.zeros(len(dst) + 1, dtype=torch.int64)
        torch.cumsum(take, 0, out=crow[1:])
        row = torch.repeat_interleave(torch.arange(len(dst)), take)
        within = torch.arange(len(row)) - crow[row]
        if fanout >= 0:
            sampled = degrees > fanout
            if bool(sampled.any()):
                rows = sampled.nonzero().squeeze(1)
                rank = torch.full((len(dst),), -1, dtype=torch.int64)
                rank[rows] = torch.arange(len(rows))
                chosen = self.floyd(degrees[rows], fanout)
                mask = sampled[row]
                within[mask] = chosen[rank[row[mask]], within[mask]]
        neighbours = self.indices[begin[row] + within]
        # Relabel: destinations keep their positions, new sources follow.
        local = self.local
        local[dst] = torch.arange(len(dst))
        new = torch.unique(neighbours[local[neighbours] < 0])
        local[new] = torch.arange(len(dst), len(dst) + len(new))
        col = local[neighbours]
        src = torch.cat([dst, new])
        local[src] = -1
        values = (1.0 / take.clamp(min=1).float())[row]
        return src, CsrMatrix(crow, col, values, (len(dst), len(src)))

    def sample(self, seeds):
        """The input nodes and the blocks, first layer first."""
        blocks = []
        dst = seeds
        for fanout in self.fanouts:
            src, matrix = self.block(dst, fanout)
            blocks.append((matrix, len(dst)))
            dst = src
        return dst, blocks[::-1]


def peak_rss_bytes():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def accuracy(logits, labels, nodes):
    if len(nodes) == 0:
        return 0.0
    return float((logits[nodes].argmax(1) == labels[nodes]).float().mean())


def parse_fanouts(text):
    try:
        fanouts = [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a comma-separated list of integers")
    if not fanouts or any(f == 0 or f < -1 for f in fanouts):
        raise argparse.ArgumentTypeError(f"'{text}': fanouts are positive, or -1 for all")
    return fanouts


def arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--layout", choices=("planetoid-tsv", "binary"), required=True)
    parser.add_argument("--path", required=True, help="dataset directory or binary file")
    parser.add_argument("--model", choices=("gcn", "sage"), default="gcn")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--hidden", type=int, default=16)
    parser.add_argument("--dropout", type=float, default=0.5)
    parser.add_argument("--dropout-masks", choices=("packed", "bernoulli"), default="packed",
                        help="packed: 16-bit uniforms cut from 64-bit random words (default); "
                             "bernoulli: F.dropout")
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--weight-decay", type=float, default=5e-4)
    parser.add_argument("--weight-decay-layers", choices=("all", "first"), default="all")
    parser.add_argument("--epochs", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=0, help="0 = full graph")
    parser.add_argument("--fanouts", type=parse_fanouts, default=[25, 10],
                        help="by hop from the seeds, e.g. 25,10 (-1 = all)")
    parser.add_argument("--feature-normalization", choices=("auto", "row", "none"),
                        default="auto", help="auto: row for planetoid-tsv, as gnnbed")
    parser.add_argument("--warmup-epochs", type=int, default=1)
    parser.add_argument("--eval-every", type=int, default=0,
                        help="validation every this many epochs (0 = at the end only)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--output", "-o", help="result file (JSON)")
    parser.add_argument("--quiet", "-q", action="store_true")
    args = parser.parse_args(argv)
    for name in ("epochs", "layers", "hidden", "threads"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    if args.batch_size < 0:
        parser.error("--batch-size must not be negative")
    if args.batch_size > 0 and len(args.fanouts) != args.layers:
        parser.error(f"--fanouts lists {len(args.fanouts)} hops for {args.layers} layers")
    if not 0 <= args.dropout < 1:
        parser.error("--dropout must lie in [0, 1)")
    return args


def train(args):
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    generator = torch.Generator().manual_seed(args.seed)
    rss_at_start = rss_bytes()

    started = time.perf_counter()
    w = peer_data.read_workload(args.layout, args.path)
    if w.dim == 0:
        raise peer_data.DataError(f"{args.path}: the workload has no features")
    normalize = args.feature_normalization == "row" or (
        args.feature_normalization == "auto" and args.layout == "planetoid-tsv")
    # GraphSAGE gathers rows of the features and uses them twice: dense, as a DataLoader would.
    features = Features(w, normalize, keep_sparse=args.model == "gcn")
    labels = torch.from_numpy(w.labels)
    train_nodes = torch.from_numpy(w.train)
    full_matrix = gcn_matrix(w) if args.model == "gcn" else mean_matrix(w)
    load_seconds = time.perf_counter() - started

    dims = [w.dim] + [args.hidden] * (args.layers - 1) + [w.num_classes]
    model = GnnModel(args.model, dims, args.dropout, generator, args.dropout_masks)
    decayed = [p for l in range(model.num_layers()) for p in model.layer_weights(l)
               if args.weight_decay_layers == "all" or l == 0]
    others = [p for p in model.parameters() if all(p is not q for q in decayed)]
    optimizer = torch.optim.Adam([{"params": decayed, "weight_decay": args.weight_decay},
                                  {"params": others, "weight_decay": 0.0}], lr=args.lr)
    full_input = features.sparse if features.sparse is not None else features.dense
    full_blocks = [(full_matrix, w.num_nodes)] * model.num_layers()
    sampler = Sampler(w, args.fanouts, generator) if args.batch_size > 0 else None

    def evaluate():
        model.eval()
        with torch.no_grad():
            logits = model(full_blocks, full_input, False)
        model.train()
        return (accuracy(logits, labels, torch.from_numpy(w.val)),
                accuracy(logits, labels, torch.from_numpy(w.test)))

    records = []
    every = max(1, args.epochs // 10)
    for epoch in range(1, args.epochs + 1):
        record = {"epoch": epoch, "sampling_seconds": 0.0, "gather_seconds": 0.0,
                  "compute_seconds": 0.0}
        watch = time.perf_counter()
        model.dropout_seconds = 0.0
        if sampler is None:
            optimizer.zero_grad()
            logits = model(full_blocks, full_input, True)
            loss = F.cross_entropy(logits[train_nodes], labels[train_nodes])
            loss.backward()
            optimizer.step()
            record["loss"] = float(loss)
            record["train_accuracy"] = accuracy(logits.detach(), labels, train_nodes)
            record["steps"] = 1
            record["compute_seconds"] = time.perf_counter() - watch
        else:
            order = train_nodes[torch.randperm(len(train_nodes), generator=generator)]
            loss_sum = correct = 0.0
            batches = list(torch.split(order, args.batch_size))
            for seeds in batches:
                phase = time.perf_counter()
                inputs, blocks = sampler.sample(seeds)
                gathered = time.perf_counter()
                x = features.dense[inputs]
                y = labels[seeds]
                computing = time.perf_counter()
                optimizer.zero_grad()
                logits = model(blocks, x, True)
                loss = F.cross_entropy(logits, y)
                loss.backward()
                optimizer.step()
                done = time.perf_counter()
                record["sampling_seconds"] += gathered - phase
                record["gather_seconds"] += computing - gathered
                record["compute_seconds"] += done - computing
                loss_sum += float(loss) * len(seeds)
                correct += float((logits.detach().argmax(1) == y).sum())
            record["loss"] = loss_sum / len(order)
            record["train_accuracy"] = correct / len(order)
            record["steps"] = len(batches)
        record["seconds"] = time.perf_counter() - watch
        record["dropout_seconds"] = model.dropout_seconds
        if epoch == args.epochs or (args.eval_every > 0 and epoch % args.eval_every == 0):
            record["val_accuracy"], test = evaluate()
        records.append(record)
        if not args.quiet and (epoch % every == 0 or epoch in (1, args.epochs)):
            line = (f"epoch {epoch:4d}/{args.epochs}  loss {record['loss']:.4f}  train acc "
                    f"{100 * record['train_accuracy']:5.1f} %")
            if "val_accuracy" in record:
                line += f"  val acc {100 * record['val_accuracy']:5.1f} %"
            print(f"{line}  {1e3 * record['seconds']:.1f} ms", flush=True)

    measured = [r["seconds"] for r in records[args.warmup_epochs:]] or \
        [r["seconds"] for r in records]
    return {
        "peer": "pytorch",
        "epoch_seconds": float(np.median(measured)),
        "epoch_seconds_mean": float(np.mean(measured)),
        "measured_epochs": len(measured),
        "val_accuracy": records[-1]["val_accuracy"],
        "test_accuracy": test,
        "peak_memory_bytes": peak_rss_bytes(),
        "rss_before_loading_bytes": rss_at_start,
        "load_seconds": load_seconds,
        "num_parameters": sum(p.numel() for p in model.parameters()),
        "sparse_input_features": features.sparse is not None,
        "dataset": w.summary(),
        "config": {k: v for k, v in vars(args).items() if k not in ("output", "quiet")},
        "provenance": {
            "command": " ".join([sys.executable] + sys.argv),
            "time_utc": datetime.datetime.now(datetime.timezone.utc).strftime(
                "%Y-%m-%dT%H:%M:%SZ"),
            "host": socket.gethostname(),
            "versions": {"torch": torch.__version__, "numpy": np.__version__,
                         "python": platform.python_version()},
            "torch_threads": torch.get_num_threads(),
            "torch_parallel": torch.__config__.parallel_info().splitlines()[-1].strip(),
        },
        "epochs": records,
    }


def main(argv=None):
    args = arguments(sys.argv[1:] if argv is None else argv)
    if torch is None:
        print("torch_peer: PyTorch is not installed for this interpreter "
              f"({sys.executable}); Debian: apt install python3-torch", file=sys.stderr)
        return EXIT_NO_TORCH
    try:
        result = train(args)
    except (peer_data.DataError, ValueError) as error:
        print(f"torch_peer: {error}", file=sys.stderr)
        return 1
    if not args.quiet:
        print(f"{result['dataset']['name']}, {args.model}: test accuracy "
              f"{100 * result['test_accuracy']:.1f} % (validation "
              f"{100 * result['val_accuracy']:.1f} %), epoch {1e3 * result['epoch_seconds']:.2f} "
              f"ms (median), peak memory {result['peak_memory_bytes'] / 2**20:.1f} MiB")
    if args.output:
        temporary = f"{args.output}.tmp{os.getpid()}"
        with open(temporary, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=2)
            f.write("\n")
        os.replace(temporary, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
