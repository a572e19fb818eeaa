// validate_config: every range and consistency rule of the RunConfig, each failure a
// ConfigError naming the dotted key, the value and what would be valid. The loader adds the
// file and line. An architecture's own rules are its keys' (model/<arch>/<arch>_keys.cpp,
// asked through config/architecture_keys.h). Keep the rules in docs/CONFIG.md in step.
#include "mlm/config/validate.h"

#include <filesystem>

#include <algorithm>
#include <climits>
#include <cmath>
#include <string>
#include <type_traits>

#include "mlm/config/architecture_keys.h"
#include "mlm/config/validate_distill.h"
#include "mlm/config/value_checks.h"
#include "mlm/config/source_weights.h"
#include "mlm/util/errors.h"

namespace mlm::config {
namespace {

// The five special tokens every vocabulary holds: [PAD] [UNK] [CLS] [SEP] [MASK].
constexpr int64_t kSpecialTokens = 5;
// sentencepiece's byte_fallback adds one piece per byte value.
constexpr int64_t kBytePieces = 256;
// [CLS] a [SEP] b [SEP] with room for a few tokens on each side.
constexpr int64_t kMinSeqLen = 8;
// Rounding slack for mask_replace_prob + random_replace_prob (0.7 + 0.3 > 1 in binary).
constexpr double kProbabilitySumSlack = 1e-12;

using checks::at_least;
using checks::End;
using checks::fail;
using checks::in_range;
using checks::non_negative;
using checks::number;
using checks::positive;

void not_empty(const std::string& key, const std::string& value, const std::string& what) {
  if (value.empty()) fail(key, "''", "must not be empty: " + what);
}

void no_empty_entries(const std::string& key, const std::vector<std::string>& values) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i].empty()) {
      throw ConfigError(key + ": item " + std::to_string(i + 1) +
                            " is an empty string; give a path or glob, or remove it",
                        key);
    }
  }
}

// Infinite or NaN doubles never make sense here; the loader already refuses them, this
// catches configs built in code.
struct FiniteCheck {
  std::string section_name;

  template <class Section>
  void section(const char* name, Section& section) {
    section_name = name;
    section.visit(*this);
  }
  template <class T>
  void operator()(const char* name, T& value) {
    if constexpr (std::is_same_v<T, double>) {
      if (!std::isfinite(value)) {
        fail(section_name + "." + name, number(value), "must be a finite number");
      }
    } else if constexpr (std::is_same_v<T, std::array<double, 2>>) {
      for (double item : value) {
        if (!std::isfinite(item)) {
          fail(section_name + "." + name, number(item), "must be a finite number");
        }
      }
    }
  }
};

// "electra and deberta_v2" (conjunction "or": "electra or deberta_v2"): the registered
// architectures whose keys answer `has` with true.
std::string architectures_that(bool (ArchitectureKeys::*has)() const, const std::string& conjunction) {
  std::vector<std::string> names;
  for (const auto* keys : registered_architecture_keys())
    if ((keys->*has)()) names.emplace_back(to_string(keys->architecture()));
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " " + conjunction + " " : ", ") + names[i];
  return out;
}

