// SPDX-License-Identifier: BSD-3-Clause
#include "pardyn/app/config.hpp"
#include "pardyn/cuda.hpp"
#include "parallel/communicator.hpp"
#include "scenario/scheme_choice.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <toml++/toml.h>

namespace fs = std::filesystem;

namespace pardyn {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string nearest(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t bd = std::string::npos;
  for (const auto& c : candidates) {
    std::size_t d = edit_distance(word, c);
    // A prefix or suffix match counts as close ("temp" -> "temperature").
    if (c.rfind(word, 0) == 0 || word.rfind(c, 0) == 0) d = std::min<std::size_t>(d, 1);
    if (d < bd) bd = d, best = c;
  }
  if (best.empty() || bd > std::max<std::size_t>(2, word.size() / 3)) return "";
  return best;
}

namespace {

std::string join(const std::vector<std::string>& v, const std::string& sep = ", ") {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

std::string quoted_list(const std::vector<std::string>& v) {
  std::vector<std::string> q;
  for (const auto& s : v) q.push_back("\"" + s + "\"");
  return join(q);
}

// Collects every error of a scenario so that the user sees all of them at once.
class Diagnostics {
 public:
  explicit Diagnostics(std::string file) : file_(std::move(file)) {}
  void error(const toml::source_region& where, const std::string& msg) {
    const toml::source_region& w = where.begin.line > 0 || !fallback_ ? where : *fallback_;
    std::string loc;
    ScenarioError::Problem p{file_, 0, 0, msg};
    if (from_override(w)) {
      loc = *w.path;
      p.file = *w.path;
    } else if (w.begin.line > 0) {
      loc = file_ + ":" + std::to_string(w.begin.line) + ":" + std::to_string(w.begin.column);
      p.line = int(w.begin.line);
      p.column = int(w.begin.column);
    } else {
      loc = file_ + " (a section made by --set)";
    }
    errors_.push_back(loc + ": " + msg);
    problems_.push_back(std::move(p));
  }
  ParamPlace place(const toml::source_region& where) const {
    if (from_override(where)) return ParamPlace{*where.path, 0, 0};
    return ParamPlace{file_, int(where.begin.line), int(where.begin.column)};
  }
  std::string location(const toml::source_region& where) const {
    if (from_override(where)) return *where.path;
    if (where.begin.line == 0) return file_;
    return file_ + ":" + std::to_string(where.begin.line) + ":" +
           std::to_string(where.begin.column);
  }
  // Where a value without a place of its own (one the checker made from the file's value, such as a
  // boundary string turned into a list) is reported: the place of the value it was made from.
  void set_fallback(const toml::source_region* where) { fallback_ = where; }
  bool ok() const { return errors_.empty(); }
  void throw_if_any() const {
    if (errors_.empty()) return;
    std::string msg = errors_.size() == 1
                          ? "invalid scenario:\n"
                          : std::to_string(errors_.size()) + " errors in scenario:\n";
    for (const auto& e : errors_) msg += "  " + e + "\n";
    msg.pop_back();
    throw ScenarioError(msg, problems_);
  }
  const std::string& file() const { return file_; }

 private:
  // Values given with --set carry the argument as their source path (apply_override).
  static bool from_override(const toml::source_region& w) {
    return w.path && w.path->rfind("--set ", 0) == 0;
  }
  std::string file_;
  std::vector<std::string> errors_;
  std::vector<ScenarioError::Problem> problems_;
  const toml::source_region* fallback_ = nullptr;
};

std::vector<std::string> schema_names(const Schema& s) {
  std::vector<std::string> n;
  for (const auto& p : s.specs()) n.push_back(p.name);
  return n;
}

std::string unknown_key_message(const std::string& key, const std::string& section,
                                const std::vector<std::string>& valid) {
  std::string msg = "unknown key '" + key + "' in " + section;
  std::string near = nearest(key, valid);
  if (!near.empty()) msg += "; did you mean '" + near + "'?";
  else if (!valid.empty()) msg += "; valid keys: " + join(valid);
  else msg += "; this section takes no keys";
  return msg;
}

std::string range_text(const ParamSpec& s) {
  std::string r;
  if (s.min) {
    std::ostringstream o;
    o << (s.min_exclusive ? "> " : ">= ") << *s.min;
    r += o.str();
  }
  if (s.max) {
    std::ostringstream o;
    o << "<= " << *s.max;
    r += (r.empty() ? "" : " and ") + o.str();
  }
  return r;
}

bool in_range(const ParamSpec& s, double v) {
  if (s.min && (s.min_exclusive ? !(v > *s.min) : !(v >= *s.min))) return false;
  if (s.max && !(v <= *s.max)) return false;
  return true;
}

// A TOML table as a ParamTable (ParamType::Table): numbers, booleans, strings, arrays of numbers
// (as doubles) or of strings, and tables. Mixed arrays and arrays of tables are refused.
ParamTable table_value(const toml::table& t, const std::string& name, const std::string& section,
                       Diagnostics& diag, bool& ok) {
  ParamTable out;
  for (auto&& [key, node] : t) {
    const std::string k(key.str());
    const std::string what = "'" + name + "." + k + "' in " + section;
    ParamEntry e{k, {}};
    if (auto i = node.as_integer()) e.value = std::int64_t(i->get());
    else if (auto f = node.as_floating_point()) e.value = f->get();
    else if (auto b = node.as_boolean()) e.value = b->get();
    else if (auto str = node.as_string()) e.value = str->get();
    else if (auto sub = node.as_table())
      e.value = table_value(*sub, name + "." + k, section, diag, ok);
    else if (auto arr = node.as_array()) {
      std::vector<double> nums;
      std::vector<std::string> strs;
      for (const auto& el : *arr) {
        if (auto i = el.as_integer()) nums.push_back(double(i->get()));
        else if (auto f = el.as_floating_point()) nums.push_back(f->get());
        else if (auto str = el.as_string()) strs.push_back(str->get());
      }
      if (nums.size() + strs.size() != arr->size() || (!nums.empty() && !strs.empty())) {
        diag.error(node.source(), what + " must be an array of numbers or of strings");
        ok = false;
        continue;
      }
      if (strs.empty()) e.value = std::move(nums);
      else e.value = std::move(strs);
    } else {
      diag.error(node.source(),
                 what + " must be a number, a string, a boolean, an array or a table");
      ok = false;
      continue;
    }
    out.push_back(std::move(e));
  }
  return out;
}

// Converts and checks one value against its spec. Returns false (with an error) if it does not fit.
// Long: one case per parameter type, each with its own messages.
bool convert(const toml::node& node, const ParamSpec& spec, const std::string& section,
             Diagnostics& diag, ParamValue& out) {
  const std::string what = "'" + spec.name + "' in " + section;
  auto bad_type = [&](const std::string& got) {
    diag.error(
        node.source(),
        what + " must be " + std::string(to_string(spec.type)) +
            (spec.type == ParamType::Choice ? " (one of " + quoted_list(spec.choices) + ")" : "") +
            ", not " + got);
    return false;
  };
  auto type_name = [](const toml::node& n) -> std::string {
    switch (n.type()) {
      case toml::node_type::string: return "a string";
      case toml::node_type::integer: return "an integer";
      case toml::node_type::floating_point: return "a float";
      case toml::node_type::boolean: return "a boolean";
      case toml::node_type::array: return "an array";
      case toml::node_type::table: return "a table";
      default: return "a date/time";
    }
  };
  auto number = [&](const toml::node& n, double& v) {
    if (auto i = n.as_integer()) return v = double(i->get()), true;
    if (auto f = n.as_floating_point()) return v = f->get(), true;
    return false;
  };
  auto check_range = [&](const toml::node& n, double v) {
    if (in_range(spec, v)) return true;
    std::ostringstream o;
    if (auto i = n.as_integer()) o << i->get();  // exactly as written, not rounded to a double
    else o << v;
    diag.error(n.source(),
               what + " is " + o.str() + "; it must be " + range_text(spec) +
                   (spec.unit.empty() || spec.unit == "1" ? "" : " (" + spec.unit + ")"));
    return false;
  };
  auto check_len = [&](std::size_t len) {
    if ((spec.list_min && len < spec.list_min) || (spec.list_max && len > spec.list_max)) {
      std::string want = spec.list_min == spec.list_max
                             ? std::to_string(spec.list_min)
                             : std::to_string(spec.list_min) + " to " +
                                   (spec.list_max ? std::to_string(spec.list_max) : "any");
      diag.error(node.source(),
                 what + " has " + std::to_string(len) + " elements; it needs " + want);
      return false;
    }
    return true;
  };

  switch (spec.type) {
    case ParamType::Table: {
      auto t = node.as_table();
      if (!t) return bad_type(type_name(node));
      bool ok = true;
      out = table_value(*t, spec.name, section, diag, ok);
      return ok;
    }
    case ParamType::Float: {
      double v;
      if (!number(node, v)) return bad_type(type_name(node));
      if (!std::isfinite(v)) {
        diag.error(node.source(), what + " must be finite");
        return false;
      }
      if (!check_range(node, v)) return false;
      out = v;
      return true;
    }
    case ParamType::Int: {
      auto i = node.as_integer();
      if (!i) {
        if (auto f = node.as_floating_point()) {
          if (!std::isfinite(f->get())) {
            diag.error(node.source(), what + " must be an integer, not " + format_number(f->get()));
            return false;
          }
          if (std::floor(f->get()) == f->get()) {
            diag.error(node.source(),
                       what + " must be an integer: write it without a decimal point");
            return false;
          }
        }
        return bad_type(type_name(node));
      }
      if (!check_range(node, double(i->get()))) return false;
      out = std::int64_t(i->get());
      return true;
    }
    case ParamType::Bool: {
      auto b = node.as_boolean();
      if (!b) return bad_type(type_name(node));
      out = b->get();
      return true;
    }
    case ParamType::String: {
      auto s = node.as_string();
      if (!s) return bad_type(type_name(node));
      out = s->get();
      return true;
    }
    case ParamType::Choice: {
      auto s = node.as_string();
      if (!s) return bad_type(type_name(node));
      const auto& c = spec.choices;
      if (std::find(c.begin(), c.end(), s->get()) == c.end()) {
        std::string near = nearest(s->get(), c);
        diag.error(node.source(), what + " is \"" + s->get() +
                                      "\"; allowed values: " + quoted_list(c) +
                                      (near.empty() ? "" : " (did you mean \"" + near + "\"?)"));
        return false;
      }
      out = s->get();
      return true;
    }
    case ParamType::FloatList:
    case ParamType::IntList:
    case ParamType::StringList: {
      auto arr = node.as_array();
      if (!arr) return bad_type(type_name(node));
      if (!check_len(arr->size())) return false;
      std::vector<double> fl;
      std::vector<std::int64_t> il;
      std::vector<std::string> sl;
      bool ok = true;
      for (const auto& el : *arr) {
        if (spec.type == ParamType::FloatList) {
          double v;
          if (!number(el, v)) {
            diag.error(el.source(), what + " must contain numbers, not " + type_name(el));
            ok = false;
          } else if (!check_range(el, v)) {
            ok = false;
          }
          fl.push_back(v);
        } else if (spec.type == ParamType::IntList) {
          auto i = el.as_integer();
          if (!i) {
            diag.error(el.source(), what + " must contain integers, not " + type_name(el));
            ok = false;
            continue;
          }
          if (!check_range(el, double(i->get()))) ok = false;
          il.push_back(i->get());
        } else {
          auto s = el.as_string();
          if (!s) {
            diag.error(el.source(), what + " must contain strings, not " + type_name(el));
            ok = false;
            continue;
          }
          if (!spec.choices.empty() &&
              std::find(spec.choices.begin(), spec.choices.end(), s->get()) == spec.choices.end()) {
            diag.error(el.source(), what + " contains \"" + s->get() +
                                        "\"; allowed values: " + quoted_list(spec.choices));
            ok = false;
          }
          sl.push_back(s->get());
        }
      }
      if (!ok) return false;
      if (spec.type == ParamType::FloatList) out = fl;
      else if (spec.type == ParamType::IntList) out = il;
      else out = sl;
      return true;
    }
  }
  return false;
}

// Where each value (and each entry of a table, "key.entry") was written, for the plugin's messages.
void record_places(ParamSet& ps, const std::string& key, const toml::node& node,
                   const Diagnostics& diag) {
  ps.set_place(key, diag.place(node.source()));
  if (auto t = node.as_table())
    for (auto&& [k, sub] : *t) record_places(ps, key + "." + std::string(k.str()), sub, diag);
}

// Validates a table against a schema. `skip` are keys handled by the caller (e.g. "type").
ParamSet check_table(const toml::table& t, const Schema& schema, const std::string& section,
                     const std::set<std::string>& skip, Diagnostics& diag,
                     const toml::source_region* src = nullptr) {
  const toml::source_region& where = src ? *src : t.source();
  ParamSet ps;
  ps.context = section + " (" + diag.location(where) + ")";
  std::vector<std::string> valid = schema_names(schema);
  for (const auto& k : skip) valid.push_back(k);
  for (auto&& [key, node] : t) {
    const std::string k(key.str());
    if (skip.count(k)) continue;
    const ParamSpec* spec = schema.find(k);
    if (!spec) {
      diag.error(key.source(), unknown_key_message(k, section, valid));
      continue;
    }
    ParamValue v;
    if (convert(node, *spec, section, diag, v)) ps.set(k, std::move(v));
    record_places(ps, k, node, diag);
  }
  for (const auto& spec : schema.specs()) {
    if (ps.has(spec.name)) continue;
    // An invalid value was reported above; its default stands in so that checking can go on and
    // every error of the file is reported in one go.
    if (t.contains(spec.name)) {
      if (spec.default_value) ps.set(spec.name, *spec.default_value);
      continue;
    }
    if (spec.default_value) ps.set(spec.name, *spec.default_value);
    else
      diag.error(where,
                 "missing required key '" + spec.name + "' in " + section + " (" + spec.doc + ")");
  }
  return ps;
}

toml::table to_toml_table(const ParamTable& t);

toml::array to_toml_array(const ParamValue& v) {
  toml::array a;
  if (auto l = std::get_if<std::vector<double>>(&v))
    for (double d : *l) a.push_back(d);
  if (auto l = std::get_if<std::vector<std::int64_t>>(&v))
    for (auto d : *l) a.push_back(d);
  if (auto l = std::get_if<std::vector<std::string>>(&v))
    for (const auto& d : *l) a.push_back(d);
  return a;
}

void put_value(toml::table& t, const std::string& k, const ParamValue& v) {
  if (auto d = std::get_if<double>(&v)) t.insert_or_assign(k, *d);
  else if (auto i = std::get_if<std::int64_t>(&v)) t.insert_or_assign(k, *i);
  else if (auto b = std::get_if<bool>(&v)) t.insert_or_assign(k, *b);
  else if (auto s = std::get_if<std::string>(&v)) t.insert_or_assign(k, *s);
  else if (auto tab = std::get_if<ParamTable>(&v)) t.insert_or_assign(k, to_toml_table(*tab));
  else t.insert_or_assign(k, to_toml_array(v));
}

toml::table to_toml_table(const ParamTable& t) {
  toml::table out;
  for (const auto& e : t) put_value(out, e.key, e.value);
  out.is_inline(true);
  return out;
}

void put_params(toml::table& t, const ParamSet& ps) {
  for (const auto& [k, v] : ps.values()) put_value(t, k, v);
}

// --set a.b=value, a.N.b=value, a[N].b=value: the value is TOML (1e-3, "text", [1,2], true) or, if it
// does not parse as TOML, a bare string.
void apply_override(toml::table& root, const std::string& arg) {
  const auto eq = arg.find('=');
  if (eq == std::string::npos || eq == 0)
    throw Error("--set " + arg + ": expected section.key=value, e.g. --set simulation.steps=100");
  std::string path = arg.substr(0, eq), text = arg.substr(eq + 1);
  for (auto& c : path)
    if (c == '[' || c == ']') c = '.';
  std::vector<std::string> parts;
  std::stringstream ss(path);
  for (std::string p; std::getline(ss, p, '.');)
    if (!p.empty()) parts.push_back(p);
  if (parts.size() < 2)
    throw Error("--set " + arg + ": name a section and a key, e.g. --set integrator.dt=0.001");

  // The value as TOML (numbers, "strings", [arrays], booleans), or else as a bare string. Its source
  // path is the argument, so that a message about it names the --set that gave it.
  const std::string origin = "--set " + arg;
  toml::table parsed;
  try {
    parsed = toml::parse("v = " + text, origin);
  } catch (const toml::parse_error&) {
    std::string quoted = "\"";
    for (unsigned char c : text) {
      if (c == '"' || c == '\\') quoted += '\\';
      if (c < 0x20 || c == 0x7f) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        quoted += buf;
      } else {
        quoted += char(c);
      }
    }
    parsed = toml::parse("v = " + quoted + "\"", origin);
  }

  toml::table* t = &root;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    const std::string& p = parts[i];
    toml::node* n = t->get(p);
    if (!n) {
      t->insert(p, toml::table{});
      n = t->get(p);
    }
    if (auto arr = n->as_array()) {
      std::size_t idx = 0;
      bool indexed =
          i + 2 < parts.size() && std::all_of(parts[i + 1].begin(), parts[i + 1].end(),
                                              [](unsigned char c) { return std::isdigit(c) != 0; });
      if (indexed) {
        // Any number of digits: a number past the last block is refused below, not overflowed.
        const std::string& digits = parts[i + 1];
        idx = digits.size() > 9 ? std::numeric_limits<std::size_t>::max() : std::stoul(digits);
        if (idx >= arr->size())
          throw Error("--set " + arg + ": there is no [[" + p + "]] number " + digits +
                      "; the scenario has " + std::to_string(arr->size()) + " (numbered from 0" +
                      (arr->empty() ? "" : " to " + std::to_string(arr->size() - 1)) + ")");
        ++i;
      } else if (arr->size() != 1) {
        throw Error("--set " + arg + ": [[" + p + "]] has " + std::to_string(arr->size()) +
                    " entries; say which, e.g. --set " + p + ".0." + parts.back() + "=...");
      }
      if (idx >= arr->size() || !arr->get(idx)->is_table())
        throw Error("--set " + arg + ": there is no [[" + p + "]] number " + std::to_string(idx) +
                    " (they are numbered from 0)");
      t = arr->get(idx)->as_table();
    } else if (auto tt = n->as_table()) {
      t = tt;
    } else {
      throw Error("--set " + arg + ": '" + p + "' is a value, not a section");
    }
  }
  toml::key key(parts.back(), toml::source_region(parsed.get("v")->source()));
  t->insert_or_assign(std::move(key), std::move(*parsed.get("v")));
}

// The text of a scenario file. A folder or a device is refused by name (a folder would otherwise
// read as an empty scenario, "no particles"; /dev/zero would never end), and so is a file larger
// than any scenario (a pipe, as from <(...), is read up to that size).
std::string read_scenario_file(const std::string& path) {
  constexpr std::size_t kMaxScenario = 16u << 20;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (fs::is_directory(st))
    throw Error(path + " is a folder, not a scenario file; give the .toml file (e.g. " +
                (fs::path(path) / "scenario.toml").string() + ")");
  if (fs::is_character_file(st) || fs::is_block_file(st) || fs::is_socket(st))
    throw Error(path + " is a device or a socket, not a scenario file; give a .toml file");
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw Error(path + ": cannot open: " + std::strerror(errno));
  std::string text;
  char buf[65536];
  std::size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) {
    text.append(buf, got);
    if (text.size() > kMaxScenario) {
      std::fclose(f);
      throw Error(path + " is larger than 16 MiB, which no scenario is; give the .toml file");
    }
  }
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) throw Error(path + ": read error");
  return text;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
