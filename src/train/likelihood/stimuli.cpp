#include "mlm/train/likelihood/stimuli.h"

#include <filesystem>
#include <fstream>
#include <functional>

#include <nlohmann/json.hpp>

#include "mlm/util/errors.h"

namespace mlm::train::likelihood {
namespace {

bool is_blank(const std::string& line) { return line.find_first_not_of(" \t\r\n\f\v") == std::string::npos; }

bool is_json_lines(const std::string& path) {
  const auto ext = std::filesystem::path(path).extension().string();
  return ext == ".jsonl" || ext == ".json";
}

[[noreturn]] void fail(const std::string& path, int64_t line, const std::string& what) {
  throw DataError(path + ":" + std::to_string(line) + ": " + what);
}

/// Calls `take(line_text, line_number)` for each non-blank line until it returns false.
void for_each_line(const std::string& path, const std::function<bool(const std::string&, int64_t)>& take) {
  std::ifstream in(path, std::ios::binary);
  if (!in || std::filesystem::is_directory(path)) throw DataError(path + ": cannot be read");
  std::string text;
  for (int64_t line = 1; std::getline(in, text); ++line) {
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (!is_blank(text) && !take(text, line)) return;
  }
  if (in.bad()) throw DataError(path + ": cannot be read");
}

nlohmann::json object_of(const std::string& path, const std::string& text, int64_t line) {
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) fail(path, line, "not JSON");
  if (!j.is_object()) fail(path, line, "not a JSON object");
  return j;
}

/// The non-empty string field `key` of `j`, or "" when absent; a field of another kind fails.
std::string string_field(const nlohmann::json& j, const char* key, const std::string& path, int64_t line) {
  if (!j.contains(key) || j[key].is_null()) return {};
  if (!j[key].is_string()) fail(path, line, std::string("\"") + key + "\" is not a string");
  return j[key].get<std::string>();
}

}  // namespace

std::vector<Sentence> read_sentences(const std::string& path, int64_t limit) {
  const bool json = is_json_lines(path);
  std::vector<Sentence> out;
  for_each_line(path, [&](const std::string& text, int64_t line) {
    if (!json) {
      out.push_back({text, line});
    } else {
      const auto j = object_of(path, text, line);
      auto sentence = string_field(j, "sentence", path, line);
      if (sentence.empty()) sentence = string_field(j, "text", path, line);
      if (is_blank(sentence)) fail(path, line, "no non-empty \"sentence\" or \"text\" field");
      out.push_back({std::move(sentence), line});
    }
    return limit == 0 || static_cast<int64_t>(out.size()) < limit;
  });
  if (out.empty()) throw DataError(path + ": holds no sentence");
  return out;
}

std::vector<MinimalPair> read_minimal_pairs(const std::string& path, int64_t limit) {
  std::vector<MinimalPair> out;
  for_each_line(path, [&](const std::string& text, int64_t line) {
    const auto j = object_of(path, text, line);
    MinimalPair pair{string_field(j, "sentence_good", path, line), string_field(j, "sentence_bad", path, line),
                     string_field(j, "phenomenon", path, line), line};
    if (is_blank(pair.good) || is_blank(pair.bad))
      fail(path, line, "a minimal pair needs both \"sentence_good\" and \"sentence_bad\" as non-empty strings");
    out.push_back(std::move(pair));
    return limit == 0 || static_cast<int64_t>(out.size()) < limit;
  });
  if (out.empty()) throw DataError(path + ": holds no minimal pair");
  return out;
}

}  // namespace mlm::train::likelihood
