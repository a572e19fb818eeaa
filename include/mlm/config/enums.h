#pragma once
// Closed choices of the config, each with its YAML spelling. EnumNames<E>::names lists the
// spellings in enumerator order, so parsing, printing and error messages share one table.
#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace mlm::config {

// Each architecture's keys and model are registered in src/model/ (architecture_keys.cpp,
// architectures.cpp); here only its name.
enum class Architecture { bert, modernbert, electra, roberta, xlm_roberta, deberta_v2 };
/// model.architecture when a config does not say.
inline constexpr Architecture kDefaultArchitecture = Architecture::bert;
enum class Activation { gelu, gelu_tanh };
enum class NormPosition { post, pre };
enum class Objective { mlm, nsp, sop, rtd };
enum class EmbeddingSharing { shared, gdes };
enum class TokenizerType { unigram, bpe, wordpiece, hf, byte_level_bpe };
// The special tokens and post-processor of a tokenizer.json mlm-train trains (auto: roberta for
// byte_level_bpe, bert for wordpiece).
enum class SpecialTokenStyle { automatic, roberta, modernbert, bert };
enum class DataFormat { auto_detect, text, jsonl, csv, tsv, parquet, arrow };
enum class DocSeparator { blank_line, line };
enum class Packing { sentences, tokens };
enum class BadRecordPolicy { skip, error };
enum class MaskingStrategy { token, whole_word, span };
enum class MaskCount { exact, bernoulli };
enum class DecayKind { linear, cosine, constant, wsd };
enum class DecayShape { linear, one_minus_sqrt };
enum class OptimizerType { adamw, lamb, stable_adamw };
enum class Precision { auto_detect, fp32, bf16, fp16 };
enum class DeviceKind { auto_detect, cpu, cuda };
enum class DistBackend { auto_detect, gloo, nccl };
enum class ProgressBar { auto_detect, on, off };
enum class PhaseOptimizer { carry, reset };
enum class PhaseSchedule { continue_run, restart };
enum class MaskingRateSchedule { constant, linear, cosine };
// A fine-tuning task file's (task_config.h).
enum class TaskKind { sequence_classification, token_classification, regression };
enum class TaskMetric { accuracy, macro_f1, matthews, span_f1, binary_f1, mse, pearson, spearman };

template <class E>
struct EnumNames;

#define MLM_ENUM_NAMES(E, ...)                                      \
  template <>                                                       \
  struct EnumNames<E> {                                             \
    static constexpr std::array names = {__VA_ARGS__};              \
  };

MLM_ENUM_NAMES(Architecture, "bert", "modernbert", "electra", "roberta", "xlm_roberta", "deberta_v2")
MLM_ENUM_NAMES(Activation, "gelu", "gelu_tanh")
MLM_ENUM_NAMES(NormPosition, "post", "pre")
MLM_ENUM_NAMES(Objective, "mlm", "nsp", "sop", "rtd")
MLM_ENUM_NAMES(EmbeddingSharing, "shared", "gdes")
MLM_ENUM_NAMES(TokenizerType, "unigram", "bpe", "wordpiece", "hf", "byte_level_bpe")
MLM_ENUM_NAMES(SpecialTokenStyle, "auto", "roberta", "modernbert", "bert")
MLM_ENUM_NAMES(DataFormat, "auto", "text", "jsonl", "csv", "tsv", "parquet", "arrow")
MLM_ENUM_NAMES(DocSeparator, "blank_line", "line")
MLM_ENUM_NAMES(Packing, "sentences", "tokens")
MLM_ENUM_NAMES(BadRecordPolicy, "skip", "error")
MLM_ENUM_NAMES(MaskingStrategy, "token", "whole_word", "span")
MLM_ENUM_NAMES(MaskCount, "exact", "bernoulli")
MLM_ENUM_NAMES(DecayKind, "linear", "cosine", "constant", "wsd")
MLM_ENUM_NAMES(DecayShape, "linear", "one_minus_sqrt")
MLM_ENUM_NAMES(OptimizerType, "adamw", "lamb", "stable_adamw")
MLM_ENUM_NAMES(Precision, "auto", "fp32", "bf16", "fp16")
MLM_ENUM_NAMES(DeviceKind, "auto", "cpu", "cuda")
MLM_ENUM_NAMES(DistBackend, "auto", "gloo", "nccl")
MLM_ENUM_NAMES(ProgressBar, "auto", "on", "off")
MLM_ENUM_NAMES(PhaseOptimizer, "carry", "reset")
MLM_ENUM_NAMES(PhaseSchedule, "continue", "restart")
MLM_ENUM_NAMES(MaskingRateSchedule, "constant", "linear", "cosine")
MLM_ENUM_NAMES(TaskKind, "sequence_classification", "token_classification", "regression")
MLM_ENUM_NAMES(TaskMetric, "accuracy", "macro_f1", "matthews", "span_f1", "binary_f1", "mse", "pearson", "spearman")
#undef MLM_ENUM_NAMES

/// nsp and sop train on sentence pairs (the data packs them, the model has a pair head).
inline bool trains_sentence_pairs(Objective objective) {
  return objective == Objective::nsp || objective == Objective::sop;
}

template <class E>
std::string_view to_string(E value) {
  return EnumNames<E>::names[static_cast<size_t>(value)];
}

template <class E>
std::optional<E> enum_from_string(std::string_view text) {
  const auto& names = EnumNames<E>::names;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == text) return static_cast<E>(i);
  }
  return std::nullopt;
}

/// "a, b, c": the valid spellings, for error messages.
template <class E>
std::string enum_choices() {
  std::string out;
  for (const auto* name : EnumNames<E>::names) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

}  // namespace mlm::config
