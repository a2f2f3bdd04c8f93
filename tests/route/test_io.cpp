#include <H5Cpp.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "catch.hpp"
#include "cisa/errors.hpp"
#include "helpers.hpp"

using namespace cisa::route;

namespace {
std::filesystem::path temp_file(const std::string& name) {
  return std::filesystem::temp_directory_path() /
         ("cisa_route_" + std::to_string(::getpid()) + "_" + name);
}
}  // namespace

TEST_CASE("activations: HDF5 round trip", "[route]") {
  SyntheticConfig cfg;
  cfg.tokens = 512;
  cfg.positions = 8;
  cfg.q_heads = 4;
  cfg.kv_heads = 2;
  cfg.head_dim = 16;
  cfg.needles = 2;
  cfg.needle_min_age = 4;
  LayerActivations a = make_synthetic(cfg);
  cfg.layer = 3;
  cfg.with_projection = false;
  LayerActivations b = make_synthetic(cfg);
  const auto path = temp_file("rt.h5");
  write_activations(path, {&a, &b}, 16);
  const ActivationsInfo info = read_activations_info(path);
  CHECK(info.chunk_tokens == 16);
  CHECK(info.layers == std::vector<int>{0, 3});
  const LayerActivations a2 = read_layer(path, 0);
  CHECK(a2.q == a.q);
  CHECK(a2.k == a.k);
  CHECK(a2.positions == a.positions);
  CHECK(a2.x == a.x);
  CHECK(a2.w_q == a.w_q);
  CHECK(a2.hidden == a.hidden);
  const LayerActivations b2 = read_layer(path, 3);
  CHECK(b2.layer == 3);
  CHECK(!b2.has_projection());
  CHECK_THROWS_AS(read_layer(path, 1), cisa::InputError);
  std::filesystem::remove(path);
}

TEST_CASE("activations: bf16 (uint16) datasets and default positions", "[route]") {
  const auto path = temp_file("bf16.h5");
  {
    H5::H5File f(path.string(), H5F_ACC_TRUNC);
    H5::Group g = f.createGroup("layers").createGroup("0");
    auto bf16 = [](float v) {
      std::uint32_t u;
      std::memcpy(&u, &v, sizeof u);
      return static_cast<std::uint16_t>(u >> 16);
    };
    const std::vector<std::uint16_t> q = {bf16(1.0f), bf16(-2.0f)};          // [2, 1, 1]
    const std::vector<std::uint16_t> k = {bf16(0.5f), bf16(1.5f), bf16(-0.25f)};  // [3, 1, 1]
    hsize_t qd[3] = {2, 1, 1}, kd[3] = {3, 1, 1};
    g.createDataSet("q", H5::PredType::NATIVE_UINT16, H5::DataSpace(3, qd)).write(q.data(), H5::PredType::NATIVE_UINT16);
    g.createDataSet("k", H5::PredType::NATIVE_UINT16, H5::DataSpace(3, kd)).write(k.data(), H5::PredType::NATIVE_UINT16);
  }
  const LayerActivations a = read_layer(path, 0);
  CHECK(a.q == std::vector<float>{1.0f, -2.0f});
  CHECK(a.k == std::vector<float>{0.5f, 1.5f, -0.25f});
  CHECK(a.positions == std::vector<std::int64_t>{1, 2});  // the last two tokens
  CHECK(read_activations_info(path).chunk_tokens == 16);
  std::filesystem::remove(path);
}

TEST_CASE("activations: bad input names file and field", "[route]") {
  try {
    read_activations_info(temp_file("missing.h5"));
    FAIL("no error");
  } catch (const cisa::InputError& e) {
    CHECK(std::string(e.what()).find("missing.h5") != std::string::npos);
  }
  const auto path = temp_file("bad.h5");
  {
    H5::H5File f(path.string(), H5F_ACC_TRUNC);
    H5::Group g = f.createGroup("layers").createGroup("0");
    std::vector<float> q(6, 1.0f);
    hsize_t qd[3] = {2, 3, 1};
    g.createDataSet("q", H5::PredType::NATIVE_FLOAT, H5::DataSpace(3, qd)).write(q.data(), H5::PredType::NATIVE_FLOAT);
  }
  try {
    read_layer(path, 0);
    FAIL("no error");
  } catch (const cisa::InputError& e) {
    CHECK(e.where().field == "layers/0/k");
    CHECK(e.where().file == path.string());
  }
  {
    H5::H5File f(path.string(), H5F_ACC_RDWR);
    H5::Group g = f.openGroup("layers/0");
    std::vector<float> k(4, 1.0f);
    hsize_t kd[3] = {2, 2, 1};  // 3 q heads over 2 kv heads: not a multiple
    g.createDataSet("k", H5::PredType::NATIVE_FLOAT, H5::DataSpace(3, kd)).write(k.data(), H5::PredType::NATIVE_FLOAT);
  }
  try {
    read_layer(path, 0);
    FAIL("no error");
  } catch (const cisa::InputError& e) {
    CHECK(e.where().field == "layers/0/q");
  }
  std::filesystem::remove(path);
}
