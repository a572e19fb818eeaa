#include "config_schema.h"

#include "mlm/config/config_loader.h"

namespace mlm::config {
namespace detail {
namespace {

struct SchemaBuilder {
  ConfigSchema& schema;
  std::string section_name;

  template <class Section>
  void section(const char* name, Section& section) {
    schema.sections.push_back(name);
    schema.fields[name];
    section_name = name;
    section.visit(*this);
  }

  template <class T>
  void operator()(const char* name, T&) {
    schema.keys.push_back(section_name + "." + name);
    schema.fields[section_name].insert(name);
  }
};

}  // namespace

const ConfigSchema& config_schema() {
  static const ConfigSchema schema = [] {
    ConfigSchema built;
    RunConfig defaults;
    SchemaBuilder builder{built, {}};
    defaults.visit(builder);
    return built;
  }();
  return schema;
}

}  // namespace detail

std::vector<std::string> known_keys() { return detail::config_schema().keys; }

}  // namespace mlm::config
