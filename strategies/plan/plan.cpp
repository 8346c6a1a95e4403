#include "strategies/plan/plan.hpp"

#include <algorithm>
#include <array>
#include <fstream>
#include <set>
#include <sstream>

#include "strategies/plan/collective_schedule.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/files.hpp"
#include "workloads/common/json_config.hpp"

namespace gnnbed {
namespace {

constexpr std::array<std::string_view, kNumOpKinds> kOpNames = {
    "sample",           "all_to_all",
    "all_reduce",       "gather_features",
    "scatter_rows",     "dropout",
    "layer_forward",    "relu",
    "add_partials",     "loss",
    "relu_backward",    "layer_backward",
    "dropout_backward", "bias_backward",
    "optimizer_step",   "copy_to_device",
    "gather_rows",      "scatter_add_rows",
    "transform",        "aggregate_transformed",
    "concat_columns",   "send",
    "receive",          "train_bucket"};
constexpr std::array<std::string_view, 15> kInputNames = {
    "tensor",        "block", "ids",      "positions",   "source",
    "logits",        "seeds", "gradient", "relu_output", "products",
    "self_products", "edges", "lhs",      "rhs",         "relations"};

// A kind's named inputs in the order the plan stores them, and how many must be there; `fixed`
// false for kinds whose inputs are a list.
struct Signature {
  bool fixed = false;
  std::vector<Input> names;
  std::size_t required = 0;
};

const Signature& signature(OpKind kind) {
  static const std::array<Signature, kNumOpKinds> signatures = [] {
    std::array<Signature, kNumOpKinds> table{};
    auto set = [&](OpKind k, std::vector<Input> names, std::size_t required) {
      table[static_cast<std::size_t>(k)] = {true, std::move(names), required};
    };
    using enum Input;
    set(OpKind::gather_features, {ids}, 1);
    set(OpKind::dropout, {tensor, ids}, 2);
    set(OpKind::dropout_backward, {tensor, ids}, 2);
    set(OpKind::layer_forward, {block, tensor}, 2);
    set(OpKind::layer_backward, {gradient, block, tensor}, 3);
    set(OpKind::relu, {tensor}, 1);
    set(OpKind::copy_to_device, {tensor}, 1);
    set(OpKind::relu_backward, {gradient, relu_output}, 2);
    set(OpKind::loss, {logits, seeds}, 2);
    set(OpKind::bias_backward, {gradient}, 1);
    set(OpKind::gather_rows, {positions, source}, 2);
    set(OpKind::transform, {tensor}, 1);
    set(OpKind::aggregate_transformed, {block, products, self_products}, 2);
    set(OpKind::optimizer_step, {}, 0);
    set(OpKind::all_reduce, {}, 0);
    set(OpKind::train_bucket, {edges, lhs, rhs, relations}, 3);
    return table;
  }();
  return signatures[static_cast<std::size_t>(kind)];
}

std::size_t input_position(const Op& op, Input name) {
  const std::vector<Input>& names = signature(op.kind).names;
  const auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) {
    throw Error(op.label + ": a " + std::string(to_string(op.kind)) + " op has no " +
                std::string(to_string(name)) + " input");
  }
  return static_cast<std::size_t>(it - names.begin());
}

// The tensor kinds a named input may hold.
bool holds(Input name, TensorKind kind) {
  switch (name) {
    case Input::block:
      return kind == TensorKind::block;
    case Input::ids:
    case Input::seeds:
      return kind == TensorKind::index || kind == TensorKind::block;
    case Input::positions:
    case Input::edges:
      return kind == TensorKind::index;
    case Input::tensor:  // a layer's input, its dropout and copy to the device: sparse rows too
    case Input::source:  // gather_rows reads sparse rows whole (sparse_rows_problem)
      return kind == TensorKind::dense || kind == TensorKind::sparse;
    default:
      return kind == TensorKind::dense;
  }
}

// What is wrong with an op's named inputs (empty when nothing): their count, and the kind of
// tensor behind each name. Ids are checked to exist before. An op without any input carries its
// work alone (plans written by hand for the simulator, which needs sizes only); engines that run
// plans for real read its inputs by name and fail naming the missing one.
std::string named_input_problem(const Op& op, const std::vector<TensorSpec>& tensors) {
  const Signature& sig = signature(op.kind);
  if (!sig.fixed || op.inputs.empty()) return {};
  if (op.inputs.size() < sig.required || op.inputs.size() > sig.names.size()) {
    return "has " + std::to_string(op.inputs.size()) + " inputs, a " +
           std::string(to_string(op.kind)) + " op takes " + std::to_string(sig.required) +
           (sig.names.size() > sig.required ? " to " + std::to_string(sig.names.size()) : "");
  }
  for (std::size_t i = 0; i < op.inputs.size(); ++i) {
    const TensorSpec& tensor = tensors[static_cast<std::size_t>(op.inputs[i])];
    if (!holds(sig.names[i], tensor.kind)) {
      return "its " + std::string(to_string(sig.names[i])) + " input '" + tensor.name + "' is " +
             std::string(to_string(tensor.kind)) + ", not what the input takes";
    }
  }
  return {};
}

// What is wrong with the sparse rows an op gathers or places (empty when nothing): sparse rows
// are gathered whole into sparse rows, placed among sparse rows only, and never added (a sum of
// sparse rows has no fixed entries).
std::string sparse_rows_problem(const Op& op, const std::vector<TensorSpec>& tensors) {
  if (op.outputs.empty() || op.outputs[0] < 0) return {};
  const auto kind_of = [&](int t) { return tensors[static_cast<std::size_t>(t)].kind; };
  if (op.kind == OpKind::gather_rows && op.inputs.size() == 2) {
    const TensorSpec& source = tensors[static_cast<std::size_t>(op.inputs[1])];
    if ((source.kind == TensorKind::sparse) != (kind_of(op.outputs[0]) == TensorKind::sparse))
      return "gathers sparse and dense rows into one another";
    const bool whole = op.column_begin == 0 && (op.column_end == 0 || op.column_end == source.cols);
    if (source.kind == TensorKind::sparse && !whole) return "gathers a column slice of sparse rows";
    return {};
  }
  if (op.kind != OpKind::scatter_rows && op.kind != OpKind::scatter_add_rows) return {};
  const bool sparse_out = kind_of(op.outputs[0]) == TensorKind::sparse;
  for (std::size_t k = 1; k < op.inputs.size(); k += 2) {
    if ((kind_of(op.inputs[k]) == TensorKind::sparse) != sparse_out)
      return "places sparse and dense rows in one tensor";
  }
  if (sparse_out && op.kind == OpKind::scatter_add_rows) return "adds sparse rows";
  return {};
}

constexpr std::array<std::string_view, 5> kStreamNames = {"sampler", "copy", "compute", "network",
                                                          "server"};
constexpr std::array<std::string_view, kNumTimeCategories> kCategoryNames = {
    "sampling", "copy", "compute", "communication"};
constexpr std::array<std::string_view, 4> kTensorKindNames = {"dense", "index", "block", "sparse"};

template <typename Enum, std::size_t N>
Enum enum_from_string(const std::array<std::string_view, N>& names, const std::string& text,
                      const std::string& origin, const std::string& field) {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == text) return static_cast<Enum>(i);
  }
  throw InputError(origin, 0, field, "unknown value '" + text + "'");
}

