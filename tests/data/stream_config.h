#pragma once
// The streaming settings the data tests share: 48-token sequences, a 16-sequence shuffle
// chunk, two workers, seed 7, the fixture corpus' valid.txt as the valid split.
#include <string>
#include <vector>

#include "mlm/config/run_config.h"
#include "text/tokenizer_fixture.h"

namespace mlm::testing {

inline config::RunConfig small_stream_config(std::vector<std::string> train_files) {
  config::RunConfig c;
  c.data.train_files = std::move(train_files);
  c.data.valid_files = {corpus_path("valid.txt")};
  c.data.seq_len = 48;
  c.data.shuffle_buffer = 16;
  c.data.num_workers = 2;
  c.data.prefetch_sequences = 8;
  c.train.seed = 7;
  return c;
}

}  // namespace mlm::testing
