// bench_cuda_kernels: GPU kernel throughput next to the device's peak (docs/gpu.md, "What is
// verified" item 4). Four sections:
//   gemm         cuBLAS SGEMM at training shapes and one large square, pedantic and default math:
//                TFLOP/s and the fraction of the FP32 peak;
//   aggregation  y = A x for a CSR matrix with our kernel (gnnbed::cuda::spmm_csr) and cuSPARSE's
//                SpMM, whose results must agree: effective GB/s, fraction of the DRAM peak,
//                GFLOP/s, and which is faster;
//   elementwise  gnnbed::cuda::scale and relu_forward: GB/s and fraction of the DRAM peak;
//   copies       host<->device copies from pageable and pinned memory: GB/s.
// Operands live on the device (allocated and filled once per case, from --seed); every time comes
// from CUDA events on one stream, after warm-up runs.
//
//   bench_cuda_kernels [--quick] [--seed 1] [--repetitions 20] [--sections gemm,aggregation]
//                      [--peak-fp32-tflops T] [--peak-bandwidth-gbps B]
//                      [-o results/bench_cuda_kernels.json]
//
// Prints a table per section and writes one JSON document (provenance, device, peaks, settings,
// measurements), rewritten after every section so that a later failure keeps the earlier results.
// Exits 2 without a CUDA device (saying why), 1 when a section failed or cuSPARSE disagreed.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "exec/backends.hpp"
#include "exec/cuda/cublas_check.hpp"
#include "exec/cuda/cuda_device.hpp"
#include "exec/cuda/cuda_kernels.cuh"
#include "exec/tensor.hpp"
#include "strategies/config/experiment_cli.hpp"
#include "workloads/common/errors.hpp"
#include "workloads/common/files.hpp"
#include "workloads/common/provenance.hpp"
#include "workloads/common/random.hpp"

namespace po = boost::program_options;
using namespace gnnbed;