std::int64_t sum(const std::vector<std::int64_t>& values) {
  std::int64_t total = 0;
  for (const std::int64_t v : values) total += v;
  return total;
}

nlohmann::json block_to_json(const Block& block) {
  nlohmann::json object = {{"src_nodes", block.src_nodes},
                           {"num_dst", block.num_dst},
                           {"offsets", block.offsets},
                           {"src_index", block.src_index}};
  if (!block.source_degrees.empty()) object["source_degrees"] = block.source_degrees;
  return object;
}

Block block_from_json(const nlohmann::json& object) {
  Block block;
  json_integers_to(object.at("src_nodes"), "src_nodes", block.src_nodes);
  block.num_dst = json_integer<std::int64_t>(object.at("num_dst"), "num_dst");
  json_integers_to(object.at("offsets"), "offsets", block.offsets);
  json_integers_to(object.at("src_index"), "src_index", block.src_index);
  if (object.contains("source_degrees"))
    json_integers_to(object.at("source_degrees"), "source_degrees", block.source_degrees);
  return block;
}

nlohmann::json hop_to_json(const SamplingHop& hop) {
  return {{"request_bytes_to", hop.request_bytes_to},
          {"request_bytes_from", hop.request_bytes_from},
          {"reply_bytes_to", hop.reply_bytes_to},
          {"reply_bytes_from", hop.reply_bytes_from},
          {"edges_sampled_locally", hop.edges_sampled_locally},
          {"edges_sampled_for_peers", hop.edges_sampled_for_peers}};
}

SamplingHop hop_from_json(const nlohmann::json& object) {
  SamplingHop hop;
  json_integers_to(object.at("request_bytes_to"), "request_bytes_to", hop.request_bytes_to);
  json_integers_to(object.at("request_bytes_from"), "request_bytes_from", hop.request_bytes_from);
  json_integers_to(object.at("reply_bytes_to"), "reply_bytes_to", hop.reply_bytes_to);
  json_integers_to(object.at("reply_bytes_from"), "reply_bytes_from", hop.reply_bytes_from);
  hop.edges_sampled_locally =
      json_integer<std::int64_t>(object.at("edges_sampled_locally"), "edges_sampled_locally");
  hop.edges_sampled_for_peers =
      json_integer<std::int64_t>(object.at("edges_sampled_for_peers"), "edges_sampled_for_peers");
  return hop;
}

TensorSpec tensor_from_json(const nlohmann::json& object, const std::string& origin) {
  TensorSpec t;
  t.name = object.at("name").get<std::string>();
  t.kind = enum_from_string<TensorKind>(kTensorKindNames, object.at("kind").get<std::string>(),
                                        origin, "tensors.kind");
  t.rows = json_integer<std::int64_t>(object.at("rows"), "rows");
  t.cols = json_integer<std::int64_t>(object.at("cols"), "cols");
  if (object.contains("entries"))
    t.entries = json_integer<std::int64_t>(object.at("entries"), "entries");
  if (object.contains("index")) {
    std::vector<std::int32_t> index;
    json_integers_to(object.at("index"), "index", index);
    t.index = std::make_shared<const std::vector<std::int32_t>>(std::move(index));
  }
  if (object.contains("block"))
    t.block = std::make_shared<const Block>(block_from_json(object.at("block")));
  t.transient = object.value("transient", false);
  t.persistent = object.value("persistent", false);
  return t;
}

