#pragma once
// An exponential moving average of the weights (train.ema_*): an fp32 shadow of every trainable
// parameter, on the parameters' device, updated right after the optimizer's step without a
// host synchronisation (one foreach lerp over the shadow list). The rule, for run step s:
//   s == start              shadow <- weights              (start 0: the initial weights)
//   s > start, N | s-start  shadow <- shadow + (1 - d^N) (weights - shadow)
//                           (= d^N shadow + (1 - d^N) weights: N steps of decay d at once)
// with d = train.ema_decay, N = train.ema_every_steps, start = train.ema_start_step; a skipped
// (non-finite) step leaves the weights unchanged and the update moves toward them all the same.
// A phase may change d and N; the shadow carries over every phase boundary. Parameters that
// do not train (requires_grad false) and buffers are the live model's: the models here have no
// running statistics, so nothing else is averaged.
//
// The component owns its state: save()/load() write and read it as ema.pt, in model.pt's
// format (the model's state dict with the shadow's values), so every tool that opens model.pt
// opens ema.pt. The shadow is replicated (every rank updates the same summed weights), so a
// checkpoint of any world size resumes on any other bit for bit.
#include <torch/torch.h>

#include <filesystem>
#include <vector>

#include "mlm/config/sections/train.h"
#include "mlm/model/masked_lm.h"

namespace mlm::train {

/// The file a checkpoint keeps the shadow in, beside model.pt.
inline constexpr const char* kEmaFileName = "ema.pt";

class EmaWeights {
 public:
  /// The shadow of `model`'s trainable parameters (fp32, which the trainer's master weights
  /// are), starting as a copy of them. `train.ema_decay` must be in (0, 1).
  EmaWeights(model::MaskedLm model, const config::TrainConfig& train);

  /// A phase's decay and cadence; the shadow stays.
  void configure(const config::TrainConfig& train);

  /// After the optimizer's step `step` (the run's step, from 1): the rule above, on the device.
  void update(int64_t step);

  /// The shadow becomes a copy of the weights (a resumed checkpoint without ema.pt).
  void restart();

  /// Runs `work` with the shadow in the model's parameters, which get their own values back
  /// afterwards, exactly, thrown or not. No copy: the parameters' storage is exchanged.
  template <class F>
  decltype(auto) with_shadow(F&& work) {
    swap();
    struct SwapBack {
      EmaWeights* ema;
      ~SwapBack() { ema->swap(); }
    } back{this};
    return work();
  }

  /// ema.pt: the model's state dict with the shadow's values (model::save_model_pt's format).
  void save(const std::filesystem::path& path);
  /// Reads a save()d file into the shadow; CheckpointError naming the file when it does not fit.
  void load(const std::filesystem::path& path);

  /// The shadow, one tensor per trainable parameter in named_parameters() order.
  const std::vector<torch::Tensor>& shadow() const { return shadow_; }
  /// The fraction an update moves the shadow toward the weights: 1 - decay^every_steps.
  double update_weight() const { return weight_; }

 private:
  /// Exchanges the parameters' storage with the shadow's.
  void swap();

  model::MaskedLm model_;
  std::vector<torch::Tensor> params_;  // the trainable parameters
  std::vector<torch::Tensor> shadow_;  // fp32, on their devices
  int64_t every_steps_ = 1;
  int64_t start_step_ = 0;
  double weight_ = 0;
};

}  // namespace mlm::train
