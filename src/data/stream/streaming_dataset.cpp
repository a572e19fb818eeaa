#include "mlm/data/stream/streaming_dataset.h"

#include "mlm/data/seeded_random.h"
#include "mlm/util/errors.h"
#include "mlm/util/logging.h"

namespace mlm::data {
namespace {

std::string split_name(Split split) { return split == Split::train ? "train" : "valid"; }

bool is_epoch_start(const DataPosition& p) {
  return p.file_index == 0 && p.byte_offset == 0 && p.doc_index == 0 && p.token_offset == 0 &&
         p.chunk_index == 0 && p.chunk_emitted == 0;
}

/// The documents of `split`: which files, which of their documents, in what order. Every
/// rank reads the whole stream (no rank in these options): the ranks split it by sequence in
/// produce(). See the header for why.
StreamOptions split_stream_options(const config::DataConfig& data, Split split, uint64_t seed) {
  StreamOptions stream;
  stream.read = text::ReadOptions::from(data);
  stream.seed = seed;
  stream.held_out_fraction = data.valid_fraction;
  if (split == Split::train) {
    stream.files = text::resolve_corpus(data.train_files, stream.read, "data.train_files");
    stream.holdout = data.valid_files.empty() && data.valid_fraction > 0 ? Holdout::without_held_out
                                                                         : Holdout::all;
    stream.shuffle_files = data.shuffle_files;
    stream.repeat = true;
  } else if (!data.valid_files.empty()) {
    stream.files = text::resolve_corpus(data.valid_files, stream.read, "data.valid_files");
    stream.holdout = Holdout::all;
  } else if (data.valid_fraction > 0) {
    stream.files = text::resolve_corpus(data.train_files, stream.read, "data.train_files");
    stream.holdout = Holdout::held_out_only;
  } else {
    throw ConfigError("no validation data: data.valid_files is empty and data.valid_fraction is 0",
                      "data.valid_fraction");
  }
  return stream;
}

/// The first files, for messages: "a.txt, b.txt, c.txt and 3 more".
std::string listed_corpus_names(const std::vector<text::CorpusFile>& files) {
  std::string names;
  for (size_t i = 0; i < files.size() && i < 3; ++i) names += (i ? ", " : "") + files[i].path;
  if (files.size() > 3) names += " and " + std::to_string(files.size() - 3) + " more";
  return names;
}

}  // namespace

StreamingDataset::StreamingDataset(const config::DataPlan& plan, const text::Tokenizer& tokenizer,
                                   Split split, std::optional<DataPosition> resume)
    : split_(split), rank_(plan.rank), world_size_(plan.world_size), seed_(plan.seed) {
  const auto& data = plan.data;
  StreamOptions stream = split_stream_options(data, split, seed_);
  shuffle_chunk_ = split == Split::train ? std::max<int64_t>(1, data.shuffle_buffer) : 1;
  // The valid split's corpus differs from the train split's over the same files, so that a
  // position of one split is refused by the other.
  corpus_ = text::corpus_fingerprint(stream.files) ^ (split == Split::valid ? 0x7A11Dull : 0);
  corpus_names_ = listed_corpus_names(stream.files);
  prefetch_ = static_cast<size_t>(std::max<int64_t>(1, data.prefetch_sequences));

  position_.rank = plan.rank;
  position_.world_size = plan.world_size;
  position_.corpus = corpus_;
  if (resume) {
    check_resume(*resume, stream.files.size());
    position_ = *resume;
  }
  log::info("data", "{} split: {} file(s), rank {} of {}, epoch {}{}", split_name(split),
            stream.files.size(), plan.rank, plan.world_size, position_.epoch,
            resume ? ", resuming at global sequence " + std::to_string(position_.samples) : "");

  start_pipeline(plan, tokenizer, std::move(stream));
  next_chunk_index_ = position_.chunk_index;
  skip_ = position_.chunk_emitted;
  global_ = position_.samples;
  epoch_from_start_ = is_epoch_start(position_);

  if (data.num_workers > 0) producer_ = std::thread([this] { producer_loop(); });
}

void StreamingDataset::check_resume(const DataPosition& resume, size_t file_count) const {
  if (resume.rank != rank_ || resume.world_size != world_size_) {
    throw ConfigError("data position was saved by rank " + std::to_string(resume.rank) + " of " +
                      std::to_string(resume.world_size) + ", cannot resume rank " +
                      std::to_string(rank_) + " of " + std::to_string(world_size_) +
                      " exactly (keep the world size when resuming)");
  }
  if (resume.corpus != corpus_) {
    throw DataError("data position was saved for another " + split_name(split_) +
                    " file list (the files or their order changed)");
  }
  if (resume.file_index < 0 || resume.file_index > static_cast<int64_t>(file_count)) {
    throw DataError("data position: file_index " + std::to_string(resume.file_index) +
                    " is out of range");
  }
  // A rank's position sits just after one of its own sequences, or at a boundary where every
  // rank's share before it is done (the very start, or the step boundary a run resumed on
  // another world size continues from, reshard_position()).
  const bool boundary = resume.step_boundary && resume.samples % world_size_ == 0;
  if (resume.samples < 0 || resume.chunk_emitted < 0 ||
      (resume.samples > 0 && !boundary && (resume.samples - 1) % world_size_ != rank_)) {
    throw DataError("data position: samples " + std::to_string(resume.samples) +
                    " is not a position of rank " + std::to_string(rank_) + " of " +
                    std::to_string(world_size_));
  }
}

void StreamingDataset::start_pipeline(const config::DataPlan& plan, const text::Tokenizer& tokenizer,
                                      StreamOptions stream) {
  const auto& data = plan.data;
  const StreamCursor cursor{position_.file_index, position_.byte_offset, position_.line,
                            position_.doc_index};
  const PackPosition start{position_.epoch, cursor, position_.token_offset};
  const bool sentences = data.packing == config::Packing::sentences;
  pipeline_ = std::make_unique<TokenizingPipeline>(DocumentStream(std::move(stream), position_.epoch, cursor),
                                                   tokenizer, static_cast<int>(data.num_workers),
                                                   /*keep_sentences=*/sentences);
  PackerOptions packing;
  packing.seq_len = data.seq_len;
  packing.cross_documents = data.cross_documents;
  packing.packing = data.packing;
  packing.objective = plan.objective;
  packing.seed = seed_;
  packing.ids = tokenizer.vocab().ids;
  packer_ = std::make_unique<Packer>(packing, *pipeline_, start);
}

StreamingDataset::~StreamingDataset() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  if (producer_.joinable()) producer_.join();
}