ParameterSpec parameter_from_json(const nlohmann::json& object) {
  return {object.at("name").get<std::string>(),
          json_integer<int>(object.at("layer"), "layer"),
          object.at("is_weight").get<bool>(),
          json_integer<std::int64_t>(object.at("rows"), "rows"),
          json_integer<std::int64_t>(object.at("cols"), "cols"),
          json_integer<std::int64_t>(object.at("row_begin"), "row_begin"),
          json_integer<std::int64_t>(object.at("row_end"), "row_end")};
}

Op op_from_json(const nlohmann::json& object, const std::string& origin) {
  Op op;
  op.kind =
      enum_from_string<OpKind>(kOpNames, object.at("kind").get<std::string>(), origin, "ops.kind");
  op.stream = enum_from_string<Stream>(kStreamNames, object.at("stream").get<std::string>(), origin,
                                       "ops.stream");
  op.label = object.at("label").get<std::string>();
  json_integers_to(object.at("deps"), "deps", op.deps);
  json_integers_to(object.at("inputs"), "inputs", op.inputs);
  json_integers_to(object.at("outputs"), "outputs", op.outputs);
  op.traffic = traffic_from_string(object.at("traffic").get<std::string>(), "ops.traffic");
  json_integers_to(object.at("bytes_to"), "bytes_to", op.bytes_to);
  json_integers_to(object.at("bytes_from"), "bytes_from", op.bytes_from);
  for (const auto& hop : object.at("sampling_hops")) op.sampling_hops.push_back(hop_from_json(hop));
  op.ranks_per_machine = json_integer_or<int>(object, "ranks_per_machine", 0);
  op.peer = json_integer_or<int>(object, "peer", -1);
  op.changes = object.value("changes", false);
  op.throttle_seconds = object.value("throttle_seconds", 0.0);
  op.flops = object.at("flops").get<double>();
  op.sparse_flops = object.at("sparse_flops").get<double>();
  // Plans recorded before entries were counted have none.
  op.sparse_entries = json_integer_or<std::int64_t>(object, "sparse_entries", 0);
  op.memory_bytes = json_integer<std::int64_t>(object.at("memory_bytes"), "memory_bytes");
  // Plans recorded before gathers were told apart have none.
  op.gathered_rows = json_integer_or<std::int64_t>(object, "gathered_rows", 0);
  op.gathered_table_bytes = json_integer_or<std::int64_t>(object, "gathered_table_bytes", 0);
  op.sampled_edges = json_integer<std::int64_t>(object.at("sampled_edges"), "sampled_edges");
  // Plans recorded before planning was counted have none.
  op.planned_nodes = json_integer_or<std::int64_t>(object, "planned_nodes", 0);
  op.measured_seconds = object.value("measured_seconds", -1.0);
  op.layer = json_integer<int>(object.at("layer"), "layer");
  op.instance = json_integer<int>(object.at("instance"), "instance");
  op.partial = object.at("partial").get<bool>();
  op.sync_step = json_integer_or<int>(object, "sync_step", 0);
  op.input_grad = object.at("input_grad").get<bool>();
  op.column_begin = json_integer<std::int64_t>(object.at("column_begin"), "column_begin");
  op.column_end = json_integer<std::int64_t>(object.at("column_end"), "column_end");
  op.key = json_integer<std::uint64_t>(object.at("key"), "key");
  op.rate = object.at("rate").get<double>();
  op.scale = object.at("scale").get<double>();
  object.at("parameters").get_to(op.parameters);
  op.stage = json_integer_or<int>(object, "stage", 0);
  if (object.contains("iteration_deps")) {
    for (const auto& dep : object.at("iteration_deps"))
      op.iteration_deps.push_back(
          {json_integer<int>(dep.at("back"), "back"), json_integer<int>(dep.at("op"), "op")});
  }
  return op;
}

TensorSpec dense_tensor(std::string name, std::int64_t rows, std::int64_t cols) {
  TensorSpec tensor;
  tensor.name = std::move(name);
  tensor.kind = TensorKind::dense;
  tensor.rows = rows;
  tensor.cols = cols;
  return tensor;
}

