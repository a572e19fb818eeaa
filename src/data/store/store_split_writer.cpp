#include "store_split_writer.h"

#include <memory>

#include "mlm/util/logging.h"
#include "store_shard_file.h"
#include "store_tokenizing.h"

namespace mlm::data::store_detail {
namespace {

std::string format_duration(double seconds) {
  const auto s = static_cast<int64_t>(seconds + 0.5);
  if (s < 60) return std::to_string(s) + "s";
  if (s < 3600) return std::to_string(s / 60) + "m" + std::to_string(s % 60) + "s";
  return std::to_string(s / 3600) + "h" + std::to_string(s % 3600 / 60) + "m";
}

/// The progress line: text read, throughput, and an ETA from the input bytes left (the file
/// sizes, so compressed bytes for .gz: the ETA assumes a constant compression ratio).
class ProgressMeter {
 public:
  ProgressMeter(const StoreProgress& progress, const std::string& split, double every_s)
      : every_s_(every_s), split_(split) {
    for (const auto& [name, files] : progress.identity.sources.items()) {
      int64_t bytes = 0;
      for (const auto& f : files) {
        const int64_t size = f.value("bytes", int64_t{0});
        if (name == split) file_starts_.push_back(bytes);
        bytes += size;
        if (f.value("path", std::string()).ends_with(".gz")) gzip_ = true;
      }
      total_ += bytes;
      if (name == split) {
        split_bytes_ = bytes;
      } else if (progress.splits.count(name) && progress.splits.at(name).complete) {
        done_before_ += bytes;
      }
    }
  }

  void update(const InputPosition& at, int64_t text_bytes, int64_t tokens) {
    const auto now = SteadyClock::now();
    const int64_t position = done_before_ + (at.file_index < static_cast<int64_t>(file_starts_.size())
                                                 ? file_starts_[at.file_index] + at.offset
                                                 : split_bytes_);
    if (!started_) {  // the baseline: a resumed prepare did not read what came before
      started_ = true;
      first_ = last_log_ = now;
      first_position_ = position;
      first_text_ = text_bytes;
      first_tokens_ = tokens;
      return;
    }
    if (std::chrono::duration<double>(now - last_log_).count() < every_s_) return;
    last_log_ = now;
    const double elapsed = std::chrono::duration<double>(now - first_).count();
    const double input_rate = static_cast<double>(position - first_position_) / elapsed;
    const double eta = input_rate > 0 ? static_cast<double>(total_ - position) / input_rate : 0;
    log::info("data", "prepare {}: {:.1f} MB of text read, {:.1f} MB/s, {:.2f}M tokens/s, input {:.1f}% of "
              "{:.1f} MB, ETA {}{}", split_, static_cast<double>(text_bytes) / 1e6,
              static_cast<double>(text_bytes - first_text_) / 1e6 / elapsed,
              static_cast<double>(tokens - first_tokens_) / 1e6 / elapsed,
              total_ > 0 ? 100.0 * static_cast<double>(position) / static_cast<double>(total_) : 100.0,
              static_cast<double>(total_) / 1e6, format_duration(eta),
              gzip_ ? " (over compressed bytes)" : "");
  }

 private:
  double every_s_;
  std::string split_;
  std::vector<int64_t> file_starts_;  // of the split's files, in the split's input bytes
  int64_t split_bytes_ = 0, done_before_ = 0, total_ = 0;
  bool gzip_ = false;
  bool started_ = false;
  SteadyClock::time_point first_, last_log_;
  int64_t first_position_ = 0, first_text_ = 0, first_tokens_ = 0;
};

}  // namespace

bool write_split(SplitWriterContext& context, const std::string& name, const StreamOptions& input,
                 PrepareSummary& summary) {
  auto& split = context.progress.splits.at(name);
  const auto& options = context.options;
  const int token_bytes = context.progress.identity.token_bytes;
  ProgressMeter meter(context.progress, name, options.log_every_s);
  OrderedTokenizer documents(input, split.next, context.tokenizer, context.threads);

  std::unique_ptr<ShardFileWriter> shard;
  StreamCursor shard_start = split.next;  // where reading the open shard's documents starts
  StreamCursor last_end = split.next;     // after the last document taken (with tokens or not)
  text::ReaderCounters counters;
  const auto account = [&] {
    summary.bad_records += counters.bad_records;
    summary.invalid_utf8_fixes += counters.invalid_utf8_fixes;
  };
  // The shard is renamed into place before the progress file names it: a kill in between
  // leaves a whole shard the next run writes again, never a listed shard that is not whole.
  const auto close_shard = [&] {
    split.shards.push_back(shard->finish());
    split.shard_starts.push_back(shard_start);
    shard.reset();
    split.next = shard_start = last_end;
    write_json_file(context.dir / kProgressFile, progress_json(context.progress));
    ++context.shards_written;
    return options.stop_after_shards < 0 || context.shards_written < options.stop_after_shards;
  };

  int64_t text_bytes = 0, tokens = 0;
  DocumentBatch batch;
  while (documents.next(batch)) {
    text_bytes += batch.text_bytes;
    counters = batch.counters;
    for (const auto& doc : batch.docs) {
      if (!doc.ids.empty()) {  // a document without tokens is left out, as the packer does
        const auto size = static_cast<int64_t>(doc.ids.size());
        if (shard && shard->tokens() > 0 && shard->tokens() + size > options.shard_tokens) {
          if (!close_shard()) {
            summary.text_bytes += text_bytes;
            summary.tokens_written += tokens;
            account();
            return false;
          }
        }
        if (!shard) {
          shard = std::make_unique<ShardFileWriter>(context.dir, shard_name(name, static_cast<int64_t>(split.shards.size())),
                                                    token_bytes);
        }
        shard->add_document(doc.ids, doc.sentence_ends);
        tokens += size;
      }
      last_end = doc.end;
    }
    meter.update(batch.input, text_bytes, tokens);
  }
  if (shard) close_shard();
  split.complete = true;
  split.next = last_end;
  write_json_file(context.dir / kProgressFile, progress_json(context.progress));
  summary.text_bytes += text_bytes;
  summary.tokens_written += tokens;
  account();
  return true;
}

}  // namespace mlm::data::store_detail