DataPosition StreamingDataset::make_position(const PackPosition& start, int64_t chunk_index,
                                             int64_t emitted) const {
  DataPosition p;
  p.epoch = start.epoch;
  p.file_index = start.cursor.file_index;
  p.byte_offset = start.cursor.offset;
  p.line = start.cursor.line;
  p.doc_index = start.cursor.doc_index;
  p.token_offset = start.token_offset;
  p.chunk_index = chunk_index;
  p.chunk_emitted = emitted;
  p.samples = global_;
  p.rank = rank_;
  p.world_size = world_size_;
  p.corpus = corpus_;
  return p;
}

void StreamingDataset::fill_chunk() {
  chunk_.clear();
  chunk_index_ = next_chunk_index_;
  chunk_start_ = packer_->position();
  next_chunk_index_ = chunk_index_ + 1;
  while (static_cast<int64_t>(chunk_.size()) < shuffle_chunk_) {
    PackedSequence sequence;
    const StreamEvent event = packer_->next(sequence);
    if (event == StreamEvent::document) {
      chunk_.push_back(std::move(sequence));
      ++epoch_sequences_;
      continue;
    }
    if (event == StreamEvent::end_of_stream) {
      stream_ended_ = true;
      break;
    }
    if (epoch_from_start_ && epoch_sequences_ == 0) {
      throw DataError("the " + split_name(split_) + " split packs into no sequence: no text in " +
                      corpus_names_ + " (empty corpus, or every record skipped)");
    }
    epoch_from_start_ = true;
    epoch_sequences_ = 0;
    next_chunk_index_ = 0;
    break;
  }
  next_start_ = packer_->position();
  if (shuffle_chunk_ > 1) {
    // The same permutation on every rank. The trailing 0 stood for the rank when ranks
    // shuffled their own shards; it stays so single-process streams (and their saved
    // positions) are unchanged.
    order_ = seeded_permutation(static_cast<int64_t>(chunk_.size()),
                                mix_seed({seed_, 0x5B0FFull, static_cast<uint64_t>(chunk_start_.epoch),
                                          static_cast<uint64_t>(chunk_index_), uint64_t{0}}));
  } else {
    order_.assign(chunk_.size(), 0);
    for (size_t i = 0; i < order_.size(); ++i) order_[i] = static_cast<int64_t>(i);
  }
  chunk_pos_ = static_cast<size_t>(std::min<int64_t>(skip_, static_cast<int64_t>(chunk_.size())));
  skip_ = 0;
}

