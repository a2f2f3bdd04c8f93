// cisa-sim route end to end through cmd_route (the CLI entry point), exit codes included.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "catch.hpp"
#include "cisa/write_hdf5.hpp"
#include "cli/commands.hpp"
#include "route/route.hpp"

namespace {
int run(std::vector<std::string> args) {
  args.insert(args.begin(), "route");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return cisa::cli::cmd_route(static_cast<int>(argv.size()), argv.data());
}
std::string tmp(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("cisa_route_cli_" + std::to_string(::getpid()) + "_" + name)).string();
}
}  // namespace

TEST_CASE("cli: synthetic run writes routing/curve/init tables and exports", "[route][cli]") {
  const std::string out = tmp("out.h5"), acts = tmp("acts.h5"), idx = tmp("idx.h5"), sum = tmp("sum.txt");
  REQUIRE(run({"--synthetic", "--tokens", "4096", "--positions", "40", "--q-heads", "8", "--kv-heads", "2",
               "--head-dim", "32", "--budget", "8,32", "--G", "1,4", "--window", "16", "--out", out,
               "--write-activations", acts, "--export-index", idx, "--summary", sum}) == 0);
  const cisa::Table routing = cisa::read_hdf5_group(out, "routing");
  CHECK(routing.rows() == 2u * 2u * (1u + 8u));
  REQUIRE(routing.find("recall_mean") != nullptr);
  REQUIRE(routing.find("qshare_overlap") != nullptr);
  CHECK(cisa::read_hdf5_group(out, "init").rows() == 2u * 5u);
  CHECK(cisa::read_hdf5_group(out, "curve").rows() > 0u);
  const cisa::Attributes at = cisa::read_hdf5_attributes(out);
  CHECK(at.count("tool_version") == 1);
  CHECK(at.count("git_hash") == 1);
  CHECK(std::filesystem::exists(sum));
  CHECK(std::filesystem::exists(idx));

  // The written activations read back and give the same tables.
  const std::string out2 = tmp("out2.h5");
  REQUIRE(run({"--activations", acts, "--budget", "8,32", "--G", "1,4", "--window", "16", "--out", out2}) == 0);
  const cisa::Table r2 = cisa::read_hdf5_group(out2, "routing");
  const auto& a = std::get<std::vector<double>>(routing.find("recall_mean")->data);
  const auto& b = std::get<std::vector<double>>(r2.find("recall_mean")->data);
  CHECK(a == b);
  // Several rules share one page mass: rows for every (rep, aggregation) pair.
  const std::string out3 = tmp("out3.h5");
  REQUIRE(run({"--activations", acts, "--budget", "8", "--G", "4", "--window", "16", "--rep", "mean,minmax",
               "--aggregation", "sum,max,last", "--out", out3}) == 0);
  const cisa::Table r3 = cisa::read_hdf5_group(out3, "routing");
  CHECK(r3.rows() == 6u * (1u + 8u));
  const auto& rules = std::get<std::vector<std::string>>(r3.find("aggregation")->data);
  CHECK(std::count(rules.begin(), rules.end(), "max") == 2 * 9);
  CHECK(cisa::read_hdf5_group(out3, "init").rows() == 2u * 2u * 5u);  // per (rep, group, candidate)
  for (const auto& f : {out, acts, idx, sum, out2, out3}) std::filesystem::remove(f);
}

TEST_CASE("cli: bad input exits 2", "[route][cli]") {
  CHECK(run({"--activations", tmp("does-not-exist.h5"), "--out", tmp("x.h5")}) == 2);
  CHECK(run({"--out", tmp("x.h5")}) == 2);  // neither --activations nor --synthetic
  CHECK(run({"--synthetic", "--tokens", "2048", "--budget", "0"}) == 2);
  CHECK(run({"--synthetic", "--tokens", "2048", "--rep", "median"}) == 2);
  CHECK(run({"--synthetic", "--tokens", "2048", "--indexer", "head9"}) == 2);
  CHECK(run({"--synthetic", "--no-such-option"}) == 2);
  CHECK(run({"--synthetic", "--tokens", "2048", "--chunk", "0"}) == 2);
  CHECK(run({"--synthetic", "--tokens", "2048", "--indexer", "best"}) == 2);
  CHECK(!std::filesystem::exists(tmp("x.h5")));
}