// What is wrong with a send or receive (empty when nothing): a peer other than the rank, bytes to
// or from that peer only, as many as its tensors hold (kControlMessageBytes without tensors).
std::string point_to_point_problem(const Plan& plan, const Op& op) {
  if (op.kind != OpKind::send && op.kind != OpKind::receive) {
    return op.peer == -1 && !op.changes && op.throttle_seconds == 0
               ? std::string()
               : "has a peer, changes or a throttle, which only send and receive take";
  }
  if (!(op.throttle_seconds >= 0) || (op.kind == OpKind::receive && op.throttle_seconds != 0))
    return "throttle_seconds " + std::to_string(op.throttle_seconds) + ": sends only, >= 0";
  if (op.peer < 0 || op.peer >= plan.num_ranks) {
    return "peer " + std::to_string(op.peer) + " is not one of the " +
           std::to_string(plan.num_ranks) + " ranks";
  }
  const bool sends = op.kind == OpKind::send;
  const std::vector<int>& tensors = sends ? op.inputs : op.outputs;
  if (!(sends ? op.outputs : op.inputs).empty()) {
    return sends ? "a send writes no tensor" : "a receive reads no tensor";
  }
  std::int64_t payload = tensors.empty() ? kControlMessageBytes : 0;
  for (const int t : tensors) {
    if (t >= 0 && t < static_cast<int>(plan.tensors.size()))
      payload += plan.tensors[static_cast<std::size_t>(t)].bytes();
  }
  const std::vector<std::int64_t>& moved = sends ? op.bytes_to : op.bytes_from;
  const std::vector<std::int64_t>& none = sends ? op.bytes_from : op.bytes_to;
  for (int q = 0; q < plan.num_ranks; ++q) {
    const auto at = static_cast<std::size_t>(q);
    if (none[at] != 0 || (q != op.peer && moved[at] != 0)) {
      return "moves bytes other than " + std::string(sends ? "to" : "from") + " its peer";
    }
  }
  if (moved[static_cast<std::size_t>(op.peer)] != payload) {
    return std::to_string(moved[static_cast<std::size_t>(op.peer)]) + " bytes for a payload of " +
           std::to_string(payload);
  }
  return {};
}

// Persistent tensors are state kept by name across a rank's plans (dense, or sparse rows): one
// tensor per name, never dropped after use, and only in plans that run alone (two plans in flight
// would both hold the state).
void validate_persistent_tensors(const Plan& plan) {
  std::set<std::string_view> names;
  for (const TensorSpec& tensor : plan.tensors) {
    if (!tensor.persistent) continue;
    const std::string where =
        "plan of rank " + std::to_string(plan.rank) + ": persistent tensor '" + tensor.name + "' ";
    if ((tensor.kind != TensorKind::dense && tensor.kind != TensorKind::sparse) || tensor.index ||
        tensor.block)
      throw Error(where + "is not a dense or sparse tensor an op writes");
    if (tensor.transient) throw Error(where + "is also transient");
    if (!names.insert(tensor.name).second) throw Error(where + "is declared twice");
    if (plan.pipeline_depth > 0) throw Error(where + "in a pipelined plan");
  }
}

}  // namespace

bool is_communication(OpKind kind) {
  return kind == OpKind::all_to_all || kind == OpKind::all_reduce || kind == OpKind::send ||
         kind == OpKind::receive;
}

bool touches_parameters(const Op& op) {
  switch (op.kind) {
    case OpKind::layer_forward:
    case OpKind::layer_backward:
    case OpKind::bias_backward:
    case OpKind::all_reduce:
    case OpKind::optimizer_step:
    case OpKind::transform:
      return true;
    case OpKind::aggregate_transformed:  // with the bias it adds
    case OpKind::add_partials:           // with the bias it adds
      return !op.parameters.empty();
    default:
      return false;
  }
}

int Plan::first_model_stage() const {
  for (const Op& op : ops) {
    if (touches_parameters(op)) return op.stage;  // stages do not decrease in plan order
  }
  return pipeline_depth;
}

int Plan::step_stage() const {
  for (const Op& op : ops) {
    if (op.kind == OpKind::optimizer_step) return op.stage;
  }
  return pipeline_depth;
}

std::string_view to_string(OpKind kind) { return kOpNames[static_cast<std::size_t>(kind)]; }
std::string_view to_string(Input name) { return kInputNames[static_cast<std::size_t>(name)]; }

int Op::input(Input name) const {
  const std::size_t at = input_position(*this, name);
  if (at >= inputs.size()) {
    throw Error(label + ": this " + std::string(to_string(kind)) + " op has no " +
                std::string(to_string(name)) + " input");
  }
  return inputs[at];
}

bool Op::has_input(Input name) const {
  const std::vector<Input>& names = signature(kind).names;
  const auto it = std::find(names.begin(), names.end(), name);
  return it != names.end() && static_cast<std::size_t>(it - names.begin()) < inputs.size();
}

void Op::set_input(Input name, int tensor) {
  const std::size_t at = input_position(*this, name);
  if (inputs.size() <= at) inputs.resize(at + 1, -1);
  inputs[at] = tensor;
}
std::string_view to_string(Stream stream) { return kStreamNames[static_cast<std::size_t>(stream)]; }
std::string_view to_string(TimeCategory category) {
  return kCategoryNames[static_cast<std::size_t>(category)];
}
std::string_view to_string(TensorKind kind) {
  return kTensorKindNames[static_cast<std::size_t>(kind)];
}

TimeCategory category_of(OpKind kind) {
  switch (kind) {
    case OpKind::sample:
      return TimeCategory::sampling;
    case OpKind::gather_features:
    case OpKind::scatter_rows:
    case OpKind::copy_to_device:
      return TimeCategory::copy;
    case OpKind::all_to_all:
    case OpKind::all_reduce:
    case OpKind::send:
    case OpKind::receive:
      return TimeCategory::communication;
    default:
      return TimeCategory::compute;
  }
}

