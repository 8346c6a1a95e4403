#pragma once
// How a model is trained: optimisation, batching and sampling.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "workloads/common/errors.hpp"

namespace gnnbed {

struct TrainingConfig {
  int epochs = 200;
  std::string optimizer = "adam";  // "adam" or "sgd"
  double learning_rate = 0.01;
  double momentum = 0.0;       // sgd only
  double weight_decay = 5e-4;  // L2 penalty on weight matrices (added to their gradients)
  // "all": every layer's weights; "first": the first layer's only, as in Kipf & Welling's code.
  std::string weight_decay_layers = "all";
  // 0 trains full-graph (every training node in one step, full neighbourhoods); otherwise
  // mini-batches of this many training nodes, sampled with `fanouts`.
  int batch_size = 0;
  std::vector<int> fanouts{25, 10};  // by hop from the seeds; -1 = all neighbours
  // Epochs left out of the mean epoch time (first-touch allocation, caches and connections warm
  // up in the first one); with no more epochs than this, every epoch counts.
  int warmup_epochs = 1;
  int eval_every = 1;      // evaluate every this many epochs (0 = at the end only, -1 = never)
  std::uint64_t seed = 1;  // weights, dropout, shuffling and sampling
  // A NaN or infinite training loss stops the run with an error naming the epoch (no result is
  // written); false lets it go on, recording the losses as they are (null in JSON).
  bool stop_on_divergence = true;
};

TrainingConfig training_config_from_json(const nlohmann::json& object,
                                         const TrainingConfig& defaults, const std::string& where);
nlohmann::json to_json(const TrainingConfig& config);

// Seeds derived from the training seed, shared by every engine so that single-process,
// distributed and simulated runs draw the same samples and start from the same weights.
std::uint64_t sampler_seed(const TrainingConfig& config);
std::uint64_t model_seed(const TrainingConfig& config);

// The mean of `epoch_seconds` after the first `warmup_epochs` (all of them when none remain).
double measured_epoch_seconds(std::span<const double> epoch_seconds, int warmup_epochs);
// The first epoch (1-based) that measurements count: the one after the warm-up epochs, or the
// first when none remain.
int first_measured_epoch(int epochs, int warmup_epochs);

// Thrown when an epoch's training loss is not finite and stop_on_divergence is set.
class DivergenceError : public Error {
 public:
  using Error::Error;
};
// Throws DivergenceError, naming the epoch and the loss, when `loss` is NaN or infinite and the
// configuration stops on divergence. Every engine calls it with the epoch's loss.
void check_divergence(const TrainingConfig& config, int epoch, double loss);

// Throws ConfigError naming the first field that cannot be used (with the model's layer count).
void validate(const TrainingConfig& config, int num_layers);

}  // namespace gnnbed