const Schema& simulation_schema() {
  static const Schema s = [] {
    Schema k;
    k.string("name", "", "name of the run (empty: the scenario file's name)")
        .integer("dimension", 3, "spatial dimension of the run", 2, 3)
        .choice("precision", "double", {"float", "double"},
                "floating-point precision of particle data and kernels (sums are always double)")
        .choice("backend", "auto", {"auto", "cpu", "cuda"},
                "where the particles live and the kernels run; auto = cuda if a GPU is present")
        .integer("steps", 1000, "number of time steps (with end_time: the most steps taken)", 0,
                 double(kMaxSteps))
        .real("end_time", 0.0, "time",
              "stop when the simulation time reaches this (0: run `steps` steps)", 0.0)
        .integer("seed", 1, "random seed for the generators and stochastic plugins", 0, 1e18)
        .string("output", "",
                "output folder (empty: out/<name>, relative to the current directory)")
        .strings("plugin_paths", std::vector<std::string>{},
                 "extra plugin files or folders (relative to the scenario file)")
        .integer("progress_interval", 0,
                 "print a thermo line on the terminal every this many steps (0 = ten per run)", 0,
                 double(kMaxSteps))
        .integer("threads", 0,
                 "CPU threads per rank (0 = all cores, shared evenly by the ranks on one node)", 0,
                 4096)
        .choice("balance", "speed", {"speed", "equal"},
                "parallel runs (mpirun): share the work by measured speed (speed: the all-pairs "
                "ring's blocks by each rank's speed at the first force evaluation; a tree term's "
                "pieces of the Morton curve re-dealt by the ranks' measured tree build and walk "
                "times every "
                "balance_interval steps), or give every rank the same share of the particles "
                "(equal: bit-reproducible runs; docs/parallel.md)")
        .integer("balance_interval", 50,
                 "parallel runs with a tree term and balance = \"speed\": at step 5 and then every "
                 "this many steps "
                 "the ranks compare the time of their tree builds and walks and re-deal the "
                 "Morton curve when the slowest is more than a tenth above the mean (0: never); "
                 "domain decompositions log their ranks' imbalance at the same steps",
                 0, double(kMaxSteps))
        .real("gpu_memory_limit", 0.0, "GiB",
              "GPU memory each rank may use, in GiB (0: all of it); what is free beyond it is "
              "taken at the start, so the GPU behaves as a small one (to try a run that needs "
              "several GPUs on big ones)",
              0.0)
        .reals("rank_weights", std::vector<double>{}, "1",
               "parallel runs, all-pairs ring: relative share of the particles per rank (one "
               "value per rank; empty: by `balance`)");
    return k;
  }();
  return s;
}

