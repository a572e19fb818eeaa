// What RoBERTa's runs have beyond every architecture's round trip
// (architecture_round_trip_test.cpp): a position table without room for the offset of pad id
// + 1 is one line.
#include <gtest/gtest.h>

#include "cli/hf_client.h"

// Named, not anonymous: the unity build compiles the cli tests together.
namespace mlm::cli::roberta_round_trip {

using config::testing::TempDir;
using namespace testing;

TEST(RobertaRoundTrip, APositionTableWithoutRoomForTheOffsetIsOneLine) {
  TempDir dir;
  const CliRun run = run_tool("mlm-train", dir,
                              tiny_args(dir, {"--set", "model.architecture=roberta", "--set", "model.type_vocab_size=1",
                                              "--set", "model.layer_norm_eps=1e-5", "--set",
                                              "model.max_position_embeddings=64", "--set",
                                              "train.output_dir=" + (dir.path() / "run").string()}),
                              false);
  expect_bad_input_line(run, {"model.max_position_embeddings", "data.seq_len 64", "65"});
}

}  // namespace mlm::cli::roberta_round_trip
