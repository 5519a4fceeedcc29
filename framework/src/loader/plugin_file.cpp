// SPDX-License-Identifier: BSD-3-Clause
#include "plugin_file.hpp"

#include <elf.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>
#include <vector>

namespace pardyn::plugin_file {

namespace {

std::string octal(unsigned mode) {
  std::ostringstream o;
  o << std::oct << (mode & 07777);
  return o.str();
}

std::string user_name(uid_t uid) {
  struct passwd pw {};
  struct passwd* found = nullptr;
  std::vector<char> buf(4096);
  if (::getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) == 0 && found)
    return "user " + std::string(found->pw_name) + " (uid " + std::to_string(uid) + ")";
  return "uid " + std::to_string(uid);
}

std::string parent_of(const std::string& p) {
  const auto slash = p.find_last_of('/');
  if (slash == std::string::npos || slash == 0) return "/";
  return p.substr(0, slash);
}

}  // namespace

std::string untrusted(const std::string& path, const std::string& own_folder) {
  const uid_t me = ::geteuid();
  std::string p = path;
  for (;;) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0)
      return p + ": " + std::strerror(errno) + "; cannot check who may change it";
    const std::string what = p == path ? p : "its folder " + p;
    if (st.st_uid != 0 && st.st_uid != me)
      return what + " is owned by " + user_name(st.st_uid) +
             ", who is neither you nor root and can replace what pardyn loads from it; move the "
             "plugin to a folder of yours (or have root own the installation)";
    const bool above_own = p.size() < own_folder.size();
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) &&
        !(S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX) && above_own))
      return what + " is writable by " + ((st.st_mode & S_IWOTH) ? "others" : "its group") +
             " (mode " + octal(st.st_mode) +
             "); anyone who can write it can run code in pardyn. Fix with: chmod go-w " + p;
    if (p == "/") return "";
    p = parent_of(p);
  }
}

