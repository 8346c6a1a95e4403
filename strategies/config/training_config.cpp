#include "strategies/config/training_config.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "workloads/common/json_config.hpp"
#include "workloads/common/random.hpp"

namespace gnnbed {

TrainingConfig training_config_from_json(const nlohmann::json& object,
                                         const TrainingConfig& defaults, const std::string& where) {
  TrainingConfig config = defaults;
  JsonFieldReader reader(object, where);
  reader.read("epochs", config.epochs);
  reader.read("optimizer", config.optimizer);
  reader.read("learning_rate", config.learning_rate);
  reader.read("momentum", config.momentum);
  reader.read("weight_decay", config.weight_decay);
  reader.read("weight_decay_layers", config.weight_decay_layers);
  reader.read("batch_size", config.batch_size);
  reader.read("fanouts", config.fanouts);
  reader.read("warmup_epochs", config.warmup_epochs);
  reader.read("eval_every", config.eval_every);
  reader.read("seed", config.seed);
  reader.read("stop_on_divergence", config.stop_on_divergence);
  reader.finish();
  return config;
}

nlohmann::json to_json(const TrainingConfig& config) {
  return {{"epochs", config.epochs},
          {"optimizer", config.optimizer},
          {"learning_rate", config.learning_rate},
          {"momentum", config.momentum},
          {"weight_decay", config.weight_decay},
          {"weight_decay_layers", config.weight_decay_layers},
          {"batch_size", config.batch_size},
          {"fanouts", config.fanouts},
          {"warmup_epochs", config.warmup_epochs},
          {"eval_every", config.eval_every},
          {"seed", config.seed},
          {"stop_on_divergence", config.stop_on_divergence}};
}

std::uint64_t sampler_seed(const TrainingConfig& config) { return hash_mix(config.seed, 0x5a11); }
std::uint64_t model_seed(const TrainingConfig& config) { return hash_mix(config.seed, 0x77e1); }

double measured_epoch_seconds(std::span<const double> epoch_seconds, int warmup_epochs) {
  const auto skip = static_cast<std::size_t>(std::max(0, warmup_epochs));
  const std::span<const double> measured =
      epoch_seconds.size() > skip ? epoch_seconds.subspan(skip) : epoch_seconds;
  double sum = 0;
  for (const double seconds : measured) sum += seconds;
  return measured.empty() ? 0.0 : sum / static_cast<double>(measured.size());
}

int first_measured_epoch(int epochs, int warmup_epochs) {
  return warmup_epochs < epochs ? std::max(0, warmup_epochs) + 1 : 1;
}

void check_divergence(const TrainingConfig& config, int epoch, double loss) {
  if (std::isfinite(loss) || !config.stop_on_divergence) return;
  std::ostringstream text;
  text << "training diverged: the training loss of epoch " << epoch << " is " << loss
       << " (try a smaller training.learning_rate; training.stop_on_divergence=false lets the "
          "run go on)";
  throw DivergenceError(text.str());
}

void validate(const TrainingConfig& config, int num_layers) {
  require(config.warmup_epochs >= 0, "training.warmup_epochs", "must not be negative");
  require(config.epochs >= 1, "training.epochs", "must be at least 1");
  require_one_of("training.optimizer", config.optimizer, {"adam", "sgd"});
  require(config.learning_rate > 0, "training.learning_rate", "must be positive");
  require(config.momentum >= 0 && config.momentum < 1, "training.momentum", "must lie in [0, 1)");
  require(config.weight_decay >= 0, "training.weight_decay", "must not be negative");
  require_one_of("training.weight_decay_layers", config.weight_decay_layers, {"all", "first"});
  require(config.batch_size >= 0, "training.batch_size", "must not be negative (0 = full graph)");
  require(config.eval_every >= -1, "training.eval_every",
          "must be -1 (never), 0 (at the end) or a number of epochs");
  if (config.batch_size > 0) {
    require(static_cast<int>(config.fanouts.size()) == num_layers, "training.fanouts",
            "has " + std::to_string(config.fanouts.size()) + " entries but the model has " +
                std::to_string(num_layers) + " layers (one fanout per layer)");
    for (const int fanout : config.fanouts) {
      require(fanout > 0 || fanout == -1, "training.fanouts",
              "entries must be positive or -1 (all neighbours), got " + std::to_string(fanout));
    }
  }
}

}  // namespace gnnbed
