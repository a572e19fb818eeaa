// libFuzzer target: a Hugging Face tokenizer.json (mlm/text/hf/hf_tokenizer.h), loaded and, when
// it loads, used. Only mlm::DataError may escape the loader (anything else ends the process and
// is reported as a crash; a hang or a runaway allocation is reported by libFuzzer's -timeout and
// -rss_limit_mb). A tokenizer that loads must encode every text to ids below its vocab_size,
// with one word-start flag per id, decode those ids without an error, give a piece for each,
// and (when its roles make it a run's tokenizer, Tokenizer::from_hf) load again from the bytes a
// checkpoint stores (serialized_model) and encode the same ids.
//
// A pattern of the file that backtracks without bound may stop an encode with
// RegexBudgetError (the budget's documented outcome); the harness runs under a budget of 50
// time units rather than the default 1000 so that a run of such matches stays well inside
// libFuzzer's -timeout.
//
// Input: tokenizer.json, then optionally a NUL byte and tokenizer_config.json (the special
// roles). The texts encoded are a few fixed ones and windows of the input itself, which holds
// the vocabulary's pieces, the added tokens and the patterns' literals.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fuzz_support.h"
#include "mlm/text/hf/hf_tokenizer.h"
#include "mlm/text/regex_budget.h"
#include "mlm/text/tokenizer.h"
#include "mlm/text/utf8.h"
#include "mlm/util/errors.h"

namespace {

constexpr const char* kTarget = "tokenizer_json_fuzzer";
constexpr size_t kWindow = 200;

std::vector<std::string> sample_texts(std::string_view input) {
  std::vector<std::string> texts = {
      "Hello, world! It's 2024: naïve café, ﬁve ½ 東京 🙂\tend.",
      "  leading and  double spaces\r\nand a new line ",
      "",
      std::string(input.substr(0, kWindow)),
      std::string(input.substr(input.size() / 2, kWindow)),
      std::string(input.substr(input.size() > kWindow ? input.size() - kWindow : 0)),
  };
  for (auto& text : texts) mlm::text::repair_utf8(text);
  return texts;
}

std::string ids_text(const std::vector<int32_t>& ids) {
  std::string out;
  for (const auto id : ids) out += (out.empty() ? "" : " ") + std::to_string(id);
  return out;
}

void check_hf(const mlm::text::hf::HfTokenizer& tok, const std::vector<std::string>& texts) {
  const int64_t vocab = tok.vocab_size();
  if (vocab < 0) mlm::fuzz::fail(kTarget, "negative vocab_size");
  if (static_cast<int64_t>(tok.word_start_pieces().size()) != vocab)
    mlm::fuzz::fail(kTarget, "word_start_pieces() is not vocab_size long");
  std::vector<int32_t> ids;
  std::vector<uint8_t> starts;
  for (const auto& text : texts) {
    tok.encode(text, ids, &starts);
    if (ids.size() != starts.size()) mlm::fuzz::fail(kTarget, "one word-start flag per id broken");
    for (const auto id : ids) {
      if (id < 0 || id >= vocab)
        mlm::fuzz::fail(kTarget, "id " + std::to_string(id) + " outside vocab_size " + std::to_string(vocab));
      tok.id_to_piece(id);
    }
    const auto with_specials = tok.encode(text, true);
    std::vector<int32_t> types;
    const auto pair = tok.encode_pair(text, texts[0], true, &types);
    if (types.size() != pair.size()) mlm::fuzz::fail(kTarget, "one type id per id broken");
    for (const std::vector<int32_t>* encoded : {&std::as_const(ids), &with_specials, &pair}) {
      for (const auto id : *encoded)
        if (id < 0 || id >= vocab) mlm::fuzz::fail(kTarget, "special id " + std::to_string(id) + " outside vocab_size");
      try {
        tok.decode(*encoded, true);
        tok.decode(*encoded, false);
      } catch (const mlm::text::RegexBudgetError&) {
        throw;  // a Replace decoder's pattern over its budget: allowed
      } catch (const mlm::DataError& e) {
        mlm::fuzz::fail(kTarget, "decoding its own ids " + ids_text(*encoded) + " fails: " + e.what());
      }
    }
  }
}

// The run's tokenizer over the same pipeline, and the copy a checkpoint stores of it.
void check_run_tokenizer(const mlm::text::Tokenizer& tok, const std::vector<std::string>& texts) {
  const auto again = mlm::text::Tokenizer::from_serialized(tok.serialized_model(), "<serialized>");
  for (const auto& text : texts) {
    const auto ids = tok.encode(text);
    if (again.encode(text) != ids)
      mlm::fuzz::fail(kTarget, "the serialized tokenizer encodes '" + text + "' differently");
    for (const auto id : ids)
      if (id < 0 || id >= tok.size()) mlm::fuzz::fail(kTarget, "id " + std::to_string(id) + " outside size()");
    tok.decode(ids);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  mlm::text::hf::HfTokenizerFiles files;
  files.tokenizer_json = std::string(input.substr(0, nul));
  if (nul != std::string_view::npos) files.tokenizer_config_json = std::string(input.substr(nul + 1));
  const auto texts = sample_texts(input);
  static const bool budget_set = [] {
    mlm::text::set_regex_budget({50, mlm::text::RegexBudget{}.stack_limit_bytes});
    return true;
  }();
  (void)budget_set;

  std::optional<mlm::text::hf::HfTokenizer> tok;
  try {
    tok = mlm::text::hf::HfTokenizer::from_files(files, "<fuzz>/tokenizer.json");
  } catch (const mlm::DataError&) {
    // the one allowed outcome for a bad file
  }
  if (tok) {
    try {
      check_hf(*tok, texts);
      std::optional<mlm::text::Tokenizer> run;
      try {
        run = mlm::text::Tokenizer::from_hf(*tok, "<fuzz>/tokenizer.json");
      } catch (const mlm::text::RegexBudgetError&) {
        throw;
      } catch (const mlm::DataError&) {
        // a role missing or not in the vocabulary
      }
      if (run) check_run_tokenizer(*run, texts);
    } catch (const mlm::text::RegexBudgetError&) {
      // a pattern over its budget on one of the texts
    }
  }
  // The WordPiece loader's reading of a tokenizer.json (a checkpoint's copy of a WordPiece run's
  // tokenizer, or tokenizer.type wordpiece): JSON only, a model proto goes to sentencepiece.
  const size_t first = files.tokenizer_json.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && files.tokenizer_json[first] == '{') {
    std::optional<mlm::text::Tokenizer> wordpiece;
    try {
      wordpiece = mlm::text::Tokenizer::from_serialized(files.tokenizer_json, "<fuzz>/tokenizer.json");
    } catch (const mlm::DataError&) {
    }
    if (wordpiece) check_run_tokenizer(*wordpiece, texts);
  }
  return 0;
}
