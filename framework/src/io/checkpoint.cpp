// SPDX-License-Identifier: BSD-3-Clause
#include "checkpoint.hpp"

#include <fcntl.h>
#include <hdf5.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <regex>
#include <sstream>

#include "pardyn/output.hpp"

namespace fs = std::filesystem;

namespace pardyn::checkpoint {

namespace {

constexpr std::size_t kUserBlock = 512;
const char kMagic[] = "PARDYN-CHECKPOINT\n";

// HDF5 prints its own error stack to stderr unless told not to: pardyn reports errors itself.
void quiet_hdf5() {
  static const bool once = [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return true;
  }();
  (void)once;
}

// An HDF5 identifier closed on scope exit.
class Id {
 public:
  Id() = default;
  Id(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  Id(Id&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = -1; }
  Id& operator=(Id&& o) noexcept {
    reset();
    id_ = o.id_;
    close_ = o.close_;
    o.id_ = -1;
    return *this;
  }
  ~Id() { reset(); }
  void reset() {
    if (id_ >= 0 && close_) close_(id_);
    id_ = -1;
  }
  operator hid_t() const { return id_; }
  bool ok() const { return id_ >= 0; }

 private:
  hid_t id_ = -1;
  herr_t (*close_)(hid_t) = nullptr;
};

// ---------------------------------------------------------------------------------------------------
// Writing.
class Writer {
 public:
  explicit Writer(std::string path) : path_(std::move(path)) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw Error("checkpoint " + path_ + ": cannot " + what + " (HDF5 error; disk full?)");
  }
  void check(herr_t e, const std::string& what) const {
    if (e < 0) fail(what);
  }

