#include "mlm/data/store/prepared_dataset.h"

#include <algorithm>

#include "mlm/util/errors.h"
#include "mlm/util/logging.h"

namespace mlm::data {
namespace prepared_dataset_detail {

/// The sequences of one optimizer step over all ranks: the order's global batch.
int64_t global_batch_of(const config::DataPlan& plan) {
  return plan.world_size * plan.step_sequences;
}

/// The train split's order over `split`: by the plan's global batch, seeded by its seed.
EpochOrder train_order(const config::DataPlan& plan, const PreparedSplit& split) {
  return EpochOrder(split.size(),
                    EpochOrder::block_sequences(plan.data.seq_len, split.token_bytes()),
                    global_batch_of(plan), plan.seed);
}

int64_t read_count(const nlohmann::json& state, const char* key) {
  const auto it = state.find(key);
  if (it == state.end() || !it->is_number_integer() || it->get<int64_t>() < 0) {
    throw DataError(std::string("data position: missing or bad '") + key + "'");
  }
  return it->get<int64_t>();
}

void check_kind(const nlohmann::json& state, const char* want) {
  if (!state.is_object() || state.value("kind", "") != want) {
    throw ConfigError(std::string("data position is of kind ") +
                          (state.is_object() && state.contains("kind") ? state["kind"].dump() : "unknown") +
                          ", this run reads a prepared store (data.store): resume with the data source "
                          "the checkpoint was saved with",
                      "data.store");
  }
}

void check_global_batch(const nlohmann::json& state, int64_t global_batch) {
  if (read_count(state, "global_batch") != global_batch) {
    throw ConfigError("data position was saved with a global batch (world size x "
                      "train.micro_batch_size x train.grad_accum_steps) of " + state["global_batch"].dump() +
                          ", this run has " +
                          std::to_string(global_batch) + ": the order differs, so it cannot be resumed exactly",
                      "train.micro_batch_size");
  }
}

}  // namespace prepared_dataset_detail

namespace pd = prepared_dataset_detail;

PreparedDataset::PreparedDataset(const config::DataPlan& plan, const text::Tokenizer& tokenizer,
                                 Split split, const nlohmann::json* resume)
    : rank_(plan.rank), world_size_(plan.world_size) {
  split_ = std::make_unique<PreparedSplit>(plan, tokenizer, split);
  if (split == Split::train) {
    rank_batch_ = plan.step_sequences;
    global_batch_ = pd::global_batch_of(plan);
    order_.emplace(pd::train_order(plan, *split_));
  }
  if (resume != nullptr) {
    pd::check_kind(*resume, "prepared");
    const int64_t saved_rank = pd::read_count(*resume, "rank");
    const int64_t saved_world = pd::read_count(*resume, "world_size");
    if (saved_rank != rank_ || saved_world != world_size_) {
      throw ConfigError("data position was saved by rank " + std::to_string(saved_rank) + " of " +
                        std::to_string(saved_world) + ", cannot resume rank " +
                        std::to_string(rank_) + " of " + std::to_string(world_size_) +
                        " exactly (keep the world size when resuming)");
    }
    split_->check_identity(*resume);
    if (split == Split::train) pd::check_global_batch(*resume, global_batch_);
    const int64_t samples = pd::read_count(*resume, "samples");
    taken_ = taken_before(samples);
    // A rank's position sits just after one of its own sequences, or at a global batch's end
    // (the start, or the step boundary a run resumed on another world size continues from).
    const bool boundary = resume->value("step_boundary", false) && samples % global_batch_ == 0;
    if (samples > 0 && !boundary && global_index(taken_ - 1) != samples - 1) {
      throw DataError("data position: samples " + std::to_string(samples) + " is not a position of rank " +
                      std::to_string(rank_) + " of " + std::to_string(world_size_));
    }
    samples_ = samples;
  }
  log::info("data", "{} split from prepared store {}: rank {} of {}, epoch {}{}",
            split == Split::train ? "train" : "valid", plan.data.store, rank_, world_size_, epoch(),
            resume ? ", resuming at global sequence " + std::to_string(samples_) : "");
}

int64_t PreparedDataset::global_index(int64_t k) const {
  if (!order_) return k * world_size_ + rank_;
  return (k / rank_batch_) * global_batch_ + rank_ * rank_batch_ + k % rank_batch_;
}

int64_t PreparedDataset::taken_before(int64_t samples) const {
  if (!order_) return samples > rank_ ? (samples - rank_ - 1) / world_size_ + 1 : 0;
  const int64_t in_last = std::clamp<int64_t>(samples % global_batch_ - rank_ * rank_batch_, 0, rank_batch_);
  return (samples / global_batch_) * rank_batch_ + in_last;
}

bool PreparedDataset::next(PackedSequence& out) {
  const int64_t g = global_index(taken_);
  const int64_t size = split_->size();
  int64_t sequence = g;
  if (order_) {
    sequence = order_->at(g / size, g % size);
  } else if (g >= size) {
    return false;
  }
  split_->read(sequence, static_cast<uint64_t>(g), out);
  ++taken_;
  samples_ = g + 1;
  tokens_ += static_cast<int64_t>(out.ids.size());
  return true;
}

nlohmann::json PreparedDataset::resume_state() const {
  auto state = split_->identity();
  state["kind"] = "prepared";
  state["samples"] = samples_;
  state["epoch"] = epoch();
  state["rank"] = rank_;
  state["world_size"] = world_size_;
  if (order_) state["global_batch"] = global_batch_;
  return state;
}

int64_t PreparedDataset::epoch() const {
  return order_ ? global_index(taken_) / split_->size() : 0;
}

DataCounters PreparedDataset::counters() const {
  DataCounters c;
  c.sequences = taken_;
  c.tokens = tokens_;
  c.bytes_read = split_->store().bytes_read();
  return c;
}

namespace prepared_dataset_detail {

class PreparedIndexed : public IndexedSequences {
 public:
  PreparedIndexed(const config::DataPlan& plan, const text::Tokenizer& tokenizer, Split split,
                  const nlohmann::json* resume)
      : split_(plan, tokenizer, split) {
    if (split == Split::train) {
      global_batch_ = global_batch_of(plan);
      order_.emplace(train_order(plan, split_));
    }
    if (resume != nullptr) {
      check_kind(*resume, "prepared-indexed");
      split_.check_identity(*resume);
      if (order_) check_global_batch(*resume, global_batch_);
      samples_ = read_count(*resume, "samples");
    }
  }

