#include "mlm/train/finetune/finetune.h"

#include <ATen/CPUGeneratorImpl.h>

#include <chrono>
#include <cmath>
#include <numeric>

#include "mlm/train/loop/autocast.h"
#include "mlm/train/optim/grad_clip.h"
#include "mlm/train/optim/optimizer.h"
#include "mlm/util/errors.h"

namespace mlm::train::finetune {
namespace {

namespace F = torch::nn::functional;

torch::Tensor task_loss(const torch::Tensor& logits_in, const torch::Tensor& labels, config::TaskKind kind) {
  // In fp32 whatever precision the forward ran in, as transformers' models compute it.
  const auto logits = logits_in.to(torch::kFloat32);
  // Regression (problem_type "regression"): the mean squared error of the one output.
  if (kind == config::TaskKind::regression) return F::mse_loss(logits.squeeze(-1), labels);
  // Mean cross-entropy over the scored labels, as the ...ForClassification models compute it.
  return F::cross_entropy(logits.reshape({-1, logits.size(-1)}), labels.reshape({-1}),
                          F::CrossEntropyFuncOptions().ignore_index(kIgnoredLabel));
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Every parameter, copied (the best epoch's, kept aside).
std::vector<torch::Tensor> snapshot(torch::nn::Module& module) {
  std::vector<torch::Tensor> out;
  for (const auto& p : module.parameters()) out.push_back(p.detach().clone());
  return out;
}

void restore(torch::nn::Module& module, const std::vector<torch::Tensor>& weights) {
  torch::NoGradGuard no_grad;
  const auto params = module.parameters();
  for (size_t i = 0; i < params.size(); ++i) params[i].copy_(weights[i]);
}

}  // namespace

GeneratorStateGuard::GeneratorStateGuard() {
  // torch::manual_seed reseeds every device's generator: keep the CPU's and each GPU's.
  std::vector<torch::Device> devices = {torch::kCPU};
  for (int64_t i = 0; i < static_cast<int64_t>(torch::cuda::device_count()); ++i)
    devices.emplace_back(torch::kCUDA, static_cast<c10::DeviceIndex>(i));
  for (const auto& device : devices) {
    auto generator = at::globalContext().defaultGenerator(device);
    std::lock_guard<std::mutex> lock(generator.mutex());
    saved_.emplace_back(generator, generator.get_state());
  }
}

GeneratorStateGuard::~GeneratorStateGuard() {
  for (auto& [generator, state] : saved_) {
    std::lock_guard<std::mutex> lock(generator.mutex());
    generator.set_state(state);
  }
}

void require_fits(const config::TaskConfig& task, int64_t positions) {
  if (task.task.max_seq_len > positions) {
    throw ConfigError(task.origin + ": task.max_seq_len " + std::to_string(task.task.max_seq_len) +
                          " exceeds the model's " + std::to_string(positions) + " positions",
                      "task.max_seq_len");
  }
}

TaskSplits load_task_splits(const config::TaskConfig& config, const text::Tokenizer& tokenizer) {
  const auto& task = config.task;
  auto train = read_labelled_split(task, task.train);
  if (config.finetune.max_train_examples > 0 && static_cast<int64_t>(train.size()) > config.finetune.max_train_examples)
    train.resize(static_cast<size_t>(config.finetune.max_train_examples));
  TaskSplits splits;
  splits.train = encode_split(task, tokenizer, train);
  splits.validation = encode_split(task, tokenizer, read_labelled_split(task, task.validation));
  if (!task.test.empty()) splits.test = encode_split(task, tokenizer, read_labelled_split(task, task.test));
  return splits;
}

double linear_warmup_decay(double peak, int64_t step, int64_t warmup, int64_t total) {
  if (step < warmup) return peak * static_cast<double>(step) / static_cast<double>(std::max<int64_t>(1, warmup));
  return peak * std::max(0.0, static_cast<double>(total - step) / static_cast<double>(std::max<int64_t>(1, total - warmup)));
}

ClassifierBatch make_batch(const std::vector<EncodedExample>& examples, const std::vector<int64_t>& order,
                           size_t first, size_t count, int64_t pad_id, config::TaskKind kind,
                           const torch::Device& device) {
  const bool token_task = kind == config::TaskKind::token_classification;
  const bool regression = kind == config::TaskKind::regression;
  size_t longest = 0;
  for (size_t i = first; i < first + count; ++i)
    longest = std::max(longest, examples[static_cast<size_t>(order[i])].ids.size());
  const auto b = static_cast<int64_t>(count), s = static_cast<int64_t>(longest);
  auto ids = torch::full({b, s}, pad_id, torch::kLong);
  auto types = torch::zeros({b, s}, torch::kLong);
  auto mask = torch::zeros({b, s}, torch::kLong);
  auto labels = token_task   ? torch::full({b, s}, kIgnoredLabel, torch::kLong)
                : regression ? torch::empty({b}, torch::kFloat32)
                             : torch::empty({b}, torch::kLong);
  for (int64_t r = 0; r < b; ++r) {
    const auto& e = examples[static_cast<size_t>(order[first + static_cast<size_t>(r)])];
    const auto n = static_cast<int64_t>(e.ids.size());
    ids[r].narrow(0, 0, n).copy_(torch::tensor(e.ids, torch::kLong));
    types[r].narrow(0, 0, n).copy_(torch::tensor(e.token_types, torch::kLong));
    mask[r].narrow(0, 0, n).fill_(1);
    if (token_task) {
      labels[r].narrow(0, 0, n).copy_(torch::tensor(e.labels, torch::kLong));
    } else if (regression) {
      labels[r] = e.target;
    } else {
      labels[r] = e.labels.front();
    }
  }
  ClassifierBatch batch;
  batch.inputs.input_ids = ids.to(device);
  batch.inputs.token_type_ids = types.to(device);
  batch.inputs.attention_mask = mask.to(device);
  batch.inputs.has_padding = true;
  batch.inputs.masked_positions = torch::empty({0}, torch::TensorOptions().dtype(torch::kLong).device(device));
  batch.inputs.masked_labels = batch.inputs.masked_positions;
  batch.labels = labels.to(device);
  return batch;
}

TaskScores evaluate_split(Classifier& classifier, const config::TaskSection& task, const EncodedSplit& split,
                          int64_t batch_size, int64_t pad_id, const torch::Device& device, torch::Dtype compute_dtype) {
  const bool was_training = classifier->is_training();
  classifier->eval();
  torch::NoGradGuard no_grad;
  const bool token_task = task.kind == config::TaskKind::token_classification;
  const bool regression = task.kind == config::TaskKind::regression;
  std::vector<int64_t> order(split.examples.size());
  std::iota(order.begin(), order.end(), 0);
  Predictions p;
  for (size_t first = 0; first < order.size(); first += static_cast<size_t>(batch_size)) {
    const size_t count = std::min(order.size() - first, static_cast<size_t>(batch_size));
    const auto batch = make_batch(split.examples, order, first, count, pad_id, task.kind, device);
    torch::Tensor logits;
    {
      const AutocastScope autocast(compute_dtype, device);
      logits = classifier->forward(batch.inputs);
    }
    if (regression) {
      const auto predicted = logits.squeeze(-1).to(torch::kFloat64).cpu().contiguous();
      const auto gold = batch.labels.to(torch::kFloat64).cpu().contiguous();
      p.predicted_values.insert(p.predicted_values.end(), predicted.data_ptr<double>(),
                                predicted.data_ptr<double>() + predicted.numel());
      p.gold_values.insert(p.gold_values.end(), gold.data_ptr<double>(), gold.data_ptr<double>() + gold.numel());
      continue;
    }
    const auto predicted = logits.argmax(-1).cpu().contiguous();
    const auto gold = batch.labels.cpu().contiguous();
    const auto width = token_task ? gold.size(1) : 1;
    const int64_t* g = gold.data_ptr<int64_t>();
    const int64_t* q = predicted.data_ptr<int64_t>();
    for (int64_t r = 0; r < static_cast<int64_t>(count); ++r) {
      p.gold.emplace_back();
      p.predicted.emplace_back();
      for (int64_t k = r * width; k < (r + 1) * width; ++k) {
        if (g[k] == kIgnoredLabel) continue;
        p.gold.back().push_back(g[k]);
        p.predicted.back().push_back(q[k]);
      }
    }
  }
  classifier->train(was_training);
  return score(task, p);
}

FinetuneResult run_finetune(Classifier& classifier, const config::TaskConfig& config, const TaskSplits& splits,
                            int64_t pad_id, const torch::Device& device, torch::Dtype compute_dtype) {
  const auto& task = config.task;
  const auto& recipe = config.finetune;
  const auto started = std::chrono::steady_clock::now();
  GeneratorStateGuard generator_guard;
  torch::manual_seed(static_cast<uint64_t>(recipe.seed));  // dropout's draws
  auto order_generator = at::make_generator<at::CPUGeneratorImpl>(static_cast<uint64_t>(recipe.seed));

  const auto& train = splits.train.examples;
  const auto batch_size = static_cast<size_t>(recipe.batch_size);
  const auto steps_per_epoch = static_cast<int64_t>((train.size() + batch_size - 1) / batch_size);
  FinetuneResult result;
  result.total_steps = recipe.max_steps > 0 ? recipe.max_steps : recipe.epochs * steps_per_epoch;
  result.warmup_steps = static_cast<int64_t>(std::ceil(recipe.warmup_ratio * static_cast<double>(result.total_steps)));

  config::OptimConfig optim;
  optim.learning_rate = recipe.learning_rate;
  optim.betas = {0.9, 0.999};
  optim.eps = 1e-8;
  optim.weight_decay = recipe.weight_decay;
  auto optimizer = make_adamw(*classifier, optim);
  std::vector<torch::Tensor> params;
  for (const auto& group : optimizer->param_groups())
    for (const auto& p : group.params()) params.push_back(p);

  classifier->train(recipe.dropout);
  std::vector<torch::Tensor> best_weights;
  int64_t worse = 0;
  bool stop = false;
  std::vector<int64_t> order(train.size());
  while (!stop) {
    std::iota(order.begin(), order.end(), 0);
    if (recipe.shuffle) {
      const auto perm = torch::randperm(static_cast<int64_t>(train.size()), order_generator, torch::kLong);
      order.assign(perm.data_ptr<int64_t>(), perm.data_ptr<int64_t>() + perm.numel());
    }
    for (size_t first = 0; first < order.size() && !stop; first += batch_size) {
      const double lr = linear_warmup_decay(recipe.learning_rate, result.steps, result.warmup_steps, result.total_steps);
      set_learning_rate(*optimizer, lr);
      const auto batch = make_batch(train, order, first, std::min(batch_size, order.size() - first), pad_id,
                                    task.kind, device);
      torch::Tensor logits;
      {
        const AutocastScope autocast(compute_dtype, device);  // the forward only, as the run's steps
        logits = classifier->forward(batch.inputs);
      }
      const auto loss = task_loss(logits, batch.labels, task.kind);
      loss.backward();
      result.grad_norms.push_back(clip_grad_norm(params, recipe.max_grad_norm));  // <= 0: measured only
      optimizer->step();
      optimizer->zero_grad();
      result.losses.push_back(loss.item<double>());
      result.learning_rates.push_back(lr);
      ++result.steps;
      const bool epoch_end = result.steps % steps_per_epoch == 0;
      const bool last = result.steps == result.total_steps;
      if (!epoch_end && !last) continue;
      Evaluation e;
      e.step = result.steps;
      e.epoch = static_cast<double>(result.steps) / static_cast<double>(steps_per_epoch);
      const auto evaluating = std::chrono::steady_clock::now();
      e.validation = evaluate_split(classifier, task, splits.validation, recipe.batch_size, pad_id, device, compute_dtype);
      result.eval_seconds += seconds_since(evaluating);
      const bool better = config::higher_is_better(task.metric) ? e.validation.value > result.best_validation
                                                                : e.validation.value < result.best_validation;
      if (best_weights.empty() || better) {
        result.best_validation = e.validation.value;
        result.best_epoch = e.epoch;
        best_weights = snapshot(*classifier);
        worse = 0;
      } else {
        ++worse;
      }
      result.evaluations.push_back(e);
      stop = last || (recipe.early_stopping_patience > 0 && worse >= recipe.early_stopping_patience);
    }
  }
  restore(*classifier, best_weights);
  const auto testing = std::chrono::steady_clock::now();
  if (splits.test)
    result.test = evaluate_split(classifier, task, *splits.test, recipe.batch_size, pad_id, device, compute_dtype);
  result.eval_seconds += seconds_since(testing);
  classifier->eval();
  result.seconds = seconds_since(started);
  return result;
}

}  // namespace mlm::train::finetune
