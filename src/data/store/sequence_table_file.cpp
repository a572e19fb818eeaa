// The sequence table as a file: a header naming the store and the settings it was built for,
// then the arrays as they are held in memory.
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include "mlm/data/store/sequence_table.h"
#include "mlm/data/store/store_checksum.h"
#include "mlm/util/errors.h"

namespace mlm::data {
namespace sequence_table_file_detail {

constexpr char kMagic[8] = {'M', 'L', 'M', 'S', 'T', 'B', 'L', '1'};

struct Header {
  char magic[8];
  char fingerprint[16];  // the store's split (PreparedSplit::identity()'s "store")
  int64_t seq_len, packing, cross_documents, objective;
  int64_t keep_documents;
  int64_t shard_first, shard_tokens, begin, document, end, first_sentence;  // array lengths
};

Header make_header(const std::string& fingerprint, const TableSettings& s) {
  Header h{};
  std::memcpy(h.magic, kMagic, 8);
  std::memcpy(h.fingerprint, fingerprint.data(), std::min<size_t>(16, fingerprint.size()));
  h.seq_len = s.seq_len;
  h.packing = static_cast<int64_t>(s.packing);
  h.cross_documents = s.cross_documents ? 1 : 0;
  h.objective = static_cast<int64_t>(s.objective);
  return h;
}

template <class T>
void write_array(std::ofstream& out, const std::vector<T>& v) {
  out.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(T)));
}

template <class T>
bool read_array(std::ifstream& in, std::vector<T>& v, int64_t n) {
  if (n < 0 || n > (int64_t{1} << 40)) return false;
  v.resize(static_cast<size_t>(n));
  in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(T)));
  return static_cast<bool>(in);
}

}  // namespace sequence_table_file_detail

namespace stf = sequence_table_file_detail;

std::string SequenceTable::file_path(const std::string& store_dir, const std::string& split,
                                     const TableSettings& s) {
  return (std::filesystem::path(store_dir) / split /
          ("sequences-" + std::string(config::to_string(s.packing)) + "-" +
           std::string(config::to_string(s.objective)) + "-" + std::to_string(s.seq_len) +
           (s.cross_documents ? "" : "-within-documents") + ".table"))
      .string();
}

std::optional<TableSettings> SequenceTable::file_settings(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  stf::Header h{};
  in.read(reinterpret_cast<char*>(&h), sizeof h);
  if (!in || std::memcmp(h.magic, stf::kMagic, 8) != 0 || h.seq_len < 0 || h.packing < 0 || h.packing > 1 ||
      h.objective < 0 || h.objective > 2) {
    return std::nullopt;
  }
  TableSettings s;
  s.seq_len = h.seq_len;
  s.packing = static_cast<config::Packing>(h.packing);
  s.cross_documents = h.cross_documents != 0;
  s.objective = static_cast<config::Objective>(h.objective);
  return s;
}

std::unique_ptr<SequenceTable> SequenceTable::load(const std::string& path, const std::string& fingerprint,
                                                   const TableSettings& settings,
                                                   const PreparedStore& store) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return nullptr;
  // A table the manifest records is this store's: a header that does not match is damage.
  const std::string recorded = store.recorded_crc32(path);
  const auto not_this_table = [&](const char* why) -> std::unique_ptr<SequenceTable> {
    if (recorded.empty()) return nullptr;  // another store's or settings': rebuilt
    throw DataError(path + ": " + why + ", though the manifest records it (a damaged sequence table)");
  };
  stf::Header h{};
  in.read(reinterpret_cast<char*>(&h), sizeof h);
  // A file at a table's path without the magic is damage, whether or not it is recorded
  // (a table of another store or settings has the magic).
  if (!in || std::memcmp(h.magic, stf::kMagic, 8) != 0) {
    throw DataError(path + ": not a sequence table (no table magic; a damaged sequence table)");
  }
  const stf::Header want = stf::make_header(fingerprint, settings);
  if (std::memcmp(h.fingerprint, want.fingerprint, 16) != 0 || h.seq_len != want.seq_len ||
      h.packing != want.packing || h.cross_documents != want.cross_documents ||
      h.objective != want.objective) {
    return not_this_table("written for another store or other settings");
  }
  // From here the file claims to be this store's table for these settings: what does not
  // hold is damage.
  std::unique_ptr<SequenceTable> table(new SequenceTable());
  table->settings_ = settings;
  table->keep_documents_ = h.keep_documents != 0;
  if (!stf::read_array(in, table->shard_first_, h.shard_first) ||
      !stf::read_array(in, table->shard_tokens_, h.shard_tokens) ||
      !stf::read_array(in, table->begin_, h.begin) || !stf::read_array(in, table->document_, h.document) ||
      !stf::read_array(in, table->end_, h.end) ||
      !stf::read_array(in, table->first_sentence_, h.first_sentence) || in.peek() != EOF) {
    throw DataError(path + ": shorter or longer than its header says (a damaged sequence table)");
  }
  if (!recorded.empty()) {
    // The file's bytes are the header and the arrays as read.
    uint32_t sum = crc32_update(0, &h, sizeof h);
    sum = crc32_update(sum, table->shard_first_.data(), 8 * table->shard_first_.size());
    sum = crc32_update(sum, table->shard_tokens_.data(), 8 * table->shard_tokens_.size());
    for (const auto* v : {&table->begin_, &table->document_, &table->end_, &table->first_sentence_}) {
      sum = crc32_update(sum, v->data(), 4 * v->size());
    }
    const std::string crc = crc32_hex(sum);
    if (crc != recorded) {
      throw DataError(path + ": checksum " + crc + ", the manifest records " + recorded +
                      " (a damaged sequence table)");
    }
  }
  table->check_entries(path, store, sizeof h);
  store.count_bytes_read(static_cast<int64_t>(sizeof h) + table->memory_bytes());
  return table;
}

void SequenceTable::save(const std::string& path, const std::string& fingerprint) const {
  stf::Header h = stf::make_header(fingerprint, settings_);
  h.keep_documents = keep_documents_ ? 1 : 0;
  h.shard_first = static_cast<int64_t>(shard_first_.size());
  h.shard_tokens = static_cast<int64_t>(shard_tokens_.size());
  h.begin = static_cast<int64_t>(begin_.size());
  h.document = static_cast<int64_t>(document_.size());
  h.end = static_cast<int64_t>(end_.size());
  h.first_sentence = static_cast<int64_t>(first_sentence_.size());
  // A unique temporary: ranks that build the same table at once each rename a whole file.
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(&h), sizeof h);
    stf::write_array(out, shard_first_);
    stf::write_array(out, shard_tokens_);
    stf::write_array(out, begin_);
    stf::write_array(out, document_);
    stf::write_array(out, end_);
    stf::write_array(out, first_sentence_);
    out.flush();
    if (!out) {
      std::error_code ec;
      std::filesystem::remove(temporary, ec);
      throw DataError(path + ": cannot write the sequence table (disk full or read-only?)");
    }
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) {
    std::filesystem::remove(temporary, ec);
    throw DataError(path + ": cannot rename the sequence table into place: " + ec.message());
  }
}

}  // namespace mlm::data
