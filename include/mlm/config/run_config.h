#pragma once
// The typed configuration tree of one run. Every field has its default here and its meaning
// in the comment beside it; `visit()` names each field once for the YAML loader, the dumper
// and the unknown-key check (config_loader.h). Validation lives in validate_config().
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "mlm/config/enums.h"

namespace mlm::config {

struct ModelConfig {
  Architecture architecture = Architecture::bert;  // bert (2018) | modernbert (RoPE, GeGLU,
                                           // pre-norm without biases, local/global attention)
  int64_t vocab_size = 0;                  // 0 = the tokenizer's vocabulary size
  int64_t hidden_size = 768;               // H: width of every layer
  int64_t num_hidden_layers = 12;          // L: encoder layers
  int64_t num_attention_heads = 12;        // A: must divide hidden_size
  int64_t intermediate_size = 3072;        // I: feed-forward width
  Activation hidden_act = Activation::gelu;  // gelu (exact erf, as HF) | gelu_tanh
  double hidden_dropout_prob = 0.1;        // dropout after embeddings, attention output, FFN
  double attention_probs_dropout_prob = 0.1;  // dropout on attention probabilities
  int64_t max_position_embeddings = 512;   // rows of the learned position table
  int64_t type_vocab_size = 2;             // token type (segment) ids
  double layer_norm_eps = 1e-12;           // LayerNorm epsilon (BERT: 1e-12)
  double initializer_range = 0.02;         // std of the normal init of weights
  NormPosition norm = NormPosition::post;  // post (BERT) | pre (pre-LN, final LayerNorm)
  int64_t pad_vocab_multiple = 64;         // pad embedding rows to a multiple (1 = none)
  Objective objective = Objective::mlm;    // mlm | nsp | sop (adds pooler + 2-way head)
  bool sparse_head = true;                 // MLM head on selected positions only
  bool attend_across_documents = true;     // false: a token attends only to its own document
                                           // of a packed sequence (block-diagonal mask)
  std::string init_from;                   // HF-format model directory to start from

  // modernbert only (transformers' ModernBertConfig fields of the same names); under modernbert
  // hidden_act is hidden_activation, layer_norm_eps norm_eps, attention_probs_dropout_prob
  // attention_dropout, and hidden_dropout_prob, type_vocab_size and norm are not used.
  int64_t global_attn_every_n_layers = 3;  // layer i attends globally when i % n == 0
  int64_t local_attention = 128;           // sliding window of the other layers: |q - k| <= w/2
  double global_rope_theta = 160000.0;     // RoPE base of the global layers
  double local_rope_theta = 10000.0;       // RoPE base of the sliding-window layers
  bool norm_bias = false;                  // LayerNorms with a bias
  bool attention_bias = false;             // Wqkv and Wo with biases
  bool mlp_bias = false;                   // Wi and Wo with biases
  bool decoder_bias = true;                // the tied decoder's bias
  Activation classifier_activation = Activation::gelu;  // the prediction head's activation
  bool classifier_bias = false;            // the prediction head's dense bias
  double initializer_cutoff_factor = 2.0;  // weights ~ normal truncated at +-factor * std
  double embedding_dropout = 0.0;          // after the embedding norm
  double mlp_dropout = 0.0;                // on the GeGLU product