const Schema& box_schema() {
  static const Schema s = [] {
    Schema k;
    k.reals("lo", std::vector<double>{-1, -1, -1}, "length", "lower corner (dimension entries)", 2,
            3)
        .reals("hi", std::vector<double>{1, 1, 1}, "length", "upper corner (dimension entries)", 2,
               3)
        .strings("boundary", std::vector<std::string>{"open"},
                 "boundary per axis: one value for all axes or one per axis; \"open\" (no "
                 "boundary), \"periodic\", \"wall\"",
                 1, 3)
        .string("from", "",
                "take lo and hi (and boundary, where the file says it and [box] does not) from "
                "this file: a LAMMPS data file, a LAMMPS dump or an extended XYZ file with a "
                "Lattice; relative paths start at the scenario file's folder")
        .integer("frame", -1,
                 "with from: the frame of a dump or XYZ trajectory whose box is taken: 0 the "
                 "first, 1 the second, ...; -1 the last, -2 the one before, ...",
                 -double(kMaxSteps), double(kMaxSteps));
    return k;
  }();
  return s;
}

const Schema& particles_common_schema() {
  static const Schema s = [] {
    Schema k;
    k.integer("type", 0, "particle type given to every particle of this block", 0, 1 << 20)
        .real(
            "temperature", 0.0, "energy (k_B = 1)",
            "add Maxwell-Boltzmann velocities at this temperature (0 = none); the thermal part has "
            "zero net momentum and exactly this temperature",
            0.0)
        .choice("velocity_distribution", "gaussian", {"gaussian", "uniform"},
                "how the thermal velocities are drawn before they are set to the temperature: "
                "\"gaussian\" (Maxwell-Boltzmann) or \"uniform\" (each component uniform in a "
                "symmetric interval, as LAMMPS's velocity ... dist uniform); either way the net "
                "momentum is removed and the temperature is exact")
        .reals("offset", std::vector<double>{}, "length",
               "shift every position of this block by this vector (dimension entries)", 0, 3)
        .reals("velocity", std::vector<double>{}, "length/time",
               "add this bulk velocity to every particle of this block (dimension entries)", 0, 3);
    return k;
  }();
  return s;
}

