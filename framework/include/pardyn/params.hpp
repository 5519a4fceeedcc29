// SPDX-License-Identifier: BSD-3-Clause
// Parameter schemas and validated parameter sets. Every plugin states its parameters (name, type, unit,
// default, range, allowed values, documentation); the scenario loader checks every key against them
// before anything runs, and the plugin receives a ParamSet in which every value is present and valid.
#pragma once

#if defined(__CUDACC_RTC__)
#error "pardyn/params.hpp is host-only (docs/plugins.md: device-clean headers)"
#endif

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "pardyn/core.hpp"

namespace pardyn {

enum class ParamType { Float, Int, Bool, String, Choice, FloatList, IntList, StringList, Table };
const char* to_string(ParamType t);

struct ParamEntry;
// A table of named values, TOML's { a = 1.5, b = [1, 2], c = "text" }, in the order of the names: what
// a plugin takes when the names are its user's (the expression law's `parameters`). Its values are
// numbers (std::int64_t or double), booleans, strings, arrays (of numbers: std::vector<double>; of
// strings) and tables; the plugin checks them.
using ParamTable = std::vector<ParamEntry>;
using ParamValue = std::variant<double, std::int64_t, bool, std::string, std::vector<double>,
                                std::vector<std::int64_t>, std::vector<std::string>, ParamTable>;
struct ParamEntry {
  std::string key;
  ParamValue value;
};
inline bool operator==(const ParamEntry& a, const ParamEntry& b) {
  return a.key == b.key && a.value == b.value;
}
inline bool operator!=(const ParamEntry& a, const ParamEntry& b) { return !(a == b); }
std::string format_value(const ParamValue& v);

// Where a value was written: the scenario file, the line and the column of its first character
// (1-based), so that a plugin can point at a character of it (the expression law at a formula's).
// line = 0 when the value has no place in a file (a --set argument, whose text is `file`).
struct ParamPlace {
  std::string file;
  int line = 0, column = 0;
};

struct ParamSpec {
  std::string name;
  ParamType type = ParamType::Float;
  std::string unit;  // e.g. "length", "mass", "1" for dimensionless; empty for non-numeric
  std::string doc;
  std::optional<ParamValue> default_value;  // absent: the key is required
  std::optional<double> min, max;           // inclusive bounds for numbers (each element of a list)
  bool min_exclusive = false;
  std::vector<std::string> choices;        // for Choice
  std::size_t list_min = 0, list_max = 0;  // element count bounds for lists (0 = unbounded)
};

// The unit of a string parameter that names an input file (Schema::path).
constexpr const char* kPathUnit = "path";

// Fluent builder so that a schema reads as a table in the plugin's source.
class Schema {
 public:
  Schema& add(ParamSpec p) {
    specs_.push_back(std::move(p));
    return *this;
  }
  Schema& real(const std::string& name, std::optional<double> def, const std::string& unit,
               const std::string& doc, std::optional<double> min = std::nullopt,
               std::optional<double> max = std::nullopt, bool min_exclusive = false);
  Schema& integer(const std::string& name, std::optional<std::int64_t> def, const std::string& doc,
                  std::optional<double> min = std::nullopt,
                  std::optional<double> max = std::nullopt);
  Schema& boolean(const std::string& name, bool def, const std::string& doc);
  Schema& string(const std::string& name, std::optional<std::string> def, const std::string& doc);
  // A file the plugin reads: a string whose unit is kPathUnit. A relative path starts at the
  // scenario file's folder (ParamSet::base_dir); the resolved config.toml of a run records it
  // absolute, so that the file runs again from the output folder.
  Schema& path(const std::string& name, std::optional<std::string> def, const std::string& doc);
  Schema& choice(const std::string& name, std::optional<std::string> def,
                 std::vector<std::string> choices, const std::string& doc);
  Schema& reals(const std::string& name, std::optional<std::vector<double>> def,
                const std::string& unit, const std::string& doc, std::size_t min_len = 0,
                std::size_t max_len = 0);
  // min, max: the range of every element.
  Schema& integers(const std::string& name, std::optional<std::vector<std::int64_t>> def,
                   const std::string& doc, std::size_t min_len = 0, std::size_t max_len = 0,
                   std::optional<double> min = std::nullopt,
                   std::optional<double> max = std::nullopt);
  Schema& strings(const std::string& name, std::optional<std::vector<std::string>> def,
                  const std::string& doc, std::size_t min_len = 0, std::size_t max_len = 0);
  // A table of named values (ParamTable); the plugin checks its entries.
  Schema& table(const std::string& name, std::optional<ParamTable> def, const std::string& doc);

  const std::vector<ParamSpec>& specs() const { return specs_; }
  const ParamSpec* find(const std::string& name) const;
  // Adds every parameter of another schema (shared keys such as a generator's common keys).
  Schema& merge(const Schema& other);

 private:
  std::vector<ParamSpec> specs_;
};

// A validated set of parameters: every key of the schema is present (explicit or default).
class ParamSet {
 public:
  ParamSet() = default;
  void set(const std::string& name, ParamValue v) { values_[name] = std::move(v); }
  bool has(const std::string& name) const { return values_.count(name) != 0; }

  double real(const std::string& name) const;
  std::int64_t integer(const std::string& name) const;
  bool boolean(const std::string& name) const;
  const std::string& string(const std::string& name) const;
  const std::vector<double>& reals(const std::string& name) const;
  const std::vector<std::int64_t>& integers(const std::string& name) const;
  const std::vector<std::string>& strings(const std::string& name) const;
  const ParamTable& table(const std::string& name) const;
  const std::map<std::string, ParamValue>& values() const { return values_; }

  // Where the value of `name` was written (an entry of a table: "name.key"); null when unknown
  // (a default, a set made in code).
  const ParamPlace* place(const std::string& name) const {
    auto it = places_.find(name);
    return it == places_.end() ? nullptr : &it->second;
  }
  void set_place(const std::string& name, ParamPlace p) { places_[name] = std::move(p); }

  // Where this set came from, for messages a plugin raises itself ("examples/x.toml [[potential]] #1").
  std::string context;
  // The folder of the scenario file, to resolve relative paths a plugin is given.
  std::string base_dir;

 private:
  const ParamValue& get(const std::string& name) const;
  std::map<std::string, ParamValue> values_;
  std::map<std::string, ParamPlace> places_;
};

}  // namespace pardyn