namespace {

// Reads exactly `n` bytes at `offset`, or fails.
bool read_at(int fd, std::uint64_t offset, void* out, std::size_t n) {
  char* dst = static_cast<char*>(out);
  while (n > 0) {
    const ssize_t got = ::pread(fd, dst, n, off_t(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    dst += got;
    offset += std::uint64_t(got);
    n -= std::size_t(got);
  }
  return true;
}

// [offset, offset + length) lies inside a file of `size` bytes (no overflow).
bool inside(std::uint64_t offset, std::uint64_t length, std::uint64_t size) {
  return offset <= size && length <= size - offset;
}

// The table of `count` headers H at `offset` (the program or the section headers, `what`) of a file
// of `size` bytes; where it lies past the end (the file is `truncated`) or cannot be read, `why`
// says so and the table is empty.
template <class H>
std::vector<H> read_headers(int fd, std::uint64_t offset, std::size_t count, std::uint64_t size,
                            const std::string& what, const std::string& truncated,
                            const std::string& rebuild, std::string& why) {
  const std::uint64_t bytes = std::uint64_t(count) * sizeof(H);
  if (!inside(offset, bytes, size)) {
    why = "claims " + what + " up to byte " + std::to_string(offset + bytes) + truncated;
    return {};
  }
  std::vector<H> t(count);
  if (!read_at(fd, offset, t.data(), t.size() * sizeof(H))) {
    why = "cannot read its " + what + rebuild;
    t.clear();
  }
  return t;
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

#if defined(__x86_64__)
constexpr int kMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr int kMachine = EM_AARCH64;
#elif defined(__powerpc64__)
constexpr int kMachine = EM_PPC64;
#else
constexpr int kMachine = -1;  // not checked
#endif

}  // namespace

// Long: the ELF file read in the order of its headers, each step refusing with its own reason.
Inspection inspect(const std::string& path) {
  Inspection r;
  auto fail = [&](std::string why) {
    r.problem = std::move(why);
    return r;
  };
  const std::string rebuild = "; copy or build it again";
  Fd f;
  // O_NONBLOCK: a FIFO must not block the open; it is refused below.
  f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (f.fd < 0) return fail(std::string("cannot be opened: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) return fail(std::string("cannot be read: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return fail("is not a regular file; a plugin is a shared library (.so)");
  const std::uint64_t size = std::uint64_t(st.st_size);

  Elf64_Ehdr eh{};
  if (size < sizeof eh || !read_at(f.fd, 0, &eh, sizeof eh) ||
      std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
    return fail("is not a shared library (no ELF header)" + rebuild);
  if (eh.e_ident[EI_CLASS] != ELFCLASS64)
    return fail("is not a 64-bit ELF file; pardyn loads 64-bit shared libraries only");
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (eh.e_ident[EI_DATA] != ELFDATA2LSB)
#else
  if (eh.e_ident[EI_DATA] != ELFDATA2MSB)
#endif
    return fail("is built for a machine of the other byte order; build it on this machine");
  if (eh.e_type != ET_DYN) return fail("is an ELF file but not a shared library" + rebuild);
  if (kMachine >= 0 && eh.e_machine != kMachine)
    return fail("is built for another processor (ELF machine " + std::to_string(eh.e_machine) +
                "); build it on this machine");

  // Program headers: what the dynamic loader maps. A segment past the end of the file is what makes
  // it crash (SIGBUS) on a truncated copy.
  const std::string truncated = " but the file has " + std::to_string(size) +
                                " bytes: it is incomplete (a truncated copy?)" + rebuild;
  if (eh.e_phnum == 0 || eh.e_phentsize != sizeof(Elf64_Phdr))
    return fail("has no usable program headers" + rebuild);
  std::string why;
  const auto ph = read_headers<Elf64_Phdr>(f.fd, eh.e_phoff, eh.e_phnum, size, "program headers",
                                           truncated, rebuild, why);
  if (!why.empty()) return fail(why);
  bool loadable = false;
  for (const auto& p : ph) {
    if (p.p_type == PT_LOAD) {
      loadable = true;
      if (p.p_filesz > p.p_memsz)
        return fail("has a segment larger in the file than in memory" + rebuild);
    }
    if (!inside(p.p_offset, p.p_filesz, size))
      return fail("claims a segment up to byte " + std::to_string(p.p_offset + p.p_filesz) +
                  truncated);
  }
  if (!loadable) return fail("has no loadable segment" + rebuild);

  // Section headers: where the stamp and the exported symbols are.
  if (eh.e_shoff == 0 || eh.e_shnum == 0)
    return fail("has no section headers, so its stamp cannot be read" + rebuild);
  if (eh.e_shentsize != sizeof(Elf64_Shdr))
    return fail("has section headers of an unknown size" + rebuild);
  const auto sh = read_headers<Elf64_Shdr>(f.fd, eh.e_shoff, eh.e_shnum, size, "section headers",
                                           truncated, rebuild, why);
  if (!why.empty()) return fail(why);
  for (const auto& s : sh)
    if (s.sh_type != SHT_NOBITS && !inside(s.sh_offset, s.sh_size, size))
      return fail("claims a section up to byte " + std::to_string(s.sh_offset + s.sh_size) +
                  truncated);
  if (eh.e_shstrndx == SHN_UNDEF || eh.e_shstrndx >= sh.size())
    return fail("has no table of section names" + rebuild);

  // Every table read below lies inside the file (checked above); their sizes are bounded by it.
  auto table = [&](const Elf64_Shdr& s, std::vector<char>& out) {
    out.assign(std::size_t(s.sh_size) + 1, '\0');  // NUL after the end: names stay inside
    return s.sh_size == 0 || read_at(f.fd, s.sh_offset, out.data(), std::size_t(s.sh_size));
  };
  std::vector<char> names;
  if (!table(sh[eh.e_shstrndx], names)) return fail("cannot read its section names" + rebuild);
  auto name_of = [](const std::vector<char>& strings, std::uint32_t at) -> const char* {
    return at < strings.size() ? strings.data() + at : "";
  };

  const Elf64_Shdr* stamp = nullptr;
  const Elf64_Shdr* dynsym = nullptr;
  for (const auto& s : sh) {
    if (std::strcmp(name_of(names, s.sh_name), kStampSection) == 0) {
      if (stamp) return fail(std::string("has two sections ") + kStampSection + rebuild);
      stamp = &s;
    }
    if (s.sh_type == SHT_DYNSYM) dynsym = &s;
  }
  const std::string not_plugin =
      "not a pardyn plugin: it has no pardyn stamp (a plugin ends with PARDYN_PLUGIN(register_fn) "
      "or "
      "PARDYN_PAIR_POTENTIAL_PLUGIN; a plugin built for an older pardyn: rebuild it against this "
      "one)";
  if (!stamp || stamp->sh_type == SHT_NOBITS) return fail(not_plugin);
  if (stamp->sh_size != sizeof(PluginStamp))
    return fail(
        "has a pardyn stamp of " + std::to_string(stamp->sh_size) + " bytes, this pardyn reads " +
        std::to_string(sizeof(PluginStamp)) +
        " (one PARDYN_PLUGIN per library; built for another pardyn: rebuild it against this "
        "one)");
  if (!read_at(f.fd, stamp->sh_offset, &r.stamp, sizeof r.stamp))
    return fail("cannot read its pardyn stamp" + rebuild);
  auto terminated = [](const char* s, std::size_t n) { return std::memchr(s, '\0', n) != nullptr; };
  const PluginStamp& t = r.stamp;
  if (!terminated(t.magic, sizeof t.magic) || std::strcmp(t.magic, kStampMagic) != 0 ||
      !terminated(t.pardyn_version, sizeof t.pardyn_version) ||
      !terminated(t.build_id, sizeof t.build_id) ||
      !terminated(t.cuda_archs, sizeof t.cuda_archs) || !terminated(t.name, sizeof t.name))
    return fail("has a damaged pardyn stamp" + rebuild);

  // The descriptor the loader calls once the file is loaded must be exported.
  if (!dynsym || dynsym->sh_entsize != sizeof(Elf64_Sym) || dynsym->sh_link >= sh.size())
    return fail("exports no symbols" + rebuild);
  std::vector<char> dynstr;
  if (!table(sh[dynsym->sh_link], dynstr)) return fail("cannot read its symbol names" + rebuild);
  const std::size_t count = std::size_t(dynsym->sh_size / sizeof(Elf64_Sym));
  std::vector<Elf64_Sym> syms(count);
  if (count && !read_at(f.fd, dynsym->sh_offset, syms.data(), count * sizeof(Elf64_Sym)))
    return fail("cannot read its symbols" + rebuild);
  bool descriptor = false;
  for (const auto& s : syms)
    if (s.st_shndx != SHN_UNDEF && std::strcmp(name_of(dynstr, s.st_name), kDescriptorSymbol) == 0)
      descriptor = true;
  if (!descriptor)
    return fail(std::string("not a pardyn plugin: it has a pardyn stamp but exports no '") +
                kDescriptorSymbol + "'" + rebuild);
  return r;
}

}  // namespace pardyn::plugin_file