const Schema& integrator_common_schema() {
  static const Schema s = [] {
    Schema k;
    k.choice("dt_control", "fixed", {"fixed", "acceleration"},
             "step size of fixed-step integrators: \"fixed\" = dt; \"acceleration\" = "
             "min(dt, dt_eta sqrt(dt_length / max|a|)) every step (adaptive integrators such as "
             "dopri5 control their own step)")
        .real("dt_eta", 0.02, "1", "accuracy factor of the acceleration criterion", 0.0,
              std::nullopt, true)
        .real("dt_length", 0.01, "length",
              "length scale of the acceleration criterion (typically the softening length)", 0.0,
              std::nullopt, true);
    return k;
  }();
  return s;
}

ParamSet parse_params(const Schema& schema, const std::string& toml_text,
                      const std::string& context) {
  toml::table t;
  try {
    t = toml::parse(toml_text, context);
  } catch (const toml::parse_error& e) {
    throw Error(context + ": " + std::string(e.description()));
  }
  Diagnostics diag(context);
  ParamSet ps = check_table(t, schema, context, {}, diag);
  diag.throw_if_any();
  return ps;
}

ParamSet sample_params(const Schema& schema, int dim) {
  ParamSet ps;
  for (const auto& p : schema.specs()) {
    if (p.default_value) {
      ps.set(p.name, *p.default_value);
      continue;
    }
    double x = 1;
    if (p.min) x = std::max(x, *p.min + 1);
    if (p.max) x = std::min(x, *p.max);
    const std::size_t n = std::max<std::size_t>(
        p.list_min, std::min<std::size_t>(std::size_t(dim), p.list_max ? p.list_max : dim));
    switch (p.type) {
      case ParamType::Float: ps.set(p.name, x); break;
      case ParamType::Int: ps.set(p.name, std::int64_t(x)); break;
      case ParamType::Bool: ps.set(p.name, false); break;
      case ParamType::String: ps.set(p.name, std::string()); break;
      case ParamType::Choice:
        ps.set(p.name, p.choices.empty() ? std::string() : p.choices[0]);
        break;
      case ParamType::FloatList: ps.set(p.name, std::vector<double>(n, x)); break;
      case ParamType::IntList: ps.set(p.name, std::vector<std::int64_t>(n, std::int64_t(x))); break;
      case ParamType::StringList: ps.set(p.name, std::vector<std::string>{}); break;
      case ParamType::Table: ps.set(p.name, ParamTable{}); break;
    }
  }
  return ps;
}

