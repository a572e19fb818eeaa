#include "mlm/dist/sum_across_ranks.h"

namespace mlm::dist {

std::vector<double> sum_across_ranks(Communicator& comm, std::vector<double> values) {
  if (comm.world_size() == 1 || values.empty()) return values;
  auto tensor = torch::tensor(values, torch::kFloat64).to(comm.device());
  comm.all_reduce_sum(tensor);
  tensor = tensor.cpu();
  const auto* data = tensor.data_ptr<double>();
  return std::vector<double>(data, data + tensor.numel());
}

}  // namespace mlm::dist
