#include "mlm/data/stream/data_position.h"

#include <tuple>

#include "mlm/util/errors.h"

namespace mlm::data {
namespace {

template <class T>
void read_field(const nlohmann::json& json, const char* key, T& out) {
  const auto it = json.find(key);
  if (it == json.end() || !it->is_number_integer()) {
    throw DataError(std::string("data position: missing or non-integer '") + key + "'");
  }
  out = it->get<T>();
}

auto as_tuple(const DataPosition& p) {
  return std::tie(p.epoch, p.file_index, p.byte_offset, p.line, p.doc_index, p.token_offset,
                  p.chunk_index, p.chunk_emitted, p.samples, p.rank, p.world_size, p.corpus,
                  p.step_boundary);
}

}  // namespace

nlohmann::json DataPosition::to_json() const {
  nlohmann::json json = {
      {"epoch", epoch},           {"file_index", file_index},     {"byte_offset", byte_offset},
      {"line", line},             {"doc_index", doc_index},       {"token_offset", token_offset},
      {"chunk_index", chunk_index}, {"chunk_emitted", chunk_emitted}, {"samples", samples},
      {"rank", rank},             {"world_size", world_size},     {"corpus", corpus}};
  if (step_boundary) json["step_boundary"] = true;
  return json;
}

DataPosition DataPosition::from_json(const nlohmann::json& json) {
  if (!json.is_object()) throw DataError("data position: expected a JSON object");
  DataPosition p;
  read_field(json, "epoch", p.epoch);
  read_field(json, "file_index", p.file_index);
  read_field(json, "byte_offset", p.byte_offset);
  read_field(json, "line", p.line);
  read_field(json, "doc_index", p.doc_index);
  read_field(json, "token_offset", p.token_offset);
  read_field(json, "chunk_index", p.chunk_index);
  read_field(json, "chunk_emitted", p.chunk_emitted);
  read_field(json, "samples", p.samples);
  read_field(json, "rank", p.rank);
  read_field(json, "world_size", p.world_size);
  read_field(json, "corpus", p.corpus);
  p.step_boundary = json.value("step_boundary", false);
  return p;
}

bool DataPosition::operator==(const DataPosition& o) const { return as_tuple(*this) == as_tuple(o); }

}  // namespace mlm::data
