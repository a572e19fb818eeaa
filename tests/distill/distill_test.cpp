// Distillation (train/distill/): the combined loss and its gradients against a transcription of
// the papers' formulas on transformers' models (tests/reference/distill_reference.py), the
// student's init from the teacher's layers, a frozen teacher, every bad input's one line, and a
// distilled run that resumes bit for bit and accumulates as one big batch.
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <fstream>

#include <nlohmann/json.hpp>

#include "mlm/config/config_loader.h"
#include "mlm/config/validate_distill.h"
#include "mlm/model/architectures.h"
#include "mlm/model/hf/safetensors.h"
#include "mlm/model/hf/tensor_file.h"
#include "mlm/model/make_masked_lm.h"
#include "mlm/model/pretrained/export_hf.h"
#include "mlm/test_paths.h"
#include "mlm/train/distill/distill_losses.h"
#include "mlm/train/distill/distiller.h"
#include "mlm/train/distill/init_from_teacher.h"
#include "mlm/train/distill/teacher.h"
#include "mlm/train/run/trainer.h"
#include "mlm/util/errors.h"
#include "model/model_test_util.h"
#include "train/train_test_util.h"

// Named, not anonymous: the unity build compiles the trainer tests together.
namespace mlm::train::distill_test {

namespace fs = std::filesystem;
using namespace mlm::train::testing;
using mlm::model::testing::tiny_model_config;

constexpr int64_t kVocab = 97, kPad = 0, kBatch = 3, kSeq = 24;

/// Random ids with ~30% of the real tokens selected; rows 1 and 2 end in padding.
model::MlmInputs padded_batch() {
  model::MlmInputs in;
  in.input_ids = torch::randint(5, kVocab, {kBatch, kSeq}, torch::kLong);
  in.attention_mask = torch::ones({kBatch, kSeq}, torch::kLong);
  in.attention_mask[1].narrow(0, 18, 6).zero_();
  in.attention_mask[2].narrow(0, 9, 15).zero_();
  in.input_ids.masked_fill_(in.attention_mask.eq(0), kPad);
  in.has_padding = true;
  const auto selected = (torch::rand({kBatch, kSeq}) < 0.3).logical_and(in.attention_mask.eq(1));
  in.masked_positions = selected.reshape(-1).nonzero().reshape(-1);
  in.masked_labels = torch::randint(5, kVocab, {kBatch * kSeq}, torch::kLong).index_select(0, in.masked_positions);
  return in;
}

model::MaskedLm randomised(const config::ModelConfig& config, uint64_t seed) {
  torch::manual_seed(seed);
  auto model = model::make_masked_lm(config, kVocab, kPad);
  torch::NoGradGuard no_grad;
  for (auto& p : model->parameters()) p.copy_(torch::randn_like(p) * 0.3);
  return model;
}

distill::Teacher frozen(model::MaskedLm model) {
  model->eval();
  for (auto& p : model->parameters()) p.requires_grad_(false);
  return {model, model->config(), &model::architecture_spec(model->config().architecture), torch::kFloat32};
}

struct ReferenceCase {
  std::string name;
  config::ModelConfig teacher, student;
  config::DistillConfig distill;
};

config::DistillConfig weights(double mlm, double kl, double cos, double rel, double temperature) {
  config::DistillConfig d;
  d.teacher = "in memory";
  d.mlm_weight = mlm;
  d.kl_weight = kl;
  d.cos_weight = cos;
  d.relation_weight = rel;
  d.temperature = temperature;
  return d;
}

std::vector<ReferenceCase> reference_cases() {
  using config::Architecture;
  std::vector<ReferenceCase> cases;
  // DistilBERT's setting: same width, half the depth, every loss.
  auto all = weights(0.7, 1.3, 0.9, 1.1, 2.0);
  all.teacher_layer = 1;
  cases.push_back(
      {"bert_same_width", tiny_model_config(Architecture::bert, 4), tiny_model_config(Architecture::bert, 2), all});
  // MiniLMv2 across widths and head counts: 8 relation heads over 32 and 16 wide bodies, the KL on
  // every real token; the cosine through the learned projection 16 -> 32.
  auto across = weights(1.0, 0.5, 0.8, 2.0, 1.0);
  across.relation_heads = 8;
  across.kl_all_positions = true;
  across.student_layer = 0;
  cases.push_back({"bert_across_widths", tiny_model_config(Architecture::bert, 3),
                   tiny_model_config(Architecture::bert, 2, 16, 2), across});
  auto modern = weights(1.0, 1.0, 1.0, 1.0, 1.5);
  cases.push_back({"modernbert_same_width", tiny_model_config(Architecture::modernbert, 3),
                   tiny_model_config(Architecture::modernbert, 2), modern});
  // The generators of the replaced-token-detection architectures, objective mlm.
  auto generator = weights(0.5, 1.0, 1.2, 0.8, 2.0);
  generator.teacher_layer = 0;
  cases.push_back({"electra_same_width", tiny_model_config(Architecture::electra, 3),
                   tiny_model_config(Architecture::electra, 2), generator});
  cases.push_back({"deberta_same_width", tiny_model_config(Architecture::deberta_v2, 3),
                   tiny_model_config(Architecture::deberta_v2, 2), generator});
  return cases;
}

class DistillReference : public ::testing::TestWithParam<ReferenceCase> {};

TEST_P(DistillReference, LossAndGradientsEqualThePapersFormulas) {
  const auto& c = GetParam();
  const auto dir = fresh_dir("distill_reference_" + c.name);
  auto teacher = randomised(c.teacher, 11);
  auto student = randomised(c.student, 12);
  student->train();
  torch::manual_seed(13);
  const auto in = padded_batch();
  const double masked = static_cast<double>(in.masked_positions.numel());
  const double tokens = in.attention_mask.sum().item<double>();

  distill::Distiller distiller(c.distill, frozen(teacher), student, torch::kFloat32);
  const auto projection = distiller.projection();
  ASSERT_EQ(static_cast<bool>(projection), c.teacher.hidden_size != c.student.hidden_size && c.distill.cos_weight > 0);
  if (projection) {
    torch::NoGradGuard no_grad;
    for (auto& p : projection->parameters()) p.copy_(torch::randn_like(p) * 0.3);
    model::write_safetensors((dir / "projection.safetensors").string(),
                             {{"weight", projection->weight}, {"bias", projection->bias}});
  }
  const auto result = distiller.forward(student, in, masked, tokens);
  result.loss.backward();

  model::write_hf_model(teacher, (dir / "teacher").string(), model::WeightFormat::safetensors);
  model::write_hf_model(student, (dir / "student").string(), model::WeightFormat::safetensors);
  auto labels = torch::full({kBatch * kSeq}, -100, torch::kLong);
  labels.index_put_({in.masked_positions}, in.masked_labels);
  model::write_safetensors((dir / "batch.safetensors").string(),
                           {{"input_ids", in.input_ids}, {"attention_mask", in.attention_mask},
                            {"labels", labels.reshape({kBatch, kSeq})}});
  const auto& d = c.distill;
  std::ofstream(dir / "settings.json") << nlohmann::json{
      {"mlm_weight", d.mlm_weight},         {"kl_weight", d.kl_weight},
      {"temperature", d.temperature},       {"kl_all_positions", d.kl_all_positions},
      {"cos_weight", d.cos_weight},         {"relation_weight", d.relation_weight},
      {"relation_heads", d.relation_heads}, {"teacher_layer", d.teacher_layer},
      {"student_layer", d.student_layer},   {"masked", masked},
      {"tokens", tokens}}.dump();
  const auto quote = [](const std::string& s) { return "'" + s + "'"; };
  const std::string command = quote(MLM_PYTHON) + " " +
                              quote(std::string(MLM_SOURCE_DIR) + "/tests/reference/distill_reference.py") + " " +
                              quote(dir.string()) + " > " + quote((dir / "py.out").string()) + " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << read_text(dir / "py.out");
  std::map<std::string, torch::Tensor> ref;
  for (auto& [key, value] : model::read_safetensors((dir / "reference.safetensors").string())) ref[key] = value;

  const double loss = result.loss.item<double>();
  EXPECT_NEAR(loss, ref.at("loss").item<double>(), 1e-5 * std::abs(loss)) << read_text(dir / "py.out");
  const char* terms[] = {"kl", "cos", "rel"};
  for (int i = 0; i < 3; ++i) {
    const double want = ref.at(terms[i]).item<double>();
    EXPECT_NEAR(result.terms[i].item<double>(), want, 1e-5 * std::abs(want) + 1e-7) << terms[i];
  }
  // Every loss this case weights is really there (a term of 0 would prove nothing).
  if (d.kl_weight > 0) EXPECT_GT(ref.at("kl").item<double>(), 1e-3);
  if (d.cos_weight > 0) EXPECT_GT(ref.at("cos").item<double>(), 1e-3);
  if (d.relation_weight > 0) EXPECT_GT(ref.at("rel").item<double>(), 1e-3);

  int checked = 0;
  for (const auto& [key, grad] : student->hf_gradients()) {
    const auto it = ref.find("grad." + key);
    if (it == ref.end() || !grad.defined()) continue;
    const auto want = it->second.to(torch::kFloat64);
    const double scale = want.abs().max().item<double>();
    const double diff = (grad.to(torch::kFloat64) - want).abs().max().item<double>();
    EXPECT_LE(diff, 1e-4 * scale + 1e-7) << key << " (largest " << scale << ")";
    ++checked;
  }
  EXPECT_GE(checked, 10);
  if (projection) {
    for (const auto* name : {"weight", "bias"}) {
      const auto grad = (std::string(name) == "weight" ? projection->weight : projection->bias).grad();
      ASSERT_TRUE(grad.defined()) << name;
      const auto want = ref.at(std::string("grad.projection.") + name).to(torch::kFloat64);
      const double scale = want.abs().max().item<double>();
      EXPECT_GT(scale, 1e-6) << name;
      EXPECT_LE((grad.to(torch::kFloat64) - want).abs().max().item<double>(), 1e-4 * scale + 1e-7) << name;
    }
  }
  // The teacher took no gradient.
  for (const auto& p : teacher->parameters()) EXPECT_FALSE(p.grad().defined());
}

INSTANTIATE_TEST_SUITE_P(Distill, DistillReference, ::testing::ValuesIn(reference_cases()),
                         [](const auto& info) { return info.param.name; });

TEST(DistillLosses, EqualModelsLoseNothing) {
  torch::manual_seed(3);
  const auto logits = torch::randn({5, 11});
  EXPECT_NEAR(distill::kl_loss_sum(logits, logits, 2.0).item<double>(), 0.0, 1e-6);
  const auto hidden = torch::randn({2, 4, 8});
  const auto real = torch::ones({2, 4}, torch::kBool);
  EXPECT_NEAR(distill::cosine_loss_sum(hidden, hidden, real).item<double>(), 0.0, 1e-5);
  const auto qkv = torch::randn({2, 4, 24});
  EXPECT_NEAR(distill::relation_loss_sum(qkv, qkv, real, 4).item<double>(), 0.0, 1e-5);
  // A scaled copy changes no relation of the values' directions only when the scale is 1.
  EXPECT_GT(distill::relation_loss_sum(qkv * 3, qkv, real, 4).item<double>(), 1e-3);
}

TEST(DistillInit, StudentLayersComeFromEveryOtherTeacherLayer) {
  auto teacher = randomised(tiny_model_config(config::Architecture::modernbert, 6), 21);
  auto student = randomised(tiny_model_config(config::Architecture::modernbert, 3), 22);
  config::DistillConfig d;
  d.init_every = 2;
  const auto layers = distill::init_layer_map(d, 3, 6);
  ASSERT_EQ(layers, (std::vector<int64_t>{0, 2, 4}));
  const auto& spec = model::architecture_spec(config::Architecture::modernbert);
  EXPECT_GT(distill::init_from_teacher(student, teacher, spec, layers), 20);
  std::map<std::string, torch::Tensor> t;
  for (const auto& [k, v] : teacher->hf_state_dict()) t[k] = v;
  for (const auto& [k, v] : student->hf_state_dict()) {
    std::string from = k;
    for (int i = 0; i < 3; ++i) {
      const std::string ours = "layers." + std::to_string(i) + ".";
      if (k.rfind("model." + ours, 0) == 0) from = "model.layers." + std::to_string(2 * i) + "." + k.substr(ours.size() + 6);
    }
    if (!t.count(from)) continue;  // layer 0 has no attn_norm: the student's layer 0 keeps none
    EXPECT_TRUE(torch::equal(v, t[from])) << k << " from " << from;
  }
  // A named list, in any order.
  d.init_every = 0;
  d.init_layers = {"5", "0", "3"};
  EXPECT_EQ(distill::init_layer_map(d, 3, 6), (std::vector<int64_t>{5, 0, 3}));
}

std::string usage_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(DistillBadInput, EachNamesItsKey) {
  const auto student = tiny_model_config(config::Architecture::bert, 2);
  auto with = [&](std::function<void(config::DistillConfig&)> edit) {
    config::DistillConfig d;
    d.teacher = "teacher";
    edit(d);
    return usage_error([&] { config::validate_distill(d, student); });
  };
  EXPECT_THROW(config::validate_distill([] { config::DistillConfig d; d.teacher = "t"; d.temperature = 0; return d; }(), student),
               ConfigError);
  EXPECT_NE(with([](auto& d) { d.temperature = 0; }).find("distill.temperature"), std::string::npos);
  EXPECT_NE(with([](auto& d) { d.temperature = -1; }).find("distill.temperature"), std::string::npos);
  EXPECT_NE(with([](auto& d) { d.init_layers = {"0", "x"}; }).find("distill.init_layers"), std::string::npos);
  EXPECT_NE(with([](auto& d) { d.init_layers = {"0"}; }).find("distill.init_layers"), std::string::npos);
  EXPECT_NE(with([](auto& d) { d.init_every = 2; d.init_layers = {"0", "2"}; }).find("distill.init_layers"),
            std::string::npos);
  EXPECT_NE(with([](auto& d) { d.relation_weight = 1; d.relation_heads = 5; }).find("distill.relation_heads"),
            std::string::npos);
  EXPECT_NE(with([](auto& d) { d.student_layer = 2; }).find("distill.student_layer"), std::string::npos);
  EXPECT_NE(with([](auto& d) { d.teacher_precision = "fp8"; }).find("distill.teacher_precision"), std::string::npos);
  EXPECT_NE(with([](auto& d) { d.mlm_weight = d.kl_weight = 0; }).find("distill.kl_weight"), std::string::npos);
  EXPECT_EQ(with([](auto&) {}), "");

  // Layers outside the teacher's depth.
  config::DistillConfig d;
  d.init_every = 3;
  EXPECT_THROW(distill::init_layer_map(d, 3, 6), UsageError);
  EXPECT_NE(usage_error([&] { distill::init_layer_map(d, 3, 6); }).find("distill.init_every"), std::string::npos);
  d.init_every = 0;
  d.init_layers = {"0", "6"};
  EXPECT_NE(usage_error([&] { distill::init_layer_map(d, 2, 6); }).find("distill.init_layers"), std::string::npos);
  // Another architecture or width cannot take the teacher's layers.
  EXPECT_THROW(distill::init_from_teacher(randomised(tiny_model_config(config::Architecture::bert, 2, 16, 2), 1),
                                          randomised(tiny_model_config(config::Architecture::bert, 4), 2),
                                          model::architecture_spec(config::Architecture::bert), {0, 2}),
               UsageError);
}

// ---- runs: a teacher trained a few steps, then students taught by it ----------------------------

/// A 2-layer tiny BERT trained 4 steps: its last checkpoint is the teacher.
fs::path trained_teacher() {
  static const fs::path checkpoint = [] {
    // Per process: ctest -j runs this binary's tests side by side, each training its teacher.
    const auto dir = fresh_dir("distill_teacher_" + std::to_string(::getpid()));
    Trainer trainer(tiny_config(dir, {"train.max_steps=4", "checkpoint.every_steps=4", "eval.every_steps=0"}), {});
    EXPECT_EQ(trainer.run(), 0);
    return dir / "checkpoints" / "step_00000004";
  }();
  return checkpoint;
}

std::vector<std::string> student_sets(std::vector<std::string> extra) {
  std::vector<std::string> sets = {"model.num_hidden_layers=1",
                                   "distill.teacher=" + trained_teacher().string(),
                                   "distill.init_every=2",
                                   "distill.cos_weight=0.5",
                                   "distill.relation_weight=1.0",
                                   "distill.temperature=2.0",
                                   "eval.every_steps=0",
                                   "eval.max_batches=1"};
  sets.insert(sets.end(), extra.begin(), extra.end());
  return sets;
}

std::string file_bytes(const fs::path& path) { return read_text(path); }

TEST(DistillRun, ResumesBitForBitAndLeavesTheTeacherUntouched) {
  const auto teacher_weights = file_bytes(trained_teacher() / "model.pt");
  const std::vector<std::string> sets = student_sets({"train.max_steps=6", "checkpoint.every_steps=0"});
  const auto straight_dir = fresh_dir("distill_straight");
  std::vector<StepStats> straight, first, second;
  std::vector<torch::Tensor> straight_params, second_params;
  uint64_t checksum_before = 0, checksum_after = 0;
  {
    Trainer trainer(tiny_config(straight_dir, sets), {});
    checksum_before = distill::weights_checksum(trainer.distiller()->teacher().model);
    trainer.on_step([&](const StepStats& s) { straight.push_back(s); });
    ASSERT_EQ(trainer.run(), 0);
    checksum_after = distill::weights_checksum(trainer.distiller()->teacher().model);
    for (const auto& p : trainer.model()->parameters()) straight_params.push_back(p.detach().clone());
  }
  EXPECT_EQ(checksum_before, checksum_after);
  ASSERT_EQ(straight.size(), 6u);
  for (const auto& s : straight) {
    EXPECT_TRUE(s.distilled);
    EXPECT_GT(s.distill_kl, 0.0);
    EXPECT_GT(s.distill_cos, 0.0);
    EXPECT_GT(s.distill_relation, 0.0);
  }
  const auto rows = read_metrics(straight_dir);
  ASSERT_FALSE(rows.empty());
  for (const char* key : {"distill_kl", "distill_cos", "distill_relation", "teacher_share"})
    EXPECT_TRUE(rows.front().contains(key)) << key;

  const auto dir = fresh_dir("distill_split");
  {
    Trainer trainer(tiny_config(dir, sets), {});
    trainer.on_step([&](const StepStats& s) {
      first.push_back(s);
      if (s.step == 3) std::raise(SIGTERM);
    });
    trainer.run();
  }
  {
    Trainer trainer(tiny_config(dir, sets), {"latest", nullptr});
    trainer.on_step([&](const StepStats& s) { second.push_back(s); });
    ASSERT_EQ(trainer.run(), 0);
    for (const auto& p : trainer.model()->parameters()) second_params.push_back(p.detach().clone());
  }
  ASSERT_EQ(second.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(second[i].loss, straight[i + 3].loss) << "step " << i + 4;
    EXPECT_EQ(second[i].distill_kl, straight[i + 3].distill_kl);
    EXPECT_EQ(second[i].distill_relation, straight[i + 3].distill_relation);
    EXPECT_EQ(second[i].grad_norm, straight[i + 3].grad_norm);
  }
  ASSERT_EQ(second_params.size(), straight_params.size());
  for (size_t i = 0; i < straight_params.size(); ++i) EXPECT_TRUE(torch::equal(second_params[i], straight_params[i]));
  EXPECT_EQ(file_bytes(trained_teacher() / "model.pt"), teacher_weights);
}

/// The projection's parameters, copied.
std::vector<torch::Tensor> projection_of(const Trainer& trainer) {
  std::vector<torch::Tensor> params;
  for (const auto& p : trainer.distiller()->projection()->parameters()) params.push_back(p.detach().clone());
  return params;
}

// DistilBERT's init alone (every loss that reads the teacher at weight 0): the student starts
// from the teacher's layers, as under the whole recipe, and trains without running it.
TEST(DistillRun, AnInitAloneCopiesTheTeacherAndTrainsWithoutRunningIt) {
  auto parameters = [](Trainer& trainer) {
    std::vector<torch::Tensor> out;
    for (const auto& p : trainer.model()->parameters()) out.push_back(p.detach().clone());
    return out;
  };
  const auto recipe_dir = fresh_dir("distill_init_recipe"), alone_dir = fresh_dir("distill_init_alone");
  const auto plain_dir = fresh_dir("distill_init_plain");
  Trainer recipe(tiny_config(recipe_dir, student_sets({"train.max_steps=2"})), {});
  const auto initialised = parameters(recipe);
  Trainer alone(tiny_config(alone_dir, student_sets({"train.max_steps=2", "distill.kl_weight=0", "distill.cos_weight=0",
                                                     "distill.relation_weight=0"})),
                {});
  EXPECT_EQ(alone.distiller(), nullptr);
  const auto started = parameters(alone);
  ASSERT_EQ(started.size(), initialised.size());
  for (size_t i = 0; i < started.size(); ++i) EXPECT_TRUE(torch::equal(started[i], initialised[i])) << "parameter " << i;
  // Not what the student would start from without the teacher.
  Trainer plain(tiny_config(plain_dir, {"model.num_hidden_layers=1", "train.max_steps=2"}), {});
  const auto fresh = parameters(plain);
  EXPECT_FALSE(torch::equal(fresh.front(), started.front()));
  std::vector<StepStats> steps;
  alone.on_step([&](const StepStats& s) { steps.push_back(s); });
  ASSERT_EQ(alone.run(), 0);
  ASSERT_EQ(steps.size(), 2u);
  for (const auto& s : steps) EXPECT_FALSE(s.distilled);
  // A plain masked-LM run: no teacher's share, no distillation terms in its rows.
  EXPECT_EQ(read_text(alone_dir / "metrics.jsonl").find("teacher_share"), std::string::npos);
}

TEST(DistillRun, CosineAcrossWidthsTrainsItsProjectionAndResumesBitForBit) {
  // A 64-wide student of the 128-wide teacher: the cosine goes through the learned projection.
  const std::vector<std::string> sets = {"model.num_hidden_layers=1", "model.hidden_size=64",
                                         "model.intermediate_size=128",
                                         "distill.teacher=" + trained_teacher().string(),
                                         "distill.cos_weight=1.0", "distill.kl_weight=0.5",
                                         "eval.every_steps=0", "eval.max_batches=1",
                                         "train.max_steps=4", "checkpoint.every_steps=0"};
  std::vector<StepStats> straight, second;
  std::vector<torch::Tensor> straight_params, straight_projection, initial_projection;
  {
    Trainer trainer(tiny_config(fresh_dir("distill_projection_straight"), sets), {});
    ASSERT_TRUE(trainer.distiller()->projection());
    initial_projection = projection_of(trainer);
    trainer.on_step([&](const StepStats& s) { straight.push_back(s); });
    ASSERT_EQ(trainer.run(), 0);
    for (const auto& p : trainer.model()->parameters()) straight_params.push_back(p.detach().clone());
    straight_projection = projection_of(trainer);
  }
  ASSERT_EQ(straight.size(), 4u);
  for (const auto& s : straight) EXPECT_GT(s.distill_cos, 0.0);
  // The optimizer trains it.
  for (size_t i = 0; i < straight_projection.size(); ++i)
    EXPECT_FALSE(torch::equal(straight_projection[i], initial_projection[i]));

  const auto dir = fresh_dir("distill_projection_split");
  {
    Trainer trainer(tiny_config(dir, sets), {});
    trainer.on_step([](const StepStats& s) {
      if (s.step == 2) std::raise(SIGTERM);
    });
    trainer.run();
  }
  const auto checkpoint = dir / "checkpoints" / "step_00000002";
  ASSERT_TRUE(fs::exists(checkpoint / "distill_projection.pt"));
  {
    Trainer trainer(tiny_config(dir, sets), {"latest", nullptr});
    trainer.on_step([&](const StepStats& s) { second.push_back(s); });
    ASSERT_EQ(trainer.run(), 0);
    ASSERT_EQ(second.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(second[i].loss, straight[i + 2].loss) << "step " << i + 3;
      EXPECT_EQ(second[i].distill_cos, straight[i + 2].distill_cos);
      EXPECT_EQ(second[i].grad_norm, straight[i + 2].grad_norm);
    }
    const auto params = trainer.model()->parameters();
    ASSERT_EQ(params.size(), straight_params.size());
    for (size_t i = 0; i < params.size(); ++i) EXPECT_TRUE(torch::equal(params[i], straight_params[i]));
    const auto projection = projection_of(trainer);
    for (size_t i = 0; i < projection.size(); ++i) EXPECT_TRUE(torch::equal(projection[i], straight_projection[i]));
  }
  // A checkpoint without the projection's file is refused naming it.
  fs::remove(checkpoint / "distill_projection.pt");
  try {
    Trainer trainer(tiny_config(dir, sets), {checkpoint.string(), nullptr});
    ADD_FAILURE() << "resumed without distill_projection.pt";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("distill_projection.pt"), std::string::npos) << e.what();
  }
}

