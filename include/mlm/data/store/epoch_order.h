#pragma once
// The order of a prepared split's sequences in an epoch: a seeded bijection from a position
// in the epoch to a sequence index, shuffled over the whole store, such that each
// data-parallel rank reads about 1/N of the store's pages.
//
// G sequences make a global batch (prepared_dataset.h: those of one optimizer step over all
// ranks, G = N * L); rank r takes the contiguous slice [r*L, (r+1)*L) of it, called B below. Blocks are runs of K consecutive sequences (about
// 128 KiB of tokens, block_sequences()). Per epoch e, the full blocks are permuted (seed of
// train.seed and e), and grouped in windows of G blocks. A window is read as a K x G matrix,
// row by row: global micro-batch t of the window takes the t-th sequence (in the block's
// own seeded order, index_permutation.h) of each of the window's G blocks, column c from
// block c. So a global micro-batch draws G sequences from G random places of the store, and
// rank r reads only the blocks of its B columns of each window.
//
// The rest (the blocks after the last full window, then the sequences after the last full
// block) is one tail window, placed at a seeded window slot of the epoch: its n sequences, in
// block order, are cut into G contiguous columns of n/G (the first n % G one longer), each
// shuffled on its own and read row by row the same way. So the epoch stays a bijection, and
// a store smaller than one window (n < K*G) keeps the locality too.
//
// Nothing here depends on the world size alone: N ranks x B see exactly the order 1 x N*B
// sees (G is the same). When an epoch's size is not a multiple of G, micro-batches straddle the epoch end and
// the windows after the tail start mid-micro-batch: a rank's B columns then wrap around the
// row, and it still reads B of each window's G columns.
#include <cstdint>
#include <vector>

namespace mlm::data {

class EpochOrder {
 public:
  /// `sequences` >= 1 in the epoch, `block` (K) >= 1, `group` (G) >= 1.
  EpochOrder(int64_t sequences, int64_t block, int64_t group, uint64_t seed);

  /// The sequence at `position` (0 <= position < sequences) of epoch `epoch`. O(1), after
  /// an O(blocks) setup the first time an epoch is asked for (one epoch is cached).
  int64_t at(int64_t epoch, int64_t position);

  int64_t sequences() const { return sequences_; }
  int64_t block() const { return block_; }

  /// K for sequences of seq_len tokens of token_bytes each: about 128 KiB of tokens, >= 1.
  static int64_t block_sequences(int64_t seq_len, int token_bytes);

 private:
  void enter(int64_t epoch);
  int64_t in_full_window(int64_t window, int64_t local) const;
  int64_t in_tail(int64_t local) const;

  int64_t sequences_, block_, group_;
  uint64_t seed_;
  int64_t full_blocks_, full_windows_, tail_sequences_;
  int64_t epoch_ = -1;
  int64_t tail_slot_ = 0;             // full windows before the tail window
  std::vector<int64_t> block_order_;  // this epoch's permutation of the full blocks
};

}  // namespace mlm::data
