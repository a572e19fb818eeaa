#pragma once
// One corpus's streaming text split as an IndexedSequences, for a weighted mixture
// (mixture/mixture_source.h): the whole global stream of a StreamingDataset opened as rank 0 of 1
// (every sequence, in the order one process would train on them), read in order; at(g)
// reads and drops the sequences before g that were not asked for.
#include <nlohmann/json.hpp>

#include <memory>

#include "mlm/data/sequence_source.h"
#include "mlm/data/stream/streaming_dataset.h"

namespace mlm::data {

class StreamingIndexedSequences : public IndexedSequences {
 public:
  /// `plan` names the corpus in data.train_files (data.valid_files for a valid split of
  /// other files); its rank and world size do not matter. `resume` (null = the start) is a
  /// resume_state() of this class over the same files; DataError when it is not.
  StreamingIndexedSequences(const config::DataPlan& plan, const text::Tokenizer& tokenizer,
                            Split split, const nlohmann::json* resume = nullptr);

  bool at(int64_t g, PackedSequence& out) override;
  /// {"kind": "text-indexed", "next": the index after the last one asked for,
  ///  "position": the stream's resume_state() just after that sequence}.
  nlohmann::json resume_state() const override;
  int64_t epoch() const override { return stream_->epoch(); }
  DataCounters counters() const override { return stream_->counters(); }

 private:
  std::unique_ptr<StreamingDataset> stream_;
  int64_t next_ = 0;  // index of the sequence the stream returns next
  bool ended_ = false;
};

}  // namespace mlm::data
