#pragma once
// The distill.* section: a frozen teacher model whose outputs the student (the run's model)
// learns from besides its MLM loss (train/distill/). Off while distill.teacher is empty.
// Defaults and meanings beside each field; visit() lists its keys (see run_config.h).
#include <cstdint>
#include <string>
#include <vector>

namespace mlm::config {

struct DistillConfig {
  std::string teacher;                     // a checkpoint or Hugging Face directory ("" = off)
  double mlm_weight = 1.0;                 // the student's own MLM loss
  double kl_weight = 1.0;                  // T^2 KL(teacher || student) of the MLM distributions
  double temperature = 2.0;                // T of both softmaxes (> 0)
  bool kl_all_positions = false;           // KL on every real token, not only the masked ones
  double cos_weight = 0.0;                 // 1 - cos(last hidden states), per real token
  double relation_weight = 0.0;            // MiniLMv2 q-q, k-k, v-v relation KL
  int64_t relation_heads = 0;              // relation heads (0 = the teacher's attention heads)
  int64_t teacher_layer = -1;              // the teacher layer of the relations (-1 = last)
  int64_t student_layer = -1;              // the student layer of the relations (-1 = last)
  int64_t init_every = 0;                  // fresh runs: student layer i from teacher layer i*k
  std::vector<std::string> init_layers;    //   or from these teacher layers (integers), one per student layer
  std::string teacher_precision = "auto";  // auto (bf16 where the device is fast in it) | fp32 | bf16

  bool enabled() const { return !teacher.empty(); }

  template <class V>
  void visit(V& v) {
    v("teacher", teacher);
    v("mlm_weight", mlm_weight);
    v("kl_weight", kl_weight);
    v("temperature", temperature);
    v("kl_all_positions", kl_all_positions);
    v("cos_weight", cos_weight);
    v("relation_weight", relation_weight);
    v("relation_heads", relation_heads);
    v("teacher_layer", teacher_layer);
    v("student_layer", student_layer);
    v("init_every", init_every);
    v("init_layers", init_layers);
    v("teacher_precision", teacher_precision);
  }
};

}  // namespace mlm::config