// The replaced-token-detection pair's keys. Checked whatever the architecture, so that a typo
// fails before a switch.
void validate_rtd_keys(const ModelConfig& model) {
  non_negative("model.embedding_size", static_cast<double>(model.embedding_size), " (0 = hidden_size)");
  in_range("model.generator_hidden_ratio", model.generator_hidden_ratio, 0, End::closed, 1, End::closed,
           " (0 = the architecture's; a generator wider than the discriminator makes the replaced "
           "tokens too hard to tell: ELECTRA uses 1/4 to 1/3, DeBERTa-v3 1)");
  in_range("model.generator_layers_ratio", model.generator_layers_ratio, 0, End::closed, 1, End::closed,
           " (0 = the architecture's; the generator is no deeper than the discriminator)");
  positive("model.rtd_weight", model.rtd_weight, " (ELECTRA: 50)");
  positive("model.rtd_temperature", model.rtd_temperature, " (1 samples the generator's softmax)");
  const ArchitectureKeys& keys = architecture_keys(model.architecture);
  if (model.objective == Objective::rtd && !keys.builds_rtd_pair()) {
    fail("model.objective", "rtd",
         "trains a generator and a discriminator, which mlm-train builds for " +
             architectures_that(&ArchitectureKeys::builds_rtd_pair, "and") +
             " only: set model.architecture to " + architectures_that(&ArchitectureKeys::builds_rtd_pair, "or"));
  }
  if (!keys.factorized_embeddings() && model.embedding_size != 0 && model.embedding_size != model.hidden_size) {
    fail("model.embedding_size", number(model.embedding_size),
         "differs from model.hidden_size, which only the embedding projections of " +
             architectures_that(&ArchitectureKeys::factorized_embeddings, "and") +
             " can train: set it to 0 or model.architecture to " +
             architectures_that(&ArchitectureKeys::factorized_embeddings, "or"));
  }
  if (model.objective != Objective::rtd) return;
  const auto g = generator_shape(model);
  if (g.hidden_size < 1 || g.num_hidden_layers < 1) {
    fail(g.hidden_size < 1 ? "model.generator_hidden_ratio" : "model.generator_layers_ratio",
         number(g.hidden_size < 1 ? generator_hidden_ratio(model) : generator_layers_ratio(model)),
         "leaves the generator with no " + std::string(g.hidden_size < 1 ? "width" : "layers") +
             " (" + number(model.hidden_size) + " x " + number(model.num_hidden_layers) + " discriminator)");
  }
  if (g.hidden_size % g.num_attention_heads != 0) {
    fail("model.generator_hidden_ratio", number(generator_hidden_ratio(model)),
         "gives a generator width " + number(g.hidden_size) + " that its " +
             number(g.num_attention_heads) + " heads (one per 64) do not divide");
  }
}

void validate_model(const ModelConfig& model) {
  if (model.vocab_size != 0 && model.vocab_size < kSpecialTokens + 1) {
    fail("model.vocab_size", number(model.vocab_size),
         "must be 0 (use the tokenizer's size) or >= 6 (the 5 special tokens [PAD] [UNK] "
         "[CLS] [SEP] [MASK] and at least one piece)");
  }
  at_least("model.hidden_size", model.hidden_size, 1);
  at_least("model.num_hidden_layers", model.num_hidden_layers, 1);
  at_least("model.num_attention_heads", model.num_attention_heads, 1);
  if (model.hidden_size % model.num_attention_heads != 0) {
    const int64_t heads = model.num_attention_heads;
    const int64_t lower = model.hidden_size - model.hidden_size % heads;
    const int64_t upper = lower + heads;
    // The head counts that divide hidden_size, nearest below and above the one asked for.
    int64_t fewer = 1, more = 0;
    for (int64_t h = heads - 1; h >= 1; --h) {
      if (model.hidden_size % h == 0) {
        fewer = h;
        break;
      }
    }
    for (int64_t h = heads + 1; h <= model.hidden_size; ++h) {
      if (model.hidden_size % h == 0) {
        more = h;
        break;
      }
    }
    std::string fix = "set model.hidden_size to a multiple of " + number(heads) + " (";
    fix += lower > 0 ? number(lower) + " or " + number(upper) : number(upper);
    fix += ") or model.num_attention_heads to a divisor of " + number(model.hidden_size) + " (" +
           number(fewer) + (more ? " or " + number(more) : "") + ")";
    throw ConfigError("model.hidden_size (" + number(model.hidden_size) +
                          ") must be divisible by model.num_attention_heads (" + number(heads) +
                          "): " + fix,
                      "model.hidden_size");
  }
  at_least("model.intermediate_size", model.intermediate_size, 1);
  in_range("model.hidden_dropout_prob", model.hidden_dropout_prob, 0, End::closed, 1, End::open);
  in_range("model.attention_probs_dropout_prob", model.attention_probs_dropout_prob, 0, End::closed,
           1, End::open);
  at_least("model.max_position_embeddings", model.max_position_embeddings, 1);
  const ArchitectureKeys& keys = architecture_keys(model.architecture);
  if (keys.min_type_vocab_size() == 0) {
    at_least("model.type_vocab_size", model.type_vocab_size, 0, " (0 = no token-type table)");
  } else if (!trains_sentence_pairs(model.objective)) {
    at_least("model.type_vocab_size", model.type_vocab_size, 1);
  } else {
    at_least("model.type_vocab_size", model.type_vocab_size, 2,
             " when model.objective is " + std::string(to_string(model.objective)) +
                 " (segments A and B use token types 0 and 1)");
  }
  positive("model.layer_norm_eps", model.layer_norm_eps);
  positive("model.initializer_range", model.initializer_range);
  at_least("model.pad_vocab_multiple", model.pad_vocab_multiple, 1, " (1 = no padding)");
  keys.validate(model);
  validate_rtd_keys(model);
}

