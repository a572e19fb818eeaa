#include "store_progress.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "mlm/data/store/prepared_store.h"
#include "mlm/text/sentencepiece/sentencepiece_model.h"
#include "mlm/util/atomic_file.h"
#include "mlm/util/errors.h"

namespace mlm::data::store_detail {
namespace fs = std::filesystem;

namespace {

constexpr const char* kProgressFormat = "mlm-train prepare progress";
constexpr const char* kStoreFormat = "mlm-train prepared store";

std::string tokenizer_type(const text::Tokenizer& tokenizer) {
  if (tokenizer.kind() != text::TokenizerKind::sentencepiece) return text::to_string(tokenizer.kind());
  using Algorithm = text::SentencePieceModel::Algorithm;
  switch (text::parse_sentencepiece_model(tokenizer.serialized_model(), tokenizer.model_path()).algorithm) {
    case Algorithm::unigram: return "unigram";
    case Algorithm::bpe: return "bpe";
    case Algorithm::word: return "word";
    case Algorithm::character: return "char";
  }
  return "unknown";
}

nlohmann::json source_list(const std::vector<text::CorpusFile>& files) {
  auto out = nlohmann::json::array();
  for (const auto& f : files) {
    struct stat st {};
    if (::stat(f.path.c_str(), &st) != 0) {
      throw DataError("'" + f.path + "': cannot stat: " + std::strerror(errno));
    }
    const int64_t mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    out.push_back({{"path", f.path}, {"bytes", static_cast<int64_t>(st.st_size)}, {"mtime_ns", mtime_ns}});
  }
  return out;
}

nlohmann::json cursor_json(const StreamCursor& c) {
  return {{"file_index", c.file_index}, {"offset", c.offset}, {"line", c.line}, {"doc_index", c.doc_index}};
}

StreamCursor parse_cursor(const nlohmann::json& j) {
  return {j.at("file_index").get<int64_t>(), j.at("offset").get<int64_t>(), j.at("line").get<int64_t>(),
          j.at("doc_index").get<int64_t>()};
}

std::string describe_file(const nlohmann::json& f) {
  // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive) on "'" + s + ...
  std::string out = "'";
  out += f.value("path", std::string());
  out += "' (";
  out += std::to_string(f.value("bytes", int64_t{0}));
  out += " bytes, mtime_ns ";
  out += std::to_string(f.value("mtime_ns", int64_t{0}));
  out += ")";
  return out;
}

}  // namespace

StoreIdentity StoreIdentity::of(const text::Tokenizer& tokenizer, const config::DataConfig& data,
                                const std::map<std::string, std::vector<text::CorpusFile>>& splits) {
  StoreIdentity id;
  id.tokenizer = {{"fingerprint", tokenizer_fingerprint(tokenizer)},
                  {"type", tokenizer_type(tokenizer)},
                  {"vocab_size", tokenizer.size()}};
  id.token_bytes = tokenizer.size() <= 65536 ? 2 : 4;
  id.sources = nlohmann::json::object();
  for (const auto& [split, files] : splits) id.sources[split] = source_list(files);
  const bool holds_out = data.valid_files.empty() && data.valid_fraction > 0;
  id.reading = {{"format", config::to_string(data.format)},
                {"doc_separator", config::to_string(data.doc_separator)},
                {"text_field", data.text_field},
                {"on_bad_record", config::to_string(data.on_bad_record)},
                {"valid_fraction", holds_out ? data.valid_fraction : 0.0}};
  return id;
}

std::string changed_source(const nlohmann::json& recorded, const nlohmann::json& now) {
  for (const char* split : {"train", "valid"}) {
    const auto was = recorded.value(split, nlohmann::json::array());
    const auto is = now.value(split, nlohmann::json::array());
    const std::string key = std::string("data.") + split + "_files";
    for (size_t i = 0; i < std::max(was.size(), is.size()); ++i) {
      if (i >= is.size()) return key + ": '" + was[i].value("path", std::string()) + "' is no longer listed";
      if (i >= was.size()) return key + ": '" + is[i].value("path", std::string()) + "' was not listed before";
      if (was[i] != is[i]) {
        if (was[i].value("path", std::string()) != is[i].value("path", std::string())) {
          return key + ": '" + is[i].value("path", std::string()) + "' is listed where '" +
                 was[i].value("path", std::string()) + "' was";
        }
        return key + ": " + describe_file(is[i]) + " changed since it was read as " +
               describe_file(was[i]);
      }
    }
  }
  return "";
}

std::string changed_reading(const nlohmann::json& recorded, const nlohmann::json& now) {
  for (const auto& [key, value] : now.items()) {
    const auto was = recorded.value(key, nlohmann::json());
    if (was != value) return "data." + key + " was " + was.dump() + ", is " + value.dump();
  }
  return "";
}

void write_json_file(const fs::path& path, const nlohmann::json& json) {
  try {
    write_file_atomically(path, json.dump(1) + "\n");
  } catch (const CheckpointError& e) {
    throw DataError(std::string(e.what()) + " (disk full or not writable?)");
  }
}

nlohmann::json read_json_file(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw DataError(path.string() + ": cannot read: " + std::strerror(errno));
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw DataError(path.string() + ": not valid JSON (" + e.what() + ")");
  }
}