TEST(DistillRun, AReplacedTokenDetectionPairDistilsThroughItsGenerator) {
  // An ELECTRA pair trained a step teaches a BERT student; a pair student learns from the BERT
  // teacher: the hidden states and q/k/v are the generators' (another width: the projection).
  const auto pair_run = fresh_dir("distill_pair_teacher");
  {
    Trainer trainer(tiny_config(pair_run, {"model.architecture=electra", "model.objective=rtd", "train.max_steps=1",
                                           "eval.every_steps=0"}),
                    {});
    ASSERT_EQ(trainer.run(), 0);
  }
  const std::vector<std::string> losses = {"distill.cos_weight=1.0", "distill.relation_weight=1.0",
                                           "distill.relation_heads=2", "eval.every_steps=0",
                                           "eval.max_batches=1", "train.max_steps=2"};
  auto from_pair = losses;
  from_pair.push_back("distill.teacher=" + (pair_run / "checkpoints" / "step_00000001").string());
  from_pair.push_back("model.num_hidden_layers=1");
  auto to_pair = losses;
  to_pair.insert(to_pair.end(), {"distill.teacher=" + trained_teacher().string(), "model.architecture=electra",
                                 "model.objective=rtd"});
  for (const auto& sets : {from_pair, to_pair}) {
    std::vector<StepStats> steps;
    Trainer trainer(tiny_config(fresh_dir("distill_pair_student"), sets), {});
    EXPECT_TRUE(trainer.distiller()->projection());
    trainer.on_step([&](const StepStats& s) { steps.push_back(s); });
    ASSERT_EQ(trainer.run(), 0);
    ASSERT_EQ(steps.size(), 2u);
    for (const auto& s : steps) {
      EXPECT_GT(s.distill_cos, 0.0);
      EXPECT_GT(s.distill_relation, 0.0);
      EXPECT_TRUE(std::isfinite(s.loss));
    }
  }
}