namespace {

constexpr double kGiga = 1e9;
constexpr double kTera = 1e12;
constexpr double kBytesPerMiB = 1024.0 * 1024.0;
constexpr std::int64_t kFloatBytes = sizeof(float);
// cuSPARSE and our kernel sum the same float32 products in different orders: with 1/degree
// weights and entries in [-1, 1) they agree to about 1e-6 of the largest output.
constexpr double kMatchTolerance = 1e-5;
const char* const kAllSections = "gemm,aggregation,elementwise,copies";

// Which operand a seed draws (hash_mix(seed, purpose)), so that operands are independent.
enum Purpose : std::uint64_t {
  kGemmLeft = 1,
  kGemmRight,
  kAggregationColumns,
  kAggregationFeatures,
  kElementwiseValues,
  kCopyValues,
};

using cuda::check_cublas;

void check_cusparse(cusparseStatus_t status, const char* call) {
  if (status == CUSPARSE_STATUS_SUCCESS) return;
  throw Error(std::string(call) + " failed: " + cusparseGetErrorString(status));
}

// Owns a CUDA handle (a pointer type) and releases it with `destroy`. Release errors are ignored,
// as in cuda::Buffer: destructors must not throw, and nothing is left to corrupt.
template <typename Handle, auto destroy>
struct Destroy {
  void operator()(Handle handle) const { static_cast<void>(destroy(handle)); }
};
template <typename Handle, auto destroy>
using Owned = std::unique_ptr<std::remove_pointer_t<Handle>, Destroy<Handle, destroy>>;

using StreamHandle = Owned<cudaStream_t, cudaStreamDestroy>;
using EventHandle = Owned<cudaEvent_t, cudaEventDestroy>;
using CublasHandle = Owned<cublasHandle_t, cublasDestroy>;
using CusparseHandle = Owned<cusparseHandle_t, cusparseDestroy>;
using SparseDescriptor = Owned<cusparseConstSpMatDescr_t, cusparseDestroySpMat>;
using ConstDenseDescriptor = Owned<cusparseConstDnMatDescr_t, cusparseDestroyDnMat>;
using DenseDescriptor = Owned<cusparseDnMatDescr_t, cusparseDestroyDnMat>;

EventHandle make_event() {
  cudaEvent_t event = nullptr;
  cuda::check(cudaEventCreateWithFlags(&event, cudaEventDefault), "cudaEventCreateWithFlags");
  return EventHandle(event);
}

// ---- the device and its peaks ----

struct Peak {
  double per_second = 0;  // 0 when unknown
  std::string source;     // how it was obtained, or why it is unknown
};

struct DeviceInfo {
  int index = 0;
  std::string description;
  int multiprocessors = 0;
  int major = 0;
  int minor = 0;
  int sm_clock_khz = 0;  // 0 where the driver does not report it
  int memory_clock_khz = 0;
  int memory_bus_bits = 0;
  Peak fp32_flops;
  Peak dram_bytes;
};

// FP32 lanes per SM (FP32 multiply-adds per clock), from the CUDA C++ Programming Guide's table of
// arithmetic instruction throughput; 0 for architectures not listed here, whose peak must then
// come from --peak-fp32-tflops rather than from a guess.
int fp32_lanes_per_sm(int major, int minor) {
  if (major == 9) return 128;                    // H100, H200
  if (major == 8) return minor == 0 ? 64 : 128;  // A100: 64; 8.6, 8.7, 8.9: 128
  if (major == 7) return 64;                     // V100, T4
  return 0;
}

struct Attribute {
  int value = 0;        // 0 when not reported
  std::string problem;  // why not
};

// A clock or bus width, which only a peak needs: CUDA 13 removed clockRate and memoryClockRate
// from cudaDeviceProp, and these attributes are where they remain. A driver that does not report
// one leaves that peak to an option instead of stopping the benchmark.
Attribute optional_attribute(cudaDeviceAttr attribute, const char* name, int device) {
  Attribute result;
  const cudaError_t code = cudaDeviceGetAttribute(&result.value, attribute, device);
  if (code != cudaSuccess) {
    static_cast<void>(cudaGetLastError());  // not sticky: clear it, so no later check blames it
    return {0, std::string(name) + " failed: " + cudaGetErrorString(code)};
  }
  if (result.value <= 0) return {0, std::string(name) + " is " + std::to_string(result.value)};
  return result;
}

int required_attribute(cudaDeviceAttr attribute, const char* name, int device) {
  int value = 0;
  cuda::check(cudaDeviceGetAttribute(&value, attribute, device), name);
  return value;
}

Peak fp32_peak(const DeviceInfo& device, const Attribute& clock, const po::variables_map& vm) {
  if (vm.count("peak-fp32-tflops") != 0) {
    return {vm["peak-fp32-tflops"].as<double>() * kTera, "--peak-fp32-tflops"};
  }
  const std::string option = "; pass --peak-fp32-tflops";
  const int lanes = fp32_lanes_per_sm(device.major, device.minor);
  if (lanes == 0) {
    return {0, "unknown: FP32 lanes per SM of sm_" + std::to_string(device.major) +
                   std::to_string(device.minor) + " are not in this program's table" + option};
  }
  if (clock.value == 0) return {0, "unknown: " + clock.problem + option};
  std::ostringstream source;
  source << device.multiprocessors << " SMs x " << lanes << " FP32 lanes x 2 FLOP x "
         << clock.value / 1000 << " MHz (cudaDevAttrClockRate, the boost clock)";
  const double flops = static_cast<double>(device.multiprocessors) * lanes * 2.0 *
                       static_cast<double>(clock.value) * 1e3;
  return {flops, source.str()};
}

Peak dram_peak(const Attribute& memory_clock, const Attribute& bus_width,
               const po::variables_map& vm) {
  if (vm.count("peak-bandwidth-gbps") != 0) {
    return {vm["peak-bandwidth-gbps"].as<double>() * kGiga, "--peak-bandwidth-gbps"};
  }
  const std::string option = "; pass --peak-bandwidth-gbps";
  if (memory_clock.value == 0) return {0, "unknown: " + memory_clock.problem + option};
  if (bus_width.value == 0) return {0, "unknown: " + bus_width.problem + option};
  std::ostringstream source;
  source << "2 transfers per clock x " << memory_clock.value / 1000
         << " MHz (cudaDevAttrMemoryClockRate) x " << bus_width.value
         << "-bit bus (cudaDevAttrGlobalMemoryBusWidth)";
  const double bytes = 2.0 * static_cast<double>(memory_clock.value) * 1e3 * bus_width.value / 8.0;
  return {bytes, source.str()};
}

DeviceInfo describe_device(int index, const po::variables_map& vm) {
  DeviceInfo device;
  device.index = index;
  device.description = cuda::device_description(index);
  device.multiprocessors =
      required_attribute(cudaDevAttrMultiProcessorCount, "cudaDevAttrMultiProcessorCount", index);
  device.major = required_attribute(cudaDevAttrComputeCapabilityMajor,
                                    "cudaDevAttrComputeCapabilityMajor", index);
  device.minor = required_attribute(cudaDevAttrComputeCapabilityMinor,
                                    "cudaDevAttrComputeCapabilityMinor", index);
  const Attribute clock = optional_attribute(cudaDevAttrClockRate, "cudaDevAttrClockRate", index);
  const Attribute memory_clock =
      optional_attribute(cudaDevAttrMemoryClockRate, "cudaDevAttrMemoryClockRate", index);
  const Attribute bus_width =
      optional_attribute(cudaDevAttrGlobalMemoryBusWidth, "cudaDevAttrGlobalMemoryBusWidth", index);
  device.sm_clock_khz = clock.value;
  device.memory_clock_khz = memory_clock.value;
  device.memory_bus_bits = bus_width.value;
  device.fp32_flops = fp32_peak(device, clock, vm);
  device.dram_bytes = dram_peak(memory_clock, bus_width, vm);
  return device;
}

nlohmann::json peak_json(const Peak& peak) {
  return {{"per_second", peak.per_second > 0 ? nlohmann::json(peak.per_second) : nullptr},
          {"source", peak.source}};
}

nlohmann::json device_json(const DeviceInfo& device) {
  return {{"index", device.index},
          {"description", device.description},
          {"multiprocessors", device.multiprocessors},
          {"compute_capability", std::to_string(device.major) + "." + std::to_string(device.minor)},
          {"sm_clock_khz", device.sm_clock_khz},
          {"memory_clock_khz", device.memory_clock_khz},
          {"memory_bus_bits", device.memory_bus_bits},
          {"fp32_peak_flops", peak_json(device.fp32_flops)},
          {"dram_peak_bytes", peak_json(device.dram_bytes)}};
}

void print_peak(const char* what, const Peak& peak, double unit, const char* unit_name) {
  if (peak.per_second <= 0) {
    std::printf("  %s peak: %s (fractions print n/a)\n", what, peak.source.c_str());
  } else {
    std::printf("  %s peak: %.2f %s from %s\n", what, peak.per_second / unit, unit_name,
                peak.source.c_str());
  }
}

void print_device(const DeviceInfo& device) {
  std::printf("device %d: %s, %d SMs\n", device.index, device.description.c_str(),
              device.multiprocessors);
  print_peak("FP32", device.fp32_flops, kTera, "TFLOP/s");
  print_peak("DRAM", device.dram_bytes, kGiga, "GB/s");
}

// rate / peak, or null (printed "n/a") where the peak is unknown.
nlohmann::json fraction_json(double rate, const Peak& peak) {
  if (peak.per_second <= 0) return nullptr;
  return rate / peak.per_second;
}

std::string percent_text(double rate, const Peak& peak) {
  if (peak.per_second <= 0) return "n/a";
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", 100.0 * rate / peak.per_second);
  return text;
}

// ---- timing ----

struct Repeats {
  int warmup = 3;
  int timed = 20;
};

struct Timing {
  double mean_seconds = 0;
  double min_seconds = 0;
};

// What every measurement uses: the stream, the library handles bound to it, and the settings.
struct Bench {
  cudaStream_t stream = nullptr;
  cublasHandle_t cublas = nullptr;
  cusparseHandle_t cusparse = nullptr;
  Repeats repeats;
  std::uint64_t seed = 1;
  DeviceInfo device;
};

// Runs `enqueue` (which only queues work on the bench's stream) repeats.warmup times, then
// repeats.timed times with an event between consecutive runs, and waits once at the end. No host
// round trip separates the runs: where a run outlasts its launch the host stays ahead and each
// interval is one run's device time; a run shorter than its launch (a few microseconds) is timed
// at the launch rate, which is what a training step pays for it too.
template <typename Enqueue>
Timing time_on_stream(const Bench& bench, Enqueue&& enqueue) {
  for (int i = 0; i < bench.repeats.warmup; ++i) enqueue();
  std::vector<EventHandle> events;
  for (int i = 0; i <= bench.repeats.timed; ++i) events.push_back(make_event());
  cuda::check(cudaEventRecord(events.front().get(), bench.stream), "cudaEventRecord");
  for (int i = 0; i < bench.repeats.timed; ++i) {
    enqueue();
    cuda::check(cudaEventRecord(events[static_cast<std::size_t>(i) + 1].get(), bench.stream),
                "cudaEventRecord");
  }
  cuda::check(cudaEventSynchronize(events.back().get()), "cudaEventSynchronize");
  Timing timing;
  timing.min_seconds = std::numeric_limits<double>::infinity();
  double total_seconds = 0;
  for (std::size_t i = 0; i + 1 < events.size(); ++i) {
    float milliseconds = 0;
    cuda::check(cudaEventElapsedTime(&milliseconds, events[i].get(), events[i + 1].get()),
                "cudaEventElapsedTime");
    const double seconds = 1e-3 * milliseconds;
    total_seconds += seconds;
    timing.min_seconds = std::min(timing.min_seconds, seconds);
  }
  timing.mean_seconds = total_seconds / bench.repeats.timed;
  return timing;
}

// Launches one of our kernels and checks the launch. The runtime's last error is cleared first:
// every runtime call here is checked where it is made, so anything left there is a library's
// internal, already handled failure, which must not be blamed on this launch. (An error of an
// earlier kernel is sticky and is still reported, by this check or the next call.)
template <typename Launch>
void launch_checked(const char* kernel, Launch&& launch) {
  static_cast<void>(cudaGetLastError());
  launch();
  cuda::check(cudaGetLastError(), kernel);
}

nlohmann::json timing_json(const Timing& timing, const Repeats& repeats) {
  return {{"mean_seconds", timing.mean_seconds},
          {"min_seconds", timing.min_seconds},
          {"warmup", repeats.warmup},
          {"repetitions", repeats.timed}};
}

// Copies `count` host values into `buffer` (grown to fit) and waits, so that timed work finds
// them there (cudaMemcpy would use the legacy stream, which our non-blocking stream ignores).
template <typename T>
T* to_device(cuda::Buffer& buffer, const T* host, std::int64_t count, cudaStream_t stream) {
  T* device = buffer.ensure_elements<T>(static_cast<std::size_t>(count));
  cuda::check(cudaMemcpyAsync(device, host, static_cast<std::size_t>(count) * sizeof(T),
                              cudaMemcpyHostToDevice, stream),
              "cudaMemcpyAsync (operands to the device)");
  cuda::check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  return device;
}

template <typename T>
std::vector<T> to_host(const T* device, std::int64_t count, cudaStream_t stream) {
  std::vector<T> host(static_cast<std::size_t>(count));
  cuda::check(cudaMemcpyAsync(host.data(), device, static_cast<std::size_t>(count) * sizeof(T),
                              cudaMemcpyDeviceToHost, stream),
              "cudaMemcpyAsync (results to the host)");
  cuda::check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  return host;
}

// Everything the sections found: measurements for the JSON file, and what went wrong.
struct Report {
  nlohmann::json measurements = nlohmann::json::array();
  nlohmann::json aggregation_comparisons = nlohmann::json::array();
  std::vector<std::string> problems;  // failed sections, failed cuSPARSE calls, mismatches
};

// ---- gemm ----

// Row-major C (rows x cols) = A (rows x inner) B (inner x cols).
struct GemmShape {
  std::int64_t rows;
  std::int64_t inner;
  std::int64_t cols;
};

struct MathMode {
  cublasMath_t mode;
  const char* name;
};

// Pedantic is what the CUDA backend uses (no TF32, no reduced-precision reductions); default math
// is float32 too (TF32 needs CUBLAS_TF32_TENSOR_OP_MATH), shown for what pedantic costs.
constexpr MathMode kMathModes[] = {{CUBLAS_PEDANTIC_MATH, "pedantic"},
                                   {CUBLAS_DEFAULT_MATH, "default"}};

void measure_gemm(const Bench& bench, const GemmShape& shape, Report& report) {
  for (const std::int64_t extent : {shape.rows, shape.inner, shape.cols}) {
    if (extent > std::numeric_limits<int>::max()) {
      throw Error("gemm: dimension " + std::to_string(extent) + " exceeds cuBLAS's int range");
    }
  }
  const Matrix a =
      uniform_matrix(shape.rows, shape.inner, -1.0f, 1.0f, hash_mix(bench.seed, kGemmLeft));
  const Matrix b =
      uniform_matrix(shape.inner, shape.cols, -1.0f, 1.0f, hash_mix(bench.seed, kGemmRight));
  cuda::Buffer a_buffer, b_buffer, c_buffer;
  const float* a_device = to_device(a_buffer, a.data(), a.size(), bench.stream);
  const float* b_device = to_device(b_buffer, b.data(), b.size(), bench.stream);
  float* c_device =
      c_buffer.ensure_elements<float>(static_cast<std::size_t>(shape.rows * shape.cols));
  const auto m = static_cast<int>(shape.rows);
  const auto k = static_cast<int>(shape.inner);
  const auto n = static_cast<int>(shape.cols);
  const float alpha = 1.0f;
  const float beta = 0.0f;
  const double flops = 2.0 * static_cast<double>(shape.rows) * static_cast<double>(shape.inner) *
                       static_cast<double>(shape.cols);
  char shape_text[64];
  std::snprintf(shape_text, sizeof shape_text, "%lld x %lld x %lld",
                static_cast<long long>(shape.rows), static_cast<long long>(shape.inner),
                static_cast<long long>(shape.cols));
  for (const MathMode& math : kMathModes) {
    check_cublas(cublasSetMathMode(bench.cublas, math.mode), "cublasSetMathMode");
    // Row-major C = A B is column-major C^T = B^T A^T: cuBLAS gets the operands swapped.
    const Timing timing = time_on_stream(bench, [&] {
      check_cublas(cublasSgemm(bench.cublas, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, b_device, n,
                               a_device, k, &beta, c_device, n),
                   "cublasSgemm");
    });
    const double rate = flops / timing.mean_seconds;
    std::printf("  %-24s %-9s %10.4f %10.4f %9.2f %8s\n", shape_text, math.name,
                1e3 * timing.mean_seconds, 1e3 * timing.min_seconds, rate / kTera,
                percent_text(rate, bench.device.fp32_flops).c_str());
    nlohmann::json record = {
        {"section", "gemm"},
        {"name", std::string("sgemm ") + math.name + " " + shape_text},
        {"rows", shape.rows},
        {"inner", shape.inner},
        {"cols", shape.cols},
        {"math", math.name},
        {"flops", flops},
        {"tflops_per_second", rate / kTera},
        {"best_tflops_per_second", flops / timing.min_seconds / kTera},
        {"fraction_of_fp32_peak", fraction_json(rate, bench.device.fp32_flops)}};
    record.update(timing_json(timing, bench.repeats));
    report.measurements.push_back(record);
  }
  // Leave the handle as the CUDA backend configures it.
  check_cublas(cublasSetMathMode(bench.cublas, CUBLAS_PEDANTIC_MATH), "cublasSetMathMode");
}

void run_gemm(const Bench& bench, const std::vector<GemmShape>& shapes, Report& report) {
  std::printf("\ncuBLAS SGEMM, row-major C = A B, float32 (rates from the mean time)\n");
  std::printf("  %-24s %-9s %10s %10s %9s %8s\n", "rows x inner x cols", "math", "mean ms",
              "min ms", "TFLOP/s", "of peak");
  for (const GemmShape& shape : shapes) measure_gemm(bench, shape, report);
}

// ---- aggregation ----

struct AggregationShape {
  const char* label;
  std::int64_t rows;     // destination nodes (rows of A and y)
  std::int64_t sources;  // source nodes (columns of A, rows of x)
  std::int64_t degree;   // nonzeros per row
  std::int64_t width;    // feature columns of x and y
};

// A CSR matrix as the CUDA backend passes it (int64 offsets, int32 columns, float weights).
struct HostCsr {
  std::vector<std::int64_t> offsets;
  std::vector<std::int32_t> columns;
  std::vector<float> weights;
};

// `degree` uniformly random columns per row (sorted within the row, as a CSR built from an edge
// list is, and as cuSPARSE documents for CSR), each weighted 1/degree: a mean aggregation.
HostCsr random_csr(const AggregationShape& shape, std::uint64_t seed) {
  HostCsr csr;
  const std::int64_t nonzeros = shape.rows * shape.degree;
  csr.offsets.resize(static_cast<std::size_t>(shape.rows) + 1);
  csr.columns.resize(static_cast<std::size_t>(nonzeros));
  csr.weights.assign(static_cast<std::size_t>(nonzeros), 1.0f / static_cast<float>(shape.degree));
  Rng rng(seed);
  for (std::int64_t r = 0; r < shape.rows; ++r) {
    csr.offsets[r] = r * shape.degree;
    const auto begin = csr.columns.begin() + r * shape.degree;
    const auto end = begin + shape.degree;
    for (auto column = begin; column != end; ++column) {
      *column = static_cast<std::int32_t>(rng.below(static_cast<std::uint64_t>(shape.sources)));
    }
    std::sort(begin, end);
  }
  csr.offsets[shape.rows] = nonzeros;
  return csr;
}

// How far another kernel's y is from ours: the largest absolute difference over the largest
// absolute entry of ours; any non-finite entry fails as well.
struct Agreement {
  double max_abs_difference = 0;
  double max_abs_reference = 0;
  bool all_finite = true;

