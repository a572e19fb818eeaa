// Bad configurations against the real mlm-train: every case must end with exit 2 and one
// stderr line naming the key or the file, never a signal, abort or backtrace. The same table
// runs in-process through load_config() (a ConfigError naming the key), so a failing CLI case
// shows whether the loader or the command is at fault.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "fault_util.h"
#include "mlm/config/config_loader.h"
#include "mlm/util/errors.h"

namespace mlm::fault {
namespace {

// What kind of file `--config` points at.
enum class FileKind { yaml, missing, directory, binary, invalid_utf8, huge };

// When the error is found: by the config loader (pure config), or by the command after the
// config loaded (a file the config names does not exist).
enum class Stage { loader, command };

struct Case {
  std::string name;
  std::string yaml;                    // $DIR = scratch dir, $FIX = tests/fixtures
  std::vector<std::string> overrides;  // --set arguments ($DIR, $FIX substituted too)
  std::vector<std::string> mention;    // the error line must contain each ($DIR substituted)
  FileKind kind = FileKind::yaml;
  Stage stage = Stage::loader;
  // Known to hang the loader (found by fuzz/config_fuzzer): only run as a separate process
  // with a memory limit and a timeout, never in the test process.
  bool may_hang = false;
};

// A small, valid run: each case changes one thing. The corpus paths are absolute so that only
// the cases about missing files have missing files.
const char* const kValid = R"(model:
  hidden_size: 32
  num_hidden_layers: 1
  num_attention_heads: 2
  intermediate_size: 64
  max_position_embeddings: 64
tokenizer:
  model: $DIR/spm.model
  vocab_size: 200
data:
  train_files: [$FIX/corpus/train.txt]
  valid_files: [$FIX/corpus/valid.txt]
  seq_len: 32
train:
  output_dir: $DIR/run
  max_steps: 2
  micro_batch_size: 2
  precision: fp32
)";

// kValid with `section:` followed by `lines` (replacing nothing: the loader rejects a section
// that appears twice, so cases that touch a section listed above rewrite it with `with`).
std::string with(const std::string& section, const std::string& lines) {
  std::string yaml = kValid;
  const std::string header = section + ":\n";
  const auto at = yaml.find(header);
  if (at == std::string::npos) return yaml + header + lines;
  return yaml.insert(at + header.size(), lines);
}

// kValid with one line changed.
std::string changed(const std::string& from, const std::string& to) {
  std::string yaml = kValid;
  return yaml.replace(yaml.find(from), from.size(), to);
}

std::vector<Case> cases() {
  std::vector<Case> c;
  // ---- YAML syntax ----
  c.push_back({"unclosed_bracket", "model:\n  hidden_size: [128\n", {}, {"bad.yaml"}});
  c.push_back({"bad_indentation", "model:\n  hidden_size: 128\n   num_hidden_layers: 2\n", {},
               {"bad.yaml"}});
  c.push_back({"tab_indentation", "model:\n\thidden_size: 128\n", {}, {"bad.yaml"}});
  c.push_back({"unclosed_quote", "train:\n  output_dir: \"runs/x\n  max_steps: 3\n", {},
               {"bad.yaml"}});
  c.push_back({"duplicate_key", with("model", "  hidden_size: 64\n"), {},
               {"model.hidden_size"}});
  c.push_back({"duplicate_section", std::string(kValid) + "model:\n  hidden_size: 64\n", {},
               {"model"}});
  c.push_back({"two_documents", std::string(kValid) + "---\nmodel:\n  hidden_size: 64\n", {},
               {"bad.yaml"}});
  c.push_back({"top_level_list", "- model\n- train\n", {}, {"bad.yaml"}});
  c.push_back({"top_level_scalar", "hello world\n", {}, {"bad.yaml"}});
  c.push_back({"comments_only", "# nothing here\n# at all\n", {}, {"bad.yaml"}});
  // yaml-cpp 0.7's YAML::LoadAll loops forever, allocating, on a document that starts with a
  // stray ',' (fuzz/config_fuzzer, crash-d3ea9ebc).
  c.push_back({"stray_leading_comma", ",\n", {}, {"bad.yaml"}, FileKind::yaml, Stage::loader,
               true});
  c.push_back({"leading_comma_then_keys", ",model:\n  hidden_size: 64\n", {}, {"bad.yaml"},
               FileKind::yaml, Stage::loader, true});
  // ---- unknown keys ----
  c.push_back({"unknown_key", with("optim", "  learnig_rate: 1.0e-3\n"), {},
               {"optim.learnig_rate"}});
  c.push_back({"unknown_section", std::string(kValid) + "optimizer:\n  learning_rate: 1\n", {},
               {"optimizer"}});
  c.push_back({"two_unknown_keys",
               with("train", "  max_step: 3\n  micro_batch: 4\n"), {},
               {"train.max_step", "train.micro_batch"}});
  c.push_back({"map_as_key", "model:\n  ? [a, b]\n  : 3\n", {}, {"bad.yaml"}});
  // ---- wrong types ----
  c.push_back({"string_for_int", with("model", "  vocab_size: big\n"), {},
               {"model.vocab_size"}});
  c.push_back({"float_for_int", with("data", "  num_workers: 2.5\n"), {},
               {"data.num_workers"}});
  c.push_back({"word_for_bool", with("data", "  cross_documents: maybe\n"), {},
               {"data.cross_documents"}});
  c.push_back({"unknown_enum", with("schedule", "  decay: exponential\n"), {},
               {"schedule.decay"}});
  c.push_back({"list_for_number", with("optim", "  learning_rate: [1.0e-3]\n"), {},
               {"optim.learning_rate"}});
  c.push_back({"map_for_list", with("tokenizer", "  training_files: {a: b}\n"), {},
               {"tokenizer.training_files"}});
  c.push_back({"scalar_for_pair", with("optim", "  betas: 0.9\n"), {}, {"optim.betas"}});
  c.push_back({"three_betas", with("optim", "  betas: [0.9, 0.99, 0.999]\n"), {},
               {"optim.betas"}});
  c.push_back({"list_for_map", "model: [1, 2]\n", {}, {"model"}});
  c.push_back({"scalar_for_map", "train: fast\n", {}, {"train"}});
  c.push_back({"int_overflow", with("eval", "  seed: 99999999999999999999999\n"), {},
               {"eval.seed"}});
  c.push_back({"nan_number", with("masking", "  span_p: .nan\n"), {}, {"masking.span_p"}});
  c.push_back({"map_for_scalar", with("checkpoint", "  keep_last:\n    value: 3\n"), {},
               {"checkpoint.keep_last"}});
  // ---- out of range ----
  c.push_back({"dropout_above_one", with("model", "  hidden_dropout_prob: 1.5\n"), {},
               {"model.hidden_dropout_prob"}});
  c.push_back({"negative_eval_batches", with("eval", "  max_batches: -1\n"), {},
               {"eval.max_batches"}});
  c.push_back({"zero_mask_rate", with("masking", "  mlm_probability: 0\n"), {},
               {"masking.mlm_probability"}});
  c.push_back({"seq_len_too_small", changed("seq_len: 32", "seq_len: 4"), {},
               {"data.seq_len"}});
  c.push_back({"zero_max_span", with("masking", "  max_span: 0\n"), {}, {"masking.max_span"}});
  c.push_back({"negative_lr", with("optim", "  learning_rate: -1\n"), {},
               {"optim.learning_rate"}});
  c.push_back({"replace_probs_sum", with("masking", "  mask_replace_prob: 0.9\n  random_replace_prob: 0.2\n"),
               {}, {"masking.mask_replace_prob"}});
  c.push_back({"no_stop_condition", "train:\n  max_steps: 0\n", {}, {"train.max_steps"}});
  c.push_back({"unknown_log_level", with("logging", "  level: loud\n"), {},
               {"logging.level"}});
  c.push_back({"zero_distill_temperature", with("distill", "  teacher: $DIR\n  temperature: 0\n"), {},
               {"distill.temperature"}});
  c.push_back({"warmup_ratio_above_one", with("schedule", "  warmup_ratio: 1.5\n"), {},
               {"schedule.warmup_ratio"}});
  c.push_back({"zero_character_coverage", with("tokenizer", "  character_coverage: 0\n"), {},
               {"tokenizer.character_coverage"}});
  c.push_back({"add_tokens_without_hf", with("tokenizer", "  add_tokens: [neurotransmitter]\n"), {},
               {"tokenizer.add_tokens"}});
  c.push_back({"add_tokens_twice", with("tokenizer", "  type: hf\n  add_tokens: [gene, cell, gene]\n"), {},
               {"tokenizer.add_tokens"}});
  c.push_back({"add_tokens_empty_term", with("tokenizer", "  type: hf\n  add_tokens: [gene, \"\"]\n"), {},
               {"tokenizer.add_tokens"}});
  // ---- inconsistent shapes ----
  c.push_back({"heads_do_not_divide", "model:\n  hidden_size: 130\n  num_attention_heads: 4\n",
               {}, {"model.hidden_size", "model.num_attention_heads"}});
  c.push_back({"seq_len_above_positions",
               "model:\n  max_position_embeddings: 64\ndata:\n  seq_len: 128\n", {},
               {"data.seq_len", "model.max_position_embeddings"}});
  c.push_back({"nsp_with_one_token_type",
               "model:\n  objective: nsp\n  type_vocab_size: 1\n", {},
               {"model.type_vocab_size"}});
  c.push_back({"byte_fallback_vocab_too_small",
               "tokenizer:\n  byte_fallback: true\n  vocab_size: 100\n", {},
               {"tokenizer.vocab_size"}});
  c.push_back({"nccl_on_cpu", "train:\n  device: cpu\ndistributed:\n  backend: nccl\n", {},
               {"distributed.backend"}});
  // ---- ELECTRA (objective rtd) ----
  const std::string electra = "model:\n  architecture: electra\n  objective: rtd\n";
  c.push_back({"rtd_generator_wider", electra + "  generator_hidden_ratio: 1.5\n", {},
               {"model.generator_hidden_ratio"}});
  c.push_back({"rtd_generator_deeper", electra + "  generator_layers_ratio: 2\n", {},
               {"model.generator_layers_ratio"}});
  c.push_back({"rtd_zero_weight", electra + "  rtd_weight: 0\n", {}, {"model.rtd_weight"}});
  c.push_back({"rtd_negative_weight", electra + "  rtd_weight: -50\n", {}, {"model.rtd_weight"}});
  c.push_back({"rtd_zero_temperature", electra + "  rtd_temperature: 0\n", {}, {"model.rtd_temperature"}});
  c.push_back({"rtd_on_bert", "model:\n  objective: rtd\n", {}, {"model.objective"}});
  c.push_back({"embedding_size_on_bert", "model:\n  embedding_size: 128\n", {}, {"model.embedding_size"}});
  c.push_back({"electra_with_nsp", "model:\n  architecture: electra\n  objective: nsp\n", {},
               {"model.objective"}});
  // ---- RoBERTa (positions from the pad id + 1) ----
  c.push_back({"roberta_positions_without_offset",
               "model:\n  architecture: roberta\n  max_position_embeddings: 64\ndata:\n  seq_len: 64\n", {},
               {"model.max_position_embeddings", "(64)", "data.seq_len 64", "roberta"}});
  c.push_back({"roberta_with_nsp", "model:\n  architecture: roberta\n  objective: nsp\n", {},
               {"model.objective"}});
  c.push_back({"xlm_roberta_pre_ln", "model:\n  architecture: xlm_roberta\n  norm: pre\n", {},
               {"model.norm"}});
  // ---- the config file itself ----
  c.push_back({"missing_config_file", "", {}, {"$DIR/bad.yaml"}, FileKind::missing});
  c.push_back({"directory_as_config", "", {}, {"$DIR/bad.yaml"}, FileKind::directory});
  c.push_back({"empty_file", "", {}, {"bad.yaml"}});
  c.push_back({"binary_file", "", {}, {"bad.yaml"}, FileKind::binary});
  c.push_back({"invalid_utf8", "", {}, {"bad.yaml"}, FileKind::invalid_utf8});
  c.push_back({"huge_file", "", {}, {"bad.yaml"}, FileKind::huge});
  // ---- files the config names ----
  c.push_back({"missing_train_file", kValid, {"data.train_files=[$DIR/nope.txt]"},
               {"$DIR/nope.txt"}, FileKind::yaml, Stage::command});
  c.push_back({"glob_matches_nothing", kValid, {"data.train_files=['$DIR/*.none']"},
               {"$DIR/*.none"}, FileKind::yaml, Stage::command});
  c.push_back({"train_file_is_directory", kValid, {"data.train_files=[$DIR]"}, {"$DIR"},
               FileKind::yaml, Stage::command});
  c.push_back({"missing_tokenizer_model", kValid, {"tokenizer.train_if_missing=false"},
               {"$DIR/spm.model"}, FileKind::yaml, Stage::command});
  c.push_back({"missing_init_from", kValid, {"model.init_from=$DIR/no_such_model"},
               {"$DIR/no_such_model"}, FileKind::yaml, Stage::command});
  c.push_back({"no_train_files", kValid, {"data.train_files=[]"}, {"data.train_files"},
               FileKind::yaml, Stage::command});
  // ---- --set ----
  c.push_back({"set_without_equals", kValid, {"optim.learning_rate"}, {"optim.learning_rate"}});
  c.push_back({"set_unknown_key", kValid, {"optim.learnig_rate=1"}, {"optim.learnig_rate"}});
  c.push_back({"set_without_section", kValid, {"max_steps=3"}, {"max_steps"}});
  c.push_back({"set_wrong_type", kValid, {"train.max_steps=lots"}, {"train.max_steps"}});
  c.push_back({"set_invalid_yaml", kValid, {"optim.betas=[0.9,"}, {"optim.betas"}});
  c.push_back({"set_out_of_range", kValid, {"train.micro_batch_size=0"},
               {"train.micro_batch_size"}});
  c.push_back({"set_list_for_map", kValid, {"model=[1,2]"}, {"model"}});
  return c;
}

std::string substitute(std::string text, const fs::path& dir) {
  const std::pair<std::string, std::string> vars[] = {{"$DIR", dir.string()},
                                                      {"$FIX", MLM_FIXTURES_DIR}};
  for (const auto& [var, value] : vars) {
    for (auto at = text.find(var); at != std::string::npos; at = text.find(var, at + value.size())) {
      text.replace(at, var.size(), value);
    }
  }
  return text;
}

// Writes the case's --config file into `dir`; returns its path.
fs::path materialize(const Case& c, const fs::path& dir) {
  const fs::path path = dir / "bad.yaml";
  switch (c.kind) {
    case FileKind::missing:
      break;
    case FileKind::directory:
      fs::create_directories(path);
      break;
    case FileKind::binary: {
      static const char kBytes[] = "model:\n  hidden_size: 1\0\x01\x02\x03\xff";
      write_text(path, std::string(kBytes, sizeof(kBytes) - 1));
      break;
    }
    case FileKind::invalid_utf8:
      write_text(path, "model:\n  init_from: \"caf\xe9\"\n");
      break;
    case FileKind::huge: {
      std::string text;
      while (text.size() < (5u << 20)) text += "# padding comment line to make the file large\n";
      write_text(path, text + kValid);
      break;
    }
    case FileKind::yaml:
      write_text(path, substitute(c.yaml, dir));
      break;
  }
  return path;
}

std::vector<std::string> substituted(const std::vector<std::string>& items, const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& item : items) out.push_back(substitute(item, dir));
  return out;
}