std::int64_t TensorSpec::bytes() const {
  switch (kind) {
    case TensorKind::dense:
      return rows * cols * static_cast<std::int64_t>(sizeof(float));
    case TensorKind::index:
      return rows * static_cast<std::int64_t>(sizeof(std::int32_t));
    case TensorKind::block:
      return block ? static_cast<std::int64_t>((block->src_nodes.size() + block->src_index.size() +
                                                block->source_degrees.size()) *
                                                   sizeof(std::int32_t) +
                                               block->offsets.size() * sizeof(std::int64_t))
                   : 0;
    case TensorKind::sparse:
      return rows * kSparseRowBytes + entries * kSparseEntryBytes;
  }
  return 0;
}

std::int64_t Op::total_bytes_to() const {
  std::int64_t total = sum(bytes_to);
  for (const SamplingHop& hop : sampling_hops)
    total += sum(hop.request_bytes_to) + sum(hop.reply_bytes_to);
  return total;
}

std::int64_t Op::total_bytes_from() const {
  std::int64_t total = sum(bytes_from);
  for (const SamplingHop& hop : sampling_hops) {
    total += sum(hop.request_bytes_from) + sum(hop.reply_bytes_from);
  }
  return total;
}

TrafficBytes Plan::bytes_sent() const {
  TrafficBytes bytes;
  for (const Op& op : ops) bytes[op.traffic] += op.total_bytes_to();
  return bytes;
}

TrafficBytes Plan::bytes_received() const {
  TrafficBytes bytes;
  for (const Op& op : ops) bytes[op.traffic] += op.total_bytes_from();
  return bytes;
}

double Plan::total_flops() const {
  double total = 0;
  for (const Op& op : ops) total += op.flops;
  return total;
}

const Op& Plan::op_labelled(std::string_view label) const {
  for (const Op& op : ops) {
    if (op.label == label) return op;
  }
  throw Error("the " + strategy + " plan of rank " + std::to_string(rank) + " has no op '" +
              std::string(label) + "'");
}

namespace {

// Why `op` (the plan's op `index`) cannot have its ranks_per_machine, or "" when it can: a
// hierarchical all_reduce, or a prologue all_to_all within machines whose bytes stay in them (its
// byte counts, one per rank, already checked).
std::string machines_problem(const Plan& plan, const Op& op, int index) {
  const int g = op.ranks_per_machine;
  if (g == 0) return "";
  if (op.kind == OpKind::all_reduce && hierarchical_all_reduce(plan.num_ranks, g)) return "";
  const bool machine_exchange = op.kind == OpKind::all_to_all && index < plan.prologue_ops &&
                                g > 0 && plan.num_ranks % g == 0;
  if (!machine_exchange) {
    return "ranks_per_machine " + std::to_string(g) +
           ": only a hierarchical all_reduce (above 1 and below the " +
           std::to_string(plan.num_ranks) +
           " ranks, dividing them) or a prologue all_to_all within machines has one";
  }
  for (int q = 0; q < plan.num_ranks; ++q) {
    const auto slot = static_cast<std::size_t>(q);
    if (q / g != plan.rank / g && (op.bytes_to[slot] != 0 || op.bytes_from[slot] != 0)) {
      return "exchanges within machines of " + std::to_string(g) +
             " ranks but moves bytes with rank " + std::to_string(q) + ", on another machine";
    }
  }
  return "";
}

}  // namespace

std::size_t Plan::planning_op() const {
  for (std::size_t i = static_cast<std::size_t>(std::max(prologue_ops, 1)); i-- > 0;) {
    if (i < ops.size() && ops[i].kind == OpKind::sample) return i;
  }
  return 0;
}