// tokenizer.add_tokens: terms for an hf pipeline, each once and not empty.
void validate_add_tokens(const TokenizerConfig& tokenizer) {
  const std::string key = "tokenizer.add_tokens";
  if (tokenizer.add_tokens.empty()) return;
  if (tokenizer.type != TokenizerType::hf)
    throw ConfigError(key + ": needs tokenizer.type hf (a tokenizer.json pipeline), not " +
                          std::string(to_string(tokenizer.type)), key);
  for (size_t i = 0; i < tokenizer.add_tokens.size(); ++i) {
    if (tokenizer.add_tokens[i].empty())
      throw ConfigError(key + ": item " + std::to_string(i + 1) + " is an empty string", key);
    for (size_t j = 0; j < i; ++j) {
      if (tokenizer.add_tokens[j] == tokenizer.add_tokens[i])
        throw ConfigError(key + ": '" + tokenizer.add_tokens[i] + "' is given twice (items " + std::to_string(j + 1) +
                              " and " + std::to_string(i + 1) + ")", key);
    }
  }
}

// tokenizer.special_tokens: the styles each trained kind knows.
void validate_special_tokens(const TokenizerConfig& tokenizer) {
  const auto style = tokenizer.special_tokens;
  if (style == SpecialTokenStyle::automatic) return;
  const bool byte_level = style == SpecialTokenStyle::roberta || style == SpecialTokenStyle::modernbert;
  if (tokenizer.type == TokenizerType::byte_level_bpe && !byte_level)
    fail("tokenizer.special_tokens", std::string(to_string(style)), "byte_level_bpe takes auto, roberta or modernbert");
  if (tokenizer.type == TokenizerType::wordpiece && style != SpecialTokenStyle::bert)
    fail("tokenizer.special_tokens", std::string(to_string(style)), "wordpiece takes auto or bert");
  if (tokenizer.type != TokenizerType::byte_level_bpe && tokenizer.type != TokenizerType::wordpiece)
    fail("tokenizer.special_tokens", std::string(to_string(style)),
         "applies to training tokenizer.type byte_level_bpe or wordpiece (remove the key)");
}

void validate_tokenizer(const TokenizerConfig& tokenizer) {
  not_empty("tokenizer.model", tokenizer.model, "name the sentencepiece .model file to load or train");
  const int64_t minimum = kSpecialTokens + (tokenizer.byte_fallback ? kBytePieces : 0) + 1;
  if (tokenizer.vocab_size < minimum) {
    fail("tokenizer.vocab_size", number(tokenizer.vocab_size),
         "must be >= " + number(minimum) + " (the 5 special tokens" +
             (tokenizer.byte_fallback ? std::string(", 256 byte pieces for tokenizer.byte_fallback") : "") +
             " and at least one piece)");
  }
  in_range("tokenizer.character_coverage", tokenizer.character_coverage, 0, End::open, 1, End::closed);
  at_least("tokenizer.input_sentence_size", tokenizer.input_sentence_size, 1);
  at_least("tokenizer.max_sentence_length", tokenizer.max_sentence_length, 1);
  no_empty_entries("tokenizer.training_files", tokenizer.training_files);
  in_range("tokenizer.regex_step_limit", static_cast<double>(tokenizer.regex_step_limit), 0, End::closed, INT32_MAX,
           End::closed, " (units of 10,000 ICU steps per match; 0 = no limit)");
  if ((tokenizer.type == TokenizerType::byte_level_bpe || tokenizer.type == TokenizerType::hf) && tokenizer.lowercase) {
    fail("tokenizer.lowercase", "true",
         "applies to training a sentencepiece or wordpiece model; a " + std::string(to_string(tokenizer.type)) +
             " tokenizer lower-cases as its own tokenizer.json says (remove the key or set false)");
  }
  validate_special_tokens(tokenizer);
  if (tokenizer.type == TokenizerType::byte_level_bpe) {
    // The 256 byte characters, the special tokens (ModernBERT's 2 + 5) and one merge.
    const int64_t specials = tokenizer.special_tokens == SpecialTokenStyle::modernbert ? 7 : kSpecialTokens;
    at_least("tokenizer.vocab_size", tokenizer.vocab_size, kBytePieces + specials + 1,
             " (byte_level_bpe: the 256 byte characters, the special tokens and at least one merge)");
  }
  at_least("tokenizer.min_frequency", tokenizer.min_frequency, 0);
  at_least("tokenizer.limit_alphabet", tokenizer.limit_alphabet, 0, " (0 = keep every character)");
  validate_add_tokens(tokenizer);
}