// The table against the config it tests: every section RunConfig has (the loader's
// known_keys()) has at least one case whose error must name it or one of its keys, so a new
// section cannot go without a bad-config case. Names are unique, so a failure names one case.
TEST(BadConfigTable, CoversEverySectionTheConfigKnows) {
  const auto all = cases();
  std::vector<std::string> sections;
  for (const auto& key : config::known_keys()) {
    const std::string section = key.substr(0, key.find('.'));
    if (std::find(sections.begin(), sections.end(), section) == sections.end()) {
      sections.push_back(section);
    }
  }
  ASSERT_FALSE(sections.empty());
  for (const auto& section : sections) {
    bool covered = false;
    for (const auto& c : all) {
      for (const auto& word : c.mention) {
        covered = covered || word == section || word.rfind(section + ".", 0) == 0;
      }
    }
    EXPECT_TRUE(covered) << "no bad-config case names section '" << section << "'";
  }
  std::vector<std::string> names;
  for (const auto& c : all) names.push_back(c.name);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end()) << "duplicate name";
}

// Every key the config knows, not only those in the table: a map where a value belongs is
// refused with a one-line ConfigError whose key() is that key (from --set and from the file).
TEST(BadConfigLoader, EveryKnownKeyRefusesAMapNamingTheKey) {
  ScratchDir dir("badcfg");
  const std::string valid = substitute(kValid, dir.path());
  for (const auto& key : config::known_keys()) {
    SCOPED_TRACE(key);
    const std::string section = key.substr(0, key.find('.'));
    const std::string field = key.substr(key.find('.') + 1);
    // In a file: only that key (the defaults are valid; the error comes before validation).
    const std::string yaml = section + ":\n  " + field + ": {bad: 1}\n";
    const std::vector<std::pair<std::string, std::function<void()>>> sources = {
        {"--set", [&] { config::load_config_from_string(valid, "<valid>", {key + "={bad: 1}"}); }},
        {"file", [&] { config::load_config_from_string(yaml, "<file>"); }}};
    for (const auto& [source, load] : sources) {
      try {
        load();
        ADD_FAILURE() << source << ": accepted";
      } catch (const ConfigError& e) {
        const std::string message = e.what();
        EXPECT_EQ(e.key(), key) << source << ": " << message;
        EXPECT_NE(message.find(key), std::string::npos) << source << ": " << message;
        EXPECT_EQ(message.find('\n'), std::string::npos) << source << ": " << message;
      } catch (const std::exception& e) {
        ADD_FAILURE() << source << ": not a ConfigError: " << e.what();
      }
    }
  }
}