void Plan::validate() const {
  const auto num_tensors = static_cast<int>(tensors.size());
  std::vector<int> written_by(tensors.size(), -1);
  for (std::size_t t = 0; t < tensors.size(); ++t) {
    const TensorSpec& tensor = tensors[t];
    const bool carried = tensor.index != nullptr || tensor.block != nullptr || tensor.persistent;
    if (carried) written_by[t] = -2;
    if (tensor.kind == TensorKind::sparse &&
        (tensor.entries < 0 || tensor.entries > tensor.rows * tensor.cols)) {
      throw Error("plan of rank " + std::to_string(rank) + ": sparse tensor '" + tensor.name +
                  "' has " + std::to_string(tensor.entries) + " entries in " +
                  std::to_string(tensor.rows) + " x " + std::to_string(tensor.cols));
    }
  }
  validate_persistent_tensors(*this);
  auto fail = [&](std::size_t op, const std::string& problem) {
    throw Error("plan of rank " + std::to_string(rank) + ", op " + std::to_string(op) + " (" +
                (op < ops.size() ? ops[op].label : std::string("?")) + "): " + problem);
  };
  if (prologue_ops < 0 || prologue_ops > static_cast<int>(ops.size())) {
    throw Error("plan of rank " + std::to_string(rank) + ": prologue_ops out of range");
  }
  if (pipeline_depth < 0) {
    throw Error("plan of rank " + std::to_string(rank) + ": pipeline_depth " +
                std::to_string(pipeline_depth) + " is negative");
  }
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    for (const int dep : op.deps) {
      if (dep < 0 || dep >= static_cast<int>(i))
        fail(i, "depends on op " + std::to_string(dep) + ", not an earlier op");
    }
    if (op.stage < 0 || op.stage > pipeline_depth) {
      fail(i, "stage " + std::to_string(op.stage) + " outside [0, " +
                  std::to_string(pipeline_depth) + "]");
    }
    for (const IterationDep& dep : op.iteration_deps) {
      // A mini-batch more than depth + 1 iterations back has left the pipeline before this one
      // starts; one in a previous epoch has drained.
      if (dep.back < 1 || dep.back > pipeline_depth + 1 || dep.back > iteration || dep.op < 0) {
        fail(i, "depends on op " + std::to_string(dep.op) + " of the plan " +
                    std::to_string(dep.back) + " iterations back, outside the pipeline");
      }
    }
    if (i > 0 && op.stage < ops[i - 1].stage) fail(i, "stages must not decrease in plan order");
    const bool layer_op = op.kind == OpKind::layer_forward || op.kind == OpKind::layer_backward;
    if (op.sync_step < 0 || op.sync_step > 2 || (op.sync_step > 0 && !(layer_op && op.partial))) {
      fail(i, "sync_step " + std::to_string(op.sync_step) +
                  ": only partial layer ops have one, 1 or 2");
    }
    const bool per_peer = op.kind == OpKind::all_to_all;
    if (is_communication(op.kind) && (static_cast<int>(op.bytes_to.size()) != num_ranks ||
                                      static_cast<int>(op.bytes_from.size()) != num_ranks)) {
      fail(i, "needs one byte count per rank");
    }
    if (const std::string problem = machines_problem(*this, op, static_cast<int>(i));
        !problem.empty()) {
      fail(i, problem);
    }
    if (per_peer && (static_cast<int>(op.inputs.size()) != num_ranks ||
                     static_cast<int>(op.outputs.size()) != num_ranks)) {
      fail(i, "all_to_all needs one input and one output slot per rank");
    }
    for (const int t : op.inputs) {
      if (t == -1 && per_peer) continue;
      if (t < 0 || t >= num_tensors)
        fail(i, "reads tensor " + std::to_string(t) + ", which does not exist");
      if (written_by[static_cast<std::size_t>(t)] == -1 && static_cast<int>(i) >= prologue_ops) {
        fail(i, "reads tensor '" + tensors[static_cast<std::size_t>(t)].name +
                    "' before any op writes it");
      }
    }
    if (const std::string problem = named_input_problem(op, tensors); !problem.empty()) {
      fail(i, problem);
    }
    for (const int t : op.outputs) {
      if (t == -1 && per_peer) continue;
      if (t < 0 || t >= num_tensors)
        fail(i, "writes tensor " + std::to_string(t) + ", which does not exist");
      written_by[static_cast<std::size_t>(t)] = static_cast<int>(i);
    }
    if (const std::string problem = sparse_rows_problem(op, tensors); !problem.empty()) {
      fail(i, problem);
    }
    if (const std::string problem = point_to_point_problem(*this, op); !problem.empty()) {
      fail(i, problem);
    }
  }
  for (const ParameterSpec& p : parameters) {
    if (p.row_begin < 0 || p.row_end > p.rows || p.row_begin > p.row_end) {
      throw Error("plan of rank " + std::to_string(rank) + ": parameter " + p.name + " has rows [" +
                  std::to_string(p.row_begin) + ", " + std::to_string(p.row_end) +
                  ") outside its " + std::to_string(p.rows) + " rows");
    }
  }
}

