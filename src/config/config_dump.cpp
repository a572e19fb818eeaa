// dump_config: the resolved RunConfig as YAML, one "section:" block per struct and one
// "  key: value" line per field, in declaration order. Values go through the same codec the
// loader reads with, so load(dump(c)) == c bit for bit.
#include "field_codec.h"
#include "struct_list.h"
#include "mlm/config/config_loader.h"

namespace mlm::config {
namespace {

struct Dumper {
  std::string out;

  template <class Section>
  void section(const char* name, Section& section) {
    if (!out.empty()) out += "\n";
    out += name;
    out += ":\n";
    section.visit(*this);
  }

  template <class T>
  void operator()(const char* name, T& value) {
    out += "  ";
    out += name;
    out += ": ";
    out += detail::encode(value);
    out += "\n";
  }
};

}  // namespace

std::string dump_config(const RunConfig& config) {
  RunConfig copy = config;  // visit() is non-const: it also drives the loader
  Dumper dumper;
  copy.visit(dumper);
  if (!copy.phases.empty()) dumper.out += "\nphases: " + detail::encode(copy.phases) + "\n";
  return dumper.out;
}

}  // namespace mlm::config