// In-process: the loader refuses each pure-config case with a ConfigError naming the key.
TEST(BadConfigLoader, EveryLoaderCaseThrowsConfigErrorNamingTheKey) {
  for (const auto& c : cases()) {
    if (c.stage != Stage::loader || c.may_hang) continue;
    SCOPED_TRACE("case " + c.name);
    ScratchDir dir("badcfg");
    const fs::path path = materialize(c, dir.path());
    try {
      config::load_config(path.string(), substituted(c.overrides, dir.path()));
      ADD_FAILURE() << "accepted";
    } catch (const ConfigError& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
      for (const auto& word : substituted(c.mention, dir.path())) {
        EXPECT_NE(message.find(word), std::string::npos) << "'" << word << "' not in: " << message;
      }
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not a ConfigError: " << e.what();
    }
  }
}

// The real command: exit 2, one stderr line naming the key or file, no crash. The cases run a
// few at a time (each is a separate process) to keep the suite fast.
TEST(BadConfigCli, EveryCaseExits2WithOneLineNamingTheKeyOrFile) {
  ASSERT_TRUE(fs::exists(tool_path("train"))) << tool_path("train");
  struct Running {
    const Case* c;
    std::unique_ptr<ScratchDir> dir;
    std::unique_ptr<Child> child;
  };
  const auto all = cases();
  std::deque<const Case*> todo;
  for (const auto& c : all) todo.push_back(&c);
  std::vector<Running> running;
  constexpr size_t kParallel = 4;
  const auto finish = [&](Running& r) {
    const ChildResult result = r.child->wait();
    const bool after_load = r.c->stage == Stage::command;
    EXPECT_TRUE(clean_failure(result, kExitBadUsage, substituted(r.c->mention, r.dir->path()),
                              after_load ? Preceding::progress_logs : Preceding::nothing))
        << "case " << r.c->name;
  };
  while (!todo.empty() || !running.empty()) {
    while (!todo.empty() && running.size() < kParallel) {
      const Case* c = todo.front();
      todo.pop_front();
      Running r{c, std::make_unique<ScratchDir>("badcfg"), nullptr};
      const fs::path path = materialize(*c, r.dir->path());
      ChildOptions options;
      options.argv = {tool_path("train"), "--config", path.string()};
      for (const auto& set : substituted(c->overrides, r.dir->path())) {
        options.argv.push_back("--set");
        options.argv.push_back(set);
      }
      options.cwd = r.dir->path().string();
      options.timeout_s = c->may_hang ? 10 : 60;  // a loader case takes well under a second
      options.address_space_limit = int64_t{8} << 30;
      r.child = std::make_unique<Child>(options);
      running.push_back(std::move(r));
    }
    finish(running.front());
    running.erase(running.begin());
  }
}

}  // namespace
}  // namespace mlm::fault