std::vector<SchemeSupport> scheme_support(const Registry& registry, const FactoryInfo& potential) {
  std::vector<SchemeSupport> out;
  RunInfo run;
  run.dim = (potential.dims & dim_bit(3)) ? 3 : 2;
  run.precision = Precision::Double;
  run.backend = Backend::Cpu;
  run.quiet = true;
  std::shared_ptr<Potential> pot;
  std::string why_not;
  try {
    ParamSet ps = sample_params(potential.schema, run.dim);
    ps.context = potential.name;
    pot = registry.make_potential(potential.name, ps, run);
  } catch (const Error& e) {
    why_not = std::string("cannot tell without parameters (") + e.what() + ")";
  }
  for (const FactoryInfo* s : registry.list(PluginKind::Scheme)) {
    SchemeSupport sup;
    sup.scheme = s->name;
    if (!pot) {
      sup.reason = why_not;
    } else {
      try {
        const auto scheme = registry.make_scheme(s->name, sample_params(s->schema, run.dim), run);
        const NeighbourhoodKind kind = scheme->neighbourhood().kind;
        sup.accepted = pot->supports(kind);
        sup.unused = pot->external();
        if (!sup.accepted) {
          sup.reason = pot->unsupported_reason(kind);
          if (sup.reason.empty())
            sup.reason =
                std::string("the law does not support the ") + to_string(kind) + " neighbourhood";
        }
      } catch (const Error& e) {
        sup.reason = std::string("cannot tell without parameters (") + e.what() + ")";
      }
    }
    out.push_back(std::move(sup));
  }
  return out;
}

namespace {

// dE/E0 on the terminal (relative_drift in thermo.csv) measures the integration error only where
// the energy is conserved. A thermostat, or walls that take energy at every bounce, change it on
// purpose: say so before the run, so that -0.9 is not read as a broken integrator.
void energy_notes(Scenario& sc, const Registry& registry) {
  std::vector<std::string> causes;
  for (const auto& m : sc.modifiers) causes.push_back("[[modifier]] \"" + m.type + "\"");
  RunInfo run;
  fill_run_info(run, sc);
  for (const auto& p : sc.potentials) {
    std::shared_ptr<Potential> pot;
    try {
      pot = registry.make_potential(p.type, p.params, run);
    } catch (const Error&) {
      continue;  // reported where the run's objects are made (the Simulation)
    }
    if (std::string why = pot->energy_note(); !why.empty()) causes.push_back(why);
  }
  if (causes.empty()) return;
  sc.notes.push_back(
      "dE/E0 (thermo.csv: relative_drift) is (E - E0)/|E0|: here it is mostly the "
      "energy that " +
      join(causes, " and ") +
      " took out or put in, not an integration error; follow the temperature "
      "instead (docs/user-guide.md)");
}

// What a plugin section is: the kind of plugin, the section's name in messages, the type when none
// is given, keys besides the plugin's own (skipped) and a schema merged into its own, the key that
// names the type, and the place messages name when not the table's own.
struct SectionRule {
  PluginKind kind;
  std::string label;
  std::string default_type;
  std::set<std::string> extra;
  const Schema* extra_schema = nullptr;
  const char* type_key = "type";
  const toml::source_region* src = nullptr;
};

// The scenario's text as TOML; a syntax error is a ScenarioError at its place.
toml::table parse_scenario_toml(const std::string& text, const std::string& path) {
  try {
    return toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    std::string why(e.description());
    // toml++ says only that it "could not be interpreted": 1e400 is beyond a double.
    if (why.find("floating-point") != std::string::npos &&
        why.find("interpreted") != std::string::npos)
      why += " (a float must lie within the range of a double, about 1.8e308 in magnitude)";
    throw ScenarioError(path + ":" + std::to_string(b.line) + ":" + std::to_string(b.column) +
                            ": TOML syntax error: " + why,
                        {{path, int(b.line), int(b.column), "TOML syntax error: " + why}});
  }
}

// Reads the sections of one scenario into `sc`, collecting every problem in `diag`.
struct ScenarioReader {
  const std::string& path;
  toml::table& root;
  Registry& registry;
  Scenario& sc;
  Diagnostics diag;