// data.sources: each entry a corpus with a share of the sequences; a mixture replaces
// data.train_files and data.store (each source names its own files or store).
void validate_sources(const DataConfig& data) {
  if (data.sources.empty()) {
    if (data.temperature != 0 || !data.source_weights.entries.empty()) {
      const char* key = data.temperature != 0 ? "data.temperature" : "data.source_weights";
      throw ConfigError(std::string(key) + " is set without data.sources: it weighs a mixture's sources", key);
    }
    return;
  }
  if (!data.train_files.empty()) {
    throw ConfigError("data.sources and data.train_files are both set: a mixture lists its "
                      "files under data.sources[i].files; remove data.train_files (or "
                      "data.sources for a single corpus)",
                      "data.sources");
  }
  if (!data.store.empty()) {
    throw ConfigError("data.sources and data.store are both set: give each source its own "
                      "prepared store as data.sources[i].store; remove data.store (or "
                      "data.sources for a single corpus)",
                      "data.sources");
  }
  for (size_t i = 0; i < data.sources.size(); ++i) {
    const SourceConfig& source = data.sources[i];
    const std::string path = "data.sources[" + std::to_string(i) + "]";
    if (!(std::isfinite(source.weight) && source.weight > 0)) {
      throw ConfigError(path + ".weight (" + number(source.weight) +
                            ") must be a finite number > 0 (the source's share of the training "
                            "sequences is its weight over the sum of the weights)",
                        "data.sources");
    }
    if (source.files.empty() && source.store.empty()) {
      throw ConfigError(path + " has neither files nor store: give files (paths or globs of "
                            "text files) or store (a directory written by mlm-data prepare)",
                        "data.sources");
    }
    for (size_t k = 0; k < source.files.size(); ++k) {
      if (source.files[k].empty()) {
        throw ConfigError(path + ".files: item " + std::to_string(k + 1) +
                              " is an empty string; give a path or glob, or remove it",
                          "data.sources");
      }
    }
  }
  source_base_weights(data);  // names, data.source_weights and data.temperature
}

void validate_data(const DataConfig& data, const ModelConfig& model) {
  validate_sources(data);
  no_empty_entries("data.train_files", data.train_files);
  no_empty_entries("data.valid_files", data.valid_files);
  in_range("data.valid_fraction", data.valid_fraction, 0, End::closed, 1, End::open,
           " (a share of the training documents held out when data.valid_files is empty)");
  not_empty("data.text_field", data.text_field, "name the JSON Lines field holding the text");
  at_least("data.seq_len", data.seq_len, kMinSeqLen,
           " (room for [CLS] a [SEP] b [SEP] and a few tokens)");
  if (architecture_keys(model.architecture).positions_follow_pad_id()) {
    require_position_room(model, data.seq_len, std::nullopt);
  } else if (data.seq_len > model.max_position_embeddings) {
    throw ConfigError("data.seq_len (" + number(data.seq_len) +
                          ") must be <= model.max_position_embeddings (" +
                          number(model.max_position_embeddings) +
                          "): lower data.seq_len or raise model.max_position_embeddings",
                      "data.seq_len");
  }
  // Only mlm sequences packed across documents hold more than one document; anywhere else
  // the block-diagonal mask would be the padding mask at [S,S] cost.
  if (!model.attend_across_documents && trains_sentence_pairs(model.objective)) {
    fail("model.attend_across_documents", "false",
         "keeps documents of a packed sequence apart, but model.objective " +
             std::string(to_string(model.objective)) +
             " packs one sentence pair per sequence: set it to true");
  }
  if (!model.attend_across_documents && !data.cross_documents) {
    fail("model.attend_across_documents", "false",
         "keeps documents of a packed sequence apart, but data.cross_documents is false "
         "(one document per sequence): set either to true");
  }
  at_least("data.shuffle_buffer", data.shuffle_buffer, 1, " (1 = no shuffling)");
  at_least("data.num_workers", data.num_workers, 0);
  at_least("data.prefetch_sequences", data.prefetch_sequences, 1);
}

