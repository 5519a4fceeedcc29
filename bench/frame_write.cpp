// SPDX-License-Identifier: BSD-3-Clause
// Time to write one VTK frame of N particles with the `vtk` output plugin, per compression setting:
// the work its background thread must finish between two frames for the stepping never to wait.
//
//   bench_frame_write [N]      (default 262144)
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>

#include "pardyn/app/config.hpp"
#include "pardyn/app/registry.hpp"

using namespace pardyn;

int main(int argc, char** argv) {
  const std::size_t n = argc > 1 ? std::stoul(argv[1]) : 262144;
  Registry reg;
  reg.load_default();
  reg.throw_if_refused();
  const FactoryInfo* info = reg.find(PluginKind::Observer, "vtk");
  if (!info) throw Error("no vtk plugin");
  auto hp = std::make_shared<HostParticles>(3);
  hp->resize(n);
  std::mt19937_64 rng(1);
  std::normal_distribution<double> g;
  for (std::size_t i = 0; i < n; ++i) {
    for (int d = 0; d < 3; ++d) hp->x[d][i] = g(rng), hp->v[d][i] = g(rng), hp->a[d][i] = g(rng);
    hp->mass[i] = 1.0 / n, hp->epot[i] = g(rng), hp->type[i] = 0, hp->id[i] = std::int64_t(i);
  }
  Thermo t;
  const std::string dir = (std::filesystem::temp_directory_path() / "pardyn-frame-bench").string();
  std::printf("one frame of %zu particles (3D, float arrays):\n", n);
  for (const char* settings :
       {"compress = false", "compressor = \"lz4\"", "compressor = \"zlib\"\ncompression_level = 1",
        "compressor = \"zlib\"\ncompression_level = 5"}) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    RunInfo run;
    run.precision = Precision::Float;
    run.output_dir = dir;
    auto obs = reg.make_observer("vtk", parse_params(info->schema, settings, "bench"), run);
    obs->begin(run);
    const int frames = 4;
    const auto t0 = std::chrono::steady_clock::now();
    for (int f = 0; f < frames; ++f) {
      ObserveContext ctx{std::uint64_t(f), double(f), &run, hp.get(), &t, hp};
      obs->observe(ctx);
    }
    obs->end();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto bytes =
        std::filesystem::file_size(std::filesystem::path(dir) / "frames" / "000000.vtp");
    std::string label(settings);
    for (auto& c : label)
      if (c == '\n') c = ' ';
    std::printf("  %-42s %7.1f ms per frame, %6.1f MB per file\n", label.c_str(), 1e3 * s / frames,
                bytes / 1e6);
  }
  std::filesystem::remove_all(dir);
}
