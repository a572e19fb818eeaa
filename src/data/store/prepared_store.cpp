#include "mlm/data/store/prepared_store.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "mlm/data/store/store_checksum.h"
#include "mlm/util/errors.h"
#include "mlm/util/fnv1a.h"

namespace mlm::data {
namespace fs = std::filesystem;

namespace {

constexpr char kIndexMagic[8] = {'M', 'L', 'M', 'S', 'I', 'D', 'X', '1'};
constexpr int64_t kIndexHeaderBytes = 32;

std::string split_key(Split split) { return split == Split::train ? "train" : "valid"; }

int64_t json_count(const nlohmann::json& j, const char* key, const std::string& where) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number_integer() || j[key].get<int64_t>() < 0) {
    throw DataError(where + ": missing or bad \"" + key + "\"");
  }
  return j[key].get<int64_t>();
}

/// DataError naming `path` when the bytes' checksum is not the `recorded` one ("" when the
/// manifest records none).
void check_recorded_crc32(const std::string& path, const unsigned char* data, size_t size,
                          const std::string& recorded, const char* what) {
  if (recorded.empty()) return;
  const std::string crc = crc32_hex(crc32_update(0, data, size));
  if (crc != recorded) {
    throw DataError(path + ": checksum " + crc + ", the manifest records " + recorded + " (" + what +
                    " is damaged); prepare the store again");
  }
}

/// The manifest of the store in `dir`, of this format and version. DataError naming it
/// otherwise (or "run mlm-data prepare" when there is none).
nlohmann::json read_store_manifest(const fs::path& manifest_path, const std::string& dir) {
  if (!fs::exists(manifest_path)) {
    throw DataError("data.store " + dir + ": no manifest.json (not a complete prepared store); "
                    "run mlm-data prepare --config <your config> first");
  }
  const std::string where = manifest_path.string();
  nlohmann::json manifest;
  try {
    std::ifstream in(manifest_path);
    manifest = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    throw DataError(where + ": not valid JSON: " + e.what());
  }
  if (!manifest.is_object() || manifest.value("format", "") != "mlm-train prepared store") {
    throw DataError(where + ": not an mlm-train prepared store manifest");
  }
  if (manifest.value("version", 0) != 1) {
    throw DataError(where + ": store version " + manifest.value("version", nlohmann::json()).dump() +
                    ", this mlm-train reads version 1; prepare it again");
  }
  return manifest;
}

/// The manifest's shard entries of `split`; DataError naming the manifest (`where`) when the
/// store has no such split or no shard list.
const nlohmann::json& split_shard_list(const nlohmann::json& manifest, const std::string& where,
                                       Split split) {
  const std::string name = split_key(split);
  if (!manifest.contains("splits") || !manifest["splits"].contains(name)) {
    throw DataError(where + ": the store has no " + name + " split" +
                    (split == Split::valid ? " (it was prepared without data.valid_files or "
                                             "data.valid_fraction)"
                                           : ""));
  }
  const auto& entry = manifest["splits"][name];
  if (!entry.contains("shards") || !entry["shards"].is_array()) {
    throw DataError(where + ": splits." + name + " has no shard list");
  }
  return entry["shards"];
}

}  // namespace

// A read-only mapping of a whole file; the file is closed once mapped.
struct StoreShard::Mapping {
  const unsigned char* data = nullptr;
  size_t size = 0;