nlohmann::json Plan::to_json() const {
  nlohmann::json tensor_list = nlohmann::json::array();
  for (const TensorSpec& t : tensors) {
    nlohmann::json object = {
        {"name", t.name}, {"kind", to_string(t.kind)}, {"rows", t.rows}, {"cols", t.cols}};
    if (t.kind == TensorKind::sparse) object["entries"] = t.entries;
    if (t.index) object["index"] = *t.index;
    if (t.block) object["block"] = block_to_json(*t.block);
    if (t.transient) object["transient"] = true;
    if (t.persistent) object["persistent"] = true;
    tensor_list.push_back(std::move(object));
  }
  nlohmann::json parameter_list = nlohmann::json::array();
  for (const ParameterSpec& p : parameters) {
    parameter_list.push_back({{"name", p.name},
                              {"layer", p.layer},
                              {"is_weight", p.is_weight},
                              {"rows", p.rows},
                              {"cols", p.cols},
                              {"row_begin", p.row_begin},
                              {"row_end", p.row_end}});
  }
  nlohmann::json op_list = nlohmann::json::array();
  for (const Op& op : ops) {
    nlohmann::json object = {{"kind", to_string(op.kind)},
                             {"stream", to_string(op.stream)},
                             {"label", op.label},
                             {"deps", op.deps},
                             {"inputs", op.inputs},
                             {"outputs", op.outputs},
                             {"traffic", to_string(op.traffic)},
                             {"bytes_to", op.bytes_to},
                             {"bytes_from", op.bytes_from},
                             {"ranks_per_machine", op.ranks_per_machine},
                             {"flops", op.flops},
                             {"sparse_flops", op.sparse_flops},
                             {"sparse_entries", op.sparse_entries},
                             {"memory_bytes", op.memory_bytes},
                             {"gathered_rows", op.gathered_rows},
                             {"gathered_table_bytes", op.gathered_table_bytes},
                             {"sampled_edges", op.sampled_edges},
                             {"planned_nodes", op.planned_nodes},
                             {"measured_seconds", op.measured_seconds},
                             {"layer", op.layer},
                             {"instance", op.instance},
                             {"partial", op.partial},
                             {"sync_step", op.sync_step},
                             {"input_grad", op.input_grad},
                             {"column_begin", op.column_begin},
                             {"column_end", op.column_end},
                             {"key", op.key},
                             {"rate", op.rate},
                             {"scale", op.scale},
                             {"parameters", op.parameters}};
    if (pipeline_depth > 0) {
      nlohmann::json iteration_deps = nlohmann::json::array();
      for (const IterationDep& dep : op.iteration_deps)
        iteration_deps.push_back({{"back", dep.back}, {"op", dep.op}});
      object["stage"] = op.stage;
      object["iteration_deps"] = std::move(iteration_deps);
    }
    if (op.peer >= 0) object["peer"] = op.peer;
    if (op.changes) object["changes"] = true;
    if (op.throttle_seconds != 0) object["throttle_seconds"] = op.throttle_seconds;
    nlohmann::json hops = nlohmann::json::array();
    for (const SamplingHop& hop : op.sampling_hops) hops.push_back(hop_to_json(hop));
    object["sampling_hops"] = std::move(hops);
    op_list.push_back(std::move(object));
  }
  nlohmann::json document = {{"strategy", strategy},   {"rank", rank},
                             {"num_ranks", num_ranks}, {"epoch", epoch},
                             {"iteration", iteration}, {"prologue_ops", prologue_ops},
                             {"tensors", tensor_list}, {"parameters", parameter_list},
                             {"ops", op_list}};
  if (pipeline_depth > 0) {
    document["pipeline_depth"] = pipeline_depth;
    document["step"] = step;
  }
  return document;
}

Plan Plan::from_json(const nlohmann::json& document, const std::string& origin) {
  Plan plan;
  try {
    plan.strategy = document.at("strategy").get<std::string>();
    plan.rank = json_integer<int>(document.at("rank"), "rank");
    plan.num_ranks = json_integer<int>(document.at("num_ranks"), "num_ranks");
    plan.epoch = json_integer<int>(document.at("epoch"), "epoch");
    plan.iteration = json_integer<int>(document.at("iteration"), "iteration");
    plan.prologue_ops = json_integer<int>(document.at("prologue_ops"), "prologue_ops");
    plan.pipeline_depth = json_integer_or<int>(document, "pipeline_depth", 0);
    plan.step = json_integer_or<std::int64_t>(document, "step", 0);
    for (const auto& object : document.at("tensors"))
      plan.tensors.push_back(tensor_from_json(object, origin));
    for (const auto& object : document.at("parameters"))
      plan.parameters.push_back(parameter_from_json(object));
    for (const auto& object : document.at("ops")) plan.ops.push_back(op_from_json(object, origin));
  } catch (const nlohmann::json::exception& error) {
    throw InputError(origin, 0, "plan", std::string("not a valid plan: ") + error.what());
  } catch (const ConfigError& error) {
    throw InputError(origin, 0, error.field(), error.what());
  }
  plan.validate();
  return plan;
}

ScheduleKey schedule_key(const Plan& plan, int op, std::int64_t iteration) {
  if (plan.pipeline_depth > 0 && op < plan.prologue_ops) {
    return {std::max<std::int64_t>(iteration - 1, 0), 0, 0, iteration, op};
  }
  const int stage = plan.ops[static_cast<std::size_t>(op)].stage;
  return {iteration + stage, 1, stage, iteration, op};
}

std::string encode_plans(const std::vector<Plan>& plans, const std::filesystem::path& path) {
  nlohmann::json document = nlohmann::json::array();
  for (const Plan& plan : plans) document.push_back(plan.to_json());
  if (path.extension() == ".msgpack") {
    const std::vector<std::uint8_t> bytes = nlohmann::json::to_msgpack(document);
    return std::string(bytes.begin(), bytes.end());
  }
  return document.dump() + "\n";
}

void write_plans(const std::vector<Plan>& plans, const std::filesystem::path& path) {
  write_text_file_atomically(path, encode_plans(plans, path));
}

std::vector<Plan> read_plans(const std::filesystem::path& path) {
  nlohmann::json document;
  if (path.extension() == ".msgpack") {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path.string(), 0, "", "cannot open");
    const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                          std::istreambuf_iterator<char>());
    try {
      document = nlohmann::json::from_msgpack(bytes);
    } catch (const nlohmann::json::exception& error) {
      throw InputError(path.string(), 0, "", std::string("not valid MessagePack: ") + error.what());
    }
  } else {
    document = parse_json_file(path);
  }
  if (!document.is_array()) throw InputError(path.string(), 0, "", "expected a list of plans");
  std::vector<Plan> plans;
  for (const auto& object : document) plans.push_back(Plan::from_json(object, path.string()));
  return plans;
}