TEST(DistillRun, AccumulationEqualsOneBigBatch) {
  const auto common = student_sets({"train.max_steps=2", "checkpoint.every_steps=0", "model.hidden_dropout_prob=0.0",
                                    "model.attention_probs_dropout_prob=0.0", "distill.kl_all_positions=true"});
  auto run = [&](const std::string& name, std::vector<std::string> extra) {
    std::vector<StepStats> steps;
    auto sets = common;
    sets.insert(sets.end(), extra.begin(), extra.end());
    Trainer trainer(tiny_config(fresh_dir(name), sets), {});
    trainer.on_step([&](const StepStats& s) { steps.push_back(s); });
    EXPECT_EQ(trainer.run(), 0);
    return steps;
  };
  const auto big = run("distill_1x8", {"train.micro_batch_size=8", "train.grad_accum_steps=1"});
  const auto small = run("distill_4x2", {"train.micro_batch_size=2", "train.grad_accum_steps=4"});
  ASSERT_EQ(big.size(), 2u);
  ASSERT_EQ(small.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_NEAR(big[i].loss, small[i].loss, 1e-6);
    EXPECT_NEAR(big[i].distill_kl, small[i].distill_kl, 1e-6);
    EXPECT_NEAR(big[i].distill_cos, small[i].distill_cos, 1e-6);
    EXPECT_NEAR(big[i].distill_relation, small[i].distill_relation, 1e-6);
    EXPECT_NEAR(big[i].grad_norm, small[i].grad_norm, 1e-5 * big[i].grad_norm);
  }
}