  Id group(hid_t loc, const std::string& name) {
    Id lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
    H5Pset_create_intermediate_group(lcpl, 1);
    Id g(H5Gcreate2(loc, name.c_str(), lcpl, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    if (!g.ok()) fail("create group " + name);
    return g;
  }

  void attr(hid_t loc, const std::string& name, hid_t ftype, hid_t mtype, const void* v,
            hsize_t n = 0) {
    Id sp(n == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, nullptr), H5Sclose);
    Id a(H5Acreate2(loc, name.c_str(), ftype, sp, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
    if (!a.ok()) fail("create attribute " + name);
    check(H5Awrite(a, mtype, v), "write attribute " + name);
  }
  void attr(hid_t loc, const std::string& name, double v) {
    attr(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &v);
  }
  void attr(hid_t loc, const std::string& name, std::int64_t v) {
    attr(loc, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &v);
  }
  void attr(hid_t loc, const std::string& name, const std::vector<double>& v) {
    attr(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, v.data(), v.size());
  }
  void attr(hid_t loc, const std::string& name, const std::vector<std::int64_t>& v) {
    attr(loc, name, H5T_STD_I64LE, H5T_NATIVE_INT64, v.data(), v.size());
  }
  void attr(hid_t loc, const std::string& name, const std::string& v) {
    strings(loc, name, {v}, true);
  }
  void strings(hid_t loc, const std::string& name, const std::vector<std::string>& v,
               bool scalar = false) {
    Id t(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    std::vector<const char*> p;
    for (const auto& s : v) p.push_back(s.c_str());
    attr(loc, name, t, t, p.data(), scalar ? 0 : hsize_t(v.size()));
  }
  void text(hid_t loc, const std::string& name, const std::string& v) {
    Id t(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    Id sp(H5Screate(H5S_SCALAR), H5Sclose);
    Id d(H5Dcreate2(loc, name.c_str(), t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose);
    if (!d.ok()) fail("create dataset " + name);
    const char* p = v.c_str();
    check(H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, &p), "write dataset " + name);
  }
  void dataset(hid_t loc, const std::string& name, hid_t ftype, hid_t mtype,
               const std::vector<hsize_t>& dims, const void* data) {
    Id sp(H5Screate_simple(int(dims.size()), dims.data(), nullptr), H5Sclose);
    Id d(H5Dcreate2(loc, name.c_str(), ftype, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose);
    if (!d.ok()) fail("create dataset " + name);
    check(H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), "write dataset " + name);
  }
  // Reals in the run's precision (float values were floats: converting back is exact).
  void reals(hid_t loc, const std::string& name, Precision p, const std::vector<hsize_t>& dims,
             const std::vector<double>& v) {
    if (p == Precision::Double) {
      dataset(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, dims, v.data());
      return;
    }
    std::vector<float> f(v.begin(), v.end());
    dataset(loc, name, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, dims, f.data());
  }

 private:
  std::string path_;
};

// H5MD's time-dependent element: step, time and value [1, N, dim].
void h5md_element(Writer& w, hid_t parent, const std::string& name, const Data& d,
                  const std::vector<double> (&comp)[3]) {
  Id g = w.group(parent, name);
  const std::size_t n = d.particles.size();
  const std::int64_t step = std::int64_t(d.step);
  w.dataset(g, "step", H5T_STD_I64LE, H5T_NATIVE_INT64, {1}, &step);
  w.dataset(g, "time", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {1}, &d.time);
  std::vector<double> v(n * std::size_t(d.dim));
  for (std::size_t i = 0; i < n; ++i)
    for (int c = 0; c < d.dim; ++c) v[i * std::size_t(d.dim) + std::size_t(c)] = comp[c][i];
  w.reals(g, "value", d.precision, {1, hsize_t(n), hsize_t(d.dim)}, v);
}

void write_state(Writer& w, hid_t parent, const std::string& name, const PluginState& s,
                 const Data& d) {
  Id g = w.group(parent, name);
  w.attr(g, "type", s.type);
  Id r = w.group(g, "reals");
  for (const auto& [k, v] : s.reals) w.attr(r, k, v);
  Id i = w.group(g, "integers");
  for (const auto& [k, v] : s.integers) w.attr(i, k, v);
  Id vs = w.group(g, "vectors");
  const hsize_t n = d.particles.size();
  for (const auto& [k, v] : s.vectors) w.reals(vs, k, d.precision, {hsize_t(2 * d.dim), n}, v);
}

std::uint32_t crc_of(std::FILE* f, std::size_t from, std::size_t to, const std::string& path) {
  std::vector<unsigned char> buf(std::size_t(1) << 24);
  uLong crc = crc32_z(0L, Z_NULL, 0);
  if (std::fseek(f, long(from), SEEK_SET) != 0)
    throw Error("checkpoint " + path + ": cannot seek: " + std::strerror(errno));
  std::size_t left = to - from;
  while (left > 0) {
    const std::size_t want = std::min(left, buf.size());
    const std::size_t got = std::fread(buf.data(), 1, want, f);
    if (got != want) throw Error("checkpoint " + path + ": read error: " + std::strerror(errno));
    crc = crc32_z(crc, buf.data(), got);
    left -= got;
  }
  return std::uint32_t(crc);
}

std::size_t file_size(const std::string& path) {
  std::error_code ec;
  const auto s = fs::file_size(path, ec);
  if (ec) throw Error("checkpoint " + path + ": " + ec.message());
  return std::size_t(s);
}

void fsync_dir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

// ---------------------------------------------------------------------------------------------------
// Reading.
class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw Error("checkpoint " + path_ + ": " + what);
  }

  bool exists(hid_t loc, const std::string& name) const {
    // Each part of a path must exist before the next is asked about.
    std::string sofar;
    std::stringstream ss(name);
    std::string part;
    while (std::getline(ss, part, '/')) {
      sofar += (sofar.empty() ? "" : "/") + part;
      if (H5Lexists(loc, sofar.c_str(), H5P_DEFAULT) <= 0) return false;
    }
    return true;
  }
  Id group(hid_t loc, const std::string& name) const {
    if (!exists(loc, name)) fail("no group '" + name + "' (not a pardyn checkpoint, or damaged)");
    Id g(H5Gopen2(loc, name.c_str(), H5P_DEFAULT), H5Gclose);
    if (!g.ok()) fail("'" + name + "' is not a group");
    return g;
  }
  Id attribute(hid_t loc, const std::string& name, hsize_t n, bool scalar) const {
    if (H5Aexists(loc, name.c_str()) <= 0) fail("attribute '" + name + "' is missing");
    Id a(H5Aopen(loc, name.c_str(), H5P_DEFAULT), H5Aclose);
    if (!a.ok()) fail("cannot open attribute '" + name + "'");
    Id sp(H5Aget_space(a), H5Sclose);
    const hssize_t got = H5Sget_simple_extent_npoints(sp);
    const bool is_scalar = H5Sget_simple_extent_type(sp) == H5S_SCALAR;
    if (got != hssize_t(n) || (scalar && !is_scalar))
      fail("attribute '" + name + "' has " + std::to_string(got) + " values, expected " +
           std::to_string(n));
    return a;
  }
  double real(hid_t loc, const std::string& name) const {
    Id a = attribute(loc, name, 1, true);
    Id t(H5Aget_type(a), H5Tclose);
    if (H5Tget_class(t) != H5T_FLOAT) fail("attribute '" + name + "' is not a real number");
    double v = 0;
    if (H5Aread(a, H5T_NATIVE_DOUBLE, &v) < 0) fail("cannot read attribute '" + name + "'");
    return v;
  }
  std::int64_t integer(hid_t loc, const std::string& name) const {
    Id a = attribute(loc, name, 1, true);
    Id t(H5Aget_type(a), H5Tclose);
    if (H5Tget_class(t) != H5T_INTEGER) fail("attribute '" + name + "' is not an integer");
    std::int64_t v = 0;
    if (H5Aread(a, H5T_NATIVE_INT64, &v) < 0) fail("cannot read attribute '" + name + "'");
    return v;
  }
  std::vector<double> reals(hid_t loc, const std::string& name, hsize_t n) const {
    Id a = attribute(loc, name, n, false);
    std::vector<double> v(n);
    if (H5Aread(a, H5T_NATIVE_DOUBLE, v.data()) < 0) fail("cannot read attribute '" + name + "'");
    return v;
  }
  std::vector<std::int64_t> integers(hid_t loc, const std::string& name, hsize_t n) const {
    Id a = attribute(loc, name, n, false);
    Id t(H5Aget_type(a), H5Tclose);
    if (H5Tget_class(t) != H5T_INTEGER) fail("attribute '" + name + "' is not an integer array");
    std::vector<std::int64_t> v(n);
    if (H5Aread(a, H5T_NATIVE_INT64, v.data()) < 0) fail("cannot read attribute '" + name + "'");
    return v;
  }
  std::string string(hid_t loc, const std::string& name) const {
    Id a = attribute(loc, name, 1, true);
    Id t(H5Aget_type(a), H5Tclose);
    if (H5Tget_class(t) != H5T_STRING || H5Tis_variable_str(t) <= 0)
      fail("attribute '" + name + "' is not a text");
    Id mt(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(mt, H5T_VARIABLE);
    H5Tset_cset(mt, H5T_CSET_UTF8);
    char* p = nullptr;
    if (H5Aread(a, mt, &p) < 0 || !p) fail("cannot read attribute '" + name + "'");
    std::string s(p);
    H5free_memory(p);
    return s;
  }
  std::string text(hid_t loc, const std::string& name) const {
    if (!exists(loc, name)) fail("dataset '" + name + "' is missing");
    Id d(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), H5Dclose);
    if (!d.ok()) fail("cannot open dataset '" + name + "'");
    Id t(H5Dget_type(d), H5Tclose);
    Id sp(H5Dget_space(d), H5Sclose);
    if (H5Tget_class(t) != H5T_STRING || H5Tis_variable_str(t) <= 0 ||
        H5Sget_simple_extent_type(sp) != H5S_SCALAR)
      fail("dataset '" + name + "' is not a text");
    Id mt(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(mt, H5T_VARIABLE);
    H5Tset_cset(mt, H5T_CSET_UTF8);
    char* p = nullptr;
    if (H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, &p) < 0 || !p)
      fail("cannot read dataset '" + name + "'");
    std::string s(p);
    H5free_memory(p);
    return s;
  }
  // A numeric dataset of exactly `dims`, read as `mtype` into `out` (sized by the caller).
  void dataset(hid_t loc, const std::string& name, const std::vector<hsize_t>& dims, hid_t mtype,
               H5T_class_t cls, void* out) const {
    if (!exists(loc, name)) fail("dataset '" + name + "' is missing");
    Id d(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), H5Dclose);
    if (!d.ok()) fail("cannot open dataset '" + name + "'");
    Id t(H5Dget_type(d), H5Tclose);
    if (H5Tget_class(t) != cls) fail("dataset '" + name + "' has the wrong type");
    Id sp(H5Dget_space(d), H5Sclose);
    const int rank = H5Sget_simple_extent_ndims(sp);
    std::vector<hsize_t> got(std::size_t(std::max(rank, 0)));
    if (rank != int(dims.size()) || H5Sget_simple_extent_dims(sp, got.data(), nullptr) < 0 ||
        got != dims) {
      std::string want, have;
      for (auto v : dims) want += (want.empty() ? "" : " x ") + std::to_string(v);
      for (auto v : got) have += (have.empty() ? "" : " x ") + std::to_string(v);
      fail("dataset '" + name + "' has shape " + (have.empty() ? "()" : have) + ", expected " +
           want);
    }
    if (H5Dread(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) < 0)
      fail("cannot read dataset '" + name + "'");
  }
  std::vector<double> real_dataset(hid_t loc, const std::string& name,
                                   const std::vector<hsize_t>& dims) const {
    hsize_t n = 1;
    for (auto v : dims) n *= v;
    std::vector<double> v(n);
    dataset(loc, name, dims, H5T_NATIVE_DOUBLE, H5T_FLOAT, v.data());
    return v;
  }
  // Names of the attributes (or links) of a group.
  std::vector<std::string> attribute_names(hid_t loc) const {
    std::vector<std::string> names;
    hsize_t idx = 0;
    const herr_t e = H5Aiterate2(
        loc, H5_INDEX_NAME, H5_ITER_INC, &idx,
        [](hid_t, const char* name, const H5A_info_t*, void* op) -> herr_t {
          static_cast<std::vector<std::string>*>(op)->emplace_back(name);
          return 0;
        },
        &names);
    if (e < 0) fail("cannot list attributes");
    return names;
  }
  std::vector<std::string> link_names(hid_t loc) const {
    std::vector<std::string> names;
    H5G_info_t info;
    if (H5Gget_info(loc, &info) < 0) fail("cannot list a group");
    for (hsize_t k = 0; k < info.nlinks; ++k) {
      char buf[256];
      const ssize_t len =
          H5Lget_name_by_idx(loc, ".", H5_INDEX_NAME, H5_ITER_INC, k, buf, sizeof buf, H5P_DEFAULT);
      if (len < 0 || len >= ssize_t(sizeof buf)) fail("cannot read a dataset's name");
      names.emplace_back(buf, std::size_t(len));
    }
    return names;
  }

 private:
  std::string path_;
};

PluginState read_state(const Reader& r, hid_t parent, const std::string& name, const Data& d) {
  PluginState s;
  Id g = r.group(parent, name);
  s.type = r.string(g, "type");
  Id reals = r.group(g, "reals");
  for (const auto& k : r.attribute_names(reals)) s.reals[k] = r.real(reals, k);
  Id ints = r.group(g, "integers");
  for (const auto& k : r.attribute_names(ints)) s.integers[k] = r.integer(ints, k);
  Id vs = r.group(g, "vectors");
  for (const auto& k : r.link_names(vs))
    s.vectors[k] = r.real_dataset(vs, k, {hsize_t(2 * d.dim), hsize_t(d.particles.size())});
  return s;
}

// The user block: "key value" lines after the magic line.
std::map<std::string, std::string> read_header(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw Error("checkpoint " + path + ": cannot open: " + std::strerror(errno));
  char buf[kUserBlock];
  const std::size_t got = std::fread(buf, 1, kUserBlock, f);
  std::fclose(f);
  const std::size_t magic = sizeof kMagic - 1;
  if (got < magic || std::memcmp(buf, kMagic, magic) != 0)
    throw Error("checkpoint " + path + ": not a pardyn checkpoint (it does not begin with the " +
                "PARDYN-CHECKPOINT header)");
  if (got < kUserBlock)
    throw Error("checkpoint " + path + ": truncated: " + std::to_string(got) +
                " bytes, not even its header");
  std::map<std::string, std::string> h;
  std::string text(buf + magic, std::find(buf + magic, buf + kUserBlock, '\0'));
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) {
    const auto sp = line.find(' ');
    if (sp == std::string::npos) continue;
    h[line.substr(0, sp)] = line.substr(sp + 1);
  }
  return h;
}

std::uint64_t header_number(const std::map<std::string, std::string>& h, const std::string& key,
                            const std::string& path, int base = 10) {
  const auto it = h.find(key);
  if (it == h.end())
    throw Error("checkpoint " + path + ": its header lacks '" + key + "' (damaged)");
  const std::string& v = it->second;
  if (v.empty() || v.size() > 20)
    throw Error("checkpoint " + path + ": bad '" + key + "' in its header");
  std::size_t pos = 0;
  std::uint64_t x = 0;
  try {
    x = std::stoull(v, &pos, base);
  } catch (const std::exception&) {
    pos = 0;
  }
  if (pos != v.size()) throw Error("checkpoint " + path + ": bad '" + key + "' in its header");
  return x;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
std::string path_for(const std::string& run_dir, std::uint64_t step) {
  char name[64];
  std::snprintf(name, sizeof name, "checkpoint-%012llu.h5", (unsigned long long)step);
  return (fs::path(run_dir) / "checkpoints" / name).string();
}

// Long: the file's whole layout written group by group, to read side by side with read().
void write(const std::string& path, const Data& d) {
  quiet_hdf5();
  make_directories(fs::path(path).parent_path().string());
  const std::string tmp = temp_path_for(path);
  try {
    Writer w(tmp);
    {
      Id fcpl(H5Pcreate(H5P_FILE_CREATE), H5Pclose);
      w.check(H5Pset_userblock(fcpl, kUserBlock), "set the user block");
      Id f(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, fcpl, H5P_DEFAULT), H5Fclose);
      if (!f.ok()) throw Error("checkpoint: cannot create " + tmp + ": " + std::strerror(errno));
      const std::size_t n = d.particles.size();
      const HostParticles& p = d.particles;

      // H5MD's metadata.
      {
        Id h5md = w.group(f, "h5md");
        w.attr(h5md, "version", H5T_STD_I32LE, H5T_NATIVE_INT, std::vector<int>{1, 1}.data(), 2);
        Id author = w.group(h5md, "author");
        const char* user = std::getenv("USER");
        w.attr(author, "name", std::string(user && *user ? user : "unknown"));
        Id creator = w.group(h5md, "creator");
        w.attr(creator, "name", std::string("pardyn"));
        w.attr(creator, "version", d.pardyn_version);
      }
      // H5MD's particle group: the box, the time-dependent elements, the fixed per-particle data.
      {
        Id all = w.group(f, "particles/all");
        Id box = w.group(all, "box");
        const int dim = d.dim;
        w.attr(box, "dimension", H5T_STD_I32LE, H5T_NATIVE_INT, &dim);
        std::vector<std::string> boundary;
        std::vector<double> edges, lo, hi;
        for (int c = 0; c < dim; ++c) {
          boundary.push_back(d.box.boundary[c] == Boundary::Periodic ? "periodic" : "none");
          edges.push_back(d.box.length(c));
          lo.push_back(d.box.lo[c]);
          hi.push_back(d.box.hi[c]);
        }
        w.strings(box, "boundary", boundary);
        w.dataset(box, "edges", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {hsize_t(dim)}, edges.data());
        std::vector<std::string> kinds;
        for (int c = 0; c < dim; ++c) kinds.push_back(to_string(d.box.boundary[c]));
        w.strings(box, "pardyn_boundary", kinds);
        w.attr(box, "pardyn_lo", lo);
        w.attr(box, "pardyn_hi", hi);
        h5md_element(w, all, "position", d, p.x);
        h5md_element(w, all, "velocity", d, p.v);
        h5md_element(w, all, "acceleration", d, p.a);
        w.reals(all, "mass", d.precision, {hsize_t(n)}, p.mass);
        w.dataset(all, "species", H5T_STD_I32LE, H5T_NATIVE_INT32, {hsize_t(n)}, p.type.data());
        w.dataset(all, "id", H5T_STD_I64LE, H5T_NATIVE_INT64, {hsize_t(n)}, p.id.data());
        // H5MD's image: the periodic image counts, (n, dim); x + image * edges is unwrapped.
        std::vector<std::int32_t> image(n * std::size_t(dim), 0);
        for (int c = 0; c < dim; ++c)
          if (p.image[c].size() == n)
            for (std::size_t i = 0; i < n; ++i)
              image[i * std::size_t(dim) + std::size_t(c)] = p.image[c][i];
        w.dataset(all, "image", H5T_STD_I32LE, H5T_NATIVE_INT32, {hsize_t(n), hsize_t(dim)},
                  image.data());
      }
      // pardyn's own: the run, the step, the plugins' states.
      {
        Id g = w.group(f, "pardyn");
        w.attr(g, "format", std::int64_t(d.format));
        w.attr(g, "pardyn_version", d.pardyn_version);
        w.attr(g, "build_id", d.build_id);
        w.attr(g, "plugin_abi", std::int64_t(d.plugin_abi));
        w.attr(g, "reason", d.reason);
        w.attr(g, "scenario_path", d.scenario_path);
        w.attr(g, "scenario_dir", d.scenario_dir);
        w.attr(g, "output_dir", d.output_dir);
        w.attr(g, "dimension", std::int64_t(d.dim));
        w.attr(g, "precision", std::string(to_string(d.precision)));
        w.attr(g, "backend", d.backend);
        w.attr(g, "threads", std::int64_t(d.threads));
        w.attr(g, "ranks", std::int64_t(d.ranks));
        std::vector<std::int64_t> counts(d.rank_counts.begin(), d.rank_counts.end());
        w.attr(g, "rank_counts", counts);
        w.attr(g, "particles", std::int64_t(n));
        w.attr(g, "step", std::int64_t(d.step));
        w.attr(g, "time", d.time);
        w.attr(g, "last_dt", d.last_dt);
        w.attr(g, "force_evaluations", std::int64_t(d.force_evaluations));
        w.attr(g, "last_finite_step", std::int64_t(d.last_finite_step));
        w.attr(g, "have_e0", std::int64_t(d.have_e0 ? 1 : 0));
        w.attr(g, "e0", d.e0);
        w.attr(g, "com0", std::vector<double>(d.com0, d.com0 + 3));
        w.text(g, "scenario", d.scenario_toml);
        Id labels = w.group(g, "labels");
        for (const auto& [name, values] : p.labels)
          w.dataset(labels, name, H5T_STD_I32LE, H5T_NATIVE_INT32, {hsize_t(n)}, values.data());
        write_state(w, g, "integrator", d.integrator, d);
        Id mods = w.group(g, "modifiers");
        w.attr(mods, "count", std::int64_t(d.modifiers.size()));
        for (std::size_t k = 0; k < d.modifiers.size(); ++k)
          write_state(w, mods, std::to_string(k), d.modifiers[k], d);
        Id schemes = w.group(g, "schemes");
        w.attr(schemes, "count", std::int64_t(d.schemes.size()));
        for (std::size_t k = 0; k < d.schemes.size(); ++k)
          write_state(w, schemes, std::to_string(k), d.schemes[k], d);
      }
      if (H5Fflush(f, H5F_SCOPE_GLOBAL) < 0) w.fail("flush the file");
    }
    // The user block: the header and the CRC of everything after it.
    std::FILE* fp = std::fopen(tmp.c_str(), "r+b");
    if (!fp) throw Error("checkpoint: cannot reopen " + tmp + ": " + std::strerror(errno));
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> guard(fp, std::fclose);
    const std::size_t size = file_size(tmp);
    const std::uint32_t crc = crc_of(fp, kUserBlock, size, tmp);
    char head[kUserBlock] = {};
    std::snprintf(head, sizeof head,
                  "%sformat %d\nbytes %zu\ncrc32 %08x\nstep %llu\npardyn %s\n"
                  "An HDF5 file (H5MD layout) after this %zu-byte user block: h5dump, h5py and "
                  "h5ls read it. docs/checkpoints.md describes it.\n",
                  kMagic, d.format, size, crc, (unsigned long long)d.step, d.pardyn_version.c_str(),
                  kUserBlock);
    if (std::fseek(fp, 0, SEEK_SET) != 0 || std::fwrite(head, 1, kUserBlock, fp) != kUserBlock ||
        std::fflush(fp) != 0 || ::fsync(::fileno(fp)) != 0)
      throw Error("checkpoint: cannot write the header of " + tmp + ": " + std::strerror(errno) +
                  " (disk full?)");
    guard.reset();
    commit_file(tmp, path);
    fsync_dir(fs::path(path).parent_path().string());
  } catch (...) {
    std::error_code ec;
    fs::remove(tmp, ec);
    throw;
  }
}

void verify(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    throw Error("checkpoint " + path + ": " +
                (fs::exists(path, ec) ? "not a regular file" : "no such file"));
  const auto h = read_header(path);
  const std::uint64_t format = header_number(h, "format", path);
  if (format != std::uint64_t(kFormat))
    throw Error("checkpoint " + path + ": format " + std::to_string(format) +
                ", but this pardyn reads format " + std::to_string(kFormat) +
                " (written by pardyn " + (h.count("pardyn") ? h.at("pardyn") : "?") +
                "); resume it with that version");
  const std::uint64_t bytes = header_number(h, "bytes", path);
  const std::uint64_t crc = header_number(h, "crc32", path, 16);
  const std::size_t size = file_size(path);
  if (size < bytes)
    throw Error("checkpoint " + path + ": truncated: " + std::to_string(size) + " of " +
                std::to_string(bytes) + " bytes (was the copy or the disk cut short?)");
  if (size > bytes)
    throw Error("checkpoint " + path + ": " + std::to_string(size - bytes) +
                " bytes more than its header says (" + std::to_string(bytes) + "): damaged");
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw Error("checkpoint " + path + ": cannot open: " + std::strerror(errno));
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> guard(f, std::fclose);
  const std::uint32_t got = crc_of(f, kUserBlock, size, path);
  if (got != crc) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "CRC-32 %08x, but its header says %08llx", got,
                  (unsigned long long)crc);
    throw Error("checkpoint " + path + ": damaged: " + buf);
  }
}

// Long: the file's layout read group by group, the mirror of write() above.
Data read(const std::string& path) {
  verify(path);
  quiet_hdf5();
  Reader r(path);
  if (H5Fis_hdf5(path.c_str()) <= 0) r.fail("not an HDF5 file after its header");
  Id f(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!f.ok()) r.fail("HDF5 cannot open it");
  Data d;
  Id g = r.group(f, "pardyn");
  d.format = int(r.integer(g, "format"));
  if (d.format != kFormat)
    r.fail("format " + std::to_string(d.format) + ", but this pardyn reads format " +
           std::to_string(kFormat));
  d.pardyn_version = r.string(g, "pardyn_version");
  d.build_id = r.string(g, "build_id");
  d.plugin_abi = std::uint32_t(r.integer(g, "plugin_abi"));
  d.reason = r.string(g, "reason");
  d.scenario_path = r.string(g, "scenario_path");
  d.scenario_dir = r.string(g, "scenario_dir");
  d.output_dir = r.string(g, "output_dir");
  const std::int64_t dim = r.integer(g, "dimension");
  if (dim != 2 && dim != 3) r.fail("dimension " + std::to_string(dim) + " (2 or 3)");
  d.dim = int(dim);
  const std::string prec = r.string(g, "precision");
  if (prec != "float" && prec != "double") r.fail("precision '" + prec + "'");
  d.precision = prec == "float" ? Precision::Float : Precision::Double;
  d.backend = r.string(g, "backend");
  d.threads = int(r.integer(g, "threads"));
  const std::int64_t ranks = r.integer(g, "ranks");
  if (ranks < 1 || ranks > (1 << 24)) r.fail("ranks = " + std::to_string(ranks));
  d.ranks = int(ranks);
  const std::int64_t n = r.integer(g, "particles");
  if (n < 1 || n > (std::int64_t(1) << 40)) r.fail("particles = " + std::to_string(n));
  std::uint64_t total = 0;
  for (std::int64_t c : r.integers(g, "rank_counts", hsize_t(ranks))) {
    if (c < 0) r.fail("a negative particle count in rank_counts");
    d.rank_counts.push_back(std::uint64_t(c));
    total += std::uint64_t(c);
  }
  if (total != std::uint64_t(n))
    r.fail("rank_counts add up to " + std::to_string(total) + ", not " + std::to_string(n));
  const std::int64_t step = r.integer(g, "step");
  if (step < 0) r.fail("step " + std::to_string(step));
  d.step = std::uint64_t(step);
  d.time = r.real(g, "time");
  d.last_dt = r.real(g, "last_dt");
  d.force_evaluations = std::uint64_t(r.integer(g, "force_evaluations"));
  d.last_finite_step = std::uint64_t(r.integer(g, "last_finite_step"));
  d.have_e0 = r.integer(g, "have_e0") != 0;
  d.e0 = r.real(g, "e0");
  const auto com0 = r.reals(g, "com0", 3);
  std::copy(com0.begin(), com0.end(), d.com0);
  d.scenario_toml = r.text(g, "scenario");

  // The box (H5MD) and the particles.
  Id all = r.group(f, "particles/all");
  Id box = r.group(all, "box");
  const auto lo = r.reals(box, "pardyn_lo", hsize_t(d.dim));
  const auto hi = r.reals(box, "pardyn_hi", hsize_t(d.dim));
  for (int c = 0; c < d.dim; ++c) {
    d.box.lo[c] = lo[std::size_t(c)];
    d.box.hi[c] = hi[std::size_t(c)];
  }
  HostParticles& p = d.particles;
  p.dim = d.dim;
  p.resize(std::size_t(n));
  auto element = [&](const char* name, std::vector<double>(&comp)[3]) {
    Id e = r.group(all, name);
    const auto v = r.real_dataset(e, "value", {1, hsize_t(n), hsize_t(d.dim)});
    for (int c = 0; c < d.dim; ++c) {
      comp[c].resize(std::size_t(n));
      for (std::size_t i = 0; i < std::size_t(n); ++i)
        comp[c][i] = v[i * std::size_t(d.dim) + std::size_t(c)];
    }
  };
  element("position", p.x);
  element("velocity", p.v);
  element("acceleration", p.a);
  p.mass = r.real_dataset(all, "mass", {hsize_t(n)});
  r.dataset(all, "species", {hsize_t(n)}, H5T_NATIVE_INT32, H5T_INTEGER, p.type.data());
  r.dataset(all, "id", {hsize_t(n)}, H5T_NATIVE_INT64, H5T_INTEGER, p.id.data());
  // Image counts (checkpoints written before they were kept have none: zero, as at the start).
  if (r.exists(all, "image")) {
    std::vector<std::int32_t> image(std::size_t(n) * std::size_t(d.dim));
    r.dataset(all, "image", {hsize_t(n), hsize_t(d.dim)}, H5T_NATIVE_INT32, H5T_INTEGER,
              image.data());
    for (int c = 0; c < d.dim; ++c)
      for (std::size_t i = 0; i < std::size_t(n); ++i)
        p.image[c][i] = image[i * std::size_t(d.dim) + std::size_t(c)];
  }
  Id labels = r.group(g, "labels");
  for (const auto& name : r.link_names(labels)) {
    std::vector<std::int32_t> v(static_cast<std::size_t>(n));
    r.dataset(labels, name, {hsize_t(n)}, H5T_NATIVE_INT32, H5T_INTEGER, v.data());
    p.labels.emplace_back(name, std::move(v));
  }
  d.integrator = read_state(r, g, "integrator", d);
  Id mods = r.group(g, "modifiers");
  const std::int64_t count = r.integer(mods, "count");
  if (count < 0 || count > 1024) r.fail("modifiers count " + std::to_string(count));
  for (std::int64_t k = 0; k < count; ++k)
    d.modifiers.push_back(read_state(r, mods, std::to_string(k), d));
  Id schemes = r.group(g, "schemes");
  const std::int64_t nschemes = r.integer(schemes, "count");
  if (nschemes < 0 || nschemes > 1024) r.fail("schemes count " + std::to_string(nschemes));
  for (std::int64_t k = 0; k < nschemes; ++k)
    d.schemes.push_back(read_state(r, schemes, std::to_string(k), d));
  return d;
}

std::vector<std::pair<std::uint64_t, std::string>> list(const std::string& run_dir) {
  std::vector<std::pair<std::uint64_t, std::string>> out;
  const fs::path dir = fs::path(run_dir) / "checkpoints";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  static const std::regex name(R"(checkpoint-([0-9]{1,19})\.h5)");
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::smatch m;
    const std::string file = e.path().filename().string();
    if (!std::regex_match(file, m, name)) continue;
    out.emplace_back(std::stoull(m[1].str()), e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string run_folder(const std::string& dir) {
  std::error_code ec;
  const fs::path d = fs::path(dir).lexically_normal();
  if (!fs::is_directory(d / "checkpoints", ec) && d.filename() == "checkpoints")
    return d.parent_path().string();
  return dir;
}

std::string find(const std::string& where, std::vector<std::string>* skipped) {
  std::error_code ec;
  if (where.empty()) throw Error("--resume needs a checkpoint file or a run's output folder");
  if (!fs::exists(where, ec)) throw Error("--resume " + where + ": no such file or folder");
  if (!fs::is_directory(where, ec)) {
    verify(where);
    return where;
  }
  const fs::path run_dir = run_folder(where);
  const auto files = list(run_dir.string());
  if (files.empty())
    throw Error("--resume " + where + ": no checkpoint in " + (run_dir / "checkpoints").string() +
                " (a run writes checkpoints when its scenario has an [[output]] with "
                "type = \"checkpoint\"; docs/checkpoints.md)");
  std::string reasons;
  for (auto it = files.rbegin(); it != files.rend(); ++it) {
    try {
      verify(it->second);
      return it->second;
    } catch (const Error& e) {
      if (skipped) skipped->push_back(e.what());
      reasons += std::string("\n  ") + e.what();
    }
  }
  throw Error("--resume " + where + ": no checkpoint there is intact:" + reasons);
}

}  // namespace pardyn::checkpoint