  const toml::table& table_of(const char* name) const {
    static const toml::table empty;
    const toml::table* t = root[name].as_table();
    return t ? *t : empty;
  }
  std::vector<const toml::table*> tables_of(const char* name) const {
    std::vector<const toml::table*> out;
    if (auto arr = root[name].as_array())
      for (const auto& el : *arr)
        if (auto t = el.as_table()) out.push_back(t);
    return out;
  }
  void check_sections();
  ParamSet read_simulation();
  void read_box();
  void box_from_file(const toml::table& bt, const ParamSet& b);
  const FactoryInfo* plugin_section(const toml::table& t, const SectionRule& rule, PluginSpec& out);
  void read_particles();
  void read_potentials();
  void read_integrator();
  void read_modifiers();
  void read_outputs();
};

// Every top-level key is a known section, written as a table or an array of tables as it must be.
void ScenarioReader::check_sections() {
  const std::vector<std::string> sections = {"simulation", "box",      "particles", "potential",
                                             "integrator", "modifier", "output"};
  const std::set<std::string> array_sections = {"particles", "potential", "modifier", "output"};
  for (auto&& [key, node] : root) {
    const std::string k(key.str());
    if (std::find(sections.begin(), sections.end(), k) == sections.end()) {
      std::string near = nearest(k, sections);
      diag.error(key.source(), "unknown section [" + k + "]" +
                                   (near.empty() ? "; sections are: " + join(sections)
                                                 : "; did you mean [" + near + "]?"));
      continue;
    }
    if (array_sections.count(k) && !node.is_array_of_tables())
      diag.error(key.source(), "'" + k + "' must be an array of tables: write [[" + k + "]]");
    if (!array_sections.count(k) && !node.is_table())
      diag.error(key.source(), "'" + k + "' must be a table: write [" + k + "]");
  }
}

// [simulation] first: it says which extra plugins to load and the dimension everything else needs.
// Returns its parameters (plugin_paths made absolute) for the resolved configuration.
ParamSet ScenarioReader::read_simulation() {
  ParamSet sim = check_table(table_of("simulation"), simulation_schema(), "[simulation]", {}, diag);
  sc.name = !sim.string("name").empty() ? sim.string("name") : fs::path(path).stem().string();
  sc.dim = int(sim.integer("dimension"));
  sc.precision = sim.string("precision") == "float" ? Precision::Float : Precision::Double;
  sc.backend = sim.string("backend");
  sc.steps = std::uint64_t(sim.integer("steps"));
  sc.end_time = sim.real("end_time");
  sc.seed = std::uint64_t(sim.integer("seed"));
  sc.output = !sim.string("output").empty() ? sim.string("output") : "out/" + sc.name;
  sc.progress_interval = std::uint64_t(sim.integer("progress_interval"));
  sc.threads = int(sim.integer("threads"));
  sc.balance_by_speed = sim.string("balance") == "speed";
  sc.balance_interval = std::uint64_t(sim.integer("balance_interval"));
  sc.rank_weights = sim.reals("rank_weights");
  sc.gpu_memory_limit = sim.real("gpu_memory_limit");
  for (double w : sc.rank_weights)
    if (!(w > 0) || !std::isfinite(w))
      diag.error(table_of("simulation").source(),
                 "[simulation] rank_weights must all be positive and finite");
  std::vector<std::string> plugin_paths;
  const std::size_t refused_before = registry.refused().size();
  for (const auto& p : sim.strings("plugin_paths")) {
    fs::path pp(p);
    plugin_paths.push_back(
        (pp.is_absolute() ? pp : fs::path(sc.dir) / pp).lexically_normal().string());
    registry.load_path(plugin_paths.back());
  }
  sim.set("plugin_paths", plugin_paths);  // absolute in the resolved file, which lives elsewhere
  // What the scenario names, it needs: a refusal there is an error. Other refused files (the built-in
  // folder, $PARDYN_PLUGIN_PATH) matter only if the scenario asks for something they may provide.
  if (registry.refused().size() > refused_before)
    throw Error(path + ": [simulation] plugin_paths: plugin loading refused " +
                std::to_string(registry.refused().size() - refused_before) +
                " file(s):" + registry.refusals_text(refused_before));
  return sim;
}

// [box]
void ScenarioReader::read_box() {
  // boundary = "periodic" is short for the same value on every axis. The table is changed in
  // place: a copy would lose every value's line and column (toml++ does not copy them).
  toml::table no_box;
  toml::table& bt = root["box"].as_table() ? *root["box"].as_table() : no_box;
  toml::source_region boundary_src;
  if (const toml::node* bn = bt.get("boundary"); bn && bn->is_string()) {
    toml::array one;
    one.push_back(bn->as_string()->get());
    boundary_src = bn->source();
    bt.insert_or_assign("boundary", std::move(one));
  }
  diag.set_fallback(boundary_src.begin.line > 0 || boundary_src.path ? &boundary_src : nullptr);
  ParamSet b = check_table(bt, box_schema(), "[box]", {}, diag);
  auto axis_count = [&](const char* key, std::size_t n, bool allow_one) {
    if (!b.has(key)) return;
    std::size_t len = std::visit(
        [](const auto& v) -> std::size_t {
          if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::vector<double>> ||
                        std::is_same_v<std::decay_t<decltype(v)>, std::vector<std::string>>)
            return v.size();
          else return 0;
        },
        b.values().at(key));
    if (len != n && !(allow_one && len == 1)) {
      const toml::node* nd = bt.get(key);
      diag.error(nd ? nd->source() : bt.source(),
                 std::string("'") + key + "' in [box] has " + std::to_string(len) + " entries; a " +
                     std::to_string(sc.dim) + "D run needs " + std::to_string(n) +
                     (allow_one ? " (or 1 for all axes)" : ""));
    }
  };
  // Defaults are 3D; a 2D run takes their first two entries when the user gave none.
  if (bt.contains("lo")) axis_count("lo", sc.dim, false);
  if (bt.contains("hi")) axis_count("hi", sc.dim, false);
  if (bt.contains("boundary")) axis_count("boundary", sc.dim, true);
  if (diag.ok()) {
    const auto& lo = b.reals("lo");
    const auto& hi = b.reals("hi");
    const auto& bd = b.strings("boundary");
    for (int d = 0; d < 3; ++d) {
      sc.box.lo[d] = d < int(lo.size()) ? lo[d] : -1;
      sc.box.hi[d] = d < int(hi.size()) ? hi[d] : 1;
      const std::string& name =
          bd.size() == 1 ? bd[0] : bd[std::min<std::size_t>(d, bd.size() - 1)];
      if (name == "periodic") sc.box.boundary[d] = Boundary::Periodic;
      else if (name == "wall") sc.box.boundary[d] = Boundary::Wall;
      else if (name == "open") sc.box.boundary[d] = Boundary::Open;
      else
        diag.error(
            bt.get("boundary") ? bt.get("boundary")->source() : bt.source(),
            "boundary \"" + name + "\" in [box]: allowed values: \"open\", \"periodic\", \"wall\"");
      if (d < sc.dim && !(sc.box.hi[d] > sc.box.lo[d]))
        diag.error(
            bt.get("hi") ? bt.get("hi")->source() : bt.source(),
            "[box] hi must be greater than lo on every axis (axis " + std::to_string(d) + ")");
    }
  }
  if (diag.ok() && (bt.contains("from") || bt.contains("frame"))) box_from_file(bt, b);
  diag.set_fallback(nullptr);
}

