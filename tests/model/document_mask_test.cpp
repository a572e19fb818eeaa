// model.attend_across_documents: false. A packed row [CLS] A [SEP] B [SEP] [PAD]: A's outputs
// are those of the row cut after A, no token of B changes them (and no token of A changes
// B's), while with the flag true they do; padding never produces NaN, also under bf16
// autocast; one document per row gives the padding mask's logits and gradients; the sparse
// head's forward_at (the last layer on selected queries only) matches the dense model; on a
// GPU (SDPA's CUDA kernels) the same in fp32 and under bf16 autocast.
#include <gtest/gtest.h>
#include <ATen/Context.h>
#include <ATen/autocast_mode.h>

#include "cuda_skip.h"
#include "mlm/model/bert/bert.h"
#include "model_test_util.h"

namespace mlm::model::document_mask_test {

using testing::expect_tensor_near;

constexpr int64_t kSeq = 14;
constexpr int64_t kFirstDocEnd = 6;  // [CLS] a a a a [SEP]: positions 0..5
constexpr int64_t kRealLength = 13;  // then b x6 [SEP]; position 13 is padding

config::ModelConfig config_for(config::NormPosition norm, bool attend_across) {
  auto cfg = testing::tiny_config(norm);
  cfg.objective = config::Objective::mlm;
  cfg.attend_across_documents = attend_across;
  return cfg;
}

BertForPreTraining make_model(const config::ModelConfig& cfg, uint64_t seed = 3) {
  torch::manual_seed(seed);
  BertForPreTraining model(cfg, testing::kTinyVocab, testing::kTinyPad);
  model->eval();
  return model;
}

/// Two packed rows [CLS] A [SEP] B [SEP] [PAD] with random A and B, document ids 1, 2 and 0.
MlmInputs packed_rows(uint64_t seed) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  MlmInputs in;
  in.input_ids = torch::randint(5, testing::kTinyVocab, {2, kSeq}, gen, torch::kLong);
  in.input_ids.select(1, 0).fill_(2);
  in.input_ids.select(1, kFirstDocEnd - 1).fill_(3);
  in.input_ids.select(1, kRealLength - 1).fill_(3);
  in.input_ids.select(1, kRealLength).fill_(testing::kTinyPad);
  in.token_type_ids = torch::zeros({2, kSeq}, torch::kLong);
  in.attention_mask = torch::ones({2, kSeq}, torch::kLong);
  in.attention_mask.select(1, kRealLength).zero_();
  in.has_padding = true;
  in.document_ids = torch::ones({2, kSeq}, torch::kLong);
  in.document_ids.narrow(1, kFirstDocEnd, kRealLength - kFirstDocEnd).fill_(2);
  in.document_ids.select(1, kRealLength).zero_();
  in.masked_positions = torch::tensor({int64_t{2}, int64_t{8}, kSeq + 4, kSeq + 10}, torch::kLong);
  in.masked_labels = torch::tensor({11, 12, 13, 14}, torch::kLong);
  return in;
}

torch::Tensor hidden(BertForPreTraining& model, const MlmInputs& in) {
  torch::NoGradGuard no_grad;
  return model->bert->forward(in.input_ids, in.token_type_ids, attention_bias_for(in, model->config()));
}

/// The inputs with every id of positions [from, to) redrawn (none equal to the old one).
MlmInputs with_changed_ids(MlmInputs in, int64_t from, int64_t to, uint64_t seed) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  auto span = in.input_ids.narrow(1, from, to - from);
  in.input_ids = in.input_ids.clone();
  auto changed = (span + torch::randint(1, testing::kTinyVocab - 5, span.sizes(), gen, torch::kLong) - 5)
                     .remainder(testing::kTinyVocab - 5) + 5;
  in.input_ids.narrow(1, from, to - from).copy_(changed);
  return in;
}

double max_diff(const torch::Tensor& a, const torch::Tensor& b) { return (a - b).abs().max().item<double>(); }

