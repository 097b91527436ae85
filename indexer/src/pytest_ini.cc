// PytestIniValue (ste/pytest_ini.h), with toml++ (toml.h: a TOML 1.0 parser,
// as Python's tomllib is).
#include "ste/pytest_ini.h"

#include <xxhash.h>

#include <sstream>

#include "toml.h"

namespace ste {
namespace {

void AppendField(std::string_view s, std::string* out) {
  out->append(std::to_string(s.size())).push_back(':');
  out->append(s.data(), s.size());
}

// `node` as its type and value, tables' keys sorted (toml::table is
// ordered by key), fields length-prefixed: an injective dump.
void Dump(const toml::node& node, std::string* out) {
  if (const toml::table* table = node.as_table()) {
    out->push_back('{');
    for (const auto& [key, value] : *table) {
      AppendField(key.str(), out);
      Dump(value, out);
    }
    out->push_back('}');
    return;
  }
  if (const toml::array* array = node.as_array()) {
    out->push_back('[');
    for (const toml::node& item : *array) Dump(item, out);
    out->push_back(']');
    return;
  }
  std::ostringstream text;
  node.visit([&](const auto& value) { text << value; });
  out->push_back(static_cast<char>('a' + static_cast<int>(node.type())));
  AppendField(text.str(), out);
}

}  // namespace

std::string PytestIniValue(std::string_view text) {
  toml::parse_result parsed = toml::parse(text);
  if (!parsed) {
    XXH128_canonical_t canonical;
    XXH128_canonicalFromHash(&canonical, XXH3_128bits(text.data(), text.size()));
    return std::string("E") + std::string(reinterpret_cast<const char*>(canonical.digest), sizeof(canonical.digest));
  }
  const toml::table& root = parsed.table();
  const toml::node* tool = root.get("tool");
  if (tool == nullptr) return "A";
  std::string out;
  if (!tool->is_table()) {
    out = "X";
    Dump(*tool, &out);
    return out;
  }
  const toml::node* pytest = tool->as_table()->get("pytest");
  if (pytest == nullptr) return "A";
  out = pytest->is_table() ? "T" : "X";
  Dump(*pytest, &out);
  return out;
}

}  // namespace ste
