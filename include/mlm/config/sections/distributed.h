#pragma once
// The distributed.* section: the process group of a data-parallel run.
// Defaults and meanings beside each field; visit() lists its keys (see run_config.h).
#include <cstdint>

#include "mlm/config/enums.h"

namespace mlm::config {

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

}  // namespace mlm::config
