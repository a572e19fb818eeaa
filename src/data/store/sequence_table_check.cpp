// A loaded sequence table checked against the store it is read with: every entry inside its
// shard, in order, naming a document and sentence the index has. A table that passes cannot
// send a reader outside the store's files, whatever its bytes.
#include <string>

#include "mlm/data/store/sequence_table.h"
#include "mlm/util/errors.h"

namespace mlm::data {

void SequenceTable::check_entries(const std::string& path, const PreparedStore& store, int64_t header_bytes) const {
  const size_t n = begin_.size();
  const bool pairs = settings_.pairs();
  const bool sentence_pairs = pairs && settings_.packing == config::Packing::sentences;
  // Byte offsets of the arrays in the file, in the order save() writes them.
  const int64_t at_shard_first = header_bytes;
  const int64_t at_shard_tokens = at_shard_first + 8 * static_cast<int64_t>(shard_first_.size());
  const int64_t at_begin = at_shard_tokens + 8 * static_cast<int64_t>(shard_tokens_.size());
  const int64_t at_document = at_begin + 4 * static_cast<int64_t>(n);
  const int64_t at_end = at_document + 4 * static_cast<int64_t>(document_.size());
  const int64_t at_first_sentence = at_end + 4 * static_cast<int64_t>(end_.size());
  const auto fail = [&](int64_t offset, const std::string& what) {
    throw DataError(path + ": byte offset " + std::to_string(offset) + ": " + what +
                    " (a damaged sequence table)");
  };

  if (keep_documents_ != (settings_.cross_documents || pairs) || document_.size() != (keep_documents_ ? n : 0) ||
      end_.size() != (pairs ? n : 0) || first_sentence_.size() != (sentence_pairs ? n : 0)) {
    fail(0, "array lengths in the header do not fit its settings");
  }
  if (shard_first_.size() != store.shard_count() + 1 || shard_tokens_.size() != store.shard_count()) {
    fail(0, "the header counts " + std::to_string(shard_tokens_.size()) + " shards, the store has " +
                std::to_string(store.shard_count()));
  }
  if (shard_first_.front() != 0 || shard_first_.back() != static_cast<int64_t>(n)) {
    fail(at_shard_first, "the shards' first entries do not span the table's " + std::to_string(n));
  }
  for (size_t i = 0; i < store.shard_count(); ++i) {
    const StoreShard& shard = store.shard(i);
    if (shard_tokens_[i] != shard.tokens()) {
      fail(at_shard_tokens + 8 * static_cast<int64_t>(i),
           "shard " + std::to_string(i) + " has " + std::to_string(shard_tokens_[i]) + " tokens, the store " +
               std::to_string(shard.tokens()));
    }
    const int64_t first = shard_first_[i], last = shard_first_[i + 1];
    if (last < first) fail(at_shard_first + 8 * static_cast<int64_t>(i + 1), "shard entries out of order");
    for (int64_t k = first; k < last; ++k) {
      const auto e = static_cast<size_t>(k);
      const auto entry = "entry " + std::to_string(k) + " ";
      const int64_t begin = begin_[e];
      const int64_t end = pairs ? end_[e] : begin + 1;
      // Entries follow each other: mlm sequences start after the previous start, spans at or
      // after the previous span's end.
      const int64_t after = k == first ? 0 : (pairs ? end_[e - 1] : begin_[e - 1] + 1);
      if (begin < after || end > shard.tokens() || end <= begin) {
        fail(pairs && (end > shard.tokens() || end <= begin) ? at_end + 4 * k : at_begin + 4 * k,
             entry + "covers tokens [" + std::to_string(begin) + ", " + std::to_string(end) + ") of shard " +
                 std::to_string(i) + "'s " + std::to_string(shard.tokens()) + ", after " + std::to_string(after));
      }
      if (keep_documents_) {
        const int64_t document = pairs ? document_[e] : (document_[e] & ~kJoins);
        const int64_t previous = k == first ? 0 : (pairs ? document_[e - 1] : (document_[e - 1] & ~kJoins));
        if (document >= shard.documents() || document < previous) {
          fail(at_document + 4 * k, entry + "names document " + std::to_string(document) + " of " +
                                        std::to_string(shard.documents()) + ", after " + std::to_string(previous));
        }
      }
      if (sentence_pairs) {
        const int64_t sentence = first_sentence_[e];
        const int64_t previous = k == first ? 0 : first_sentence_[e - 1];
        if (sentence >= shard.sentences() || sentence < previous) {
          fail(at_first_sentence + 4 * k, entry + "names sentence " + std::to_string(sentence) + " of " +
                                              std::to_string(shard.sentences()) + ", after " + std::to_string(previous));
        }
      }
    }
  }
}

}  // namespace mlm::data