// [box] from = "file": lo and hi from the file, read by the generator plugin of its format
// (FactoryInfo::file_box); boundary too where the format says it and [box] does not.
void ScenarioReader::box_from_file(const toml::table& bt, const ParamSet& b) {
  const toml::node* from = bt.get("from");
  const std::string& given = b.string("from");
  if (!from) {
    diag.error(bt.get("frame") ? bt.get("frame")->source() : bt.source(),
               "[box] frame picks the frame of the file given by from; add from = \"...\" or "
               "remove frame");
    return;
  }
  if (given.empty()) {
    diag.error(from->source(), "[box] from is empty; give the file whose box the run takes");
    return;
  }
  bool clash = false;
  for (const char* key : {"lo", "hi"})
    if (const toml::node* n = bt.get(key)) {
      diag.error(n->source(), std::string("[box] gives both from and ") + key +
                                  ": the box comes from the file; remove " + key + " (or from)");
      clash = true;
    }
  if (clash) return;
  fs::path file(given);
  if (file.is_relative()) file = fs::path(sc.dir) / file;
  std::error_code ec;
  if (!fs::exists(file, ec)) {
    diag.error(from->source(), "[box] from: no such file: '" + file.string() + "'");
    return;
  }
  FileBox fb;
  std::vector<std::string> readers;
  bool found = false;
  try {
    for (const FactoryInfo* info : registry.list(PluginKind::Generator)) {
      if (!info->file_box) continue;
      readers.push_back(info->name);
      if ((found = info->file_box(file.string(), b.integer("frame"), sc.dim, fb))) break;
    }
  } catch (const Error& e) {
    diag.error(from->source(), e.what());
    return;
  }
  if (!found) {
    diag.error(from->source(), "[box] from: '" + given +
                                   "' is not a file whose box pardyn reads: a LAMMPS data file, "
                                   "a LAMMPS dump or an extended XYZ file (the generators " +
                                   quoted_list(readers) + " read their boxes)");
    return;
  }
  if (!bt.contains("boundary") && !fb.has_boundary) {
    diag.error(from->source(), "[box] from: '" + given + "' is " + fb.format +
                                   ", which does not say which axes are periodic; add boundary "
                                   "to [box], e.g. boundary = \"periodic\" (LAMMPS's boundary "
                                   "p p p)");
    return;
  }
  auto number = [](double v) {
    char buf[32];
    return std::string(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
  };
  std::string lo, hi, boundary;
  for (int d = 0; d < sc.dim; ++d) {
    sc.box.lo[d] = fb.lo[d];
    sc.box.hi[d] = fb.hi[d];
    if (!bt.contains("boundary")) sc.box.boundary[d] = fb.boundary[d];
    const char* sep = d ? ", " : "";
    lo += sep + number(fb.lo[d]);
    hi += sep + number(fb.hi[d]);
    boundary += std::string(sep) + "\"" + to_string(sc.box.boundary[d]) + "\"";
  }
  sc.notes.push_back("[box] from " + given + " (" + fb.format + "): lo = [" + lo + "], hi = [" +
                     hi + "], boundary = [" + boundary + "]");
}

// A plugin section: type = "name" plus that plugin's keys.
const FactoryInfo* ScenarioReader::plugin_section(const toml::table& t, const SectionRule& rule,
                                                  PluginSpec& out) {
  const PluginKind kind = rule.kind;
  const std::string& label = rule.label;
  const char* type_key = rule.type_key;
  const toml::source_region& where = rule.src ? *rule.src : t.source();
  out.where = diag.location(where);
  const toml::node* tn = t.get(type_key);
  std::string type = rule.default_type;
  if (tn) {
    if (auto s = tn->as_string()) type = s->get();
    else {
      diag.error(tn->source(), "'" + std::string(type_key) + "' in " + label +
                                   " must be a string naming a " + to_string(kind) + " plugin");
      return nullptr;
    }
  } else if (type.empty()) {
    std::vector<std::string> names = registry.names(kind);
    diag.error(where,
               label + " needs " + type_key + " = \"...\"; available: " + quoted_list(names));
    return nullptr;
  }
  const FactoryInfo* info = registry.find(kind, type);
  if (!info) {
    std::vector<std::string> names = registry.names(kind);
    std::string near = nearest(type, names);
    diag.error(tn ? tn->source() : where,
               "no " + std::string(to_string(kind)) + " plugin named \"" + type + "\"" +
                   (near.empty() ? "" : "; did you mean \"" + near + "\"?") + " (available: " +
                   quoted_list(names) + "; `pardyn plugins` lists them)" + registry.refused_hint());
    return nullptr;
  }
  if (const RefusedPlugin* r = registry.refused_provider(kind, type))
    diag.error(tn ? tn->source() : where, std::string(to_string(kind)) + " \"" + type +
                                              "\" is provided by " + info->library + " and by " +
                                              r->path + ", which was refused: " + r->reason);
  if (!(info->dims & dim_bit(sc.dim)))
    diag.error(tn ? tn->source() : where, std::string(to_string(kind)) + " \"" + type +
                                              "\" does not support " + std::to_string(sc.dim) +
                                              "D runs");
  if (!(info->precisions & precision_bit(sc.precision)))
    diag.error(tn ? tn->source() : where, std::string(to_string(kind)) + " \"" + type +
                                              "\" does not support precision " +
                                              to_string(sc.precision));
  Schema schema = info->schema;
  if (rule.extra_schema) schema.merge(*rule.extra_schema);
  std::set<std::string> skip = rule.extra;
  skip.insert(type_key);
  out.type = type;
  out.params = check_table(t, schema, label + " (" + type + ")", skip, diag, &where);
  out.params.base_dir = sc.dir;
  return info;
}

// [[particles]]
void ScenarioReader::read_particles() {
  int block = 0;
  for (const toml::table* t : tables_of("particles")) {
    ParticleBlock pb;
    const std::string label = "[[particles]] #" + std::to_string(++block);
    if (plugin_section(
            *t, {PluginKind::Generator, label, "", {}, &particles_common_schema(), "generator"},
            pb) &&
        diag.ok()) {
      pb.particle_type = int(pb.params.integer("type"));
      pb.temperature = pb.params.real("temperature");
      pb.uniform_velocities = pb.params.string("velocity_distribution") == "uniform";
      pb.offset = pb.params.reals("offset");
      pb.velocity = pb.params.reals("velocity");
      for (const char* key : {"offset", "velocity"}) {
        const auto& v = pb.params.reals(key);
        if (!v.empty() && int(v.size()) != sc.dim) {
          const toml::node* nd = t->get(key);
          diag.error(nd ? nd->source() : t->source(), std::string("'") + key + "' in " + label +
                                                          " has " + std::to_string(v.size()) +
                                                          " entries; a " + std::to_string(sc.dim) +
                                                          "D run needs " + std::to_string(sc.dim));
        }
      }
    }
    sc.particles.push_back(std::move(pb));
  }
  if (sc.particles.empty())
    diag.error(root.source(),
               "the scenario has no particles: add a [[particles]] section, e.g.\n"
               "    [[particles]]\n    generator = \"plummer\"\n    count = 1000");
}

// [[potential]]
void ScenarioReader::read_potentials() {
  int block = 0;
  for (const toml::table* t : tables_of("potential")) {
    PotentialSpec ps;
    const std::string label = "[[potential]] #" + std::to_string(++block);
    plugin_section(*t, {PluginKind::Potential, label, "", {"scheme"}, nullptr, "type"}, ps);
    // scheme = "name" or scheme = { type = "name", key = value, ... }
    const toml::node* sn = t->get("scheme");
    toml::table scheme_table;
    if (!sn) {
      scheme_table.insert("type", "all_pairs");
      ps.scheme_auto = true;
    } else if (auto s = sn->as_string()) {
      scheme_table.insert("type", s->get());
    } else if (auto st = sn->as_table()) {
      scheme_table = *st;
    } else {
      diag.error(sn->source(), "'scheme' in " + label +
                                   " must be a scheme name or a table { type = \"...\", ... }");
    }
    const toml::source_region scheme_src = sn ? sn->source() : t->source();
    plugin_section(
        scheme_table,
        {PluginKind::Scheme, label + " scheme", "all_pairs", {}, nullptr, "type", &scheme_src},
        ps.scheme);
    sc.potentials.push_back(std::move(ps));
  }
}

// [integrator]
void ScenarioReader::read_integrator() {
  if (plugin_section(table_of("integrator"),
                     {PluginKind::Integrator,
                      "[integrator]",
                      "leapfrog",
                      {},
                      &integrator_common_schema(),
                      "type"},
                     sc.integrator) &&
      diag.ok()) {
    sc.dt_acceleration = sc.integrator.params.string("dt_control") == "acceleration";
    sc.dt_eta = sc.integrator.params.real("dt_eta");
    sc.dt_length = sc.integrator.params.real("dt_length");
  }
}

// [[modifier]]
void ScenarioReader::read_modifiers() {
  int block = 0;
  for (const toml::table* t : tables_of("modifier")) {
    PluginSpec m;
    plugin_section(*t, {PluginKind::Modifier, "[[modifier]] #" + std::to_string(++block), "", {}},
                   m);
    sc.modifiers.push_back(std::move(m));
  }
}

// [[output]], or the default outputs when there is none.
void ScenarioReader::read_outputs() {
  int block = 0;
  for (const toml::table* t : tables_of("output")) {
    PluginSpec o;
    plugin_section(*t, {PluginKind::Observer, "[[output]] #" + std::to_string(++block), "", {}}, o);
    sc.outputs.push_back(std::move(o));
  }
  if (!root.contains("output")) {
    // No [[output]] at all: the user still gets frames for ParaView and a thermo log.
    for (const char* name : {"vtk", "thermo"}) {
      if (!registry.find(PluginKind::Observer, name)) {
        // A build without that plugin writes the other; a refused file may have been it.
        if (!registry.refused().empty())
          diag.error(root.source(), std::string("the default output \"") + name +
                                        "\" (a scenario without [[output]] has it) is missing" +
                                        registry.refused_hint());
        continue;
      }
      PluginSpec o;
      toml::table t;
      t.insert("type", name);
      plugin_section(t, {PluginKind::Observer, std::string("default output ") + name, "", {}}, o);
      sc.outputs.push_back(std::move(o));
    }
  }
}

// The resolved configuration, every default filled in. Input files (Schema::path) are recorded
// absolute: the file lives in the output folder, not beside the scenario.
toml::table resolved_table(const Scenario& sc, const ParamSet& sim, const Registry& registry) {
  toml::table out;
  toml::table s;
  put_params(s, sim);
  s.insert_or_assign("name", sc.name);
  s.insert_or_assign("output", sc.output);
  out.insert("simulation", std::move(s));
  toml::table b;
  toml::array lo, hi, bd;
  for (int d = 0; d < sc.dim; ++d) {
    lo.push_back(sc.box.lo[d]);
    hi.push_back(sc.box.hi[d]);
    bd.push_back(std::string(to_string(sc.box.boundary[d])));
  }
  b.insert("lo", std::move(lo));
  b.insert("hi", std::move(hi));
  b.insert("boundary", std::move(bd));
  out.insert("box", std::move(b));
  auto section = [&](const PluginSpec& p, PluginKind kind, const char* type_key) {
    toml::table t;
    t.insert(type_key, p.type);
    put_params(t, p.params);
    const FactoryInfo* f = registry.find(kind, p.type);
    if (!f) return t;
    const std::string base = p.params.base_dir.empty() ? sc.dir : p.params.base_dir;
    for (const auto& spec : f->schema.specs()) {
      if (spec.unit != kPathUnit || !p.params.has(spec.name)) continue;
      const fs::path given(p.params.string(spec.name));
      if (!given.empty() && given.is_relative())
        t.insert_or_assign(spec.name, (fs::absolute(base) / given).lexically_normal().string());
    }
    return t;
  };
  toml::array parts, pots, mods, outs;
  for (const auto& p : sc.particles)
    parts.push_back(section(p, PluginKind::Generator, "generator"));
  for (const auto& p : sc.potentials) {
    toml::table t = section(p, PluginKind::Potential, "type");
    t.insert_or_assign("scheme", section(p.scheme, PluginKind::Scheme, "type"));
    pots.push_back(std::move(t));
  }
  for (const auto& p : sc.modifiers) mods.push_back(section(p, PluginKind::Modifier, "type"));
  for (const auto& p : sc.outputs) outs.push_back(section(p, PluginKind::Observer, "type"));
  out.insert("particles", std::move(parts));
  if (!pots.empty()) out.insert("potential", std::move(pots));
  out.insert("integrator", section(sc.integrator, PluginKind::Integrator, "type"));
  if (!mods.empty()) out.insert("modifier", std::move(mods));
  if (!outs.empty()) out.insert("output", std::move(outs));
  return out;
}

// The scenario's path for a comment: control characters (a newline in a file name) escaped as in a
// TOML string, so that they cannot end the comment.
std::string comment_path(const std::string& path) {
  std::string shown;
  for (const char ch : fs::absolute(path).string()) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\\') shown += "\\\\";
    else if (c == '\n') shown += "\\n";
    else if (c == '\t') shown += "\\t";
    else if (c < 0x20 || c == 0x7f) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04X", c);
      shown += esc;
    } else shown += ch;
  }
  return shown;
}

}  // namespace

