// SPDX-License-Identifier: BSD-3-Clause
#include "pardyn/params.hpp"

#include <sstream>

namespace pardyn {

Error::~Error() = default;

const char* to_string(ParamType t) {
  switch (t) {
    case ParamType::Float: return "float";
    case ParamType::Int: return "integer";
    case ParamType::Bool: return "boolean";
    case ParamType::String: return "string";
    case ParamType::Choice: return "choice";
    case ParamType::FloatList: return "array of floats";
    case ParamType::IntList: return "array of integers";
    case ParamType::StringList: return "array of strings";
    case ParamType::Table: return "table";
  }
  return "?";
}

std::string format_value(const ParamValue& v) {
  std::ostringstream os;
  os.precision(12);
  struct V {
    std::ostringstream& os;
    void operator()(double d) const { os << d; }
    void operator()(std::int64_t i) const { os << i; }
    void operator()(bool b) const { os << (b ? "true" : "false"); }
    void operator()(const std::string& s) const { os << '"' << s << '"'; }
    void operator()(const std::vector<double>& l) const {
      os << '[';
      for (std::size_t i = 0; i < l.size(); ++i) os << (i ? ", " : "") << l[i];
      os << ']';
    }
    void operator()(const std::vector<std::string>& l) const {
      os << '[';
      for (std::size_t i = 0; i < l.size(); ++i) os << (i ? ", " : "") << '"' << l[i] << '"';
      os << ']';
    }
    void operator()(const std::vector<std::int64_t>& l) const {
      os << '[';
      for (std::size_t i = 0; i < l.size(); ++i) os << (i ? ", " : "") << l[i];
      os << ']';
    }
    void operator()(const ParamTable& t) const {
      os << '{';
      for (std::size_t i = 0; i < t.size(); ++i) {
        os << (i ? ", " : " ") << t[i].key << " = ";
        std::visit(*this, t[i].value);
      }
      os << (t.empty() ? "}" : " }");
    }
  };
  std::visit(V{os}, v);
  return os.str();
}

Schema& Schema::real(const std::string& name, std::optional<double> def, const std::string& unit,
                     const std::string& doc, std::optional<double> min, std::optional<double> max,
                     bool min_exclusive) {
  ParamSpec p;
  p.name = name;
  p.type = ParamType::Float;
  p.unit = unit;
  p.doc = doc;
  if (def) p.default_value = *def;
  p.min = min;
  p.max = max;
  p.min_exclusive = min_exclusive;
  return add(std::move(p));
}

Schema& Schema::integer(const std::string& name, std::optional<std::int64_t> def,
                        const std::string& doc, std::optional<double> min,
                        std::optional<double> max) {
  ParamSpec p;
  p.name = name;
  p.type = ParamType::Int;
  p.unit = "1";
  p.doc = doc;
  if (def) p.default_value = *def;
  p.min = min;
  p.max = max;
  return add(std::move(p));
}

Schema& Schema::boolean(const std::string& name, bool def, const std::string& doc) {
  ParamSpec p;
  p.name = name;
  p.type = ParamType::Bool;
  p.doc = doc;
  p.default_value = def;
  return add(std::move(p));
}

Schema& Schema::string(const std::string& name, std::optional<std::string> def,
                       const std::string& doc) {
  ParamSpec p;
  p.name = name;
  p.type = ParamType::String;
  p.doc = doc;
  if (def) p.default_value = *def;
  return add(std::move(p));
}

Schema& Schema::path(const std::string& name, std::optional<std::string> def,
                     const std::string& doc) {
  string(name, std::move(def), doc);
  specs_.back().unit = kPathUnit;
  return *this;
}

Schema& Schema::choice(const std::string& name, std::optional<std::string> def,
                       std::vector<std::string> choices, const std::string& doc) {
  ParamSpec p;
  p.name = name;
  p.type = ParamType::Choice;
  p.doc = doc;
  if (def) p.default_value = *def;
  p.choices = std::move(choices);
  return add(std::move(p));
}

Schema& Schema::reals(const std::string& name, std::optional<std::vector<double>> def,
                      const std::string& unit, const std::string& doc, std::size_t min_len,
                      std::size_t max_len) {
  ParamSpec p;
  p.name = name;
  p.type = ParamType::FloatList;
  p.unit = unit;
  p.doc = doc;
  if (def) p.default_value = *def;
  p.list_min = min_len;
  p.list_max = max_len;
  return add(std::move(p));
}

Schema& Schema::integers(const std::string& name, std::optional<std::vector<std::int64_t>> def,
                         const std::string& doc, std::size_t min_len, std::size_t max_len,
                         std::optional<double> min, std::optional<double> max) {
  ParamSpec p;
  p.name = name;
  p.type = ParamType::IntList;
  p.doc = doc;
  p.min = min;
  p.max = max;
  if (def) p.default_value = *def;
  p.list_min = min_len;
  p.list_max = max_len;
  return add(std::move(p));
}

Schema& Schema::strings(const std::string& name, std::optional<std::vector<std::string>> def,
                        const std::string& doc, std::size_t min_len, std::size_t max_len) {
  ParamSpec p;
  p.name = name;
  p.type = ParamType::StringList;
  p.doc = doc;
  if (def) p.default_value = *def;
  p.list_min = min_len;
  p.list_max = max_len;
  return add(std::move(p));
}

Schema& Schema::table(const std::string& name, std::optional<ParamTable> def,
                      const std::string& doc) {
  ParamSpec p;
  p.name = name;
  p.type = ParamType::Table;
  p.doc = doc;
  if (def) p.default_value = *def;
  return add(std::move(p));
}

const ParamSpec* Schema::find(const std::string& name) const {
  for (const auto& s : specs_)
    if (s.name == name) return &s;
  return nullptr;
}

Schema& Schema::merge(const Schema& other) {
  for (const auto& s : other.specs_)
    if (!find(s.name)) specs_.push_back(s);
  return *this;
}

const ParamValue& ParamSet::get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end())
    throw Error("internal: parameter '" + name + "' is not in the schema" +
                (context.empty() ? "" : " of " + context));
  return it->second;
}

namespace {
template <class T>
const T& typed(const ParamValue& v, const std::string& name, const std::string& ctx) {
  if (auto p = std::get_if<T>(&v)) return *p;
  throw Error("internal: parameter '" + name + "'" + (ctx.empty() ? "" : " of " + ctx) +
              " read with the wrong type");
}
}  // namespace

double ParamSet::real(const std::string& name) const {
  const auto& v = get(name);
  if (auto i = std::get_if<std::int64_t>(&v)) return double(*i);
  return typed<double>(v, name, context);
}
std::int64_t ParamSet::integer(const std::string& name) const {
  return typed<std::int64_t>(get(name), name, context);
}
bool ParamSet::boolean(const std::string& name) const {
  return typed<bool>(get(name), name, context);
}
const std::string& ParamSet::string(const std::string& name) const {
  return typed<std::string>(get(name), name, context);
}
const std::vector<double>& ParamSet::reals(const std::string& name) const {
  return typed<std::vector<double>>(get(name), name, context);
}
const std::vector<std::int64_t>& ParamSet::integers(const std::string& name) const {
  return typed<std::vector<std::int64_t>>(get(name), name, context);
}
const std::vector<std::string>& ParamSet::strings(const std::string& name) const {
  return typed<std::vector<std::string>>(get(name), name, context);
}
const ParamTable& ParamSet::table(const std::string& name) const {
  return typed<ParamTable>(get(name), name, context);
}

}  // namespace pardyn