TEST(DocumentMask, TheBiasIsBlockDiagonalAndKeepsPaddingApart) {
  MlmInputs in;
  in.input_ids = torch::zeros({1, 5}, torch::kLong);
  in.document_ids = torch::tensor({{1, 1, 2, 2, 0}}, torch::kLong);
  in.attention_mask = torch::tensor({{1, 1, 1, 1, 0}}, torch::kLong);
  in.has_padding = true;
  const auto bias = attention_bias_for(in, config_for(config::NormPosition::post, false));
  ASSERT_EQ(bias.sizes().vec(), (std::vector<int64_t>{1, 1, 5, 5}));
  EXPECT_EQ(bias.scalar_type(), torch::kFloat32);
  const auto allowed = bias.eq(0).squeeze().to(torch::kLong);
  const auto want = torch::tensor({{1, 1, 0, 0, 0},
                                   {1, 1, 0, 0, 0},
                                   {0, 0, 1, 1, 0},
                                   {0, 0, 1, 1, 0},
                                   {0, 0, 0, 0, 1}},  // a padding query sees only padding
                                  torch::kLong);
  EXPECT_TRUE(torch::equal(allowed, want)) << allowed;
  EXPECT_EQ(bias.min().item<float>(), static_cast<float>(kMaskedBias));
  // The flag true, or no document ids: the padding bias alone.
  EXPECT_EQ(attention_bias_for(in, config_for(config::NormPosition::post, true)).sizes().vec(),
            (std::vector<int64_t>{1, 1, 1, 5}));
  auto no_ids = in;
  no_ids.document_ids = torch::Tensor();
  EXPECT_EQ(attention_bias_for(no_ids, config_for(config::NormPosition::post, false)).sizes().vec(),
            (std::vector<int64_t>{1, 1, 1, 5}));
  // Built once in the dtype the attention runs in.
  at::autocast::set_autocast_enabled(at::kCPU, true);
  at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
  const auto under_autocast = attention_bias_for(in, config_for(config::NormPosition::post, false));
  at::autocast::set_autocast_enabled(at::kCPU, false);
  EXPECT_EQ(under_autocast.scalar_type(), torch::kBFloat16);
  EXPECT_TRUE(torch::equal(under_autocast.eq(0), bias.eq(0)));
}

TEST(DocumentMask, TheFirstDocumentEqualsTheRowCutAfterIt) {
  for (auto norm : {config::NormPosition::post, config::NormPosition::pre}) {
    SCOPED_TRACE(norm == config::NormPosition::post ? "post-LN" : "pre-LN");
    auto apart = make_model(config_for(norm, false));
    const auto in = packed_rows(1);
    MlmInputs cut;
    cut.input_ids = in.input_ids.narrow(1, 0, kFirstDocEnd);
    cut.token_type_ids = in.token_type_ids.narrow(1, 0, kFirstDocEnd);
    cut.has_padding = false;
    const auto alone = hidden(apart, cut);
    const auto packed = hidden(apart, in);
    expect_tensor_near(packed.narrow(1, 0, kFirstDocEnd), alone, 1e-5, "first document, packed vs alone");
    EXPECT_TRUE(torch::isfinite(packed).all().item<bool>()) << "the padding row is finite";
    // Attending across documents, B changes A's outputs.
    auto across = make_model(config_for(norm, true));
    EXPECT_GT(max_diff(hidden(across, in).narrow(1, 0, kFirstDocEnd), hidden(across, cut)), 1e-3);
  }
}

TEST(DocumentMask, NoTokenOfOneDocumentChangesTheOther) {
  for (auto norm : {config::NormPosition::post, config::NormPosition::pre}) {
    SCOPED_TRACE(norm == config::NormPosition::post ? "post-LN" : "pre-LN");
    auto apart = make_model(config_for(norm, false));
    auto across = make_model(config_for(norm, true));
    const auto in = packed_rows(2);
    const auto base_apart = hidden(apart, in), base_across = hidden(across, in);
    for (int64_t p = kFirstDocEnd; p < kRealLength - 1; ++p) {  // each token of B alone
      const auto changed = with_changed_ids(in, p, p + 1, 10 + static_cast<uint64_t>(p));
      const auto got = hidden(apart, changed);
      expect_tensor_near(got.narrow(1, 0, kFirstDocEnd), base_apart.narrow(1, 0, kFirstDocEnd), 1e-6,
                         "A after changing B's position " + std::to_string(p));
      EXPECT_GT(max_diff(got.narrow(1, p, 1), base_apart.narrow(1, p, 1)), 1e-3) << "the change shows at " << p;
      EXPECT_GT(max_diff(hidden(across, changed).narrow(1, 0, kFirstDocEnd),
                         base_across.narrow(1, 0, kFirstDocEnd)),
                1e-4)
          << "across documents, position " << p << " reaches A";
    }
    // And A's tokens leave B alone.
    const auto changed_a = with_changed_ids(in, 1, kFirstDocEnd - 1, 30);
    expect_tensor_near(hidden(apart, changed_a).narrow(1, kFirstDocEnd, kRealLength - kFirstDocEnd),
                       base_apart.narrow(1, kFirstDocEnd, kRealLength - kFirstDocEnd), 1e-6, "B after changing A");
  }
}