// A key of one optimizer set under another would silently do nothing, so it is refused (a
// default value is let through: it changes nothing, and dumped configs hold every key).
void validate_optimizer_keys(const OptimConfig& optim) {
  const OptimConfig defaults;
  const auto only_for = [&](OptimizerType owner, const std::string& key, bool value, bool fallback) {
    if (optim.type == owner || value == fallback) return;
    fail(key, value ? "true" : "false",
         "applies only to optim.type: " + std::string(to_string(owner)) + ", and optim.type is " +
             std::string(to_string(optim.type)) + ": set optim.type: " + std::string(to_string(owner)) +
             " or remove the key");
  };
  only_for(OptimizerType::lamb, "optim.lamb_bias_correction", optim.lamb_bias_correction,
           defaults.lamb_bias_correction);
  only_for(OptimizerType::lamb, "optim.lamb_adapt_no_decay", optim.lamb_adapt_no_decay,
           defaults.lamb_adapt_no_decay);
  only_for(OptimizerType::stable_adamw, "optim.stable_adamw_decouple_lr",
           optim.stable_adamw_decouple_lr, defaults.stable_adamw_decouple_lr);
  // Fully decoupled decay is not shrunk by the learning rate: AdamW's 0.01 would take 1% of
  // every weight at every peak step (optimi warns from 1e-3 on).
  constexpr double kMaxDecoupledDecay = 1e-3;
  if (optim.type == OptimizerType::stable_adamw && optim.stable_adamw_decouple_lr &&
      optim.weight_decay >= kMaxDecoupledDecay) {
    fail("optim.weight_decay", number(optim.weight_decay),
         "is the decay per step at the peak under optim.stable_adamw_decouple_lr (not scaled by "
         "the learning rate) and must be < 1e-3: ModernBERT uses 1e-5; lower it or set "
         "optim.stable_adamw_decouple_lr: false");
  }
}

void validate_optim(const OptimConfig& optim) {
  positive("optim.learning_rate", optim.learning_rate);
  for (double beta : optim.betas) {
    if (!(beta >= 0 && beta < 1)) {
      fail("optim.betas", "[" + number(optim.betas[0]) + ", " + number(optim.betas[1]) + "]",
           "must both be in [0, 1), e.g. [0.9, 0.999]");
    }
  }
  positive("optim.eps", optim.eps);
  non_negative("optim.weight_decay", optim.weight_decay);
  non_negative("optim.max_grad_norm", optim.max_grad_norm, " (0 = no clipping)");
  validate_optimizer_keys(optim);
}