  template <class V>
  void visit(V& v) {
    v("architecture", architecture);
    v("vocab_size", vocab_size);
    v("hidden_size", hidden_size);
    v("num_hidden_layers", num_hidden_layers);
    v("num_attention_heads", num_attention_heads);
    v("intermediate_size", intermediate_size);
    v("hidden_act", hidden_act);
    v("hidden_dropout_prob", hidden_dropout_prob);
    v("attention_probs_dropout_prob", attention_probs_dropout_prob);
    v("max_position_embeddings", max_position_embeddings);
    v("type_vocab_size", type_vocab_size);
    v("layer_norm_eps", layer_norm_eps);
    v("initializer_range", initializer_range);
    v("norm", norm);
    v("pad_vocab_multiple", pad_vocab_multiple);
    v("objective", objective);
    v("sparse_head", sparse_head);
    v("attend_across_documents", attend_across_documents);
    v("init_from", init_from);
    v("global_attn_every_n_layers", global_attn_every_n_layers);
    v("local_attention", local_attention);
    v("global_rope_theta", global_rope_theta);
    v("local_rope_theta", local_rope_theta);
    v("norm_bias", norm_bias);
    v("attention_bias", attention_bias);
    v("mlp_bias", mlp_bias);
    v("decoder_bias", decoder_bias);
    v("classifier_activation", classifier_activation);
    v("classifier_bias", classifier_bias);
    v("initializer_cutoff_factor", initializer_cutoff_factor);
    v("embedding_dropout", embedding_dropout);
    v("mlp_dropout", mlp_dropout);
  }
};

struct TokenizerConfig {
  std::string model = "tokenizer/spm.model";  // sentencepiece .model to load or train; for
                                           // wordpiece a BERT vocab.txt, tokenizer.json or
                                           // Hugging Face directory (loaded, never trained)
  bool train_if_missing = true;            // train `model` from the corpus when it is missing
  TokenizerType type = TokenizerType::unigram;  // unigram | bpe (sentencepiece) | wordpiece
  int64_t vocab_size = 30522;              // pieces, the 5 special tokens included
  double character_coverage = 0.9995;      // sentencepiece character_coverage
  int64_t input_sentence_size = 1000000;   // random sample of sentences to train on (bounded)
  int64_t max_sentence_length = 16384;     // longer training sentences are skipped (bytes)
  bool lowercase = false;                  // sentencepiece training: lower-case (nmt_nfkc_cf);
                                           // wordpiece: must stay false, the loaded
                                           // tokenizer's own config decides
  bool byte_fallback = false;              // unknown characters become <0xXX> byte pieces
  std::vector<std::string> training_files; // empty = data.train_files

  template <class V>
  void visit(V& v) {
    v("model", model);
    v("train_if_missing", train_if_missing);
    v("type", type);
    v("vocab_size", vocab_size);
    v("character_coverage", character_coverage);
    v("input_sentence_size", input_sentence_size);
    v("max_sentence_length", max_sentence_length);
    v("lowercase", lowercase);
    v("byte_fallback", byte_fallback);
    v("training_files", training_files);
  }
};

/// One corpus of a weighted mixture (data.sources): text files read by the streaming path,
/// or a prepared store. Its share of the training sequences is weight / sum of the weights.
struct SourceConfig {
  std::vector<std::string> files;          // paths or globs (.txt, .jsonl, optionally .gz)
  double weight = 1.0;                     // relative share of the sequences, > 0
  std::string store;                       // prepared token store of this corpus (instead
                                           // of files)

  template <class V>
  void visit(V& v) {
    v("files", files);
    v("weight", weight);
    v("store", store);
  }
};

struct DataConfig {
  std::vector<std::string> train_files;    // paths or globs (.txt, .jsonl, optionally .gz)
  std::vector<std::string> valid_files;    // empty = hold out valid_fraction of train docs
  double valid_fraction = 0.01;            // held-out share by stable content hash
  DataFormat format = DataFormat::auto_detect;  // auto (by extension) | text | jsonl
  DocSeparator doc_separator = DocSeparator::blank_line;  // text: blank_line | line
  std::string text_field = "text";         // jsonl: field holding the document
  int64_t seq_len = 128;                   // tokens per sequence, [CLS] and [SEP] included
  bool cross_documents = true;             // pack across documents (RoBERTa FULL-SENTENCES)
  Packing packing = Packing::sentences;    // sequences end at sentence ends | token chunks
  int64_t shuffle_buffer = 10000;          // sequences in the shuffle buffer (1 = no shuffle)
  bool shuffle_files = true;               // new file order every epoch
  int64_t num_workers = 2;                 // background tokenization threads
  int64_t prefetch_sequences = 4096;       // bound of the queue between workers and trainer
  BadRecordPolicy on_bad_record = BadRecordPolicy::skip;  // skip (count, warn) | error
  std::string store;                       // prepared token store (mlm-data prepare writes it
                                           // from train_files/valid_files); when set, runs
                                           // read it instead of the text files
  std::vector<SourceConfig> sources;       // a weighted mixture of corpora (instead of
                                           // train_files): [{files, weight, store}, ...]