TEST(DocumentMask, StaysApartAndFiniteUnderBf16Autocast) {
  auto apart = make_model(config_for(config::NormPosition::pre, false));
  const auto in = packed_rows(4);
  const auto changed = with_changed_ids(in, kFirstDocEnd, kRealLength - 1, 40);
  at::autocast::set_autocast_enabled(at::kCPU, true);
  at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
  torch::Tensor base, got;
  MlmOutput out;
  try {
    base = hidden(apart, in);
    got = hidden(apart, changed);
    apart->train();
    out = apart->forward(in, true);
  } catch (...) {
    at::autocast::set_autocast_enabled(at::kCPU, false);
    throw;
  }
  at::autocast::set_autocast_enabled(at::kCPU, false);
  at::autocast::clear_cache();
  EXPECT_TRUE(torch::isfinite(base).all().item<bool>());
  expect_tensor_near(got.narrow(1, 0, kFirstDocEnd), base.narrow(1, 0, kFirstDocEnd), 1e-6, "A under bf16");
  ASSERT_TRUE(std::isfinite(out.mlm_loss_sum.item<double>()));
  out.mlm_loss_sum.backward();
  for (const auto& p : apart->named_parameters()) {
    if (p.value().grad().defined()) EXPECT_TRUE(torch::isfinite(p.value().grad()).all().item<bool>()) << p.key();
  }
}

// Rows of one document each: the [B,1,S,S] bias gives the [B,1,1,S] padding bias's logits and
// gradients, so the masked path adds nothing but the mask.
TEST(DocumentMask, OneDocumentPerRowMatchesThePaddingMaskWithGradients) {
  auto cfg = config_for(config::NormPosition::post, false);
  cfg.sparse_head = false;
  auto apart = make_model(cfg, 5);
  cfg.attend_across_documents = true;
  auto across = make_model(cfg, 5);
  apart->train();
  across->train();  // dropout is 0 in the tiny config
  auto in = packed_rows(5);
  in.document_ids = in.attention_mask.clone();
  const auto want = across->forward(in, true);
  const auto got = apart->forward(in, true);
  expect_tensor_near(got.mlm_logits, want.mlm_logits, 1e-5, "logits");
  want.mlm_loss_sum.backward();
  got.mlm_loss_sum.backward();
  const auto reference = across->named_parameters();
  int with_gradient = 0;
  for (const auto& item : apart->named_parameters()) {
    const auto& grad = item.value().grad();
    ASSERT_TRUE(grad.defined()) << item.key();
    with_gradient += grad.abs().sum().item<double>() > 0;
    expect_tensor_near(grad, reference[item.key()].grad(), 1e-5, "gradient of " + item.key());
  }
  EXPECT_GE(with_gradient, 20);
}