  explicit Mapping(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw DataError(path + ": cannot open: " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      const int err = errno;
      ::close(fd);
      throw DataError(path + ": cannot stat: " + std::strerror(err));
    }
    size = static_cast<size_t>(st.st_size);
    if (size > 0) {
      void* p = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
      if (p == MAP_FAILED) {
        const int err = errno;
        ::close(fd);
        throw DataError(path + ": cannot map: " + std::strerror(err));
      }
      // A rank reads scattered sequences and their index entries: read-ahead would fetch
      // other ranks' pages.
      ::madvise(p, size, MADV_RANDOM);
      data = static_cast<const unsigned char*>(p);
    }
    ::close(fd);
  }
  ~Mapping() {
    if (data != nullptr) ::munmap(const_cast<unsigned char*>(data), size);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
};

std::string tokenizer_fingerprint(const text::Tokenizer& tokenizer) {
  // The kind and the serialized model: stable across runs and machines.
  return Fnv1a()
      .mix(text::to_string(tokenizer.kind()))
      .mix(std::string_view("\0", 1))
      .mix(tokenizer.serialized_model())
      .hex();
}

bool is_prepared_store(const std::string& dir) {
  std::error_code ec;
  return !dir.empty() && fs::is_regular_file(fs::path(dir) / "manifest.json", ec);
}

bool store_has_split(const std::string& dir, Split split) {
  if (!is_prepared_store(dir)) return false;
  try {
    std::ifstream in(fs::path(dir) / "manifest.json");
    const auto manifest = nlohmann::json::parse(in);
    return manifest.contains("splits") && manifest["splits"].contains(split_key(split));
  } catch (const std::exception&) {
    return false;  // PreparedStore names what is wrong when the store is opened
  }
}

std::string split_fingerprint(const nlohmann::json& manifest, Split split) {
  // The shards' checksums are left out: a store's identity is its shards and counts, the
  // same whether or not the version that prepared it recorded checksums.
  auto entry = manifest["splits"][split_key(split)];
  for (auto& shard : entry["shards"]) {
    if (shard.is_object()) {
      shard.erase("tokens_crc32");
      shard.erase("index_crc32");
    }
  }
  return Fnv1a().mix(entry.dump()).mix(manifest.value("tokenizer", nlohmann::json::object()).dump()).hex();
}

// An entry past the index: a damaged index or sequence table, which would otherwise send the
// reader outside the mapping.
int64_t StoreShard::doc_first_sentence(int64_t d) const {
  if (d < 0 || d > documents_) {
    throw DataError(index_path_ + ": document " + std::to_string(d) + " asked for, the index has " +
                    std::to_string(documents_) + " (a damaged index or sequence table); run mlm-data verify");
  }
  bytes_read_->fetch_add(4, std::memory_order_relaxed);
  return doc_first_sentence_[d];
}

int64_t StoreShard::sentence_end(int64_t s) const {
  if (s < 0 || s >= sentences_) {
    throw DataError(index_path_ + ": sentence " + std::to_string(s) + " asked for, the index has " +
                    std::to_string(sentences_) + " (a damaged index or sequence table); run mlm-data verify");
  }
  bytes_read_->fetch_add(4, std::memory_order_relaxed);
  return sentence_end_[s];
}

void StoreShard::check_index() const {
  const auto& index = *index_map_;
  check_recorded_crc32(index_path_, index.data, index.size, index_crc32_, "the index");
  const auto offset = [](const uint32_t* entry, const unsigned char* base) {
    return std::to_string(reinterpret_cast<const unsigned char*>(entry) - base);
  };
  for (int64_t d = 0; d < documents_; ++d) {
    if (doc_first_sentence_[d + 1] < doc_first_sentence_[d]) {
      throw DataError(index_path_ + ": byte offset " + offset(doc_first_sentence_ + d + 1, index.data) +
                      ": document " + std::to_string(d + 1) + " starts at sentence " +
                      std::to_string(doc_first_sentence_[d + 1]) + ", before document " + std::to_string(d) +
                      " (a damaged index); prepare the store again");
    }
  }
  // The last entries equal the counts (checked on opening), so ascending keeps all in range.
  uint32_t previous = 0;
  for (int64_t s = 0; s < sentences_; ++s) {
    if (sentence_end_[s] <= previous) {
      throw DataError(index_path_ + ": byte offset " + offset(sentence_end_ + s, index.data) + ": sentence " +
                      std::to_string(s) + " ends at token " + std::to_string(sentence_end_[s]) +
                      ", not after " + std::to_string(previous) + " (a damaged index); prepare the store again");
    }
    previous = sentence_end_[s];
  }
}

void StoreShard::check_tokens() const {
  const auto& tokens = *tokens_map_;
  check_recorded_crc32(tokens_path_, tokens.data, tokens.size, tokens_crc32_, "the token file");
  std::vector<int32_t> block;
  constexpr int64_t kBlock = int64_t{1} << 20;
  for (int64_t begin = 0; begin < tokens_; begin += kBlock) {
    block.clear();
    read_tokens(begin, std::min(tokens_, begin + kBlock), block);  // checks every id
  }
}

void StoreShard::bad_token(int64_t position, int64_t id) const {
  throw DataError(tokens_path_ + ": byte offset " + std::to_string(position * token_bytes_) + ": token id " +
                  std::to_string(id) + " is not below the vocabulary size " + std::to_string(vocab_size_) +
                  " the manifest records (a damaged token file); run mlm-data verify");
}

int64_t StoreShard::doc_begin(int64_t d) const {
  const int64_t first = doc_first_sentence(d);
  return first == 0 ? 0 : sentence_end(first - 1);
}

void StoreShard::read_tokens(int64_t begin, int64_t end, std::vector<int32_t>& out) const {
  if (begin < 0 || end > tokens_ || begin > end) {
    throw DataError(tokens_path_ + ": token range [" + std::to_string(begin) + ", " +
                    std::to_string(end) + ") outside the shard's " + std::to_string(tokens_));
  }
  const unsigned char* base = tokens_map_->data + begin * token_bytes_;
  const size_t n = static_cast<size_t>(end - begin);
  out.reserve(out.size() + n);
  // Ids at or above the vocabulary size (a damaged file) would index outside the embedding.
  const uint32_t limit = vocab_size_ > 0 ? static_cast<uint32_t>(vocab_size_) : UINT32_MAX;
  if (token_bytes_ == 2) {
    for (size_t i = 0; i < n; ++i) {
      uint16_t v;
      std::memcpy(&v, base + 2 * i, 2);
      if (v >= limit) bad_token(begin + static_cast<int64_t>(i), v);
      out.push_back(v);
    }
  } else {
    for (size_t i = 0; i < n; ++i) {
      uint32_t v;
      std::memcpy(&v, base + 4 * i, 4);
      if (v >= limit || v > static_cast<uint32_t>(INT32_MAX)) bad_token(begin + static_cast<int64_t>(i), v);
      out.push_back(static_cast<int32_t>(v));
    }
  }
  bytes_read_->fetch_add(static_cast<int64_t>(n) * token_bytes_, std::memory_order_relaxed);
}

PreparedStore::PreparedStore(const std::string& dir, Split split)
    : dir_(dir), bytes_read_(std::make_unique<std::atomic<int64_t>>(0)) {
  const fs::path manifest_path = fs::path(dir) / "manifest.json";
  const std::string where = manifest_path.string();
  manifest_ = read_store_manifest(manifest_path, dir);
  const int64_t token_bytes = json_count(manifest_, "token_bytes", where);
  if (token_bytes != 2 && token_bytes != 4) throw DataError(where + ": token_bytes must be 2 or 4");
  const auto tokenizer = manifest_.value("tokenizer", nlohmann::json::object());
  const int64_t vocab_size = tokenizer.contains("vocab_size") ? json_count(tokenizer, "vocab_size", where + ": tokenizer") : 0;
  const std::string name = split_key(split);
  for (const auto& s : split_shard_list(manifest_, where, split)) {
    const std::string shard_where = where + ": splits." + name + " shard";
    if (!s.is_object() || !s.contains("name") || !s["name"].is_string()) {
      throw DataError(shard_where + " without a name");
    }
    StoreShard shard;
    shard.documents_ = json_count(s, "documents", shard_where);
    shard.sentences_ = json_count(s, "sentences", shard_where);
    shard.tokens_ = json_count(s, "tokens", shard_where);
    shard.token_bytes_ = static_cast<int>(token_bytes);
    shard.vocab_size_ = vocab_size;
    shard.tokens_crc32_ = s.value("tokens_crc32", std::string());
    shard.index_crc32_ = s.value("index_crc32", std::string());
    shard.bytes_read_ = bytes_read_.get();
    const fs::path base = fs::path(dir) / s["name"].get<std::string>();
    shard.map_files(base.string() + ".tokens", base.string() + ".index");
    documents_ += shard.documents_;
    sentences_ += shard.sentences_;
    tokens_ += shard.tokens_;
    shards_.push_back(std::move(shard));
  }
}

void StoreShard::map_files(const std::string& tokens_path, const std::string& index_path) {
  tokens_path_ = tokens_path;
  index_path_ = index_path;
  tokens_map_ = std::make_shared<Mapping>(tokens_path_);
  index_map_ = std::make_shared<Mapping>(index_path_);

  const size_t want_tokens = static_cast<size_t>(tokens_ * token_bytes_);
  if (tokens_map_->size != want_tokens) {
    throw DataError(tokens_path_ + ": " + std::to_string(tokens_map_->size) +
                    " bytes, the manifest says " + std::to_string(want_tokens) +
                    " (truncated or from another preparation); prepare the store again");
  }
  const size_t want_index = static_cast<size_t>(kIndexHeaderBytes + 4 * (documents_ + 1) +
                                                4 * sentences_);
  const auto& index = *index_map_;
  if (index.size != want_index || std::memcmp(index.data, kIndexMagic, 8) != 0) {
    throw DataError(index_path_ + ": " + std::to_string(index.size) + " bytes" +
                    (index.size >= 8 && std::memcmp(index.data, kIndexMagic, 8) != 0
                         ? " without the index magic"
                         : ", the manifest implies " + std::to_string(want_index)) +
                    " (truncated or damaged); prepare the store again");
  }
  uint64_t header[3];
  std::memcpy(header, index.data + 8, sizeof header);
  if (static_cast<int64_t>(header[0]) != documents_ || static_cast<int64_t>(header[1]) != sentences_ ||
      static_cast<int64_t>(header[2]) != tokens_) {
    throw DataError(index_path_ + ": header counts differ from the manifest's");
  }
  doc_first_sentence_ = reinterpret_cast<const uint32_t*>(index.data + kIndexHeaderBytes);
  sentence_end_ = doc_first_sentence_ + documents_ + 1;
  if (doc_first_sentence_[0] != 0 || doc_first_sentence_[documents_] != sentences_ ||
      (sentences_ > 0 && sentence_end_[sentences_ - 1] != tokens_)) {
    throw DataError(index_path_ + ": document or sentence table does not cover the shard");
  }
}

std::string PreparedStore::recorded_crc32(const std::string& path) const {
  const std::string name = fs::path(path).lexically_relative(dir_).generic_string();
  const auto tables = manifest_.value("tables", nlohmann::json::object());
  if (!tables.is_object() || !tables.contains(name) || !tables[name].is_object()) return "";
  return tables[name].value("crc32", std::string());
}

void PreparedStore::require_tokenizer(const text::Tokenizer& tokenizer) const {
  const std::string mine = tokenizer_fingerprint(tokenizer);
  const std::string theirs = manifest_.value("tokenizer", nlohmann::json::object()).value("fingerprint", "");
  if (mine != theirs) {
    throw ConfigError("tokenizer.model: the prepared store " + dir_ +
                          " was made with another tokenizer (fingerprint " + theirs +
                          ", this one is " + mine +
                          "); prepare the store again with this tokenizer or use its own",
                      "tokenizer.model");
  }
}

}  // namespace mlm::data