  template <class V>
  void visit(V& v) {
    v("train_files", train_files);
    v("valid_files", valid_files);
    v("valid_fraction", valid_fraction);
    v("format", format);
    v("doc_separator", doc_separator);
    v("text_field", text_field);
    v("seq_len", seq_len);
    v("cross_documents", cross_documents);
    v("packing", packing);
    v("shuffle_buffer", shuffle_buffer);
    v("shuffle_files", shuffle_files);
    v("num_workers", num_workers);
    v("prefetch_sequences", prefetch_sequences);
    v("on_bad_record", on_bad_record);
    v("store", store);
    v("sources", sources);
  }
};

struct MaskingConfig {
  double mlm_probability = 0.15;           // share of maskable tokens selected
  double mask_replace_prob = 0.8;          // selected -> [MASK]
  double random_replace_prob = 0.1;        // selected -> random non-special token
  MaskingStrategy strategy = MaskingStrategy::token;  // token | whole_word | span
  MaskCount count = MaskCount::exact;      // exact (p*n in expectation) | bernoulli
  int64_t max_predictions_per_seq = 0;     // cap on selected positions (0 = none)
  double span_p = 0.2;                     // span: geometric parameter of span lengths
  int64_t max_span = 10;                   // span: longest span, in words

  template <class V>
  void visit(V& v) {
    v("mlm_probability", mlm_probability);
    v("mask_replace_prob", mask_replace_prob);
    v("random_replace_prob", random_replace_prob);
    v("strategy", strategy);
    v("count", count);
    v("max_predictions_per_seq", max_predictions_per_seq);
    v("span_p", span_p);
    v("max_span", max_span);
  }
};

struct OptimConfig {
  double learning_rate = 1e-4;             // peak learning rate
  std::array<double, 2> betas = {0.9, 0.999};  // AdamW betas
  double eps = 1e-6;                       // AdamW epsilon
  double weight_decay = 0.01;              // decoupled; never on biases and LayerNorm
  double max_grad_norm = 1.0;              // global-norm clipping (0 = off)

  template <class V>
  void visit(V& v) {
    v("learning_rate", learning_rate);
    v("betas", betas);
    v("eps", eps);
    v("weight_decay", weight_decay);
    v("max_grad_norm", max_grad_norm);
  }
};

struct ScheduleConfig {
  int64_t warmup_steps = 10000;            // linear warmup steps (wins over warmup_ratio)
  double warmup_ratio = 0.0;               // warmup as a share of train.max_steps
  DecayKind decay = DecayKind::linear;     // linear | cosine | constant | wsd
  int64_t decay_steps = 0;                 // wsd: steps of the final decay (wins over decay_ratio)
  double decay_ratio = 0.1;                // wsd: the final decay as a share of the total steps
  DecayShape decay_shape = DecayShape::one_minus_sqrt;  // wsd: linear | one_minus_sqrt
  double min_lr_ratio = 0.0;               // final lr = learning_rate * min_lr_ratio

  /// The warmup steps of a run of `total` steps (0 = unknown): warmup_steps, else
  /// warmup_ratio of the total. Not clamped to the total.
  int64_t warmup_steps_for(int64_t total) const {
    if (warmup_steps > 0 || total <= 0) return warmup_steps;
    return steps_for_share(warmup_ratio, total);
  }

  /// The steps of wsd's final decay in a run of `total` steps (0 = unknown: no decay):
  /// decay_steps, else decay_ratio of the total. Not clamped to the steps after warmup.
  int64_t decay_steps_for(int64_t total) const {
    if (total <= 0) return 0;
    return decay_steps > 0 ? decay_steps : steps_for_share(decay_ratio, total);
  }

  template <class V>
  void visit(V& v) {
    v("warmup_steps", warmup_steps);
    v("warmup_ratio", warmup_ratio);
    v("decay", decay);
    v("decay_steps", decay_steps);
    v("decay_ratio", decay_ratio);
    v("decay_shape", decay_shape);
    v("min_lr_ratio", min_lr_ratio);
  }