namespace {

/// What the progress file and the manifest both begin with: format, version and identity.
nlohmann::json store_header(const char* format, const StoreIdentity& id) {
  return {{"format", format},
          {"version", 1},
          {"tokenizer", id.tokenizer},
          {"token_bytes", id.token_bytes},
          {"sentences", "line"},
          {"sources", id.sources},
          {"reading", id.reading},
          {"splits", nlohmann::json::object()}};
}

}  // namespace

nlohmann::json progress_json(const StoreProgress& p) {
  nlohmann::json j = store_header(kProgressFormat, p.identity);
  for (const auto& [name, split] : p.splits) {
    auto shards = nlohmann::json::array();
    for (size_t i = 0; i < split.shards.size(); ++i) {
      auto entry = split.shards[i].to_json();
      entry["start"] = cursor_json(split.shard_starts[i]);
      shards.push_back(entry);
    }
    j["splits"][name] = {{"shards", shards}, {"next", cursor_json(split.next)}, {"complete", split.complete}};
  }
  return j;
}

StoreIdentity recorded_identity(const nlohmann::json& j) {
  StoreIdentity id;
  id.tokenizer = j.value("tokenizer", nlohmann::json::object());
  id.token_bytes = j.value("token_bytes", 0);
  id.sources = j.value("sources", nlohmann::json::object());
  id.reading = j.value("reading", nlohmann::json::object());
  return id;
}

StoreProgress parse_progress(const nlohmann::json& j, const std::string& path) {
  if (!j.is_object() || j.value("format", "") != kProgressFormat || j.value("version", 0) != 1) {
    throw DataError(path + ": not a version 1 mlm-train prepare progress file");
  }
  StoreProgress p;
  try {
    p.identity = recorded_identity(j);
    for (const auto& [name, split] : j.at("splits").items()) {
      SplitProgress s;
      for (const auto& entry : split.at("shards")) {
        s.shards.push_back(ShardStats::from_json(entry, path));
        s.shard_starts.push_back(parse_cursor(entry.at("start")));
      }
      s.next = parse_cursor(split.at("next"));
      s.complete = split.at("complete").get<bool>();
      p.splits[name] = std::move(s);
    }
  } catch (const nlohmann::json::exception& e) {
    throw DataError(path + ": damaged progress file (" + e.what() + "); pass --overwrite to start over");
  }
  return p;
}

nlohmann::json manifest_json(const StoreProgress& p) {
  nlohmann::json j = store_header(kStoreFormat, p.identity);
  for (const auto& [name, split] : p.splits) {
    int64_t documents = 0, sentences = 0, tokens = 0;
    auto shards = nlohmann::json::array();
    for (const auto& s : split.shards) {
      documents += s.documents;
      sentences += s.sentences;
      tokens += s.tokens;
      shards.push_back(s.to_json());
    }
    j["splits"][name] = {{"documents", documents}, {"sentences", sentences}, {"tokens", tokens}, {"shards", shards}};
  }
  return j;
}

}  // namespace mlm::data::store_detail