ScenarioError::~ScenarioError() = default;

void fill_run_info(RunInfo& run, const Scenario& sc) {
  run.dim = sc.dim;
  run.precision = sc.precision;
  run.box = sc.box;
  run.seed = sc.seed;
  run.scenario_dir = sc.dir;
  run.end_time = sc.end_time;
}

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides,
                       Registry& registry, const ScenarioSource* source) {
  Scenario sc;
  sc.path = path;
  std::error_code ec;
  if (!source && !fs::exists(path, ec)) throw Error(path + ": no such file");
  sc.dir = source ? source->dir : fs::absolute(path).parent_path().string();
  const std::string text = source ? source->text : read_scenario_file(path);
  toml::table root = parse_scenario_toml(text, path);
  for (const auto& o : overrides) apply_override(root, o);

  ScenarioReader reader{path, root, registry, sc, Diagnostics(path)};
  reader.check_sections();
  reader.diag.throw_if_any();
  const ParamSet sim = reader.read_simulation();
  reader.read_box();
  reader.read_particles();
  reader.read_potentials();
  reader.read_integrator();
  reader.read_modifiers();
  reader.read_outputs();
  reader.diag.throw_if_any();
  choose_schemes(sc, registry, parallel::world() ? parallel::world()->size() : 1);
  energy_notes(sc, registry);

  const toml::table out = resolved_table(sc, sim, registry);
  const std::string shown = comment_path(path);
  std::ostringstream os;
  os << "# Resolved configuration of " << shown << "\n"
     << "# (every key with its value; defaults filled in). Rerun with: pardyn run <this file>\n";
  os << out << "\n";
  sc.resolved_toml = os.str();
  return sc;
}

namespace {
// Every key of a TOML table as "a.b" (arrays of tables: "a[i].b") with its value as TOML text.
void flatten(const toml::table& t, const std::string& prefix,
             std::map<std::string, std::string>& out) {
  for (auto&& [k, node] : t) {
    const std::string key =
        prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
    if (const auto* sub = node.as_table()) {
      flatten(*sub, key, out);
    } else if (const auto* arr = node.as_array(); arr && arr->is_array_of_tables()) {
      for (std::size_t i = 0; i < arr->size(); ++i)
        flatten(*arr->get(i)->as_table(), key + "[" + std::to_string(i) + "]", out);
    } else {
      std::ostringstream os;
      node.visit([&](auto&& v) { os << v; });
      out[key] = os.str();
    }
  }
}
}  // namespace

std::vector<std::string> scenario_changes(const std::string& before, const std::string& after) {
  std::map<std::string, std::string> a, b;
  flatten(toml::parse(before), "", a);
  flatten(toml::parse(after), "", b);
  // What a resumed run may change without changing the dynamics: how long it runs, where and
  // what it writes, how often it reports, where plugins are found.
  auto free = [](const std::string& k) {
    static const std::set<std::string> keys = {
        "simulation.steps", "simulation.end_time",          "simulation.output",
        "simulation.name",  "simulation.progress_interval", "simulation.plugin_paths"};
    return keys.count(k) > 0 || k.rfind("output[", 0) == 0;
  };
  std::set<std::string> changed;
  for (const auto& [k, v] : a) {
    const auto it = b.find(k);
    if ((it == b.end() || it->second != v) && !free(k)) changed.insert(k);
  }
  for (const auto& [k, v] : b)
    if (!a.count(k) && !free(k)) changed.insert(k);
  return {changed.begin(), changed.end()};
}

}  // namespace pardyn