TEST(DistillRun, APhaseThatSetsADistillKeyExitsTwoNamingIt) {
  const auto dir = fresh_dir("distill_phase_key");
  auto sets = tiny_overrides(dir / "run", student_sets({}));
  sets.push_back("phases=[{name: a, steps: 2}, {name: b, steps: 2, set: {distill.kl_weight: 0.5}}]");
  const pid_t pid = spawn(tiny_command("mlm-train", sets), dir / "out.txt", dir / "err.txt");
  EXPECT_EQ(wait_exit_code(pid), 2);
  const auto err = read_text(dir / "err.txt");
  EXPECT_NE(err.find("phases[1].set.distill.kl_weight"), std::string::npos) << err;
  EXPECT_NE(err.find("cannot change between phases"), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_FALSE(fs::exists(dir / "run")) << "nothing is written for a refused config";
}

TEST(DistillRun, BadTeachersExitTwoNamingTheKeyOrFile) {
  const auto dir = fresh_dir("distill_bad");
  // Missing.
  const auto missing = usage_error([&] {
    Trainer(tiny_config(dir / "a", student_sets({"distill.teacher=" + (dir / "nope").string()})), {});
  });
  EXPECT_NE(missing.find("distill.teacher: '" + (dir / "nope").string() + "'"), std::string::npos) << missing;
  // Damaged: model.pt cut short.
  const auto damaged = dir / "damaged";
  fs::copy(trained_teacher(), damaged);
  fs::resize_file(damaged / "model.pt", fs::file_size(damaged / "model.pt") / 2);
  const auto damaged_error = usage_error([&] {
    Trainer(tiny_config(dir / "b", student_sets({"distill.teacher=" + damaged.string()})), {});
  });
  EXPECT_NE(damaged_error.find("distill.teacher"), std::string::npos) << damaged_error;
  EXPECT_NE(damaged_error.find("model.pt"), std::string::npos) << damaged_error;
  // Another tokenizer: a run's checkpoint with a tokenizer of its own (150 pieces).
  const auto other_run = dir / "other_run";
  {
    Trainer trainer(tiny_config(other_run, {"tokenizer.model=" + (dir / "spm_other.model").string(),
                                            "tokenizer.vocab_size=150", "train.max_steps=1", "eval.every_steps=0"}),
                    {});
    ASSERT_EQ(trainer.run(), 0);
  }
  const auto other = other_run / "checkpoints" / "step_00000001";
  const auto tokenizer_error = usage_error([&] {
    Trainer(tiny_config(dir / "c", student_sets({"distill.teacher=" + other.string()})), {});
  });
  EXPECT_NE(tokenizer_error.find("distill.teacher"), std::string::npos) << tokenizer_error;
  EXPECT_NE(tokenizer_error.find((other / "tokenizer.model").string()), std::string::npos) << tokenizer_error;
  EXPECT_NE(tokenizer_error.find("spm_tiny.model"), std::string::npos) << tokenizer_error;
  std::cout << "[ distill ] " << tokenizer_error << "\n";
  // A relation layer outside the teacher, heads that do not split its width (128, 2 layers).
  EXPECT_NE(usage_error([&] {
              Trainer(tiny_config(dir / "d", student_sets({"distill.teacher_layer=2"})), {});
            }).find("distill.teacher_layer"),
            std::string::npos);
  EXPECT_NE(usage_error([&] {
              Trainer(tiny_config(dir / "e", student_sets({"distill.relation_heads=3"})), {});
            }).find("distill.relation_heads"),
            std::string::npos);
  EXPECT_NE(usage_error([&] {
              Trainer(tiny_config(dir / "f", student_sets({"distill.init_layers=[0,2]", "distill.init_every=0"})), {});
            }).find("distill.init_layers"),
            std::string::npos);
}

// ---- data parallel: two mlm-train ranks equal one process with the whole batch -----------------

/// A port the kernel has just handed out (bound to port 0, then released).
int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  socklen_t length = sizeof(address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);
  return ntohs(address.sin_port);
}

