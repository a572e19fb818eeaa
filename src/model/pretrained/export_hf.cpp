#include "mlm/model/pretrained/export_hf.h"

#include "mlm/model/architectures.h"

namespace mlm::model {

std::vector<std::string> write_hf_model(MaskedLm model, const std::string& output_dir, WeightFormat format) {
  return architecture_spec(model->config().architecture).write_hf(model, output_dir, format);
}

}  // namespace mlm::model