// decay_steps, decay_ratio and decay_shape shape wsd's final decay; set with another decay
// they would silently do nothing, so they are refused.
// `phased`: the run's length is its phases' (config/phases.h), not train.max_steps, which then
// only caps it; the schedule's horizon is known at run time and the decay clamped to it.
void validate_wsd(const ScheduleConfig& schedule, const TrainConfig& train, bool phased) {
  at_least("schedule.decay_steps", schedule.decay_steps, 0, " (0 = use schedule.decay_ratio)");
  in_range("schedule.decay_ratio", schedule.decay_ratio, 0, End::open, 1, End::closed);
  if (schedule.decay != DecayKind::wsd) {
    const ScheduleConfig defaults;
    const auto wsd_only = [&](const std::string& key, const std::string& value) {
      fail(key, value,
           "applies only to schedule.decay: wsd, and schedule.decay is " +
               std::string(to_string(schedule.decay)) + ": set schedule.decay: wsd or remove the key");
    };
    if (schedule.decay_steps != defaults.decay_steps) {
      wsd_only("schedule.decay_steps", number(schedule.decay_steps));
    }
    if (schedule.decay_ratio != defaults.decay_ratio) {
      wsd_only("schedule.decay_ratio", number(schedule.decay_ratio));
    }
    if (schedule.decay_shape != defaults.decay_shape) {
      wsd_only("schedule.decay_shape", std::string(to_string(schedule.decay_shape)));
    }
    return;
  }
  // The horizon is estimated at run time; the decay is clamped.
  if (train.max_steps == 0 || phased) return;
  const int64_t warmup = schedule.warmup_steps_for(train.max_steps);
  const int64_t decay = schedule.decay_steps_for(train.max_steps);
  if (decay <= train.max_steps - warmup) return;  // (warmup + decay could overflow)
  const bool by_steps = schedule.decay_steps > 0;
  const std::string key = by_steps ? "schedule.decay_steps" : "schedule.decay_ratio";
  const std::string given =
      by_steps ? number(schedule.decay_steps)
               : number(schedule.decay_ratio) + ", " + number(decay) + " of " + number(train.max_steps) +
                     " steps";
  const int64_t room = std::max<int64_t>(train.max_steps - warmup, 0);
  const std::string warmup_key =
      schedule.warmup_steps > 0 ? "schedule.warmup_steps" : "schedule.warmup_ratio";
  std::string fix;
  if (room > 0) {
    fix = "set " + key + " to at most " +
          (by_steps ? number(room)
                    : number(static_cast<double>(room) / static_cast<double>(train.max_steps))) +
          ", lower " + warmup_key + " or raise train.max_steps";
  } else {
    fix = "lower " + warmup_key + " or raise train.max_steps";
  }
  throw ConfigError(key + " (" + given + ") is longer than the " + number(room) +
                        " steps train.max_steps (" + number(train.max_steps) +
                        ") leaves after warmup (" + number(warmup) + " steps): " + fix,
                    key);
}

void validate_schedule(const ScheduleConfig& schedule, const TrainConfig& train, bool phased) {
  at_least("schedule.warmup_steps", schedule.warmup_steps, 0);
  in_range("schedule.warmup_ratio", schedule.warmup_ratio, 0, End::closed, 1, End::open);
  if (schedule.warmup_ratio > 0 && schedule.warmup_steps == 0 && train.max_steps == 0 && !phased) {
    throw ConfigError("schedule.warmup_ratio (" + number(schedule.warmup_ratio) +
                          ") is a share of train.max_steps, which is 0: set train.max_steps "
                          "or give schedule.warmup_steps instead",
                      "schedule.warmup_ratio");
  }
  in_range("schedule.min_lr_ratio", schedule.min_lr_ratio, 0, End::closed, 1, End::closed);
  validate_wsd(schedule, train, phased);
}

// The ranks are known at run time (BatchRamp checks the start against them); here, one.
void validate_batch_warmup(const TrainConfig& train) {
  at_least("train.batch_warmup_tokens", train.batch_warmup_tokens, 0, " (0 = no batch-size warmup)");
  if (train.batch_warmup_tokens == 0) {
    if (train.batch_warmup_start != 0) {
      fail("train.batch_warmup_start", number(train.batch_warmup_start),
           "applies only with train.batch_warmup_tokens > 0");
    }
    return;
  }
  const int64_t full = train.micro_batch_size * train.grad_accum_steps;
  if (train.batch_warmup_start < train.micro_batch_size || train.batch_warmup_start >= full ||
      train.batch_warmup_start % train.micro_batch_size != 0) {
    fail("train.batch_warmup_start", number(train.batch_warmup_start),
         "must be a multiple of train.micro_batch_size (" + number(train.micro_batch_size) +
             ") below the full batch of train.micro_batch_size x train.grad_accum_steps (" +
             number(full) + "): the warmup adds whole micro-batches");
  }
}

