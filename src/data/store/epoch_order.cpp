#include "mlm/data/store/epoch_order.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "mlm/data/index_permutation.h"
#include "mlm/data/seeded_random.h"

namespace mlm::data {
namespace {

constexpr int64_t kBlockBytes = 128 * 1024;

}  // namespace

EpochOrder::EpochOrder(int64_t sequences, int64_t block, int64_t group, uint64_t seed)
    : sequences_(sequences), block_(block), group_(group), seed_(seed) {
  if (sequences < 1 || block < 1 || group < 1) {
    throw std::invalid_argument("EpochOrder: sequences " + std::to_string(sequences) + ", block " +
                                std::to_string(block) + ", group " + std::to_string(group) +
                                " must all be >= 1");
  }
  full_blocks_ = sequences / block;
  full_windows_ = full_blocks_ / group;
  tail_sequences_ = sequences - full_windows_ * group * block;
}

int64_t EpochOrder::block_sequences(int64_t seq_len, int token_bytes) {
  return std::max<int64_t>(1, kBlockBytes / std::max<int64_t>(1, seq_len * token_bytes));
}

void EpochOrder::enter(int64_t epoch) {
  const auto e = static_cast<uint64_t>(epoch);
  block_order_ = seeded_permutation(full_blocks_, mix_seed({seed_, 0xB10Cull, e}));
  tail_slot_ = tail_sequences_ > 0
                   ? static_cast<int64_t>(SeededRandom(mix_seed({seed_, 0x7A11ull, e}))
                                              .below(static_cast<uint64_t>(full_windows_) + 1))
                   : 0;
  epoch_ = epoch;
}

int64_t EpochOrder::at(int64_t epoch, int64_t position) {
  if (epoch != epoch_) enter(epoch);
  const int64_t window = block_ * group_;
  const int64_t before_tail = tail_slot_ * window;
  if (position < before_tail) return in_full_window(position / window, position % window);
  if (position < before_tail + tail_sequences_) return in_tail(position - before_tail);
  const int64_t p = position - tail_sequences_;
  return in_full_window(p / window, p % window);
}

int64_t EpochOrder::in_full_window(int64_t window, int64_t local) const {
  const int64_t row = local / group_, column = local % group_;
  const int64_t block = block_order_[static_cast<size_t>(window * group_ + column)];
  const IndexPermutation rows(block_, mix_seed({seed_, 0x5EC0ull, static_cast<uint64_t>(epoch_),
                                                static_cast<uint64_t>(block)}));
  return block * block_ + rows(row);
}

int64_t EpochOrder::in_tail(int64_t local) const {
  // G columns, the first `longer` of them one row longer than the others.
  const int64_t rows = tail_sequences_ / group_, longer = tail_sequences_ % group_;
  const int64_t row = local < rows * group_ ? local / group_ : rows;
  const int64_t column = local < rows * group_ ? local % group_ : local - rows * group_;
  const int64_t column_start = column * rows + std::min(column, longer);
  const int64_t column_length = rows + (column < longer ? 1 : 0);
  const IndexPermutation shuffle(column_length, mix_seed({seed_, 0x7A1Cull, static_cast<uint64_t>(epoch_),
                                                          static_cast<uint64_t>(column)}));
  const int64_t i = column_start + shuffle(row);
  // The tail lists the leftover full blocks (in this epoch's order), then the short block.
  const int64_t tail_blocks = full_blocks_ - full_windows_ * group_;
  if (i < tail_blocks * block_) {
    const int64_t block = block_order_[static_cast<size_t>(full_windows_ * group_ + i / block_)];
    return block * block_ + i % block_;
  }
  return full_blocks_ * block_ + (i - tail_blocks * block_);
}

}  // namespace mlm::data
