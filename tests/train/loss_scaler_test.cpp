// fp16's dynamic loss scale: halved and reset on overflow, doubled after growth_interval good
// steps in a row (torch.amp.GradScaler's rule), its state read back and restored exactly.
#include "mlm/train/loop/loss_scaler.h"

#include <gtest/gtest.h>

namespace mlm::train {
namespace loss_scaler_test {

const torch::Tensor kOverflow = torch::ones({});
const torch::Tensor kFinite = torch::zeros({});

TEST(LossScaler, DoublesAfterTheIntervalOfGoodStepsAndHalvesOnOverflow) {
  LossScaler scaler(1024, 3, torch::kCPU);
  EXPECT_EQ(scaler.state().scale, 1024);
  scaler.update(kFinite);
  scaler.update(kFinite);
  EXPECT_EQ(scaler.state().scale, 1024);
  EXPECT_EQ(scaler.state().growth_tracker, 2);
  scaler.update(kFinite);  // the third good step in a row
  EXPECT_EQ(scaler.state().scale, 2048);
  EXPECT_EQ(scaler.state().growth_tracker, 0);

  scaler.update(kFinite);
  scaler.update(kOverflow);  // halves and forgets the good step before it
  EXPECT_EQ(scaler.state().scale, 1024);
  EXPECT_EQ(scaler.state().growth_tracker, 0);
  scaler.update(kOverflow);
  EXPECT_EQ(scaler.state().scale, 512);
}

TEST(LossScaler, ScalesTheLossByTheCurrentScale) {
  LossScaler scaler(8, 2000, torch::kCPU);
  EXPECT_EQ(scaler.scaled(torch::full({}, 1.5)).item<double>(), 12.0);
  scaler.update(kOverflow);
  EXPECT_EQ(scaler.scaled(torch::full({}, 1.5)).item<double>(), 6.0);
}

TEST(LossScaler, RestoredStateContinuesAsTheOriginal) {
  LossScaler original(65536, 4, torch::kCPU);
  for (const auto& f : {kFinite, kOverflow, kFinite, kFinite}) original.update(f);
  LossScaler restored(65536, 4, torch::kCPU);
  restored.restore(original.state());
  EXPECT_EQ(restored.state().scale, 32768);
  EXPECT_EQ(restored.state().growth_tracker, 2);
  for (const auto& f : {kFinite, kFinite, kOverflow, kFinite}) {
    original.update(f);
    restored.update(f);
    EXPECT_EQ(restored.state().scale, original.state().scale);
    EXPECT_EQ(restored.state().growth_tracker, original.state().growth_tracker);
  }
}

}  // namespace loss_scaler_test
}  // namespace mlm::train