void validate_train(const TrainConfig& train, bool phased) {
  not_empty("train.output_dir", train.output_dir, "name the run directory");
  at_least("train.max_steps", train.max_steps, 0, " (0 = no step limit)");
  at_least("train.max_tokens", train.max_tokens, 0, " (0 = no token limit)");
  non_negative("train.max_time_s", train.max_time_s, " (0 = no time limit)");
  if (train.max_steps == 0 && train.max_tokens == 0 && train.max_time_s == 0 && !phased) {
    throw ConfigError(
        "train.max_steps, train.max_tokens and train.max_time_s are all 0: set at least one "
        "stop condition, e.g. train.max_steps: 100000",
        "train.max_steps");
  }
  at_least("train.micro_batch_size", train.micro_batch_size, 1);
  at_least("train.grad_accum_steps", train.grad_accum_steps, 1);
  validate_batch_warmup(train);
  at_least("train.threads", train.threads, 0, " (0 = $OMP_NUM_THREADS, else cores / LOCAL_WORLD_SIZE)");
  at_least("train.seed", train.seed, 0);
  at_least("train.max_skipped_steps", train.max_skipped_steps, 0);
  if (!(train.loss_scale_init >= 1 && train.loss_scale_init <= 1e30)) {
    throw ConfigError("train.loss_scale_init (" + number(train.loss_scale_init) +
                          ") must be between 1 and 1e30 (fp16's dynamic loss scale starts there; "
                          "65536 is torch.amp.GradScaler's default)",
                      "train.loss_scale_init");
  }
  at_least("train.loss_scale_growth_interval", train.loss_scale_growth_interval, 1);
  in_range("train.ema_decay", train.ema_decay, 0, End::closed, 1, End::open,
           " (0 = no EMA of the weights; e.g. 0.999)");
  at_least("train.ema_every_steps", train.ema_every_steps, 1);
  at_least("train.ema_start_step", train.ema_start_step, 0, " (0 = from the initial weights)");
}

void validate_checkpoint(const CheckpointConfig& checkpoint) {
  at_least("checkpoint.every_steps", checkpoint.every_steps, 0, " (0 = only at the end)");
  at_least("checkpoint.keep_last", checkpoint.keep_last, 0, " (0 = keep all)");
}

void validate_eval(const EvalConfig& eval) {
  at_least("eval.every_steps", eval.every_steps, 0, " (0 = only at the end)");
  at_least("eval.max_batches", eval.max_batches, 0, " (0 = the whole validation set)");
  at_least("eval.probe_every_steps", eval.probe_every_steps, 0, " (0 = at every evaluation)");
  at_least("eval.batch_size", eval.batch_size, 0, " (0 = train.micro_batch_size)");
  at_least("eval.seed", eval.seed, 0);
  at_least("eval.pll_sentences", eval.pll_sentences, 1);
  for (const auto& [key, path] : {std::pair<const char*, const std::string&>{"eval.pll_file", eval.pll_file},
                                  {"eval.pll_minimal_pairs", eval.pll_minimal_pairs}}) {
    if (!path.empty() && !std::filesystem::is_regular_file(path))
      throw ConfigError(std::string(key) + ": " + path + " is not a readable file", key);
  }
  if (eval.pll_variant != "original" && eval.pll_variant != "within_word_l2r")
    fail("eval.pll_variant", "'" + eval.pll_variant + "'", "must be one of original, within_word_l2r");
}

void validate_distributed(const DistributedConfig& distributed, const TrainConfig& train) {
  if (distributed.backend == DistBackend::nccl && train.device == DeviceKind::cpu) {
    throw ConfigError(
        "distributed.backend (nccl) needs CUDA devices but train.device is cpu: use "
        "distributed.backend gloo or auto",
        "distributed.backend");
  }
  positive("distributed.timeout_s", distributed.timeout_s);
  at_least("distributed.bucket_mb", distributed.bucket_mb, 1);
}

void validate_logging(const LoggingConfig& logging) {
  static const char* const kLevels[] = {"trace", "debug", "info", "warn", "error", "off"};
  bool known = false;
  for (const char* level : kLevels) known |= logging.level == level;
  if (!known) {
    fail("logging.level", "'" + logging.level + "'",
         "must be one of trace, debug, info, warn, error, off");
  }
  at_least("logging.every_steps", logging.every_steps, 1);
}

}  // namespace

