#pragma once
// The eval.* section: how often and on how much of the valid split the model is scored.
// Defaults and meanings beside each field; visit() lists its keys (see run_config.h).
#include <cstdint>
#include <string>
#include <vector>

namespace mlm::config {

struct EvalConfig {
  int64_t every_steps = 1000;              // 0 = only at the end
  int64_t max_batches = 100;               // bound on the cost of one evaluation (0 = all)
  int64_t batch_size = 0;                  // 0 = train.micro_batch_size
  int64_t seed = 1234;                     // fixed masking seed: comparable across checkpoints
  bool on_start = false;                   // also score (and probe) the initial weights, at step 0
                                           //   of a fresh run: the baseline of the curves
  std::vector<std::string> probes;         // task files (configs/probes/*.yaml): each fine-tunes
                                           //   a copy of the weights at evaluations, on rank 0
  int64_t probe_every_steps = 0;           // probes at evaluations on multiples of this (0 = at
                                           //   every evaluation) and at the end
  std::string pll_file;                    // sentences (one per line, or .jsonl "sentence"/"text")
                                           //   whose pseudo-perplexity each evaluation reports
                                           //   (eval_pseudo_perplexity; rank 0, fp32); "" = none
  std::string pll_minimal_pairs;           // .jsonl sentence_good/sentence_bad pairs: each evaluation
                                           //   reports eval_minimal_pair_accuracy; "" = none
  int64_t pll_sentences = 200;             // the first N sentences of pll_file and N pairs of
                                           //   pll_minimal_pairs scored (the cost bound)
  std::string pll_variant = "original";    // original | within_word_l2r (Kauf & Ivanova 2023)

  template <class V>
  void visit(V& v) {
    v("every_steps", every_steps);
    v("max_batches", max_batches);
    v("batch_size", batch_size);
    v("seed", seed);
    v("on_start", on_start);
    v("probes", probes);
    v("probe_every_steps", probe_every_steps);
    v("pll_file", pll_file);
    v("pll_minimal_pairs", pll_minimal_pairs);
    v("pll_sentences", pll_sentences);
    v("pll_variant", pll_variant);
  }
};

}  // namespace mlm::config
