// The prepared store's epoch order: a bijection per epoch, different across epochs and seeds,
// the same for any split of G into ranks, and each rank reading about 1/N of the blocks.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "mlm/data/store/epoch_order.h"
#include "mlm/data/index_permutation.h"

namespace mlm::data::epoch_order_test {

std::vector<int64_t> epoch_of(EpochOrder& order, int64_t epoch) {
  std::vector<int64_t> out;
  for (int64_t p = 0; p < order.sequences(); ++p) out.push_back(order.at(epoch, p));
  return out;
}

bool is_bijection(const std::vector<int64_t>& v) {
  std::vector<char> seen(v.size(), 0);
  for (int64_t x : v) {
    if (x < 0 || x >= static_cast<int64_t>(v.size()) || seen[static_cast<size_t>(x)]) return false;
    seen[static_cast<size_t>(x)] = 1;
  }
  return true;
}

TEST(IndexPermutation, IsABijectionForAnySize) {
  for (int64_t n : {1, 2, 3, 5, 16, 17, 100, 1000, 4097}) {
    const IndexPermutation p(n, 99);
    std::vector<int64_t> v;
    for (int64_t i = 0; i < n; ++i) v.push_back(p(i));
    EXPECT_TRUE(is_bijection(v)) << "n = " << n;
  }
}

TEST(EpochOrder, IsABijectionPerEpochForAwkwardSizes) {
  // (sequences, block, group): short last block, partial windows, a store smaller than one
  // window, one block, G = 1, K = 1.
  const int64_t cases[][3] = {{1, 1, 1},    {7, 3, 2},     {100, 7, 4},  {1000, 16, 8},
                              {1001, 16, 8}, {1023, 32, 64}, {5, 512, 16}, {4096, 1, 3},
                              {999, 10, 1}};
  for (const auto& c : cases) {
    EpochOrder order(c[0], c[1], c[2], 42);
    for (int64_t e : {0, 1, 5}) {
      EXPECT_TRUE(is_bijection(epoch_of(order, e))) << c[0] << " " << c[1] << " " << c[2] << " epoch " << e;
    }
  }
}

TEST(EpochOrder, DiffersAcrossEpochsAndSeeds) {
  EpochOrder a(5000, 16, 8, 1), b(5000, 16, 8, 2);
  const auto a0 = epoch_of(a, 0), a1 = epoch_of(a, 1), b0 = epoch_of(b, 0);
  EXPECT_NE(a0, a1);
  EXPECT_NE(a0, b0);
  EXPECT_EQ(epoch_of(a, 0), a0);  // going back to an epoch gives it again
  // Not close to the identity either: few sequences stay in place.
  int64_t fixed = 0;
  for (size_t i = 0; i < a0.size(); ++i) fixed += a0[i] == static_cast<int64_t>(i);
  EXPECT_LT(fixed, 50);
}

TEST(EpochOrder, AGlobalMicroBatchDrawsFromGDifferentBlocks) {
  const int64_t K = 32, G = 16;
  EpochOrder order(K * G * 4, K, G, 7);  // four whole windows
  for (int64_t t = 0; t < K * 4; ++t) {
    std::set<int64_t> blocks;
    for (int64_t c = 0; c < G; ++c) blocks.insert(order.at(0, t * G + c) / K);
    EXPECT_EQ(static_cast<int64_t>(blocks.size()), G) << "micro-batch " << t;
  }
}

// Rank r of N with micro-batch B takes positions with (p % G) / B == r. The distinct runs of
// `unit` consecutive sequences (a block, or finer for a store smaller than a window) it
// touches in an epoch, for sizes with and without a tail window.
void expect_locality(int64_t sequences, int64_t K, int64_t N, int64_t B, double slack, int64_t unit = 0) {
  const int64_t G = N * B;
  EpochOrder order(sequences, K, G, 3);
  if (unit == 0) unit = K;
  const int64_t blocks = (sequences + unit - 1) / unit;
  for (int64_t e : {0, 1}) {
    std::vector<std::set<int64_t>> touched(static_cast<size_t>(N));
    for (int64_t p = 0; p < sequences; ++p) {
      // Global positions across epochs: epoch e starts at e * sequences.
      const int64_t g = e * sequences + p;
      touched[static_cast<size_t>((g % G) / B)].insert(order.at(e, p) / unit);
    }
    for (int64_t r = 0; r < N; ++r) {
      EXPECT_LE(static_cast<double>(touched[static_cast<size_t>(r)].size()), slack * static_cast<double>(blocks) / N)
          << "rank " << r << " of " << N << ", epoch " << e << ", " << sequences << " sequences";
    }
  }
}

TEST(EpochOrder, EachRankTouchesAboutOneNthOfTheBlocks) {
  expect_locality(64 * 16 * 10, 64, 4, 4, 1.01);      // whole windows only
  expect_locality(64 * 16 * 10 + 777, 64, 4, 4, 1.15);  // plus a tail window, epochs misaligned
  expect_locality(3000, 64, 4, 2, 1.3, 8);            // smaller than one window: all tail
  expect_locality(20000, 50, 2, 8, 1.1);
}

TEST(EpochOrder, BlockIsAbout128KiB) {
  EXPECT_EQ(EpochOrder::block_sequences(128, 2), 512);
  EXPECT_EQ(EpochOrder::block_sequences(512, 4), 64);
  EXPECT_EQ(EpochOrder::block_sequences(1 << 20, 4), 1);
}

}  // namespace mlm::data::epoch_order_test