  bool at(int64_t g, PackedSequence& out) override {
    const int64_t size = split_.size();
    if (g < 0) throw std::out_of_range("prepared indexed sequences: g " + std::to_string(g) + " < 0");
    if (!order_ && g >= size) return false;
    split_.read(order_ ? order_->at(g / size, g % size) : g, static_cast<uint64_t>(g), out);
    samples_ = g + 1;
    ++sequences_;
    tokens_ += static_cast<int64_t>(out.ids.size());
    return true;
  }

  nlohmann::json resume_state() const override {
    auto state = split_.identity();
    state["kind"] = "prepared-indexed";
    state["samples"] = samples_;
    if (order_) state["global_batch"] = global_batch_;
    return state;
  }

  int64_t epoch() const override { return order_ ? samples_ / split_.size() : 0; }

  DataCounters counters() const override {
    DataCounters c;
    c.sequences = sequences_;
    c.tokens = tokens_;
    c.bytes_read = split_.store().bytes_read();
    return c;
  }

 private:
  PreparedSplit split_;
  std::optional<EpochOrder> order_;
  int64_t global_batch_ = 1;
  int64_t samples_ = 0, sequences_ = 0, tokens_ = 0;
};

}  // namespace prepared_dataset_detail

std::unique_ptr<IndexedSequences> open_prepared_indexed(const config::DataPlan& plan,
                                                        const text::Tokenizer& tokenizer, Split split,
                                                        const nlohmann::json* resume) {
  return std::make_unique<pd::PreparedIndexed>(plan, tokenizer, split, resume);
}

}  // namespace mlm::data
