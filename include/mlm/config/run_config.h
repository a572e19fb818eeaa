#pragma once
// The typed configuration tree of one run: one struct per section (config/sections/, each
// field's default and meaning beside it). `visit()` names each field once for the YAML
// loader, the dumper and the unknown-key check (config_loader.h). Validation lives in
// validate_config(). A stage includes only the sections it is handed, never this tree.
#include "mlm/config/sections/model.h"
#include "mlm/config/sections/tokenizer.h"
#include "mlm/config/sections/data.h"
#include "mlm/config/sections/masking.h"
#include "mlm/config/sections/optim.h"
#include "mlm/config/sections/schedule.h"
#include "mlm/config/sections/train.h"
#include "mlm/config/sections/checkpoint.h"
#include "mlm/config/sections/eval.h"
#include "mlm/config/sections/distributed.h"
#include "mlm/config/sections/distill.h"
#include "mlm/config/sections/logging.h"
#include "mlm/config/sections/phases.h"

namespace mlm::config {

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
  DistillConfig distill;
  // Not a section of keys but a list of them: the loader reads it, the dumper writes it and
  // config/phases.h resolves each phase's config, beside visit().
  std::vector<PhaseConfig> phases;

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
    v.section("distill", distill);
  }
};

}  // namespace mlm::config
