// Reference parity of every registered architecture's body, llm.c style: the C++ model's logits
// at the selected positions, its loss and every gradient against the reference's (fp32: logits
// 1e-5, loss 1e-4, gradients 1e-4; the correct count exactly; an NSP head's loss 1e-5), with no
// gradient reaching the padded vocabulary rows. The cases and where their reference comes from
// are body_reference_cases.cpp's; the suite's parameters are the registry's names
// (src/model/architectures.cpp), so a new architecture is a test here that fails until the table
// holds its cases or says where its body is held to a reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <tuple>

#include "config/config_test_util.h"
#include "mlm/model/architectures.h"
#include "model/body_reference.h"
#include "model_test_util.h"

// A named namespace: the unity build compiles this file with the other model tests.
namespace mlm::model::body_reference {
namespace {

using testing::expect_tensor_near;

/// One registered architecture and one of its cases (-1: it has none here).
struct Param {
  std::string architecture;
  int index;
};

// gtest prints a parameter with the test's name.
void PrintTo(const Param& p, std::ostream* os) { *os << p.architecture << " case " << p.index; }

std::vector<Param> registered_cases() {
  std::vector<Param> params;
  for (const auto* spec : architecture_specs()) {
    const std::string name(config::to_string(spec->architecture()));
    const auto entry = body_references().find(name);
    const int count = entry == body_references().end() ? 0 : static_cast<int>(entry->second.cases.size());
    if (count == 0) params.push_back({name, -1});
    for (int i = 0; i < count; ++i) params.push_back({name, i});
  }
  return params;
}

std::string name_of(const ::testing::TestParamInfo<Param>& info) {
  const auto& p = info.param;
  return p.index < 0 ? p.architecture : p.architecture + "_" + body_references().at(p.architecture).cases[p.index].name;
}

/// Every gradient within 1e-4 of the largest magnitude of its tensor; a key bias's (zero but for
/// rounding: it adds one constant to all of a query's scores, which the softmax ignores) below
/// 1e-6 on both sides. Returns how many were compared and the worst relative difference.
std::pair<int, double> expect_relative_gradients(MaskedLm model, const std::map<std::string, torch::Tensor>& ref) {
  std::map<std::string, torch::Tensor> grads;
  for (auto& [key, grad] : model->hf_gradients()) grads[key] = grad;
  int checked = 0;
  double worst = 0;
  const std::string key_bias = "attention.self.key.bias";
  for (const auto& [name, want] : ref) {
    if (name.rfind("grad.", 0) != 0) continue;
    const auto key = name.substr(5);
    EXPECT_TRUE(grads.count(key) && grads[key].defined()) << key;
    if (!grads.count(key) || !grads[key].defined()) continue;
    ++checked;
    if (key.size() > key_bias.size() && key.compare(key.size() - key_bias.size(), key_bias.size(), key_bias) == 0) {
      EXPECT_LT(grads[key].abs().max().item<double>(), 1e-6) << key;
      EXPECT_LT(want.abs().max().item<double>(), 1e-6) << key;
      continue;
    }
    const double scale = want.abs().max().item<double>();
    EXPECT_GT(scale, 0) << key;
    expect_tensor_near(grads[key], want, 1e-4 * scale, "grad " + key);
    worst = std::max(worst, (grads[key].to(torch::kFloat64) - want.to(torch::kFloat64)).abs().max().item<double>() / scale);
  }
  return {checked, worst};
}

/// The largest absolute gradient difference (for the record; the checks are the tolerances).
double worst_gradient(MaskedLm model, const std::map<std::string, torch::Tensor>& ref) {
  double worst = 0;
  for (auto& [key, grad] : model->hf_gradients()) {
    const auto it = ref.find("grad." + key);
    if (it == ref.end() || !grad.defined()) continue;
    worst = std::max(worst, (grad.cpu().to(torch::kFloat64) - it->second.to(torch::kFloat64)).abs().max().item<double>());
  }
  return worst;
}

class BodyReferenceParity : public ::testing::TestWithParam<Param> {};

TEST_P(BodyReferenceParity, MatchesTheReference) {
  const Param p = GetParam();
  const auto entry = body_references().find(p.architecture);
  ASSERT_TRUE(entry != body_references().end())
      << "registered architecture " << p.architecture << " has no entry in tests/model/body_reference_cases.cpp";
  const BodyReference& body = entry->second;
  if (p.index < 0) GTEST_SKIP() << p.architecture << ": " << body.elsewhere;
  config::testing::TempDir dir;
  ReferenceRun run = body.cases[p.index].run(dir.path());
  ASSERT_FALSE(run.ref.empty());
  auto& ref = run.ref;
  const auto& in = run.in;

  auto out = run.model->forward(in, /*return_logits=*/true);
  expect_tensor_near(out.mlm_logits, ref["logits"], 1e-5, "logits");
  expect_tensor_near(out.mlm_loss_sum, ref["loss_sum"], 1e-4, "loss_sum");
  EXPECT_EQ(out.mlm_correct.item<int64_t>(), ref["correct"].item<int64_t>());
  auto loss = out.mlm_loss_sum / static_cast<double>(in.masked_labels.numel());
  if (run.model->has_nsp_head()) {
    ASSERT_TRUE(out.nsp_loss_sum.defined());
    expect_tensor_near(out.nsp_loss_sum, ref["nsp_loss_sum"], 1e-5, "nsp_loss_sum");
    EXPECT_EQ(out.nsp_correct.item<int64_t>(), ref["nsp_correct"].item<int64_t>());
    loss = loss + out.nsp_loss_sum / static_cast<double>(in.input_ids.size(0));
  }
  loss.backward();

  int checked = 0;
  double worst = 0;
  if (body.gradients == GradientTolerance::relative_to_largest) {
    std::tie(checked, worst) = expect_relative_gradients(run.model, ref);
  } else {
    checked = testing::expect_reference_gradients(run.model, ref, 1e-4);
    worst = worst_gradient(run.model, ref);
  }
  // Padded vocabulary rows never receive gradient.
  const int64_t vocab = run.model->vocab_size(), padded = run.model->padded_vocab_size();
  if (padded > vocab)
    EXPECT_EQ(run.model->word_embeddings().grad().narrow(0, vocab, padded - vocab).abs().sum().item<double>(), 0.0);
  if (body.after_gradients) body.after_gradients(run, checked, dir.path());
  std::cout << name_of({p, 0}) << ": max |logits diff| " << (out.mlm_logits.detach() - ref["logits"]).abs().max().item<double>()
            << ", loss_sum diff " << (out.mlm_loss_sum.detach() - ref["loss_sum"]).abs().item<double>() << ", worst gradient diff "
            << worst << (body.gradients == GradientTolerance::relative_to_largest ? " / max" : "") << " over " << checked
            << " tensors\n";
}

INSTANTIATE_TEST_SUITE_P(Registered, BodyReferenceParity, ::testing::ValuesIn(registered_cases()), name_of);

// Every entry is a registered architecture, and one without cases says where its body is tested.
TEST(BodyReferenceTable, EveryEntryIsRegisteredAndEveryGapNamesItsTest) {
  std::vector<std::string> names;
  for (const auto* spec : architecture_specs()) names.emplace_back(config::to_string(spec->architecture()));
  for (const auto& [name, body] : body_references()) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name << " is not registered";
    if (body.cases.empty()) EXPECT_FALSE(body.elsewhere.empty()) << name << " has no cases and names no other test";
  }
  for (const auto& name : names) EXPECT_EQ(body_references().count(name), 1u) << name << " has no entry";
}

}  // namespace
}  // namespace mlm::model::body_reference