void validate_masking(const MaskingConfig& masking) {
  in_range("masking.mlm_probability", masking.mlm_probability, 0, End::open, 1, End::closed,
           " (0 would leave nothing to predict)");
  in_range("masking.mask_replace_prob", masking.mask_replace_prob, 0, End::closed, 1, End::closed);
  in_range("masking.random_replace_prob", masking.random_replace_prob, 0, End::closed, 1,
           End::closed);
  const double sum = masking.mask_replace_prob + masking.random_replace_prob;
  if (sum > 1 + kProbabilitySumSlack) {
    throw ConfigError("masking.mask_replace_prob (" + number(masking.mask_replace_prob) +
                          ") + masking.random_replace_prob (" + number(masking.random_replace_prob) +
                          ") = " + number(sum) +
                          " must be <= 1 (the rest of the selected tokens stay unchanged)",
                      "masking.mask_replace_prob");
  }
  at_least("masking.max_predictions_per_seq", masking.max_predictions_per_seq, 0, " (0 = no cap)");
  in_range("masking.span_p", masking.span_p, 0, End::open, 1, End::closed,
           " (geometric distribution parameter; 1 = single-word spans)");
  at_least("masking.max_span", masking.max_span, 1);
  if (masking.rate_schedule == MaskingRateSchedule::constant) {
    if (masking.final_mlm_probability != MaskingConfig{}.final_mlm_probability) {
      fail("masking.final_mlm_probability", number(masking.final_mlm_probability),
           "applies only with masking.rate_schedule linear or cosine (it is constant)");
    }
  } else {
    in_range("masking.final_mlm_probability", masking.final_mlm_probability, 0, End::open, 1,
             End::closed, " (the rate at the end of masking.rate_schedule)");
  }
}

void validate_config(const RunConfig& config) {
  RunConfig copy = config;  // visit() is non-const
  FiniteCheck finite;
  copy.visit(finite);
  validate_model(config.model);
  validate_tokenizer(config.tokenizer);
  validate_data(config.data, config.model);
  validate_masking(config.masking);
  validate_optim(config.optim);
  const bool phased = !config.phases.empty();
  validate_schedule(config.schedule, config.train, phased);
  validate_train(config.train, phased);
  validate_checkpoint(config.checkpoint);
  validate_eval(config.eval);
  validate_distributed(config.distributed, config.train);
  validate_logging(config.logging);
  validate_distill(config.distill, config.model);
}

void require_training_data(const RunConfig& config) {
  if (config.data.train_files.empty() && config.data.sources.empty()) {
    throw ConfigError(
        "data.train_files is empty: list the training text files, e.g. "
        "--set data.train_files=[corpus/part1.txt,corpus/part2.txt] (or a mixture as "
        "data.sources)",
        "data.train_files");
  }
  // Checked here, before the tokenizer is trained, so a typo costs seconds and exits 2.
  const auto& init_from = config.model.init_from;
  if (!init_from.empty() && !std::filesystem::is_directory(init_from)) {
    throw ConfigError("model.init_from: '" + init_from +
                          "' is not a model directory (expected one holding "
                          "model.safetensors, pytorch_model.bin or model.pt)",
                      "model.init_from");
  }
  const auto& teacher = config.distill.teacher;
  if (!teacher.empty() && !std::filesystem::is_directory(teacher)) {
    throw ConfigError("distill.teacher: '" + teacher + "' is not a model directory (a checkpoint or a Hugging Face "
                      "model directory)", "distill.teacher");
  }
}

void require_position_room(const ModelConfig& model, int64_t seq_len, std::optional<int64_t> pad_id) {
  if (!architecture_keys(model.architecture).positions_follow_pad_id()) return;
  const int64_t offset = position_offset(model, pad_id.value_or(0));
  if (seq_len + offset <= model.max_position_embeddings) return;
  const std::string pad = pad_id ? "the tokenizer's [PAD] id " + number(*pad_id)
                                 : "the [PAD] id (0 at the least; RoBERTa's is 1)";
  const int64_t shortest = model.max_position_embeddings - offset;
  fail("model.max_position_embeddings", number(model.max_position_embeddings),
       "leaves no room for model.architecture " + std::string(to_string(model.architecture)) +
           "'s position offset: its positions run from the pad id + 1, so data.seq_len " + number(seq_len) +
           " with " + pad + " needs " + number(seq_len + offset) + " rows (data.seq_len + pad id + 1; " +
           "roberta-base: 512 + 1 + 1 = 514): raise it to " + number(seq_len + offset) +
           (shortest >= 1 ? " or lower data.seq_len to " + number(shortest) : std::string()));
}

}  // namespace mlm::config
