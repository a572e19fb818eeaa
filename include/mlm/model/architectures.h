#pragma once
// The registered architectures (src/model/architectures.cpp): the one place that lists them.
#include <string>
#include <vector>

#include "mlm/config/sections/model.h"
#include "mlm/model/architecture_spec.h"

namespace mlm::model {

/// Every registered spec, in registration order.
const std::vector<const ArchitectureSpec*>& architecture_specs();

/// The spec of model.architecture `architecture`.
const ArchitectureSpec& architecture_spec(config::Architecture architecture);

/// The spec whose config.json model_type is `model_type`; nullptr when none is.
const ArchitectureSpec* spec_for_model_type(const std::string& model_type);

/// The spec that owns `dir`'s layout (ArchitectureSpec::owns_directory); nullptr for a plain
/// Hugging Face model directory or anything else.
const ArchitectureSpec* spec_owning_directory(const std::string& dir);

/// "BERT, RoBERTa, ... and ELECTRA": the registered architectures, for messages.
std::string readable_architecture_list();

}  // namespace mlm::model
