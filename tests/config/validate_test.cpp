// Every rule of validate_config: one case per branch, each checking the key and the message
// (value and what would be valid), plus the edge values that must still pass.
#include <cmath>
#include <functional>
#include <limits>

#include "config_test_util.h"
#include "mlm/config/validate.h"

namespace mlm::config {
namespace {

using testing::throws_config_error;

struct Rule {
  std::string name;  // test name suffix
  std::function<void(RunConfig&)> change;
  std::string key;
  std::vector<std::string> parts;
};

void PrintTo(const Rule& rule, std::ostream* os) { *os << rule.name; }

std::vector<Rule> rules() {
  return {
      // model
      {"vocab_size_too_small", [](RunConfig& c) { c.model.vocab_size = 5; },
       "model.vocab_size", {"model.vocab_size (5)", "must be 0", ">= 6"}},
      {"vocab_size_negative", [](RunConfig& c) { c.model.vocab_size = -1; },
       "model.vocab_size", {"(-1)", ">= 6"}},
      {"hidden_size_zero", [](RunConfig& c) { c.model.hidden_size = 0; },
       "model.hidden_size", {"model.hidden_size (0) must be >= 1"}},
      {"layers_zero", [](RunConfig& c) { c.model.num_hidden_layers = 0; },
       "model.num_hidden_layers", {"model.num_hidden_layers (0) must be >= 1"}},
      {"heads_zero", [](RunConfig& c) { c.model.num_attention_heads = 0; },
       "model.num_attention_heads", {"model.num_attention_heads (0) must be >= 1"}},
      {"hidden_not_divisible", [](RunConfig& c) { c.model.hidden_size = 770; },
       "model.hidden_size",
       {"model.hidden_size (770) must be divisible by model.num_attention_heads (12)",
        "multiple of 12 (768 or 780)", "divisor of 770 (11 or 14)"}},
      {"hidden_below_heads", [](RunConfig& c) {
         c.model.hidden_size = 10;
         c.model.num_attention_heads = 12;
       },
       "model.hidden_size", {"(10)", "(12)", "multiple of 12 (12)", "divisor of 10 (10)"}},
      {"intermediate_zero", [](RunConfig& c) { c.model.intermediate_size = 0; },
       "model.intermediate_size", {"model.intermediate_size (0) must be >= 1"}},
      {"hidden_dropout_one", [](RunConfig& c) { c.model.hidden_dropout_prob = 1.0; },
       "model.hidden_dropout_prob", {"model.hidden_dropout_prob (1) must be in [0, 1)"}},
      {"hidden_dropout_negative", [](RunConfig& c) { c.model.hidden_dropout_prob = -0.1; },
       "model.hidden_dropout_prob", {"(-0.1) must be in [0, 1)"}},
      {"attention_dropout", [](RunConfig& c) { c.model.attention_probs_dropout_prob = 1.5; },
       "model.attention_probs_dropout_prob", {"(1.5) must be in [0, 1)"}},
      {"max_position_zero", [](RunConfig& c) { c.model.max_position_embeddings = 0; },
       "model.max_position_embeddings", {"model.max_position_embeddings (0) must be >= 1"}},
      {"type_vocab_zero", [](RunConfig& c) { c.model.type_vocab_size = 0; },
       "model.type_vocab_size", {"model.type_vocab_size (0) must be >= 1"}},
      {"type_vocab_nsp", [](RunConfig& c) {
         c.model.objective = Objective::nsp;
         c.model.type_vocab_size = 1;
       },
       "model.type_vocab_size", {"(1) must be >= 2 when model.objective is nsp"}},
      {"type_vocab_sop", [](RunConfig& c) {
         c.model.objective = Objective::sop;
         c.model.type_vocab_size = 1;
       },
       "model.type_vocab_size", {"(1) must be >= 2 when model.objective is sop"}},
      {"layer_norm_eps", [](RunConfig& c) { c.model.layer_norm_eps = 0; },
       "model.layer_norm_eps", {"model.layer_norm_eps (0) must be > 0"}},
      {"initializer_range", [](RunConfig& c) { c.model.initializer_range = -0.02; },
       "model.initializer_range", {"(-0.02) must be > 0"}},
      {"pad_vocab_multiple", [](RunConfig& c) { c.model.pad_vocab_multiple = 0; },
       "model.pad_vocab_multiple", {"(0) must be >= 1", "1 = no padding"}},
      // tokenizer
      {"tokenizer_model_empty", [](RunConfig& c) { c.tokenizer.model.clear(); },
       "tokenizer.model", {"tokenizer.model ('') must not be empty"}},
      {"tokenizer_vocab", [](RunConfig& c) { c.tokenizer.vocab_size = 5; },
       "tokenizer.vocab_size", {"tokenizer.vocab_size (5) must be >= 6", "special tokens"}},
      {"tokenizer_vocab_byte_fallback", [](RunConfig& c) {
         c.tokenizer.byte_fallback = true;
         c.tokenizer.vocab_size = 200;
       },
       "tokenizer.vocab_size", {"(200) must be >= 262", "256 byte pieces"}},
      {"character_coverage_zero", [](RunConfig& c) { c.tokenizer.character_coverage = 0; },
       "tokenizer.character_coverage", {"(0) must be in (0, 1]"}},
      {"character_coverage_above", [](RunConfig& c) { c.tokenizer.character_coverage = 1.01; },
       "tokenizer.character_coverage", {"(1.01) must be in (0, 1]"}},
      {"input_sentence_size", [](RunConfig& c) { c.tokenizer.input_sentence_size = 0; },
       "tokenizer.input_sentence_size", {"(0) must be >= 1"}},
      {"max_sentence_length", [](RunConfig& c) { c.tokenizer.max_sentence_length = 0; },
       "tokenizer.max_sentence_length", {"(0) must be >= 1"}},
      {"training_files_empty_item", [](RunConfig& c) { c.tokenizer.training_files = {""}; },
       "tokenizer.training_files", {"tokenizer.training_files: item 1 is an empty string"}},
      {"byte_level_bpe_lowercase",
       [](RunConfig& c) {
         c.tokenizer.type = config::TokenizerType::byte_level_bpe;
         c.tokenizer.lowercase = true;
       },
       "tokenizer.lowercase", {"tokenizer.lowercase (true)", "byte_level_bpe", "tokenizer.json"}},
      {"byte_level_bpe_bert_specials",
       [](RunConfig& c) {
         c.tokenizer.type = config::TokenizerType::byte_level_bpe;
         c.tokenizer.special_tokens = config::SpecialTokenStyle::bert;
       },
       "tokenizer.special_tokens", {"tokenizer.special_tokens (bert)", "roberta or modernbert"}},
      {"wordpiece_roberta_specials",
       [](RunConfig& c) {
         c.tokenizer.type = config::TokenizerType::wordpiece;
         c.tokenizer.special_tokens = config::SpecialTokenStyle::roberta;
       },
       "tokenizer.special_tokens", {"tokenizer.special_tokens (roberta)", "wordpiece takes auto or bert"}},
      {"unigram_specials", [](RunConfig& c) { c.tokenizer.special_tokens = config::SpecialTokenStyle::bert; },
       "tokenizer.special_tokens", {"tokenizer.special_tokens (bert)", "byte_level_bpe or wordpiece"}},
      {"byte_level_bpe_vocab",
       [](RunConfig& c) {
         c.tokenizer.type = config::TokenizerType::byte_level_bpe;
         c.tokenizer.vocab_size = 261;
       },
       "tokenizer.vocab_size", {"tokenizer.vocab_size (261) must be >= 262", "256 byte characters"}},
      {"min_frequency_negative", [](RunConfig& c) { c.tokenizer.min_frequency = -1; },
       "tokenizer.min_frequency", {"tokenizer.min_frequency (-1) must be >= 0"}},
      {"limit_alphabet_negative", [](RunConfig& c) { c.tokenizer.limit_alphabet = -1; },
       "tokenizer.limit_alphabet", {"tokenizer.limit_alphabet (-1) must be >= 0"}},
      // data
      {"train_files_empty_item", [](RunConfig& c) { c.data.train_files = {"a.txt", ""}; },
       "data.train_files", {"data.train_files: item 2 is an empty string"}},
      {"valid_files_empty_item", [](RunConfig& c) { c.data.valid_files = {""}; },
       "data.valid_files", {"data.valid_files: item 1"}},
      {"valid_fraction_one", [](RunConfig& c) { c.data.valid_fraction = 1.0; },
       "data.valid_fraction", {"data.valid_fraction (1) must be in [0, 1)"}},
      {"valid_fraction_negative", [](RunConfig& c) { c.data.valid_fraction = -0.5; },
       "data.valid_fraction", {"(-0.5) must be in [0, 1)"}},
      {"text_field_empty", [](RunConfig& c) { c.data.text_field.clear(); },
       "data.text_field", {"data.text_field ('') must not be empty"}},
      {"seq_len_too_short", [](RunConfig& c) { c.data.seq_len = 7; },
       "data.seq_len", {"data.seq_len (7) must be >= 8", "[CLS]"}},
      {"seq_len_above_positions", [](RunConfig& c) { c.data.seq_len = 1024; },
       "data.seq_len",
       {"data.seq_len (1024) must be <= model.max_position_embeddings (512)",
        "raise model.max_position_embeddings"}},
      {"shuffle_buffer", [](RunConfig& c) { c.data.shuffle_buffer = 0; },
       "data.shuffle_buffer", {"(0) must be >= 1"}},
      {"num_workers", [](RunConfig& c) { c.data.num_workers = -1; },
       "data.num_workers", {"data.num_workers (-1) must be >= 0"}},
      {"prefetch_sequences", [](RunConfig& c) { c.data.prefetch_sequences = 0; },
       "data.prefetch_sequences", {"(0) must be >= 1"}},
      {"documents_apart_in_pairs", [](RunConfig& c) {
         c.model.attend_across_documents = false;
         c.model.objective = Objective::sop;
       },
       "model.attend_across_documents", {"model.attend_across_documents (false)", "objective sop", "set it to true"}},
      {"documents_apart_within_documents", [](RunConfig& c) {
         c.model.attend_across_documents = false;
         c.data.cross_documents = false;
       },
       "model.attend_across_documents",
       {"model.attend_across_documents (false)", "data.cross_documents is false", "set either to true"}},
      // deberta_v2
      {"deberta_conv_kernel_size", [](RunConfig& c) {
         c.model.architecture = Architecture::deberta_v2;
         c.model.conv_kernel_size = 3;
       },
       "model.conv_kernel_size", {"model.conv_kernel_size (3)", "convolution", "set it to 0"}},
      {"deberta_unknown_pos_att_type", [](RunConfig& c) {
         c.model.architecture = Architecture::deberta_v2;
         c.model.pos_att_type = {"p2c", "p2p"};
       },
       "model.pos_att_type", {"model.pos_att_type (p2p)", "c2p, p2c or both"}},
      {"deberta_pos_att_type_twice", [](RunConfig& c) {
         c.model.architecture = Architecture::deberta_v2;
         c.model.pos_att_type = {"c2p", "c2p"};
       },
       "model.pos_att_type", {"model.pos_att_type (c2p)", "twice"}},
      {"deberta_norm_rel_ebd", [](RunConfig& c) {
         c.model.architecture = Architecture::deberta_v2;
         c.model.norm_rel_ebd = "rms_norm";
       },
       "model.norm_rel_ebd", {"model.norm_rel_ebd (rms_norm)", "layer_norm or none"}},
      {"deberta_buckets_beyond_max_relative", [](RunConfig& c) {
         c.model.architecture = Architecture::deberta_v2;
         c.model.position_buckets = 256;
         c.model.max_relative_positions = 100;
       },
       "model.position_buckets", {"model.position_buckets (256)", "max_relative_positions (100)"}},
      {"deberta_with_sop", [](RunConfig& c) {
         c.model.architecture = Architecture::deberta_v2;
         c.model.objective = Objective::sop;
       },
       "model.objective", {"model.objective (sop)", "DeBERTa", "set model.objective to mlm or rtd"}},
      {"roberta_with_rtd", [](RunConfig& c) {
         c.model.architecture = Architecture::roberta;
         c.model.objective = Objective::rtd;
       },
       "model.objective", {"model.objective (rtd)", "electra or deberta_v2"}},
      {"deberta_rtd_generator_without_layers", [](RunConfig& c) {
         c.model.architecture = Architecture::deberta_v2;
         c.model.objective = Objective::rtd;
         c.model.num_hidden_layers = 1;
         c.model.generator_layers_ratio = 0.4;
       },
       "model.generator_layers_ratio", {"model.generator_layers_ratio (0.4)", "no layers"}},
      {"deberta_pre_ln", [](RunConfig& c) {
         c.model.architecture = Architecture::deberta_v2;
         c.model.norm = NormPosition::pre;
       },
       "model.norm", {"model.norm (pre)", "post-LN"}},
      {"deberta_negative_token_types", [](RunConfig& c) {
         c.model.architecture = Architecture::deberta_v2;
         c.model.type_vocab_size = -1;
       },
       "model.type_vocab_size", {"model.type_vocab_size (-1) must be >= 0"}},
      // modernbert
      {"modernbert_with_nsp", [](RunConfig& c) {
         c.model.architecture = Architecture::modernbert;
         c.model.objective = Objective::nsp;
       },
       "model.objective", {"model.objective (nsp)", "ModernBertForMaskedLM", "set model.objective to mlm"}},
      {"modernbert_window_too_small", [](RunConfig& c) {
         c.model.architecture = Architecture::modernbert;
         c.model.local_attention = 1;
       },
       "model.local_attention", {"model.local_attention (1) must be >= 2"}},
      {"modernbert_no_global_layer", [](RunConfig& c) {
         c.model.architecture = Architecture::modernbert;
         c.model.global_attn_every_n_layers = 0;
       },
       "model.global_attn_every_n_layers", {"(0) must be >= 1"}},
      {"modernbert_odd_head_width", [](RunConfig& c) {
         c.model.architecture = Architecture::modernbert;
         c.model.hidden_size = 36;
         c.model.num_attention_heads = 4;  // width 9
       },
       "model.hidden_size", {"odd head width 9", "rotary"}},
      {"modernbert_rope_theta", [](RunConfig& c) {
         c.model.architecture = Architecture::modernbert;
         c.model.local_rope_theta = 0;
       },
       "model.local_rope_theta", {"model.local_rope_theta (0)"}},
      {"modernbert_global_rope_theta", [](RunConfig& c) {
         c.model.architecture = Architecture::modernbert;
         c.model.global_rope_theta = -1;
       },
       "model.global_rope_theta", {"model.global_rope_theta (-1) must be > 0"}},
      {"modernbert_cutoff_factor", [](RunConfig& c) {
         c.model.architecture = Architecture::modernbert;
         c.model.initializer_cutoff_factor = 0;
       },
       "model.initializer_cutoff_factor", {"model.initializer_cutoff_factor (0) must be > 0"}},
      {"modernbert_embedding_dropout", [](RunConfig& c) {
         c.model.architecture = Architecture::modernbert;
         c.model.embedding_dropout = 1;
       },
       "model.embedding_dropout", {"model.embedding_dropout (1) must be in [0, 1)"}},
      {"modernbert_mlp_dropout", [](RunConfig& c) {
         c.model.architecture = Architecture::modernbert;
         c.model.mlp_dropout = -0.1;
       },
       "model.mlp_dropout", {"model.mlp_dropout (-0.1) must be in [0, 1)"}},
      // roberta, xlm_roberta
      {"roberta_with_nsp", [](RunConfig& c) {
         c.model.architecture = Architecture::roberta;
         c.model.objective = Objective::nsp;
       },
       "model.objective", {"model.objective (nsp)", "RobertaForMaskedLM", "set model.objective to mlm"}},
      {"xlm_roberta_with_sop", [](RunConfig& c) {
         c.model.architecture = Architecture::xlm_roberta;
         c.model.objective = Objective::sop;
       },
       "model.objective", {"model.objective (sop)", "XLMRobertaForMaskedLM"}},
      {"roberta_pre_ln", [](RunConfig& c) {
         c.model.architecture = Architecture::roberta;
         c.model.norm = NormPosition::pre;
       },
       "model.norm", {"model.norm (pre)", "RoBERTa's", "post-LN"}},
      {"roberta_positions_past_the_table", [](RunConfig& c) {
         c.model.architecture = Architecture::roberta;
         c.data.seq_len = 512;
       },
       "model.max_position_embeddings", {"model.max_position_embeddings (512)", "position offset", "raise it to 513"}},
      // electra and the replaced-token-detection keys
      {"electra_with_nsp", [](RunConfig& c) {
         c.model.architecture = Architecture::electra;
         c.model.objective = Objective::nsp;
       },
       "model.objective", {"model.objective (nsp)", "ELECTRA", "set it to rtd or mlm"}},
      {"electra_pre_ln", [](RunConfig& c) {
         c.model.architecture = Architecture::electra;
         c.model.norm = NormPosition::pre;
       },
       "model.norm", {"model.norm (pre)", "ELECTRA's"}},
      {"rtd_on_bert", [](RunConfig& c) { c.model.objective = Objective::rtd; },
       "model.objective", {"model.objective (rtd)", "electra and deberta_v2 only", "electra or deberta_v2"}},
      {"embedding_size_on_bert", [](RunConfig& c) { c.model.embedding_size = 128; },
       "model.embedding_size", {"model.embedding_size (128)", "electra and deberta_v2", "set it to 0"}},
      {"embedding_size_negative", [](RunConfig& c) {
         c.model.architecture = Architecture::electra;
         c.model.embedding_size = -1;
       },
       "model.embedding_size", {"model.embedding_size (-1) must be >= 0"}},
      {"generator_wider", [](RunConfig& c) {
         c.model.architecture = Architecture::electra;
         c.model.generator_hidden_ratio = 1.5;
       },
       "model.generator_hidden_ratio", {"model.generator_hidden_ratio (1.5) must be in [0, 1]"}},
      {"generator_deeper", [](RunConfig& c) {
         c.model.architecture = Architecture::electra;
         c.model.generator_layers_ratio = 2;
       },
       "model.generator_layers_ratio", {"model.generator_layers_ratio (2) must be in [0, 1]"}},
      {"rtd_weight_zero", [](RunConfig& c) { c.model.rtd_weight = 0; },
       "model.rtd_weight", {"model.rtd_weight (0) must be > 0"}},
      {"rtd_temperature_negative", [](RunConfig& c) { c.model.rtd_temperature = -1; },
       "model.rtd_temperature", {"model.rtd_temperature (-1) must be > 0"}},
      {"electra_generator_without_width", [](RunConfig& c) {
         c.model.architecture = Architecture::electra;
         c.model.objective = Objective::rtd;
         c.model.generator_hidden_ratio = 0.0005;  // 0.4 of a dimension
       },
       "model.generator_hidden_ratio", {"model.generator_hidden_ratio (5e-4)", "no width"}},
      {"electra_generator_heads_do_not_divide", [](RunConfig& c) {
         c.model.architecture = Architecture::electra;
         c.model.objective = Objective::rtd;
         c.model.generator_hidden_ratio = 0.16796875;  // 129 of 768: 2 heads
       },
       "model.generator_hidden_ratio", {"model.generator_hidden_ratio (0.16796875)", "width 129", "2 heads"}},
      // masking
      {"mlm_probability_zero", [](RunConfig& c) { c.masking.mlm_probability = 0; },
       "masking.mlm_probability", {"masking.mlm_probability (0) must be in (0, 1]"}},
      {"mlm_probability_above", [](RunConfig& c) { c.masking.mlm_probability = 1.5; },
       "masking.mlm_probability", {"(1.5) must be in (0, 1]"}},
      {"mask_replace_negative", [](RunConfig& c) { c.masking.mask_replace_prob = -0.1; },
       "masking.mask_replace_prob", {"(-0.1) must be in [0, 1]"}},
      {"mask_replace_above", [](RunConfig& c) { c.masking.mask_replace_prob = 1.1; },
       "masking.mask_replace_prob", {"(1.1) must be in [0, 1]"}},
      {"random_replace_above", [](RunConfig& c) { c.masking.random_replace_prob = 1.2; },
       "masking.random_replace_prob", {"(1.2) must be in [0, 1]"}},
      {"replace_sum", [](RunConfig& c) {
         c.masking.mask_replace_prob = 0.9;
         c.masking.random_replace_prob = 0.2;
       },
       "masking.mask_replace_prob",
       {"masking.mask_replace_prob (0.9) + masking.random_replace_prob (0.2)", "must be <= 1"}},
      {"max_predictions", [](RunConfig& c) { c.masking.max_predictions_per_seq = -1; },
       "masking.max_predictions_per_seq", {"(-1) must be >= 0"}},
      {"span_p_zero", [](RunConfig& c) { c.masking.span_p = 0; },
       "masking.span_p", {"masking.span_p (0) must be in (0, 1]"}},
      {"span_p_above", [](RunConfig& c) { c.masking.span_p = 1.5; },
       "masking.span_p", {"(1.5) must be in (0, 1]"}},
      {"max_span", [](RunConfig& c) { c.masking.max_span = 0; },
       "masking.max_span", {"masking.max_span (0) must be >= 1"}},
      {"final_rate_without_schedule", [](RunConfig& c) { c.masking.final_mlm_probability = 0.3; },
       "masking.final_mlm_probability", {"(0.3)", "only with masking.rate_schedule"}},
      {"final_rate_missing", [](RunConfig& c) { c.masking.rate_schedule = MaskingRateSchedule::linear; },
       "masking.final_mlm_probability", {"(0) must be in (0, 1]"}},
      {"batch_warmup_start_without_tokens", [](RunConfig& c) { c.train.batch_warmup_start = 64; },
       "train.batch_warmup_start", {"(64)", "only with train.batch_warmup_tokens > 0"}},
      {"batch_warmup_start_not_whole_micro_batches", [](RunConfig& c) {
         c.train.micro_batch_size = 8;
         c.train.grad_accum_steps = 4;
         c.train.batch_warmup_tokens = 1000;
         c.train.batch_warmup_start = 12;
       },
       "train.batch_warmup_start", {"(12)", "multiple of train.micro_batch_size (8)", "(32)"}},
      {"batch_warmup_start_full", [](RunConfig& c) {
         c.train.micro_batch_size = 8;
         c.train.grad_accum_steps = 4;
         c.train.batch_warmup_tokens = 1000;
         c.train.batch_warmup_start = 32;
       },
       "train.batch_warmup_start", {"(32)", "below the full batch"}},
      {"batch_warmup_tokens_negative", [](RunConfig& c) { c.train.batch_warmup_tokens = -1; },
       "train.batch_warmup_tokens", {"(-1) must be >= 0"}},
      // optim
      {"learning_rate_zero", [](RunConfig& c) { c.optim.learning_rate = 0; },
       "optim.learning_rate", {"optim.learning_rate (0) must be > 0"}},
      {"learning_rate_negative", [](RunConfig& c) { c.optim.learning_rate = -1e-4; },
       "optim.learning_rate", {"(-1e-4) must be > 0"}},
      {"beta2_one", [](RunConfig& c) { c.optim.betas[1] = 1.0; },
       "optim.betas", {"optim.betas ([0.9, 1]) must both be in [0, 1)"}},
      {"beta1_negative", [](RunConfig& c) { c.optim.betas[0] = -0.1; },
       "optim.betas", {"([-0.1, 0.999])", "[0, 1)"}},
      {"eps_zero", [](RunConfig& c) { c.optim.eps = 0; },
       "optim.eps", {"optim.eps (0) must be > 0"}},
      {"weight_decay", [](RunConfig& c) { c.optim.weight_decay = -0.01; },
       "optim.weight_decay", {"optim.weight_decay (-0.01) must be >= 0"}},
      {"max_grad_norm", [](RunConfig& c) { c.optim.max_grad_norm = -1; },
       "optim.max_grad_norm", {"(-1) must be >= 0", "0 = no clipping"}},
      {"lamb_key_under_adamw", [](RunConfig& c) { c.optim.lamb_bias_correction = false; },
       "optim.lamb_bias_correction",
       {"optim.lamb_bias_correction (false) applies only to optim.type: lamb, and optim.type is "
        "adamw: set optim.type: lamb or remove the key"}},
      {"lamb_key_under_stable_adamw", [](RunConfig& c) {
         c.optim.type = OptimizerType::stable_adamw;
         c.optim.weight_decay = 1e-5;
         c.optim.lamb_adapt_no_decay = true;
       },
       "optim.lamb_adapt_no_decay",
       {"optim.lamb_adapt_no_decay (true) applies only to optim.type: lamb", "is stable_adamw"}},
      {"stable_adamw_key_under_lamb", [](RunConfig& c) {
         c.optim.type = OptimizerType::lamb;
         c.optim.stable_adamw_decouple_lr = false;
       },
       "optim.stable_adamw_decouple_lr",
       {"optim.stable_adamw_decouple_lr (false) applies only to optim.type: stable_adamw",
        "is lamb"}},
      {"decoupled_weight_decay_too_large", [](RunConfig& c) {
         c.optim.type = OptimizerType::stable_adamw;  // weight_decay stays AdamW's 0.01
       },
       "optim.weight_decay",
       {"optim.weight_decay (0.01) is the decay per step at the peak", "must be < 1e-3",
        "ModernBERT uses 1e-5", "optim.stable_adamw_decouple_lr: false"}},
      // schedule
      {"warmup_steps", [](RunConfig& c) { c.schedule.warmup_steps = -1; },
       "schedule.warmup_steps", {"schedule.warmup_steps (-1) must be >= 0"}},
      {"warmup_ratio_one", [](RunConfig& c) { c.schedule.warmup_ratio = 1.0; },
       "schedule.warmup_ratio", {"schedule.warmup_ratio (1) must be in [0, 1)"}},
      {"warmup_ratio_negative", [](RunConfig& c) { c.schedule.warmup_ratio = -0.1; },
       "schedule.warmup_ratio", {"(-0.1) must be in [0, 1)"}},
      {"warmup_ratio_without_max_steps", [](RunConfig& c) {
         c.schedule.warmup_ratio = 0.1;
         c.schedule.warmup_steps = 0;
         c.train.max_steps = 0;
         c.train.max_tokens = 1000000;
       },
       "schedule.warmup_ratio", {"schedule.warmup_ratio (0.1)", "train.max_steps, which is 0"}},
      {"min_lr_ratio", [](RunConfig& c) { c.schedule.min_lr_ratio = 1.5; },
       "schedule.min_lr_ratio", {"schedule.min_lr_ratio (1.5) must be in [0, 1]"}},
      {"min_lr_ratio_negative", [](RunConfig& c) { c.schedule.min_lr_ratio = -0.5; },
       "schedule.min_lr_ratio", {"(-0.5) must be in [0, 1]"}},
      {"decay_steps_negative", [](RunConfig& c) {
         c.schedule.decay = DecayKind::wsd;
         c.schedule.decay_steps = -1;
       },
       "schedule.decay_steps", {"schedule.decay_steps (-1) must be >= 0"}},
      {"decay_ratio_zero", [](RunConfig& c) {
         c.schedule.decay = DecayKind::wsd;
         c.schedule.decay_ratio = 0;
       },
       "schedule.decay_ratio", {"schedule.decay_ratio (0) must be in (0, 1]"}},
      {"decay_ratio_above_one", [](RunConfig& c) {
         c.schedule.decay = DecayKind::wsd;
         c.schedule.decay_ratio = 1.5;
       },
       "schedule.decay_ratio", {"(1.5) must be in (0, 1]"}},
      {"wsd_decay_steps_past_the_end", [](RunConfig& c) {
         c.schedule.decay = DecayKind::wsd;
         c.schedule.warmup_steps = 100;
         c.schedule.decay_steps = 901;
         c.schedule.decay_ratio = 0.5;  // decay_steps wins
         c.train.max_steps = 1000;
       },
       "schedule.decay_steps",
       {"schedule.decay_steps (901) is longer than the 900 steps train.max_steps (1000) leaves "
        "after warmup (100 steps)",
        "set schedule.decay_steps to at most 900, lower schedule.warmup_steps or raise "
        "train.max_steps"}},
      {"wsd_decay_ratio_past_the_end", [](RunConfig& c) {
         c.schedule.decay = DecayKind::wsd;
         c.schedule.warmup_steps = 200;
         c.schedule.decay_ratio = 0.9;
         c.train.max_steps = 1000;
       },
       "schedule.decay_ratio",
       {"schedule.decay_ratio (0.9, 900 of 1000 steps) is longer than the 800 steps",
        "set schedule.decay_ratio to at most 0.8"}},
      {"wsd_warmup_ratio_leaves_too_little", [](RunConfig& c) {
         c.schedule.decay = DecayKind::wsd;
         c.schedule.warmup_steps = 0;
         c.schedule.warmup_ratio = 0.5;
         c.schedule.decay_ratio = 0.6;
         c.train.max_steps = 100;
       },
       "schedule.decay_ratio",
       {"(0.6, 60 of 100 steps)", "after warmup (50 steps)", "lower schedule.warmup_ratio"}},
      {"wsd_warmup_longer_than_run", [](RunConfig& c) {
         c.schedule.decay = DecayKind::wsd;
         c.schedule.warmup_steps = 2000;
         c.train.max_steps = 1000;
       },
       "schedule.decay_ratio",
       {"is longer than the 0 steps", "lower schedule.warmup_steps or raise train.max_steps"}},
      {"decay_shape_without_wsd", [](RunConfig& c) {
         c.schedule.decay = DecayKind::cosine;
         c.schedule.decay_shape = DecayShape::linear;
       },
       "schedule.decay_shape",
       {"schedule.decay_shape (linear) applies only to schedule.decay: wsd, and schedule.decay "
        "is cosine: set schedule.decay: wsd or remove the key"}},
      {"decay_steps_without_wsd", [](RunConfig& c) { c.schedule.decay_steps = 500; },
       "schedule.decay_steps",
       {"schedule.decay_steps (500) applies only to schedule.decay: wsd", "is linear"}},
      {"decay_ratio_without_wsd", [](RunConfig& c) {
         c.schedule.decay = DecayKind::constant;
         c.schedule.decay_ratio = 0.2;
       },
       "schedule.decay_ratio",
       {"schedule.decay_ratio (0.2) applies only to schedule.decay: wsd", "is constant"}},
      // train
      {"output_dir_empty", [](RunConfig& c) { c.train.output_dir.clear(); },
       "train.output_dir", {"train.output_dir ('') must not be empty"}},
      {"max_steps_negative", [](RunConfig& c) { c.train.max_steps = -1; },
       "train.max_steps", {"train.max_steps (-1) must be >= 0"}},
      {"max_tokens_negative", [](RunConfig& c) { c.train.max_tokens = -1; },
       "train.max_tokens", {"train.max_tokens (-1) must be >= 0"}},
      {"max_time_negative", [](RunConfig& c) { c.train.max_time_s = -5; },
       "train.max_time_s", {"train.max_time_s (-5) must be >= 0"}},
      {"no_stop_condition", [](RunConfig& c) { c.train.max_steps = 0; },
       "train.max_steps",
       {"train.max_steps, train.max_tokens and train.max_time_s are all 0",
        "at least one stop condition"}},
      {"micro_batch_size", [](RunConfig& c) { c.train.micro_batch_size = 0; },
       "train.micro_batch_size", {"train.micro_batch_size (0) must be >= 1"}},
      {"grad_accum_steps", [](RunConfig& c) { c.train.grad_accum_steps = 0; },
       "train.grad_accum_steps", {"train.grad_accum_steps (0) must be >= 1"}},
      {"threads", [](RunConfig& c) { c.train.threads = -2; },
       "train.threads", {"train.threads (-2) must be >= 0"}},
      {"train_seed", [](RunConfig& c) { c.train.seed = -1; },
       "train.seed", {"train.seed (-1) must be >= 0"}},
      {"max_skipped_steps", [](RunConfig& c) { c.train.max_skipped_steps = -1; },
       "train.max_skipped_steps", {"(-1) must be >= 0"}},
      // checkpoint
      {"checkpoint_every", [](RunConfig& c) { c.checkpoint.every_steps = -1; },
       "checkpoint.every_steps", {"checkpoint.every_steps (-1) must be >= 0"}},
      {"checkpoint_keep_last", [](RunConfig& c) { c.checkpoint.keep_last = -1; },
       "checkpoint.keep_last", {"checkpoint.keep_last (-1) must be >= 0"}},
      // eval
      {"eval_every", [](RunConfig& c) { c.eval.every_steps = -1; },
       "eval.every_steps", {"eval.every_steps (-1) must be >= 0"}},
      {"eval_max_batches", [](RunConfig& c) { c.eval.max_batches = -1; },
       "eval.max_batches", {"eval.max_batches (-1) must be >= 0"}},
      {"eval_batch_size", [](RunConfig& c) { c.eval.batch_size = -1; },
       "eval.batch_size", {"eval.batch_size (-1) must be >= 0"}},
      {"eval_seed", [](RunConfig& c) { c.eval.seed = -1; },
       "eval.seed", {"eval.seed (-1) must be >= 0"}},
      {"eval_pll_sentences", [](RunConfig& c) { c.eval.pll_sentences = 0; },
       "eval.pll_sentences", {"eval.pll_sentences (0) must be >= 1"}},
      {"eval_pll_file_missing", [](RunConfig& c) { c.eval.pll_file = "/nonexistent/sentences.txt"; },
       "eval.pll_file", {"eval.pll_file: /nonexistent/sentences.txt is not a readable file"}},
      {"eval_pll_pairs_missing", [](RunConfig& c) { c.eval.pll_minimal_pairs = "/nonexistent/pairs.jsonl"; },
       "eval.pll_minimal_pairs", {"eval.pll_minimal_pairs: /nonexistent/pairs.jsonl is not a readable file"}},
      {"eval_pll_variant", [](RunConfig& c) { c.eval.pll_variant = "whole_word"; },
       "eval.pll_variant", {"eval.pll_variant", "'whole_word'", "original, within_word_l2r"}},
      // distributed
      {"nccl_on_cpu", [](RunConfig& c) {
         c.distributed.backend = DistBackend::nccl;
         c.train.device = DeviceKind::cpu;
       },
       "distributed.backend", {"distributed.backend (nccl)", "train.device is cpu", "gloo"}},
      {"timeout", [](RunConfig& c) { c.distributed.timeout_s = 0; },
       "distributed.timeout_s", {"distributed.timeout_s (0) must be > 0"}},
      {"bucket_mb", [](RunConfig& c) { c.distributed.bucket_mb = 0; },
       "distributed.bucket_mb", {"distributed.bucket_mb (0) must be >= 1"}},
      // logging
      {"log_level", [](RunConfig& c) { c.logging.level = "verbose"; },
       "logging.level", {"logging.level ('verbose') must be one of trace, debug, info"}},
      {"log_every", [](RunConfig& c) { c.logging.every_steps = 0; },
       "logging.every_steps", {"logging.every_steps (0) must be >= 1"}},
      // non-finite doubles, which only code (not YAML) can produce
      {"nan_learning_rate",
       [](RunConfig& c) { c.optim.learning_rate = std::numeric_limits<double>::quiet_NaN(); },
       "optim.learning_rate", {"optim.learning_rate (nan) must be a finite number"}},
      {"infinite_time",
       [](RunConfig& c) { c.train.max_time_s = std::numeric_limits<double>::infinity(); },
       "train.max_time_s", {"(inf) must be a finite number"}},
      {"infinite_beta",
       [](RunConfig& c) { c.optim.betas[0] = -std::numeric_limits<double>::infinity(); },
       "optim.betas", {"(-inf) must be a finite number"}},
  };
}

class ValidateRule : public ::testing::TestWithParam<Rule> {};

TEST_P(ValidateRule, ThrowsNamingKeyValueAndFix) {
  RunConfig config;
  GetParam().change(config);
  EXPECT_THROW(validate_config(config), ConfigError);
  EXPECT_TRUE(throws_config_error([&] { validate_config(config); }, GetParam().key,
                                  GetParam().parts));
  // A typo in a key name inside validate.cpp would send users looking for a missing key.
  const auto keys = known_keys();
  EXPECT_NE(std::find(keys.begin(), keys.end(), GetParam().key), keys.end()) << GetParam().key;
}

INSTANTIATE_TEST_SUITE_P(AllRules, ValidateRule, ::testing::ValuesIn(rules()),
                         [](const ::testing::TestParamInfo<Rule>& info) {
                           return info.param.name;
                         });

TEST(Validate, DefaultsAreValid) { EXPECT_NO_THROW(validate_config(RunConfig{})); }

// The edges of every interval that is meant to be closed.
TEST(Validate, AcceptsEdgeValues) {
  const std::vector<std::function<void(RunConfig&)>> edges = {
      [](RunConfig& c) { c.model.vocab_size = 6; },
      [](RunConfig& c) { c.model.hidden_dropout_prob = 0; },
      [](RunConfig& c) { c.model.attention_probs_dropout_prob = 0.999; },
      [](RunConfig& c) { c.model.type_vocab_size = 1; },
      [](RunConfig& c) {
        c.model.objective = Objective::nsp;
        c.model.type_vocab_size = 2;
      },
      [](RunConfig& c) { c.tokenizer.vocab_size = 6; },
      [](RunConfig& c) {
        c.tokenizer.byte_fallback = true;
        c.tokenizer.vocab_size = 262;
      },
      [](RunConfig& c) { c.tokenizer.character_coverage = 1.0; },
      [](RunConfig& c) { c.data.valid_fraction = 0; },
      [](RunConfig& c) { c.data.seq_len = 8; },
      [](RunConfig& c) { c.data.seq_len = 512; },
      [](RunConfig& c) { c.data.num_workers = 0; },
      [](RunConfig& c) { c.model.attend_across_documents = false; },  // mlm, across documents
      [](RunConfig& c) {  // one global layer in every layer, the smallest window
        c.model.architecture = Architecture::modernbert;
        c.model.global_attn_every_n_layers = 1;
        c.model.local_attention = 2;
      },
      [](RunConfig& c) { c.masking.mlm_probability = 1.0; },
      [](RunConfig& c) {
        c.masking.mask_replace_prob = 1.0;
        c.masking.random_replace_prob = 0.0;
      },
      [](RunConfig& c) {  // 0.7 + 0.3 is 1.0000000000000002 in binary
        c.masking.mask_replace_prob = 0.7;
        c.masking.random_replace_prob = 0.3;
      },
      [](RunConfig& c) { c.masking.span_p = 1.0; },
      [](RunConfig& c) { c.optim.betas = {0.0, 0.999999}; },
      [](RunConfig& c) { c.optim.weight_decay = 0; },
      [](RunConfig& c) { c.optim.max_grad_norm = 0; },
      [](RunConfig& c) {  // each optimizer's own keys, changed under it
        c.optim.type = OptimizerType::lamb;
        c.optim.lamb_bias_correction = false;
        c.optim.lamb_adapt_no_decay = true;
      },
      [](RunConfig& c) {
        c.optim.type = OptimizerType::stable_adamw;
        c.optim.weight_decay = 0.0009;
      },
      [](RunConfig& c) {  // not decoupled: AdamW's weight decay is fine
        c.optim.type = OptimizerType::stable_adamw;
        c.optim.stable_adamw_decouple_lr = false;
      },
      [](RunConfig& c) { c.schedule.min_lr_ratio = 1.0; },
      [](RunConfig& c) { c.schedule.warmup_ratio = 0.999; },
      [](RunConfig& c) { c.schedule.decay = DecayKind::wsd; },  // wsd's defaults fit
      [](RunConfig& c) {  // no stable phase: the decay fills every step after warmup
        c.schedule.decay = DecayKind::wsd;
        c.schedule.warmup_steps = 100;
        c.schedule.decay_steps = 900;
        c.train.max_steps = 1000;
      },
      [](RunConfig& c) {  // decay only
        c.schedule.decay = DecayKind::wsd;
        c.schedule.warmup_steps = 0;
        c.schedule.decay_ratio = 1.0;
        c.schedule.decay_shape = DecayShape::linear;
      },
      [](RunConfig& c) {  // 0.07 * 100 is 7.000000000000001: 93 + 7 steps fit
        c.schedule.decay = DecayKind::wsd;
        c.schedule.warmup_steps = 93;
        c.schedule.decay_ratio = 0.07;
        c.train.max_steps = 100;
      },
      [](RunConfig& c) {  // a horizon from train.max_tokens is not known here: clamped later
        c.schedule.decay = DecayKind::wsd;
        c.schedule.decay_steps = 1000000000;
        c.train.max_steps = 0;
        c.train.max_tokens = 1000;
      },
      [](RunConfig& c) {  // a warmup ratio is fine once warmup_steps names the steps
        c.schedule.warmup_ratio = 0.1;
        c.train.max_steps = 0;
        c.train.max_time_s = 60;
      },
      [](RunConfig& c) {
        c.train.max_steps = 0;
        c.train.max_tokens = 1;
      },
      [](RunConfig& c) {
        c.train.max_steps = 0;
        c.train.max_time_s = 0.5;
      },
      [](RunConfig& c) {
        c.distributed.backend = DistBackend::nccl;
        c.train.device = DeviceKind::cuda;
      },
      [](RunConfig& c) { c.logging.level = "off"; },
      [](RunConfig& c) { c.logging.level = "trace"; },
  };
  for (size_t i = 0; i < edges.size(); ++i) {
    RunConfig config;
    edges[i](config);
    EXPECT_NO_THROW(validate_config(config)) << "edge case " << i;
  }
}

TEST(Validate, RequireTrainingData) {
  RunConfig config;
  EXPECT_THROW(require_training_data(config), ConfigError);
  EXPECT_CONFIG_ERROR(require_training_data(config), "data.train_files",
                      "data.train_files is empty", "--set data.train_files=");
  config.data.train_files = {"corpus/*.txt"};
  EXPECT_NO_THROW(require_training_data(config));
}

}  // namespace
}  // namespace mlm::config