PlanBuilder::PlanBuilder(std::string strategy, int rank, int num_ranks, int epoch, int iteration) {
  plan_.strategy = std::move(strategy);
  plan_.rank = rank;
  plan_.num_ranks = num_ranks;
  plan_.epoch = epoch;
  plan_.iteration = iteration;
}

int PlanBuilder::add_tensor(TensorSpec tensor) {
  plan_.tensors.push_back(std::move(tensor));
  last_writer_.push_back(-1);
  readers_since_.emplace_back();
  return static_cast<int>(plan_.tensors.size()) - 1;
}

int PlanBuilder::add_index(std::string name, std::vector<std::int32_t> values) {
  return add_index(std::move(name),
                   std::make_shared<const std::vector<std::int32_t>>(std::move(values)));
}

int PlanBuilder::add_index(std::string name,
                           std::shared_ptr<const std::vector<std::int32_t>> values) {
  if (!values) throw Error("plan: index tensor '" + name + "' has no values");
  TensorSpec tensor;
  tensor.name = std::move(name);
  tensor.kind = TensorKind::index;
  tensor.rows = static_cast<std::int64_t>(values->size());
  tensor.cols = 1;
  tensor.index = std::move(values);
  return add_tensor(std::move(tensor));
}

int PlanBuilder::add_block(std::string name, Block block) {
  return add_block(std::move(name), std::make_shared<const Block>(std::move(block)));
}

int PlanBuilder::add_block(std::string name, std::shared_ptr<const Block> block) {
  if (!block) throw Error("plan: block tensor '" + name + "' has no block");
  TensorSpec tensor;
  tensor.name = std::move(name);
  tensor.kind = TensorKind::block;
  tensor.rows = block->num_dst;
  tensor.cols = block->num_src();
  tensor.block = std::move(block);
  return add_tensor(std::move(tensor));
}

int PlanBuilder::add_dense(std::string name, std::int64_t rows, std::int64_t cols) {
  return add_tensor(dense_tensor(std::move(name), rows, cols));
}

int PlanBuilder::add_sparse(std::string name, std::int64_t rows, std::int64_t cols,
                            std::int64_t entries) {
  TensorSpec tensor = dense_tensor(std::move(name), rows, cols);
  tensor.kind = TensorKind::sparse;
  tensor.entries = entries;
  return add_tensor(std::move(tensor));
}

int PlanBuilder::add_transient(std::string name, std::int64_t rows, std::int64_t cols) {
  TensorSpec tensor = dense_tensor(std::move(name), rows, cols);
  tensor.transient = true;
  return add_tensor(std::move(tensor));
}

int PlanBuilder::add_persistent(std::string name, std::int64_t rows, std::int64_t cols) {
  return persistent(add_dense(std::move(name), rows, cols));
}

int PlanBuilder::persistent(int tensor) {
  plan_.tensors.at(static_cast<std::size_t>(tensor)).persistent = true;
  return tensor;
}

void PlanBuilder::add_parameter(ParameterSpec parameter) {
  plan_.parameters.push_back(std::move(parameter));
}

int PlanBuilder::add_op(Op op) {
  const int id = static_cast<int>(plan_.ops.size());
  auto valid = [&](int t) { return t >= 0 && t < static_cast<int>(last_writer_.size()); };
  for (const int t : op.inputs) {
    if (valid(t) && last_writer_[static_cast<std::size_t>(t)] >= 0) {
      op.deps.push_back(last_writer_[static_cast<std::size_t>(t)]);
    }
  }
  for (const int t : op.outputs) {
    if (!valid(t)) continue;
    const auto index = static_cast<std::size_t>(t);
    if (last_writer_[index] >= 0) op.deps.push_back(last_writer_[index]);
    for (const int reader : readers_since_[index]) {
      if (reader != id) op.deps.push_back(reader);
    }
  }
  op.stage = stage_;
  std::sort(op.deps.begin(), op.deps.end());
  op.deps.erase(std::unique(op.deps.begin(), op.deps.end()), op.deps.end());
  for (const int t : op.inputs) {
    if (valid(t)) readers_since_[static_cast<std::size_t>(t)].push_back(id);
  }
  for (const int t : op.outputs) {
    if (!valid(t)) continue;
    last_writer_[static_cast<std::size_t>(t)] = id;
    readers_since_[static_cast<std::size_t>(t)].clear();
  }
  plan_.ops.push_back(std::move(op));
  return id;
}

void PlanBuilder::end_prologue() { plan_.prologue_ops = static_cast<int>(plan_.ops.size()); }

void PlanBuilder::set_pipeline(int depth, std::int64_t step) {
  plan_.pipeline_depth = depth;
  plan_.step = step;
}

Plan PlanBuilder::finish() {
  if (planned_nodes_ > 0) {
    if (plan_.prologue_ops == 0) {
      throw Error("PlanBuilder: planning counted in a plan without a prologue");
    }
    plan_.ops[plan_.planning_op()].planned_nodes += planned_nodes_;
  }
  plan_.validate();
  return std::move(plan_);
}

}  // namespace gnnbed