bool StreamingDataset::produce(Output& out) {
  // Walk the global stream; keep global sequence g when g % world_size == rank.
  for (;;) {
    while (chunk_pos_ >= chunk_.size()) {
      if (stream_ended_) return false;
      fill_chunk();
    }
    const size_t slot = static_cast<size_t>(order_[chunk_pos_++]);
    const int64_t g = global_++;
    if (g % world_size_ == rank_) {
      out.sequence = std::move(chunk_[slot]);
      out.sequence.sample_id = static_cast<uint64_t>(g);
      break;
    }
  }
  out.after = chunk_pos_ < chunk_.size()
                  ? make_position(chunk_start_, chunk_index_, static_cast<int64_t>(chunk_pos_))
                  : make_position(next_start_, next_chunk_index_, 0);
  return true;
}

void StreamingDataset::producer_loop() {
  for (;;) {
    Output out;
    try {
      out.end = !produce(out);
    } catch (...) {
      out.error = std::current_exception();
    }
    const bool last = out.end || out.error;
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return stop_ || queue_.size() < prefetch_; });
    if (stop_) return;
    queue_.push_back(std::move(out));
    changed_.notify_all();
    if (last) return;
  }
}

bool StreamingDataset::next(PackedSequence& sequence) {
  Output out;
  if (!producer_.joinable()) {
    if (done_) return false;
    out.end = !produce(out);
  } else {
    std::unique_lock<std::mutex> lock(mutex_);
    if (done_) {
      if (!queue_.empty() && queue_.front().error) std::rethrow_exception(queue_.front().error);
      return false;
    }
    changed_.wait(lock, [&] { return !queue_.empty(); });
    if (queue_.front().end || queue_.front().error) {
      done_ = true;
      if (queue_.front().error) std::rethrow_exception(queue_.front().error);
      return false;
    }
    out = std::move(queue_.front());
    queue_.pop_front();
    changed_.notify_all();
  }
  if (out.end) {
    done_ = true;
    return false;
  }
  sequence = std::move(out.sequence);
  position_ = out.after;
  tokens_ += static_cast<int64_t>(sequence.ids.size());
  return true;
}

DataCounters StreamingDataset::counters() const {
  DataCounters c;
  // This rank's share of the global sequences before its position: g < samples, g % N == r.
  const int64_t before = position_.samples - rank_;
  c.sequences = before > 0 ? (before - 1) / world_size_ + 1 : 0;
  c.tokens = tokens_;
  c.documents = pipeline_->documents();
  const auto reader = pipeline_->reader_counters();
  c.bad_records = reader.bad_records;
  c.invalid_utf8_fixes = reader.invalid_utf8_fixes;
  return c;
}

}  // namespace mlm::data

namespace mlm::data {

nlohmann::json StreamingDataset::resume_state() const {
  auto state = position_.to_json();
  state["kind"] = "text";
  return state;
}

}  // namespace mlm::data