 private:
  // ceil(share * total), rounded up only past the product's rounding error, so 0.07 of 100
  // steps is 7 (not 8, as ceil(7.000000000000001) would make it).
  static int64_t steps_for_share(double share, int64_t total) {
    if (!(share > 0)) return 0;
    const double steps = share * static_cast<double>(total);
    return static_cast<int64_t>(std::ceil(steps * (1.0 - 1e-12)));
  }
};

struct TrainConfig {
  std::string output_dir = "runs/base";    // run directory (config, metrics, checkpoints)
  int64_t max_steps = 100000;              // optimizer steps (0 = no step limit)
  int64_t max_tokens = 0;                  // stop after this many tokens (0 = no limit)
  double max_time_s = 0;                   // stop after this wall-clock time (0 = no limit)
  int64_t micro_batch_size = 32;           // sequences per forward/backward
  int64_t grad_accum_steps = 1;            // micro-batches per optimizer step
  Precision precision = Precision::auto_detect;  // auto | fp32 | bf16 (autocast, fp32 master weights)
  DeviceKind device = DeviceKind::auto_detect;  // auto | cpu | cuda
  int64_t threads = 0;                     // intra-op threads (0 = this process's share of the cores)
  int64_t seed = 42;                       // model init, data order and masking
  int64_t max_skipped_steps = 10;          // consecutive non-finite steps before giving up
  std::string resume;                      // "" new run | auto | latest | a checkpoint dir

  template <class V>
  void visit(V& v) {
    v("output_dir", output_dir);
    v("max_steps", max_steps);
    v("max_tokens", max_tokens);
    v("max_time_s", max_time_s);
    v("micro_batch_size", micro_batch_size);
    v("grad_accum_steps", grad_accum_steps);
    v("precision", precision);
    v("device", device);
    v("threads", threads);
    v("seed", seed);
    v("max_skipped_steps", max_skipped_steps);
    v("resume", resume);
  }
};

struct CheckpointConfig {
  int64_t every_steps = 1000;              // 0 = only at the end and on a signal
  int64_t keep_last = 3;                   // complete checkpoints kept (0 = all)

  template <class V>
  void visit(V& v) {
    v("every_steps", every_steps);
    v("keep_last", keep_last);
  }
};

struct EvalConfig {
  int64_t every_steps = 1000;              // 0 = only at the end
  int64_t max_batches = 100;               // bound on the cost of one evaluation (0 = all)
  int64_t batch_size = 0;                  // 0 = train.micro_batch_size
  int64_t seed = 1234;                     // fixed masking seed: comparable across checkpoints

  template <class V>
  void visit(V& v) {
    v("every_steps", every_steps);
    v("max_batches", max_batches);
    v("batch_size", batch_size);
    v("seed", seed);
  }
};

struct DistributedConfig {
  DistBackend backend = DistBackend::auto_detect;  // auto (nccl on CUDA, else gloo) | gloo | nccl
  double timeout_s = 300;                  // a collective waiting longer fails the run
  int64_t bucket_mb = 25;                  // gradient all-reduce bucket size

  template <class V>
  void visit(V& v) {
    v("backend", backend);
    v("timeout_s", timeout_s);
    v("bucket_mb", bucket_mb);
  }
};

struct LoggingConfig {
  std::string level = "info";              // trace | debug | info | warn | error (MLM_LOG_LEVEL wins)
  int64_t every_steps = 10;                // a log line and a metrics.jsonl row
  ProgressBar progress_bar = ProgressBar::auto_detect;  // auto (when stderr is a tty) | on | off

  template <class V>
  void visit(V& v) {
    v("level", level);
    v("every_steps", every_steps);
    v("progress_bar", progress_bar);
  }
};

struct RunConfig {
  ModelConfig model;
  TokenizerConfig tokenizer;
  DataConfig data;
  MaskingConfig masking;
  OptimConfig optim;
  ScheduleConfig schedule;
  TrainConfig train;
  CheckpointConfig checkpoint;
  EvalConfig eval;
  DistributedConfig distributed;
  LoggingConfig logging;

  template <class V>
  void visit(V& v) {
    v.section("model", model);
    v.section("tokenizer", tokenizer);
    v.section("data", data);
    v.section("masking", masking);
    v.section("optim", optim);
    v.section("schedule", schedule);
    v.section("train", train);
    v.section("checkpoint", checkpoint);
    v.section("eval", eval);
    v.section("distributed", distributed);
    v.section("logging", logging);
  }
};

}  // namespace mlm::config
