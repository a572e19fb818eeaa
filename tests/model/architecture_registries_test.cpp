// An architecture registers its spec (src/model/architectures.cpp, LibTorch) and its model.*
// keys (src/model/architecture_keys.cpp, torch-free): both lists name the same architectures in
// the same order.
#include <gtest/gtest.h>

#include "mlm/config/architecture_keys.h"
#include "mlm/model/architectures.h"

namespace mlm::model {
namespace {

TEST(ArchitectureRegistries, SpecsAndKeysNameTheSameArchitectures) {
  const auto& specs = architecture_specs();
  const auto& keys = config::registered_architecture_keys();
  ASSERT_EQ(specs.size(), keys.size());
  for (size_t i = 0; i < specs.size(); ++i)
    EXPECT_EQ(config::to_string(specs[i]->architecture()), config::to_string(keys[i]->architecture())) << i;
}

}  // namespace
}  // namespace mlm::model
