// The plan reader (read_plans): the first byte's low bit chooses the encoding (JSON or
// MessagePack, by the file's extension), the rest is the file. Seeds are every strategy's plans
// for one iteration of two ranks over a small generated dataset.
#include "strategies/batch_schedule.hpp"
#include "strategies/config/experiment_config.hpp"
#include "strategies/plan/plan.hpp"
#include "strategies/strategy.hpp"
#include "tests/fuzz/fuzz_support.hpp"
#include "tests/fuzz/small_dataset.hpp"

namespace {

const char* file_name(std::size_t encoding) {
  return encoding == 0 ? "plans.json" : "plans.msgpack";
}

}  // namespace

namespace gnnbed::fuzz {

std::vector<std::string> fuzz_seed_inputs() {
  const Dataset dataset = small_generated_dataset(true);
  std::vector<std::string> seeds;
  for (const std::string& strategy : strategy_names()) {
    ExperimentConfig config;
    const bool full_graph = make_strategy(strategy)->full_graph();
    config.training.batch_size = full_graph ? 0 : 4;
    config.training.fanouts = {3, 2};
    config.distribution.strategy = strategy;
    const StrategyContext context = make_strategy_context(config, dataset, 2);
    const BatchSchedule schedule(dataset.split.train, context.partition, config.training.batch_size,
                                 7);
    const std::vector<Plan> plans =
        plan_iteration(*make_strategy(strategy), context, dataset.graph, schedule, 3, 0, 0);
    for (std::size_t encoding = 0; encoding < 2; ++encoding) {
      seeds.push_back(make_file_set_input(encoding, encode_plans(plans, file_name(encoding))));
    }
  }
  return seeds;
}

}  // namespace gnnbed::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gnnbed::fuzz;
  const FileSetInput input = split_file_set_input(data, size, 2);
  Scratch& scratch = Scratch::instance();
  scratch.fresh();
  const auto path = scratch.write(file_name(input.file_index), input.content);
  expect_only_gnnbed_errors([&] { gnnbed::read_plans(path); });
  return 0;
}