  double relative() const {
    return max_abs_reference > 0 ? max_abs_difference / max_abs_reference : max_abs_difference;
  }
  bool matches() const { return all_finite && relative() <= kMatchTolerance; }
};

Agreement compare(const std::vector<float>& reference, const std::vector<float>& other) {
  Agreement agreement;
  for (std::size_t i = 0; i < reference.size(); ++i) {
    if (!std::isfinite(other[i])) agreement.all_finite = false;
    const double difference =
        std::fabs(static_cast<double>(other[i]) - static_cast<double>(reference[i]));
    if (std::isfinite(difference)) {
      agreement.max_abs_difference = std::max(agreement.max_abs_difference, difference);
    }
    agreement.max_abs_reference =
        std::max(agreement.max_abs_reference, std::fabs(static_cast<double>(reference[i])));
  }
  return agreement;
}

// The operands of one aggregation shape on the device, and the buffers that hold them.
struct AggregationOperands {
  std::int64_t rows = 0;
  std::int64_t sources = 0;
  std::int64_t nonzeros = 0;
  std::int64_t width = 0;
  const std::int64_t* offsets = nullptr;
  const std::int32_t* columns = nullptr;
  const float* weights = nullptr;
  const float* x = nullptr;
  float* y_ours = nullptr;
  float* y_cusparse = nullptr;  // its own, so that ours stays the reference it is compared with
  cuda::Buffer offsets_buffer, columns_buffer, weights_buffer, x_buffer, y_ours_buffer,
      y_cusparse_buffer;
  // cuSPARSE takes offsets and columns of one index type: a copy of whichever differs.
  cuda::Buffer offsets32_buffer, columns64_buffer;
};

// Bytes one product moves at least once, as a rate's numerator: the CSR arrays as our kernel
// reads them (int64 offsets, int32 columns), one x row per nonzero (an upper bound: rows gathered
// twice may come from cache) and y. The same figure for every kernel, so rates compare the work.
double traffic_bytes(const AggregationOperands& operands) {
  const auto nonzeros = static_cast<double>(operands.nonzeros);
  const auto rows = static_cast<double>(operands.rows);
  const auto width = static_cast<double>(operands.width);
  return nonzeros * (4.0 + 4.0) + (rows + 1.0) * 8.0 + nonzeros * width * 4.0 + rows * width * 4.0;
}

struct KernelResult {
  std::string name;
  bool ok = false;
  Timing timing;
};

nlohmann::json aggregation_record(const Bench& bench, const AggregationShape& shape,
                                  const AggregationOperands& operands, const std::string& kernel) {
  return {
      {"section", "aggregation"},
      {"name", kernel + " " + shape.label},
      {"label", shape.label},
      {"kernel", kernel},
      {"rows", shape.rows},
      {"sources", shape.sources},
      {"degree", shape.degree},
      {"width", shape.width},
      {"nonzeros", operands.nonzeros},
      {"traffic_bytes", traffic_bytes(operands)},
      {"flops", 2.0 * static_cast<double>(operands.nonzeros) * static_cast<double>(shape.width)},
      {"seed", bench.seed}};
}

// Adds the rates of `timing` to `record` and prints its table row.
void add_aggregation_rates(const Bench& bench, const AggregationOperands& operands,
                           const std::string& kernel, const Timing& timing,
                           nlohmann::json& record) {
  const double bytes_per_second = traffic_bytes(operands) / timing.mean_seconds;
  const double flops_per_second = 2.0 * static_cast<double>(operands.nonzeros) *
                                  static_cast<double>(operands.width) / timing.mean_seconds;
  record.update(timing_json(timing, bench.repeats));
  record["gigabytes_per_second"] = bytes_per_second / kGiga;
  record["fraction_of_dram_peak"] = fraction_json(bytes_per_second, bench.device.dram_bytes);
  record["gflops_per_second"] = flops_per_second / kGiga;
  std::printf("    %-34s %10.4f %10.4f %9.1f %8s %9.1f", kernel.c_str(), 1e3 * timing.mean_seconds,
              1e3 * timing.min_seconds, bytes_per_second / kGiga,
              percent_text(bytes_per_second, bench.device.dram_bytes).c_str(),
              flops_per_second / kGiga);
}

KernelResult measure_our_aggregation(const Bench& bench, const AggregationShape& shape,
                                     const AggregationOperands& operands,
                                     std::vector<float>& y_ours, Report& report) {
  const std::string kernel = "gnnbed::cuda::spmm_csr";
  const Timing timing = time_on_stream(bench, [&] {
    launch_checked("spmm_csr", [&] {
      cuda::spmm_csr(operands.rows, operands.width, operands.offsets, operands.columns,
                     operands.weights, operands.x, operands.y_ours, bench.stream);
    });
  });
  y_ours = to_host(static_cast<const float*>(operands.y_ours), operands.rows * operands.width,
                   bench.stream);
  nlohmann::json record = aggregation_record(bench, shape, operands, kernel);
  add_aggregation_rates(bench, operands, kernel, timing, record);
  std::printf("  (reference)\n");
  report.measurements.push_back(record);
  return {kernel, true, timing};
}

struct SpmmAlgorithm {
  cusparseSpMMAlg_t id;
  const char* name;
};

constexpr SpmmAlgorithm kSpmmAlgorithms[] = {{CUSPARSE_SPMM_ALG_DEFAULT, "ALG_DEFAULT"},
                                             {CUSPARSE_SPMM_CSR_ALG2, "CSR_ALG2"}};

// cuSPARSE's view of the operands. Offsets and columns must share one index type: 32-bit where the
// nonzeros fit (the smaller arrays, and no copy of the columns), else 64-bit with a 64-bit copy
// of the columns.
struct CusparseOperands {
  SparseDescriptor a;
  ConstDenseDescriptor x;
  DenseDescriptor y;
  const char* index_type = "";
};

CusparseOperands describe_for_cusparse(const Bench& bench, const HostCsr& csr,
                                       AggregationOperands& operands) {
  CusparseOperands described;
  const void* offsets = nullptr;
  const void* columns = nullptr;
  cusparseIndexType_t index = CUSPARSE_INDEX_32I;
  if (operands.nonzeros <= std::numeric_limits<std::int32_t>::max()) {
    const std::vector<std::int32_t> offsets32(csr.offsets.begin(), csr.offsets.end());
    offsets =
        to_device(operands.offsets32_buffer, offsets32.data(), operands.rows + 1, bench.stream);
    columns = operands.columns;
    described.index_type = "32-bit offsets and columns";
  } else {
    const std::vector<std::int64_t> columns64(csr.columns.begin(), csr.columns.end());
    offsets = operands.offsets;
    columns =
        to_device(operands.columns64_buffer, columns64.data(), operands.nonzeros, bench.stream);
    index = CUSPARSE_INDEX_64I;
    described.index_type = "64-bit offsets and columns";
  }
  cusparseConstSpMatDescr_t a = nullptr;
  check_cusparse(cusparseCreateConstCsr(&a, operands.rows, operands.sources, operands.nonzeros,
                                        offsets, columns, operands.weights, index, index,
                                        CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F),
                 "cusparseCreateConstCsr");
  described.a.reset(a);
  cusparseConstDnMatDescr_t x = nullptr;
  check_cusparse(cusparseCreateConstDnMat(&x, operands.sources, operands.width, operands.width,
                                          operands.x, CUDA_R_32F, CUSPARSE_ORDER_ROW),
                 "cusparseCreateConstDnMat");
  described.x.reset(x);
  cusparseDnMatDescr_t y_descriptor = nullptr;
  check_cusparse(cusparseCreateDnMat(&y_descriptor, operands.rows, operands.width, operands.width,
                                     operands.y_cusparse, CUDA_R_32F, CUSPARSE_ORDER_ROW),
                 "cusparseCreateDnMat");
  described.y.reset(y_descriptor);
  return described;
}

KernelResult measure_cusparse(const Bench& bench, const AggregationShape& shape,
                              const AggregationOperands& operands,
                              const CusparseOperands& described, const SpmmAlgorithm& algorithm,
                              const std::vector<float>& y_ours, Report& report) {
  const std::string kernel = std::string("cusparseSpMM ") + algorithm.name;
  nlohmann::json record = aggregation_record(bench, shape, operands, kernel);
  record["index_type"] = described.index_type;
  try {
    const float alpha = 1.0f;
    const float beta = 0.0f;
    std::size_t buffer_bytes = 0;
    check_cusparse(
        cusparseSpMM_bufferSize(bench.cusparse, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, described.a.get(),
                                described.x.get(), &beta, described.y.get(), CUDA_R_32F,
                                algorithm.id, &buffer_bytes),
        "cusparseSpMM_bufferSize");
    cuda::Buffer workspace;
    void* workspace_device = workspace.ensure(buffer_bytes);
    // Cleared, so that an entry this algorithm does not write stays 0 instead of holding the
    // previous algorithm's right answer. Not NaN: with beta = 0 a library may still read y.
    const auto y_bytes = static_cast<std::size_t>(operands.rows * operands.width) * sizeof(float);
    cuda::check(cudaMemsetAsync(operands.y_cusparse, 0, y_bytes, bench.stream), "cudaMemsetAsync");
    const Timing timing = time_on_stream(bench, [&] {
      check_cusparse(cusparseSpMM(bench.cusparse, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                  CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, described.a.get(),
                                  described.x.get(), &beta, described.y.get(), CUDA_R_32F,
                                  algorithm.id, workspace_device),
                     "cusparseSpMM");
    });
    const Agreement agreement =
        compare(y_ours, to_host(static_cast<const float*>(operands.y_cusparse),
                                operands.rows * operands.width, bench.stream));
    record["buffer_bytes"] = buffer_bytes;
    record["max_abs_difference"] = agreement.max_abs_difference;
    record["relative_difference"] = agreement.relative();
    record["all_finite"] = agreement.all_finite;
    record["matches_ours"] = agreement.matches();
    add_aggregation_rates(bench, operands, kernel, timing, record);
    std::printf("  %s %.1e\n", agreement.matches() ? "ok" : "MISMATCH", agreement.relative());
    report.measurements.push_back(record);
    if (!agreement.matches()) {
      report.problems.push_back(kernel + " on " + shape.label + " differs from spmm_csr by " +
                                std::to_string(agreement.relative()) + " of the largest entry" +
                                (agreement.all_finite ? "" : ", with non-finite entries"));
      return {kernel, false, timing};
    }
    return {kernel, true, timing};
  } catch (const Error& error) {
    // One algorithm cuSPARSE rejects (CUSPARSE_STATUS_NOT_SUPPORTED, say) leaves the others.
    std::printf("    %-34s failed: %s\n", kernel.c_str(), error.what());
    record["error"] = error.what();
    report.measurements.push_back(record);
    report.problems.push_back(kernel + " on " + shape.label + ": " + error.what());
    return {kernel, false, {}};
  }
}

// Prints and records which of the kernels that ran correctly has the lowest mean time.
void compare_kernels(const AggregationShape& shape, const std::vector<KernelResult>& results,
                     Report& report) {
  const KernelResult& ours = results.front();
  const KernelResult* fastest = &ours;
  const KernelResult* best_library = nullptr;
  for (const KernelResult& result : results) {
    if (!result.ok || &result == &ours) continue;
    if (best_library == nullptr || result.timing.mean_seconds < best_library->timing.mean_seconds)
      best_library = &result;
    if (result.timing.mean_seconds < fastest->timing.mean_seconds) fastest = &result;
  }
  nlohmann::json comparison = {{"label", shape.label},
                               {"rows", shape.rows},
                               {"sources", shape.sources},
                               {"degree", shape.degree},
                               {"width", shape.width},
                               {"fastest", fastest->name},
                               {"ours_mean_seconds", ours.timing.mean_seconds}};
  if (best_library == nullptr) {
    std::printf("    faster: no cuSPARSE result to compare with\n");
    comparison["best_cusparse"] = nullptr;
  } else {
    const double ratio = best_library->timing.mean_seconds / ours.timing.mean_seconds;
    comparison["best_cusparse"] = best_library->name;
    comparison["best_cusparse_mean_seconds"] = best_library->timing.mean_seconds;
    comparison["cusparse_time_over_ours"] = ratio;
    if (fastest == &ours) {
      std::printf("    faster: spmm_csr, %.2fx faster than %s\n", ratio,
                  best_library->name.c_str());
    } else {
      std::printf("    faster: %s, %.2fx faster than spmm_csr\n", fastest->name.c_str(),
                  1.0 / ratio);
    }
  }
  report.aggregation_comparisons.push_back(comparison);
}

void measure_aggregation(const Bench& bench, const AggregationShape& shape, Report& report) {
  if (shape.sources > std::numeric_limits<std::int32_t>::max()) {
    throw Error(std::string("aggregation ") + shape.label + ": sources exceed int32 columns");
  }
  const HostCsr csr = random_csr(shape, hash_mix(bench.seed, kAggregationColumns));
  const Matrix x = uniform_matrix(shape.sources, shape.width, -1.0f, 1.0f,
                                  hash_mix(bench.seed, kAggregationFeatures));
  AggregationOperands operands;
  operands.rows = shape.rows;
  operands.sources = shape.sources;
  operands.nonzeros = static_cast<std::int64_t>(csr.columns.size());
  operands.width = shape.width;
  operands.offsets =
      to_device(operands.offsets_buffer, csr.offsets.data(), shape.rows + 1, bench.stream);
  operands.columns =
      to_device(operands.columns_buffer, csr.columns.data(), operands.nonzeros, bench.stream);
  operands.weights =
      to_device(operands.weights_buffer, csr.weights.data(), operands.nonzeros, bench.stream);
  operands.x = to_device(operands.x_buffer, x.data(), x.size(), bench.stream);
  const auto y_count = static_cast<std::size_t>(shape.rows * shape.width);
  operands.y_ours = operands.y_ours_buffer.ensure_elements<float>(y_count);
  operands.y_cusparse = operands.y_cusparse_buffer.ensure_elements<float>(y_count);

  std::printf("  %s: %lld rows, %lld sources, degree %lld, width %lld\n", shape.label,
              static_cast<long long>(shape.rows), static_cast<long long>(shape.sources),
              static_cast<long long>(shape.degree), static_cast<long long>(shape.width));
  std::vector<float> y_ours;
  std::vector<KernelResult> results;
  results.push_back(measure_our_aggregation(bench, shape, operands, y_ours, report));
  const CusparseOperands described = describe_for_cusparse(bench, csr, operands);
  std::printf("    (cuSPARSE with %s)\n", described.index_type);
  for (const SpmmAlgorithm& algorithm : kSpmmAlgorithms) {
    results.push_back(
        measure_cusparse(bench, shape, operands, described, algorithm, y_ours, report));
  }
  compare_kernels(shape, results, report);
}

void run_aggregation(const Bench& bench, const std::vector<AggregationShape>& shapes,
                     Report& report) {
  std::printf(
      "\nneighbour aggregation y = A x, CSR with 1/degree weights, row-major x and y\n"
      "  (GB/s counts CSR arrays + one x row per nonzero + y; rates from the mean time;\n"
      "   cuSPARSE's check: max |y - y_ours| / max |y_ours| <= %.0e)\n",
      kMatchTolerance);
  std::printf("    %-34s %10s %10s %9s %8s %9s  %s\n", "kernel", "mean ms", "min ms", "GB/s",
              "of peak", "GFLOP/s", "check");
  for (const AggregationShape& shape : shapes) measure_aggregation(bench, shape, report);
}

// ---- element-wise ----

void record_bandwidth(const Bench& bench, const std::string& section, const std::string& name,
                      double bytes, const Timing& timing, bool against_dram, Report& report) {
  const double rate = bytes / timing.mean_seconds;
  const std::string fraction =
      against_dram ? percent_text(rate, bench.device.dram_bytes) : std::string("-");
  std::printf("  %-34s %10.4f %10.4f %9.1f %8s\n", name.c_str(), 1e3 * timing.mean_seconds,
              1e3 * timing.min_seconds, rate / kGiga, fraction.c_str());
  nlohmann::json record = {{"section", section},
                           {"name", name},
                           {"bytes", bytes},
                           {"gigabytes_per_second", rate / kGiga},
                           {"best_gigabytes_per_second", bytes / timing.min_seconds / kGiga}};
  if (against_dram) record["fraction_of_dram_peak"] = fraction_json(rate, bench.device.dram_bytes);
  record.update(timing_json(timing, bench.repeats));
  report.measurements.push_back(record);
}

void run_elementwise(const Bench& bench, std::int64_t count, Report& report) {
  std::printf(
      "\nelement-wise kernels over %lld floats, in place (GB/s counts a read and a write)\n",
      static_cast<long long>(count));
  std::printf("  %-34s %10s %10s %9s %8s\n", "kernel", "mean ms", "min ms", "GB/s", "of peak");
  const Matrix values =
      uniform_matrix(1, count, -1.0f, 1.0f, hash_mix(bench.seed, kElementwiseValues));
  cuda::Buffer buffer;
  float* x = to_device(buffer, values.data(), count, bench.stream);
  const double bytes = 2.0 * static_cast<double>(count) * kFloatBytes;
  // A factor of -1 keeps the values exact and in range however many times it runs.
  const Timing scale = time_on_stream(
      bench, [&] { launch_checked("scale", [&] { cuda::scale(x, count, -1.0f, bench.stream); }); });
  record_bandwidth(bench, "elementwise", "gnnbed::cuda::scale", bytes, scale, true, report);
  const Timing relu = time_on_stream(bench, [&] {
    launch_checked("relu_forward", [&] { cuda::relu_forward(x, count, bench.stream); });
  });
  record_bandwidth(bench, "elementwise", "gnnbed::cuda::relu_forward", bytes, relu, true, report);
}

// ---- copies ----

void run_copies(const Bench& bench, std::int64_t bytes, Report& report) {
  std::printf(
      "\nhost<->device copies of %.0f MiB (cudaMemcpyAsync; no peak: PCIe is not derived)\n",
      static_cast<double>(bytes) / kBytesPerMiB);
  std::printf("  %-34s %10s %10s %9s %8s\n", "copy", "mean ms", "min ms", "GB/s", "");
  const std::int64_t count = bytes / kFloatBytes;
  // Written in full here, so its pages are mapped before any copy is timed.
  Matrix pageable = uniform_matrix(1, count, -1.0f, 1.0f, hash_mix(bench.seed, kCopyValues));
  cuda::Buffer pinned_buffer(cuda::Memory::pinned_host);
  float* pinned = pinned_buffer.ensure_elements<float>(static_cast<std::size_t>(count));
  std::copy(pageable.data(), pageable.data() + count, pinned);
  cuda::Buffer device_buffer;
  float* device = to_device(device_buffer, pinned, count, bench.stream);
  const auto size = static_cast<std::size_t>(count) * sizeof(float);

  struct Copy {
    const char* name;
    void* destination;
    const void* source;
    cudaMemcpyKind kind;
  };
  const Copy copies[] = {
      {"pageable host to device", device, pageable.data(), cudaMemcpyHostToDevice},
      {"pinned host to device", device, pinned, cudaMemcpyHostToDevice},
      {"device to pageable host", pageable.data(), device, cudaMemcpyDeviceToHost},
      {"device to pinned host", pinned, device, cudaMemcpyDeviceToHost},
  };
  // A pageable copy is staged through pinned memory by the host, mostly synchronously: its
  // interval spans that staging too, as a pageable copy in training would.
  for (const Copy& copy : copies) {
    const Timing timing = time_on_stream(bench, [&] {
      cuda::check(cudaMemcpyAsync(copy.destination, copy.source, size, copy.kind, bench.stream),
                  "cudaMemcpyAsync");
    });
    record_bandwidth(bench, "copies", copy.name, static_cast<double>(size), timing, false, report);
  }
}

// ---- sizes and settings ----

struct Sizes {
  std::vector<GemmShape> gemm;
  std::vector<AggregationShape> aggregation;
  std::int64_t elementwise_count = 0;
  std::int64_t copy_bytes = 0;
};

// The shapes: products-like mini-batch layers (1000 seeds, fanouts 25,10, 100 features,
// hidden 32 or 256) and one large case per section; --quick shrinks only the large cases.
Sizes sizes_for(bool quick) {
  Sizes sizes;
  const std::int64_t square = quick ? 2048 : 8192;
  sizes.gemm = {{11000, 100, 32},
                {11000, 100, 256},
                {1000, 256, 256},
                {286000, 100, 32},
                {square, square, square}};
  const std::int64_t big_rows = quick ? 100000 : 1000000;
  sizes.aggregation = {{"layer 1 (products-like batch)", 11000, 286000, 25, 100},
                       {"layer 2, width 32", 1000, 11000, 10, 32},
                       {"layer 2, width 256", 1000, 11000, 10, 256},
                       {"large graph", big_rows, big_rows, 25, 128}};
  sizes.elementwise_count = (quick ? 16 : 64) * (std::int64_t{1} << 20);
  sizes.copy_bytes = (quick ? 64 : 256) * (std::int64_t{1} << 20);
  return sizes;
}

std::vector<std::string> parse_sections(const std::string& text) {
  const std::vector<std::string> known = {"gemm", "aggregation", "elementwise", "copies"};
  std::vector<std::string> sections;
  std::stringstream stream(text);
  for (std::string name; std::getline(stream, name, ',');) {
    require(std::find(known.begin(), known.end(), name) != known.end(), "--sections",
            "'" + name + "' is not one of: " + kAllSections);
    sections.push_back(name);
  }
  require(!sections.empty(), "--sections", "names no section");
  return sections;
}

std::string library_version(int major, int minor, int patch) {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

// Library versions for provenance: gpu_stack_version()'s runtime and NCCL, and what this program
// links besides.
nlohmann::json gpu_versions() {
  int major = 0, minor = 0, patch = 0;
  check_cublas(cublasGetProperty(MAJOR_VERSION, &major), "cublasGetProperty");
  check_cublas(cublasGetProperty(MINOR_VERSION, &minor), "cublasGetProperty");
  check_cublas(cublasGetProperty(PATCH_LEVEL, &patch), "cublasGetProperty");
  const std::string cublas_version = library_version(major, minor, patch);
  check_cusparse(cusparseGetProperty(MAJOR_VERSION, &major), "cusparseGetProperty");
  check_cusparse(cusparseGetProperty(MINOR_VERSION, &minor), "cusparseGetProperty");
  check_cusparse(cusparseGetProperty(PATCH_LEVEL, &patch), "cusparseGetProperty");
  const std::string cusparse_version = library_version(major, minor, patch);
  int driver = 0;
  cuda::check(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
  return {{"gpu", gpu_stack_version()},
          {"cuda_driver", std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10)},
          {"cublas", cublas_version},
          {"cusparse", cusparse_version}};
}

void run_section(const std::string& section, const Bench& bench, const Sizes& sizes,
                 Report& report) {
  if (section == "gemm") run_gemm(bench, sizes.gemm, report);
  if (section == "aggregation") run_aggregation(bench, sizes.aggregation, report);
  if (section == "elementwise") run_elementwise(bench, sizes.elementwise_count, report);
  if (section == "copies") run_copies(bench, sizes.copy_bytes, report);
}

int bench_main(int argc, char** argv) {
  po::options_description options("bench_cuda_kernels [options]");
  options.add_options()("help,h", "show this help")(
      "device-index", po::value<int>()->default_value(0), "CUDA device to measure")(
      "seed", po::value<std::uint64_t>()->default_value(1),
      "seed of every operand and of the sparse matrices' columns")(
      "warmup", po::value<int>()->default_value(3), "untimed runs before each measurement")(
      "repetitions", po::value<int>()->default_value(20), "timed runs per measurement")(
      "quick", "smaller large cases, 1 warm-up and 5 repetitions (unless given)")(
      "sections", po::value<std::string>()->default_value(kAllSections),
      "comma-separated sections to run")(
      "peak-fp32-tflops", po::value<double>(),
      "FP32 peak (TFLOP/s) to compare with, instead of the one derived from the device")(
      "peak-bandwidth-gbps", po::value<double>(),
      "DRAM peak (GB/s, 1e9 bytes) to compare with, instead of the one derived from the device")(
      "output,o", po::value<std::string>()->default_value("results/bench_cuda_kernels.json"),
      "JSON result file");
  const auto command_line = parse_command_line(argc, argv, options);
  if (!command_line) return 0;
  const po::variables_map& vm = command_line->values;
  const bool quick = vm.count("quick") != 0;
  Repeats repeats{vm["warmup"].as<int>(), vm["repetitions"].as<int>()};
  if (quick && vm["warmup"].defaulted()) repeats.warmup = 1;
  if (quick && vm["repetitions"].defaulted()) repeats.timed = 5;
  require(repeats.warmup >= 0, "--warmup", "must not be negative");
  require(repeats.timed >= 1, "--repetitions", "must be at least 1");
  for (const char* peak : {"peak-fp32-tflops", "peak-bandwidth-gbps"}) {
    require(vm.count(peak) == 0 || vm[peak].as<double>() > 0, std::string("--") + peak,
            "must be positive");
  }
  const std::vector<std::string> sections = parse_sections(vm["sections"].as<std::string>());
  const std::string output = vm["output"].as<std::string>();

  const CudaDevices devices = cuda_devices();
  if (devices.count == 0) {
    std::fprintf(stderr, "bench_cuda_kernels: no CUDA device: %s\n", devices.problem.c_str());
    return 2;
  }
  const int device_index = vm["device-index"].as<int>();
  require(device_index >= 0 && device_index < devices.count, "--device-index",
          "this process sees " + std::to_string(devices.count) + " CUDA device(s)");
  cuda::check(cudaSetDevice(device_index), "cudaSetDevice");

  Bench bench;
  bench.repeats = repeats;
  bench.seed = vm["seed"].as<std::uint64_t>();
  bench.device = describe_device(device_index, vm);
  print_device(bench.device);
  cudaStream_t stream = nullptr;
  cuda::check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
              "cudaStreamCreateWithFlags");
  const StreamHandle stream_handle(stream);
  cublasHandle_t cublas = nullptr;
  check_cublas(cublasCreate(&cublas), "cublasCreate");
  const CublasHandle cublas_handle(cublas);
  check_cublas(cublasSetStream(cublas, stream), "cublasSetStream");
  check_cublas(cublasSetMathMode(cublas, CUBLAS_PEDANTIC_MATH), "cublasSetMathMode");
  cusparseHandle_t cusparse = nullptr;
  check_cusparse(cusparseCreate(&cusparse), "cusparseCreate");
  const CusparseHandle cusparse_handle(cusparse);
  check_cusparse(cusparseSetStream(cusparse, stream), "cusparseSetStream");
  bench.stream = stream;
  bench.cublas = cublas;
  bench.cusparse = cusparse;

  nlohmann::json document = {{"benchmark", "cuda_kernels"},
                             {"complete", false},
                             {"provenance", provenance_json(argc, argv)},
                             {"device", device_json(bench.device)},
                             {"settings",
                              {{"seed", bench.seed},
                               {"warmup", repeats.warmup},
                               {"repetitions", repeats.timed},
                               {"quick", quick},
                               {"sections", sections}}}};
  document["provenance"]["versions"].update(gpu_versions());
  document["provenance"]["device"] = bench.device.description;
  const Sizes sizes = sizes_for(quick);
  Report report;
  // "complete" turns true once every section has run (failed or not); "problems" says what failed.
  const auto save = [&] {
    document["measurements"] = report.measurements;
    document["aggregation_comparisons"] = report.aggregation_comparisons;
    document["problems"] = report.problems;
    write_text_file_atomically(output, document.dump(2) + "\n");
  };
  for (const std::string& section : sections) {
    // A failed section is recorded and the next one still runs: on a device error that persists
    // they all fail quickly, and otherwise the other sections' results are kept.
    try {
      run_section(section, bench, sizes, report);
    } catch (const std::exception& error) {
      std::fprintf(stderr, "bench_cuda_kernels: section %s failed: %s\n", section.c_str(),
                   error.what());
      report.problems.push_back("section " + section + ": " + error.what());
    }
    save();
    std::fflush(stdout);  // the table so far survives whatever the next section does
  }
  document["complete"] = true;
  save();
  std::printf("\nresults: %s\n", output.c_str());
  if (!report.problems.empty()) {
    std::string summary = std::to_string(report.problems.size()) + " problem(s), also in " + output;
    for (const std::string& problem : report.problems) summary += "\n  " + problem;
    throw Error(summary);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return run_main("bench_cuda_kernels", bench_main, argc, argv); }