// The sparse head runs the last layer on the selected queries only and must cut the bias to
// their rows: the same logits and gradients as the dense model, with rows holding 3, 0 and 2
// selected positions, three documents in a row and padding.
TEST(DocumentMask, SparseLastLayerMatchesTheDenseModel) {
  for (auto norm : {config::NormPosition::post, config::NormPosition::pre}) {
    SCOPED_TRACE(norm == config::NormPosition::post ? "post-LN" : "pre-LN");
    auto cfg = config_for(norm, false);
    cfg.sparse_head = true;
    auto sparse = make_model(cfg, 7);
    cfg.sparse_head = false;
    auto dense = make_model(cfg, 8);
    load_hf_state_dict(dense, to_hf_state_dict(sparse), "sparse model");
    sparse->train();
    dense->train();

    auto gen = at::make_generator<at::CPUGeneratorImpl>(9);
    MlmInputs in;
    in.input_ids = torch::randint(5, testing::kTinyVocab, {3, 10}, gen, torch::kLong);
    in.token_type_ids = torch::zeros({3, 10}, torch::kLong);
    in.attention_mask = torch::ones({3, 10}, torch::kLong);
    in.attention_mask.select(0, 2).narrow(0, 8, 2).zero_();
    in.has_padding = true;
    in.document_ids = torch::tensor({{1, 1, 1, 2, 2, 2, 3, 3, 3, 3},
                                     {1, 1, 1, 1, 1, 2, 2, 2, 2, 2},
                                     {1, 1, 1, 1, 2, 2, 2, 2, 0, 0}},
                                    torch::kLong);
    in.masked_positions = torch::tensor({1, 4, 9, 21, 27}, torch::kLong);
    in.masked_labels = torch::tensor({5, 17, 40, 3, 96}, torch::kLong);

    testing::expect_sparse_matches_dense(sparse, dense, in);
    // And the documents stay apart on the sparse path too: another row-0 document 1 leaves
    // the logits at row 0's positions 4 and 9 (documents 2 and 3) as they were.
    torch::NoGradGuard no_grad;
    sparse->eval();
    auto changed = in;
    changed.input_ids = in.input_ids.clone();
    changed.input_ids[0].narrow(0, 0, 3).fill_(50);
    const auto before = sparse->forward(in, true).mlm_logits;
    const auto after = sparse->forward(changed, true).mlm_logits;
    expect_tensor_near(after.narrow(0, 1, 2), before.narrow(0, 1, 2), 1e-6, "row 0, documents 2 and 3");
    EXPECT_GT(max_diff(after.narrow(0, 0, 1), before.narrow(0, 0, 1)), 1e-4) << "row 0, document 1 changed";
  }
}

MlmInputs to_device(MlmInputs in, const torch::Device& device) {
  for (auto* t : {&in.input_ids, &in.token_type_ids, &in.attention_mask, &in.document_ids, &in.masked_positions,
                  &in.masked_labels}) {
    if (t->defined()) *t = t->to(device);
  }
  return in;
}

TEST(CudaDocumentMask, MatchesTheCpuAndStaysApartUnderBf16) {
  MLM_SKIP_WITHOUT_CUDA_DEVICES(1);
  at::globalContext().setAllowTF32CuBLAS(false);  // fp32 products as on the CPU
  const torch::Device cuda(torch::kCUDA, 0);
  auto model = make_model(config_for(config::NormPosition::pre, false));
  const auto in = packed_rows(6);
  const auto on_cpu = hidden(model, in);
  model->to(cuda);
  const auto in_cuda = to_device(in, cuda);
  expect_tensor_near(hidden(model, in_cuda), on_cpu, 1e-4, "CUDA vs CPU");
  const auto changed = to_device(with_changed_ids(in, kFirstDocEnd, kRealLength - 1, 60), cuda);
  at::autocast::set_autocast_enabled(at::kCUDA, true);
  at::autocast::set_autocast_dtype(at::kCUDA, at::kBFloat16);
  const auto base = hidden(model, in_cuda);
  const auto got = hidden(model, changed);
  model->train();
  auto out = model->forward(in_cuda, true);
  at::autocast::set_autocast_enabled(at::kCUDA, false);
  at::autocast::clear_cache();
  EXPECT_TRUE(torch::isfinite(base).all().item<bool>());
  expect_tensor_near(got.narrow(1, 0, kFirstDocEnd), base.narrow(1, 0, kFirstDocEnd), 1e-5, "A under CUDA bf16");
  ASSERT_TRUE(std::isfinite(out.mlm_loss_sum.item<double>()));
  out.mlm_loss_sum.backward();
  for (const auto& p : model->named_parameters()) {
    if (p.value().grad().defined()) EXPECT_TRUE(torch::isfinite(p.value().grad()).all().item<bool>()) << p.key();
  }
}

}  // namespace mlm::model::document_mask_test
