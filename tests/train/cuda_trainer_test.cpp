// The trainer on a GPU: the tiny run gives the CPU's losses in fp32, close to them in bf16 and
// in fp16 (with its loss scale), and its checkpoint evaluates on the CPU (mlm-eval). Skipped
// without a CUDA device.
#include <ATen/Context.h>
#include <ATen/autocast_mode.h>
#include <gtest/gtest.h>

#include "cuda_skip.h"
#include "mlm/train/loop/autocast.h"
#include "mlm/train/run/trainer.h"
#include "train_test_util.h"

namespace mlm::train {
namespace {
using namespace testing;

// Dropout off: the CPU and CUDA generators draw different masks; the data and the MLM masks
// come from the (device-independent) pipeline.
std::vector<double> losses(const fs::path& dir, const std::string& device, const std::string& precision) {
  Trainer trainer(tiny_config(dir, {"train.device=" + device, "train.precision=" + precision,
                                    "train.max_steps=6", "model.hidden_dropout_prob=0",
                                    "model.attention_probs_dropout_prob=0"}));
  std::vector<double> out;
  trainer.on_step([&](const StepStats& s) { out.push_back(s.loss); });
  EXPECT_EQ(trainer.run(), 0);
  return out;
}

TEST(CudaTrainer, Fp32LossesMatchTheCpu) {
  MLM_SKIP_WITHOUT_CUDA_DEVICES(1);
  at::globalContext().setAllowTF32CuBLAS(false);
  const auto cpu = losses(fresh_dir("cuda_vs_cpu_cpu"), "cpu", "fp32");
  const auto gpu = losses(fresh_dir("cuda_vs_cpu_cuda"), "cuda", "fp32");
  ASSERT_EQ(cpu.size(), 6u);
  ASSERT_EQ(gpu.size(), cpu.size());
  for (size_t i = 0; i < cpu.size(); ++i) EXPECT_NEAR(gpu[i], cpu[i], 1e-3 * cpu[i]) << "step " << i + 1;
}

// Autocast rounds the products (bf16: 8 bits of mantissa, fp16: 11): the 6-step losses stay
// within 2% (bf16) / 0.5% (fp16) of the CPU's fp32 ones; a wrong unscaling under fp16 (the
// gradients left 65536 times too large) diverges at the second step.
TEST(CudaTrainer, Bf16AndFp16LossesStayCloseToTheCpusFp32) {
  MLM_SKIP_WITHOUT_CUDA_DEVICES(1);
  const auto cpu = losses(fresh_dir("cuda_half_cpu"), "cpu", "fp32");
  const auto bf16 = losses(fresh_dir("cuda_half_bf16"), "cuda", "bf16");
  const auto fp16 = losses(fresh_dir("cuda_half_fp16"), "cuda", "fp16");
  ASSERT_EQ(cpu.size(), 6u);
  ASSERT_EQ(bf16.size(), cpu.size());
  ASSERT_EQ(fp16.size(), cpu.size());
  for (size_t i = 0; i < cpu.size(); ++i) {
    EXPECT_NEAR(bf16[i], cpu[i], 0.02 * cpu[i]) << "bf16, step " << i + 1;
    EXPECT_NEAR(fp16[i], cpu[i], 0.005 * cpu[i]) << "fp16, step " << i + 1;
  }
}

TEST(CudaTrainer, Bf16RunCheckpointEvaluatesOnTheCpu) {
  MLM_SKIP_WITHOUT_CUDA_DEVICES(1);
  const auto dir = fresh_dir("cuda_bf16");
  const auto run = losses(dir, "cuda", "bf16");
  ASSERT_EQ(run.size(), 6u);
  for (double loss : run) EXPECT_TRUE(std::isfinite(loss));
  EXPECT_LT(run.back(), run.front());
  auto argv = tiny_command("mlm-eval", tiny_overrides(dir, {"train.device=cpu"}));
  argv.insert(argv.end(), {"--checkpoint", (dir / "checkpoints" / "step_00000006").string(), "--json"});
  const auto out = dir.parent_path() / "cuda_eval.out", err = dir.parent_path() / "cuda_eval.err";
  ASSERT_EQ(wait_exit_code(spawn(argv, out, err)), 0) << read_text(err);
  const auto json = nlohmann::json::parse(read_text(out));
  EXPECT_TRUE(std::isfinite(json["mlm_loss"].get<double>()));
  EXPECT_GT(json["num_masked"].get<int64_t>(), 0);
}

TEST(CudaTrainer, AutocastScopeEnablesCudaAutocastAndRestoresIt) {
  MLM_SKIP_WITHOUT_CUDA_DEVICES(1);
  ASSERT_FALSE(at::autocast::is_autocast_enabled(at::kCUDA));
  {
    AutocastScope scope(torch::kBFloat16, torch::Device(torch::kCUDA, 0));
    EXPECT_TRUE(at::autocast::is_autocast_enabled(at::kCUDA));
    EXPECT_FALSE(at::autocast::is_autocast_enabled(at::kCPU));
    EXPECT_EQ(at::autocast::get_autocast_dtype(at::kCUDA), at::kBFloat16);
    auto a = torch::ones({4, 4}, torch::Device(torch::kCUDA, 0));
    EXPECT_EQ(torch::matmul(a, a).scalar_type(), torch::kBFloat16);
  }
  EXPECT_FALSE(at::autocast::is_autocast_enabled(at::kCUDA));
}

}  // namespace
}  // namespace mlm::train
