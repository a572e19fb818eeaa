// What an architecture does unless its spec says otherwise: a Hugging Face model directory of
// one network, both ways, or of the replaced-token-detection pair (rtd/rtd_directory.h).
#include "mlm/model/architecture_spec.h"

#include "mlm/model/hf/hf_directory.h"
#include <filesystem>

#include "mlm/model/kernels/dropout.h"
#include "mlm/model/pretrained/init_from.h"
#include "mlm/model/rtd/rtd_directory.h"
#include "mlm/util/errors.h"

namespace mlm::model {

TensorDict keys_under(const TensorDict& state, const std::vector<std::string>& prefixes) {
  TensorDict out;
  for (const auto& [key, t] : state)
    for (const auto& prefix : prefixes)
      if (key.rfind(prefix, 0) == 0) {
        out.emplace_back(key, t);
        break;
      }
  return out;
}

torch::Tensor ClassificationHeadImpl::dropout(const torch::Tensor& x, double p) const {
  return kernels::dropout(x, p, is_training());
}

TensorDict ArchitectureSpec::encoder_hf_state_dict(MaskedLm encoder) const {
  auto* pair = encoder->rtd_pair();
  return keys_under(pair ? to_hf_pair(*pair).discriminator : encoder->hf_state_dict(), encoder_key_prefixes());
}

std::vector<std::string> ArchitectureSpec::write_hf(MaskedLm model, const std::string& dir, WeightFormat format) const {
  if (auto* pair = model->rtd_pair()) return write_rtd_pair(*pair, dir, format);
  write_hf_files(dir, hf_config_json(*model), model->hf_state_dict(), format);
  return {dir};
}

void ArchitectureSpec::init_from(MaskedLm model, const std::string& dir,
                                 const std::vector<NewTokenRow>& new_tokens) const {
  if (init_from_rtd_pair_directory(*this, *model, dir, new_tokens)) return;
  load_hf_directory(model, dir, new_tokens);
}

std::unique_ptr<AttentionUnderTest> ArchitectureSpec::attention_under_test(const config::ModelConfig&) const {
  throw ConfigError("mlm-bench --attention times disentangled self-attention, which " + display_name() + " has not",
                    "model.architecture");
}

bool ArchitectureSpec::owns_directory(const std::string& dir) const {
  return rtd_networks() && is_rtd_pair_directory(*this, dir);
}

config::ModelConfig ArchitectureSpec::directory_config(const std::string& dir, config::ModelConfig base) const {
  if (!owns_directory(dir)) throw CheckpointError(dir + ": not a " + display_name() + " directory of its own layout");
  return rtd_pair_config(*this, dir, std::move(base));
}

std::string ArchitectureSpec::tokenizer_directory(const std::string& dir) const {
  // A pair's tokenizer files are the discriminator's (the generator's agree: rtd_pair_config).
  return owns_directory(dir) ? (std::filesystem::path(dir) / "discriminator").string() : dir;
}

}  // namespace mlm::model