/// Starts mlm-train with `sets` and, for a rank of two, the torchrun variables.
pid_t start_rank(const fs::path& log_dir, const std::vector<std::string>& sets, int rank, int port) {
  std::vector<std::pair<std::string, std::string>> env;
  if (rank >= 0) {
    env = {{"RANK", std::to_string(rank)},      {"LOCAL_RANK", std::to_string(rank)},
           {"WORLD_SIZE", "2"},                 {"LOCAL_WORLD_SIZE", "2"},
           {"MASTER_ADDR", "127.0.0.1"},        {"MASTER_PORT", std::to_string(port)}};
  }
  const auto name = "rank" + std::to_string(rank);
  return spawn(tiny_command("mlm-train", sets), log_dir / (name + ".out"), log_dir / (name + ".err"), env);
}

TEST(DistillRun, TwoRanksEqualOneProcessWithTheWholeBatch) {
  const auto teacher = trained_teacher();  // trained here, in-process, before any child starts
  auto sets_for = [&](const fs::path& dir, int64_t micro_batch) {
    return student_sets({"train.output_dir=" + dir.string(), "train.max_steps=3", "checkpoint.every_steps=3",
                         "train.micro_batch_size=" + std::to_string(micro_batch), "model.hidden_dropout_prob=0.0",
                         "model.attention_probs_dropout_prob=0.0", "schedule.decay=constant",
                         "distributed.timeout_s=60"});
  };
  auto overrides = [&](const fs::path& dir, int64_t micro_batch) {
    auto sets = tiny_overrides(dir, sets_for(dir, micro_batch));
    return sets;
  };
  const auto one = fresh_dir("distill_dp_one"), two = fresh_dir("distill_dp_two");
  ASSERT_EQ(wait_exit_code(start_rank(one, overrides(one, 16), -1, 0)), 0) << read_text(one / "rank-1.err");
  const int port = free_port();
  const pid_t rank0 = start_rank(two, overrides(two, 8), 0, port);
  const pid_t rank1 = start_rank(two, overrides(two, 8), 1, port);
  EXPECT_EQ(wait_exit_code(rank0), 0) << read_text(two / "rank0.err");
  EXPECT_EQ(wait_exit_code(rank1), 0) << read_text(two / "rank1.err");

  std::vector<nlohmann::json> want, got;
  for (const auto& row : read_metrics(one)) if (row.contains("distill_kl")) want.push_back(row);
  for (const auto& row : read_metrics(two)) if (row.contains("distill_kl")) got.push_back(row);
  ASSERT_EQ(want.size(), 3u);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    for (const char* key : {"loss", "distill_kl", "distill_cos", "distill_relation", "grad_norm"}) {
      const double w = want[i][key].get<double>();
      EXPECT_NEAR(got[i][key].get<double>(), w, 1e-5 * std::max(1.0, std::abs(w))) << key << " at step " << i + 1;
    }
  }
  auto weights = [](const fs::path& dir) {
    return model::read_tensor_file((dir / "checkpoints" / "step_00000003" / "model.pt").string());
  };
  const auto a = weights(one), b = weights(two);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_LT((a[i].second - b[i].second).abs().max().item<double>(), 1e-5) << a[i].first;
  }
}

}  // namespace mlm::train::distill_test
