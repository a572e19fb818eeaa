#include "mlm/data/store/prepared_split.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>

#include "mlm/util/errors.h"
#include "mlm/util/logging.h"

namespace mlm::data {
namespace prepared_split_detail {

std::string split_name(Split split) { return split == Split::train ? "train" : "valid"; }

}  // namespace prepared_split_detail

using prepared_split_detail::split_name;

PreparedSplit::PreparedSplit(const config::DataPlan& plan, const text::Tokenizer& tokenizer,
                             Split split)
    : split_(split), ids_(tokenizer.vocab().ids), seed_(plan.seed) {
  const std::string& dir = plan.data.store;
  if (dir.empty()) {
    throw ConfigError("data.store is empty: name the directory mlm-data prepare wrote", "data.store");
  }
  settings_.seq_len = plan.data.seq_len;
  settings_.packing = plan.data.packing;
  settings_.cross_documents = plan.data.cross_documents;
  settings_.objective = plan.objective;
  store_ = std::make_unique<PreparedStore>(dir, split);
  store_->require_tokenizer(tokenizer);
  token_bytes_ = store_->manifest().value("token_bytes", 2);
  fingerprint_ = split_fingerprint(store_->manifest(), split);
  document_prefix_.push_back(0);
  for (size_t i = 0; i < store_->shard_count(); ++i) {
    document_prefix_.push_back(document_prefix_.back() + store_->shard(i).documents());
  }

  const auto start = std::chrono::steady_clock::now();
  const int64_t bytes_before = store_->bytes_read();
  // The table mlm-data prepare saved for these settings, else built from the index (its
  // checksum and order checked) and saved for the next run (a read-only store just builds it
  // each time). A damaged table is rebuilt from a sound index; a damaged index is refused.
  table_path_ = SequenceTable::file_path(dir, split_name(split), settings_);
  try {
    table_ = SequenceTable::load(table_path_, fingerprint_, settings_, *store_);
  } catch (const DataError& e) {
    log::warn("data", "{}; rebuilding it from the index", e.what());
  }
  const bool loaded = table_ != nullptr;
  table_on_disk_ = loaded;
  if (!loaded) {
    table_ = std::make_unique<SequenceTable>(*store_, settings_);
    try {
      table_->save(table_path_, fingerprint_);
      table_on_disk_ = true;
    } catch (const DataError& e) {
      log::info("data", "sequence table not saved ({}); it is rebuilt at each start", e.what());
    }
  }
  table_bytes_read_ = store_->bytes_read() - bytes_before;
  table_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (table_->size() == 0) {
    throw DataError("data.store " + dir + ": the " + split_name(split) +
                    " split packs into no sequence (no tokens)");
  }
  log::info("data", "prepared {} split: {} tokens in {} shard(s), {} sequences; table {:.1f} MB {} in {:.2f} s",
            split_name(split), store_->tokens(), store_->shard_count(), table_->size(),
            static_cast<double>(table_->memory_bytes()) / 1e6, loaded ? "read" : "built", table_seconds_);
}

nlohmann::json PreparedSplit::identity() const {
  return {{"store", fingerprint_},
          {"split", split_name(split_)},
          {"tokens", store_->tokens()},
          {"sequences", table_->size()},
          {"seq_len", settings_.seq_len},
          {"packing", std::string(config::to_string(settings_.packing))},
          {"cross_documents", settings_.cross_documents},
          {"objective", std::string(config::to_string(settings_.objective))}};
}

void PreparedSplit::check_identity(const nlohmann::json& state) const {
  const auto mine = identity();
  for (const char* key : {"store", "split", "tokens"}) {
    if (!state.contains(key) || state[key] != mine[key]) {
      throw DataError("data position was saved for another prepared store or split (" + std::string(key) +
                      " " + (state.contains(key) ? state[key].dump() : "missing") + ", this store's is " +
                      mine[key].dump() + "); resume with the store it was saved with");
    }
  }
  const std::pair<const char*, const char*> settings[] = {{"seq_len", "data.seq_len"},
                                                          {"packing", "data.packing"},
                                                          {"cross_documents", "data.cross_documents"},
                                                          {"objective", "model.objective"}};
  for (const auto& [key, path] : settings) {
    if (!state.contains(key) || state[key] != mine[key]) {
      throw ConfigError(std::string(path) + " is " + mine[key].dump() + ", the data position was saved with " +
                            (state.contains(key) ? state[key].dump() : "another value") +
                            ": the sequences differ, so it cannot be resumed exactly",
                        path);
    }
  }
  if (!state.contains("sequences") || state["sequences"] != mine["sequences"]) {
    throw DataError("data position was saved for a table of " +
                    (state.contains("sequences") ? state["sequences"].dump() : "unknown") + " sequences, this one has " +
                    mine["sequences"].dump() + " (the store or the packing rules changed)");
  }
}

void PreparedSplit::read(int64_t sequence, uint64_t sample_id, PackedSequence& out) const {
  if (sequence < 0 || sequence >= table_->size()) {
    throw std::out_of_range("PreparedSplit::read: sequence " + std::to_string(sequence) + " of " +
                            std::to_string(table_->size()));
  }
  const TableEntry e = table_->entry(sequence);
  if (!settings_.pairs()) {
    read_single(e, out);
  } else if (settings_.packing == config::Packing::sentences) {
    read_sentence_pair(e, sample_id, out);
  } else {
    read_token_pair(e, sample_id, out);
  }
  out.sample_id = sample_id;
}

void PreparedSplit::read_single(const TableEntry& e, PackedSequence& out) const {
  const StoreShard& shard = store_->shard(e.shard);
  out.ids.clear();
  out.ids.reserve(static_cast<size_t>(e.end - e.begin) + 2);
  out.ids.push_back(ids_.cls);
  out.document_starts.clear();
  int64_t from = e.begin;
  if (e.joins_documents) {
    // A [SEP] before each document that starts inside the sequence.
    for (int64_t d = e.document;; ++d) {
      const int64_t boundary = shard.doc_end(d);
      if (boundary >= e.end) break;
      if (boundary > from) {
        shard.read_tokens(from, boundary, out.ids);
        out.ids.push_back(ids_.sep);
        out.document_starts.push_back(static_cast<int32_t>(out.ids.size()));
      }
      from = boundary;
    }
  }
  shard.read_tokens(from, e.end, out.ids);
  out.ids.push_back(ids_.sep);
  out.token_type_ids.assign(out.ids.size(), 0);
  out.nsp_label = -1;
}

void PreparedSplit::emit_pair(PackedSequence& out, const int32_t* a, int64_t a_len, const int32_t* b,
                              int64_t b_len, int8_t label) const {
  out.ids.clear();
  out.ids.push_back(ids_.cls);
  out.ids.insert(out.ids.end(), a, a + a_len);
  out.ids.push_back(ids_.sep);
  out.token_type_ids.assign(out.ids.size(), 0);
  out.ids.insert(out.ids.end(), b, b + b_len);
  out.ids.push_back(ids_.sep);
  out.token_type_ids.resize(out.ids.size(), 1);
  out.document_starts.clear();  // A and B are one example
  out.nsp_label = label;
}

PreparedSplit::Document PreparedSplit::random_document(const TableEntry& current, SeededRandom& rng) const {
  const int64_t total = document_prefix_.back();
  const int64_t mine = document_prefix_[current.shard] + current.document;
  int64_t x = 0;
  if (total > 1) {
    x = static_cast<int64_t>(rng.below(static_cast<uint64_t>(total - 1)));
    if (x >= mine) ++x;
  }
  const auto it = std::upper_bound(document_prefix_.begin(), document_prefix_.end(), x);
  Document d;
  d.shard = static_cast<size_t>(it - document_prefix_.begin() - 1);
  d.index = x - document_prefix_[d.shard];
  return d;
}

}  // namespace mlm::data
