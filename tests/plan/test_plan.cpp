// Deployment planner (issue 5): hand-computed memory, sharding, the representative overhead,
// memory limits, steady-state formulas, scenario errors and the HDF5 /plan columns.
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "catch.hpp"
#include "model/pricing.hpp"
#include "cisa/presets.hpp"
#include "cisa/errors.hpp"
#include "cisa/presets.hpp"
#include "cisa/write_hdf5.hpp"
#include "plan/deploy.hpp"
#include "plan/perf.hpp"
#include "plan/plan.hpp"

using namespace cisa;
using namespace cisa::plan;

namespace {

PlanScenario scenario_from_text(const std::string& text, const std::vector<std::string>& sets = {}) {
  return parse_plan_scenario(parse_yaml(text, "test.yaml"), sets);
}

std::string error_of(const std::string& text) {
  try {
    (void)scenario_from_text(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

namespace {
PointPricing test_pricing(const std::string& card, const std::string& dense, const std::string& cisa, Basis basis) {
  Pricer pricer(shipped_cards(), shipped_impls(), basis);
  Point p;
  p.hardware = card;
  p.dense_impl = dense;
  p.cisa_impl = cisa;
  return pricer.for_point(p);
}
}  // namespace

TEST_CASE("Llama-3.1-70B BF16 K/V bytes per token: 80 x 8 x 128 x 2 x 2 = 327,680", "[plan][memory]") {
  const DeployModel m = deploy_preset("llama3_1_70b");
  CHECK(kv_bytes_per_token_global(m, 1, Dtype::bf16) == 327680.0);
  // TP8: one KV head per rank, the model's K/V split evenly over 8 GPUs.
  CHECK(kv_bytes_per_token_global(m, 8, Dtype::bf16) == 40960.0);
  CHECK(kv_bytes_per_token_global(m, 2, Dtype::bf16) == 163840.0);
  CHECK(kv_bytes_per_token_global(m, 1, Dtype::fp8) == 163840.0);
  // one sequence of 4,096 tokens (256 full pages) at TP1
  CHECK(kv_bytes_per_seq(m, 1, Dtype::bf16, 4096, 16) == 327680.0 * 4096);
  // a partly filled page still takes a whole page
  CHECK(kv_bytes_per_seq(m, 1, Dtype::bf16, 4097, 16) == 327680.0 * (4096 + 16));
}

TEST_CASE("KV heads are replicated when TP > KV heads", "[plan][memory][sharding]") {
  const DeployModel llama = deploy_preset("llama3_1_70b");  // 8 KV heads
  const double per_gpu_tp8 = kv_bytes_per_token_global(llama, 8, Dtype::bf16);
  const double per_gpu_tp16 = kv_bytes_per_token_global(llama, 16, Dtype::bf16);
  CHECK(per_gpu_tp16 == per_gpu_tp8);  // not halved: each rank keeps one whole KV head
  CHECK(per_gpu_tp16 * 16 == 2 * 327680.0);  // the deployment stores the K/V twice
  const DeployModel ultra = deploy_preset("nemotron3_ultra");  // 2 KV heads
  CHECK(kv_bytes_per_token_global(ultra, 1, Dtype::bf16) == 12.0 * 2 * 128 * 2 * 2);  // 12 KiB (CALC)
  CHECK(kv_bytes_per_token_global(ultra, 2, Dtype::bf16) == 6144.0);
  CHECK(kv_bytes_per_token_global(ultra, 4, Dtype::bf16) == 6144.0);  // replicated
  CHECK(kv_bytes_per_token_global(ultra, 8, Dtype::bf16) == 6144.0);
  // replicated K/V projections: weights of k/v do not shrink beyond tp = kv_heads
  const double w4 = weight_bytes_per_gpu(llama, {8, 1, 1}, WeightDtype::bf16);
  const double w16 = weight_bytes_per_gpu(llama, {16, 1, 1}, WeightDtype::bf16);
  const double kv_proj_per_rank = 80.0 * 2 * 8192 * 128 * 2;  // one KV head's Wk, Wv per layer, BF16
  // halving everything but the replicated K/V projections and the two norms per layer
  CHECK(w16 == Approx(w4 / 2 + kv_proj_per_rank / 2 + 80.0 * 2 * 8192 * 2 / 2).epsilon(1e-9));
}

TEST_CASE("Representatives take 1/(2c) = 1/32 of K+V at equal dims", "[plan][memory][cisa]") {
  for (const char* name : {"llama3_1_70b", "nemotron3_ultra", "nemotron3_nano"}) {
    const DeployModel m = deploy_preset(name);
    for (int tp : {1, 2, 8}) {
      if (static_cast<int>(m.attn.q_heads.value) % tp != 0) continue;
      CacheShape cs;  // c = 16, d_r = d, bf16
      const std::int64_t L = 1 << 20;
      const double kv = kv_bytes_per_token_global(m, tp, Dtype::bf16) * L;
      CHECK(rep_bytes_per_seq(m, tp, L, cs) / kv == Approx(1.0 / 32).epsilon(1e-12));
      cs.minmax = true;
      CHECK(rep_bytes_per_seq(m, tp, L, cs) / kv == Approx(1.0 / 16).epsilon(1e-12));
    }
  }
  // only full chunks have a representative
  const DeployModel m = deploy_preset("llama3_1_70b");
  CHECK(rep_bytes_per_seq(m, 1, 15, CacheShape{}) == 0.0);
  CHECK(rep_bytes_per_seq(m, 1, 31, CacheShape{}) == 80.0 * 8 * 128 * 2);
}

TEST_CASE("Parameter counts from the layer shapes match the published CALC figures", "[plan][params]") {
  struct Want {
    const char* name;
    double total_b, active_b;
  };
  for (const Want& w : {Want{"nemotron3_ultra", 549.3, 56.1}, Want{"nemotron3_nano", 31.58, 3.58},
                        Want{"llama3_1_70b", 70.55, 70.55}, Want{"llama3_1_8b", 8.03, 8.03},
                        Want{"qwen2_5_72b", 72.71, 72.71}, Want{"mixtral_8x7b", 46.70, 12.88}}) {
    INFO(w.name);
    const ParamCounts p = count_params(deploy_preset(w.name));
    CHECK(p.total() / 1e9 == Approx(w.total_b).epsilon(0.003));
    CHECK(p.active() / 1e9 == Approx(w.active_b).epsilon(0.005));
  }
  // Inkling-Small loads (its MoE shape is an estimate, labelled EST in the file)
  const DeployModel ink = deploy_preset("inkling_small");
  CHECK(ink.count(LayerType::global_attention) == 7);
  CHECK(ink.count(LayerType::sliding_attention) == 35);
}

TEST_CASE("SSM state per sequence: Nano 2 MiB + 36 KiB per Mamba layer, Ultra 8 MiB SSM", "[plan][memory]") {
  const DeployModel nano = deploy_preset("nemotron3_nano");
  CHECK(ssm_bytes_per_seq(nano, 1) == 23.0 * (2 * 1024 * 1024 + 36 * 1024));
  const DeployModel ultra = deploy_preset("nemotron3_ultra");
  const double conv = (16384.0 + 2 * 8 * 128) * 3 * 2;
  CHECK(ssm_bytes_per_seq(ultra, 2) == 48.0 * (8.0 * 1024 * 1024 + conv) / 2);
  const DeployModel llama = deploy_preset("llama3_1_70b");
  CHECK(ssm_bytes_per_seq(llama, 8) == 0.0);
}

TEST_CASE("Sliding-window layers hold at most their window", "[plan][memory]") {
  const DeployModel ink = deploy_preset("inkling_small");  // 7 global + 35 sliding (window 4,096)
  const double per_layer_token = 1 * 128 * 2 * 2.0;        // TP8: one KV head per rank
  const double at_1m = kv_bytes_per_seq(ink, 8, Dtype::bf16, 1 << 20, 16);
  CHECK(at_1m == 7 * per_layer_token * (1 << 20) + 35 * per_layer_token * (4096 + 16));
  const double short_seq = kv_bytes_per_seq(ink, 8, Dtype::bf16, 1000, 16);
  CHECK(short_seq == 42 * per_layer_token * 1008);
}

TEST_CASE("Memory limits reject a configuration with a clear message", "[plan][memory]") {
  const Hardware b300 = gpu_preset("b300");
  const DeployModel ultra = deploy_preset("nemotron3_ultra");
  const MemoryPlan bf16 = plan_memory(ultra, {2, 1, 1}, b300, WeightDtype::bf16, Dtype::bf16, CacheShape{}, 1 << 20, MemoryOptions{});
  CHECK_FALSE(bf16.weights_fit);
  CHECK(bf16.max_seqs_dense == 0);
  CHECK(contains(bf16.reason, "does not fit: weights"));
  CHECK(contains(bf16.reason, "exceed the 270.0 GB of HBM per GPU"));
  CHECK(contains(bf16.reason, "raise tp/ep"));
  // FP8 with experts over 4 GPUs fits; concurrency is consistent with the bytes
  const MemoryPlan fp8 = plan_memory(ultra, {2, 2, 4}, b300, WeightDtype::fp8, Dtype::bf16, CacheShape{}, (1 << 20) + 4096, MemoryOptions{});
  REQUIRE(fp8.weights_fit);
  CHECK(fp8.max_seqs_dense >= 1);
  CHECK(static_cast<double>(fp8.max_seqs_dense) * fp8.seq_dense() <= fp8.free_for_cache);
  CHECK(static_cast<double>(fp8.max_seqs_dense + 1) * fp8.seq_dense() > fp8.free_for_cache);
  CHECK(fp8.max_seqs_cisa <= fp8.max_seqs_dense);
  // Weights fit but not one sequence: Llama-3.1-70B BF16 on 2 x H200 at 2M tokens
  const DeployModel llama = deploy_preset("llama3_1_70b");
  const MemoryPlan longseq = plan_memory(llama, {2, 1, 1}, gpu_preset("h200_sxm"), WeightDtype::bf16, Dtype::bf16, CacheShape{},
                                         std::int64_t{2} << 20, MemoryOptions{});
  CHECK(longseq.weights_fit);
  CHECK(longseq.max_seqs_dense == 0);
  CHECK(contains(longseq.reason, "does not fit: one sequence"));
  // invalid sharding is refused
  CHECK_THROWS_AS(plan_memory(llama, {3, 1, 1}, gpu_preset("h200_sxm"), WeightDtype::bf16, Dtype::bf16, CacheShape{}, 1024,
                              MemoryOptions{}),
                  std::invalid_argument);
  CHECK_THROWS_AS(validate_parallel(ultra, {2, 2, 3}), std::invalid_argument);
  CHECK_THROWS_AS(validate_parallel(llama, {2, 2, 4}), std::invalid_argument);  // ep without MoE
}

TEST_CASE("Weights per GPU: hand count for Llama-3.1-70B at TP8 and expert sharding", "[plan][memory][sharding]") {
  const DeployModel llama = deploy_preset("llama3_1_70b");
  const double h = 8192, per_layer = 2 * h * 8192 / 8 + 2 * h * 128 + h + 3 * h * 28672 / 8 + h;
  const double want = (80 * per_layer + 2 * 128256 * h / 8) * 2;
  CHECK(weight_bytes_per_gpu(llama, {8, 1, 1}, WeightDtype::bf16) == Approx(want).epsilon(1e-12));
  CHECK(weight_bytes_per_gpu(llama, {8, 1, 1}, WeightDtype::fp8) == Approx(want / 2).epsilon(1e-12));
  CHECK(weight_bytes_per_gpu(llama, {8, 1, 1}, WeightDtype::nvfp4) == Approx(want * 0.5625 / 2).epsilon(1e-12));
  const DeployModel ultra = deploy_preset("nemotron3_ultra");
  double e_tp2 = 0, e_ep4 = 0;
  weight_bytes_per_gpu(ultra, {2, 2, 1}, WeightDtype::fp8, &e_tp2);
  weight_bytes_per_gpu(ultra, {2, 2, 4}, WeightDtype::fp8, &e_ep4);
  CHECK(e_ep4 == Approx(e_tp2 / 2).epsilon(1e-12));
  CHECK(e_tp2 == Approx(48.0 * 512 * 2 * 2048 * 5120 / 2).epsilon(1e-12));
}

TEST_CASE("Steady-state throughput and loaded TPOT agree", "[plan][perf]") {
  const double pf = 2.0, step = 0.03;
  const int B = 16;
  const std::int64_t O = 4096;
  const double tps = replica_tokens_per_s(pf, step, B, O);
  CHECK(tps == Approx(B / loaded_tpot_s(pf, step, B, O)).epsilon(1e-12));
  CHECK(tps == Approx(4096.0 / (2.0 + 4096 * 0.03 / 16)).epsilon(1e-12));
  CHECK(std::isnan(replica_tokens_per_s(pf, step, 0, O)));
}

TEST_CASE("Step times: CISA cuts global attention, the rest is shared; TP1 has no all-reduce", "[plan][perf]") {
  const DeployModel ultra = deploy_preset("nemotron3_ultra");
  const Hardware hw = gpu_preset("b300");
  PerfInputs in;
  in.model = &ultra;
  in.hw = &hw;
  in.rates = card_rates(hw, Basis::calibrated);
  const PointPricing pricing = test_pricing("b300", "cudnn", "fa4", Basis::calibrated);  // contiguous K/V: no page visits
  in.pricing = &pricing;
  in.par = {2, 2, 4};
  in.weights = WeightDtype::fp8;
  in.cisa.budget_chunks = 4096;
  in.cisa.qshare_g = 4;
  const StepTimes dec = decode_step(in, 8, (1 << 20) + 2048);
  CHECK(dec.attn_global_cisa < dec.attn_global_dense / 3);  // FA4 paged decode with its EST page-visit cost
  CHECK(dec.cisa() < dec.dense());
  CHECK(dec.dense() - dec.cisa() == Approx(dec.attn_global_dense - dec.attn_global_cisa));
  CHECK(dec.comm > 0);
  // dense decode attention is K/V-read bound: 12 layers x 8 seqs x 6 KiB/token x history / BW,
  // x 1.5: cuDNN runs two work items of 16 heads per KV group of 32, and at the point half of the
  // second item's reads come from DRAM (models/impl/cudnn.yaml, decode_tiles)
  const double kv_bytes = 1.5 * 12.0 * 8 * 512 * ((1 << 20) + 2048);
  CHECK(dec.attn_global_dense == Approx(kv_bytes / pricing.dense[0][1].rates.attention_read_Bps).epsilon(0.1));
  const StepTimes pre = prefill_sequence(in, 1 << 20, 8192);
  CHECK(pre.attn_global_cisa < pre.attn_global_dense / 3);
  CHECK(pre.layers > 0);
  in.par = {1, 4, 4};
  CHECK(allreduce_time(in, 1e6) == 0.0);
  // more tokens per decode step never reads fewer weights
  in.par = {2, 2, 1};
  CHECK(layer_time(in, 64, 64, 64).weight_bytes >= layer_time(in, 1, 1, 1).weight_bytes);
}

TEST_CASE("The shipped Ultra B300 plan: dense vs CISA at the paper's deployment", "[plan][scenario]") {
  const PlanScenario sc = load_plan_scenario(std::string(CISA_SOURCE_DIR) + "/scenarios/plan_ultra_b300.yaml", {});
  REQUIRE(sc.configs.size() > 1);
  const PlanConfig& base = sc.configs.front();
  CHECK(base.par.tp == 2);
  CHECK(base.par.dp == 2);
  CHECK(base.context == (1 << 20));
  CHECK(sc.output_tokens == 4096);
  CHECK(base.budget == 4096);
  CHECK(base.G == 4);
  const auto rows = evaluate_plan(sc);
  const PlanRow& r = rows.front();
  REQUIRE(r.fits_dense);
  REQUIRE(r.fits_cisa);
  CHECK(r.batch_cisa <= r.batch_dense);
  CHECK(r.ttft_s_cisa < r.ttft_s_dense);
  CHECK(r.decode_step_s_cisa < r.decode_step_s_dense);
  CHECK(r.speedup > 1.0);
  CHECK(r.speedup == Approx(r.tokens_per_s_per_gpu_cisa / r.tokens_per_s_per_gpu_dense));
  CHECK(std::isnan(r.speedup_adj));  // no R given
  // every gpus-constrained row uses 4 GPUs; at least one row on each Pareto front
  bool pd = false, pc = false;
  for (const auto& row : rows) {
    CHECK(row.cfg.par.gpus() == 4);
    pd = pd || row.pareto_dense;
    pc = pc || row.pareto_cisa;
    if (row.pareto_cisa) CHECK(row.feasible_cisa);
  }
  CHECK(pd);
  CHECK(pc);
  // with R given, S_adj = S / R
  const PlanScenario sc2 = load_plan_scenario(std::string(CISA_SOURCE_DIR) + "/scenarios/plan_ultra_b300.yaml",
                                              {"workload.output_length_ratio=1.25", "search={}"});
  const auto rows2 = evaluate_plan(sc2);
  CHECK(rows2.front().speedup_adj == Approx(rows2.front().speedup / 1.25));
}

TEST_CASE("Plan writes /plan with the documented columns", "[plan][hdf5]") {
  const PlanScenario sc =
      load_plan_scenario(std::string(CISA_SOURCE_DIR) + "/scenarios/plan_llama70b_h200.yaml", {"search.batch=[8,max]"});
  const auto rows = evaluate_plan(sc);
  const Table t = plan_table(sc, rows);
  const std::filesystem::path out = std::filesystem::path(PLAN_TEST_OUT) / "plan_columns.h5";
  write_hdf5(out, {{"plan", &t}}, plan_attributes(sc, "test"));
  const Table back = read_hdf5_group(out, "plan");
  CHECK(back.rows() == rows.size());
  for (const char* col : {"context_tokens", "max_concurrency_dense", "max_concurrency_cisa", "tokens_per_s_per_gpu_dense",
                          "tokens_per_s_per_gpu_cisa", "ttft_ms_dense", "ttft_ms_cisa", "tpot_ms_dense", "tpot_ms_cisa", "tpot_interleaved_ms_cisa", "tokens_per_s_per_user_cisa",
                          "mem_weights_bytes", "kv_bytes_per_seq", "rep_bytes_per_seq", "speedup_throughput",
                          "speedup_throughput_adj", "pareto_dense", "pareto_cisa"}) {
    INFO(col);
    const Column* c = back.find(col);
    REQUIRE(c != nullptr);
    CHECK_FALSE(c->unit.empty());
    CHECK_FALSE(c->description.empty());
  }
  const auto attrs = read_hdf5_attributes(out);
  CHECK(attrs.count("scenario_yaml"));
  CHECK(attrs.count("deploy_model_yaml"));
  // Llama TP8 per-GPU K/V per token in the file
  const auto& kvt = std::get<std::vector<double>>(back.find("kv_bytes_per_token")->data);
  CHECK(kvt.front() == 40960.0);
  // context mix concurrency is reported and larger than at the long context
  const auto& mix = std::get<std::vector<double>>(back.find("max_concurrency_mix_dense")->data);
  const auto& mc = std::get<std::vector<std::int64_t>>(back.find("max_concurrency_dense")->data);
  CHECK(mix.front() > static_cast<double>(mc.front()));
}

TEST_CASE("Plan scenario errors name file:line and the field", "[plan][scenario]") {
  const std::string head = "name: t\nmodel: llama3_1_70b\nhardware: h200_sxm\n";
  CHECK(contains(error_of(head + "parallel: {tp: 8}\nworkload: {contxt: 1M}\n"), "did you mean 'context'"));
  CHECK(contains(error_of(head + "parallel: {tp: 8}\nworkload: {contxt: 1M}\n"), "test.yaml:5"));
  CHECK(contains(error_of(head + "parallel: {tp: 3}\n"), "tp=3"));
  CHECK(contains(error_of(head + "weights: int3\n"), "bf16, fp8 or nvfp4"));
  CHECK(contains(error_of("name: t\nmodel: llama3_1_7b\nhardware: h200_sxm\n"), "did you mean 'llama3_1_70b'"));
  CHECK(contains(error_of(head + "workload: {batch: 0}\n"), "workload.batch"));
  CHECK(contains(error_of(head + "cisa: {G: 16}\nworkload: {prefill_chunk: 8}\n"), "exceeds the prefill chunk"));
  CHECK(contains(error_of(head + "search: {tp: []}\n"), "non-empty list"));
  CHECK(contains(error_of(head + "parallel: {tp: 8, ep: 2}\n"), "ep > 1 needs MoE"));
  // search combinations that cannot shard are skipped and counted, not errors
  const PlanScenario sc = scenario_from_text(head + "parallel: {tp: 8}\nsearch: {tp: [3, 8, 16]}\n");
  CHECK(sc.skipped == 1);
  CHECK(sc.configs.size() == 2);
}

TEST_CASE("Deployment model files: layer types and errors", "[plan][deploy]") {
  auto parse = [](const std::string& text) {
    const YamlDoc doc = parse_yaml(text, "m.yaml");
    return parse_deploy_model(doc, doc.root, "");
  };
  const std::string base = "name: x\nattention_preset: llama3_1_8b\nvocab: 1000\n";
  const DeployModel m = parse(base + "layers:\n  - {type: global_attention, count: 2}\n  - {type: mlp, count: 2, intermediate: 64}\n");
  CHECK(m.count(LayerType::global_attention) == 2);
  CHECK_THROWS_AS(parse(base + "layers:\n  - {type: conv, count: 2}\n"), InputError);
  CHECK_THROWS_AS(parse(base + "layers:\n  - {type: mlp, count: 2, intermediate: 64}\n"), InputError);  // no attention
  CHECK_THROWS_AS(parse(base + "layers:\n  - {type: moe, count: 1, experts: 4, active: 8, intermediate: 4}\n"), InputError);
  CHECK_THROWS_AS(parse(base + "layers:\n  - {type: global_attention, count: -1}\n"), InputError);
  CHECK_THROWS_AS(parse(base + "layres: []\n"), InputError);
  CHECK(deploy_preset_names().size() >= 7);
}

TEST_CASE("search.zip varies context and budget together; Pareto fronts are per context", "[plan][scenario]") {
  const std::string head = "name: t\nmodel: llama3_1_8b\nhardware: h200_sxm\nparallel: {tp: 1}\n";
  const PlanScenario sc =
      scenario_from_text(head + "search:\n  batch: [1, 4, max]\n  zip: {context: [8K, 32K], budget: [64, 256]}\n");
  std::set<std::pair<std::int64_t, std::int64_t>> pairs;
  for (const auto& c : sc.configs) pairs.insert({c.context, c.budget});
  CHECK(pairs.count({8192, 64}) == 1);
  CHECK(pairs.count({32768, 256}) == 1);
  CHECK(pairs.count({8192, 256}) == 0);
  const auto rows = evaluate_plan(sc);
  std::map<std::int64_t, int> fronts;
  for (const auto& r : rows)
    if (r.pareto_cisa) ++fronts[r.cfg.context];
  CHECK(fronts[8192] >= 1);
  CHECK(fronts[32768] >= 1);
  CHECK(contains(error_of(head + "search:\n  zip: {context: [8K, 32K], budget: [64]}\n"), "equal lengths"));
  CHECK(contains(error_of(head + "search:\n  budget: [64]\n  zip: {budget: [64]}\n"), "both under search and search.zip"));
}

TEST_CASE("A batch-1 decode step reads every weight but the input embedding once", "[plan][perf]") {
  const DeployModel m = deploy_preset("llama3_1_8b");
  const Hardware hw = gpu_preset("h200_sxm");
  PerfInputs in;
  in.model = &m;
  in.hw = &hw;
  in.rates = card_rates(hw, Basis::speed_of_light);
  const PointPricing pricing = test_pricing("h200_sxm", "best", "auto", Basis::speed_of_light);
  in.pricing = &pricing;
  in.par = {1, 1, 1};
  const StepTimes st = layer_time(in, 1, 1, 1);
  const double h = 4096, norms = 32.0 * 2 * h;
  const double want = weight_bytes_per_gpu(m, in.par, WeightDtype::bf16) - (128256.0 * h + norms) * 2;
  CHECK(st.weight_bytes == Approx(want).epsilon(1e-12));
  // speed of light: no launch overhead, bandwidth-bound -> time = bytes / datasheet bandwidth (+ activations)
  CHECK(st.layers + st.lm_head == Approx(want / 4.8e12).epsilon(0.01));
  CHECK(st.comm == 0.0);
  // FP8 halves the bytes and the time of a bandwidth-bound step
  in.weights = WeightDtype::fp8;
  const StepTimes st8 = layer_time(in, 1, 1, 1);
  CHECK(st8.weight_bytes == Approx(want / 2).epsilon(1e-12));
  CHECK(st8.layers + st8.lm_head == Approx((st.layers + st.lm_head) / 2).epsilon(0.02));
}

TEST_CASE("MTP / speculative decode: k positions share one CISA selection", "[plan][perf][mtp]") {
  const DeployModel ultra = deploy_preset("nemotron3_ultra");
  const Hardware hw = gpu_preset("b300");
  PerfInputs in;
  in.model = &ultra;
  in.hw = &hw;
  in.rates = card_rates(hw, Basis::calibrated);
  const PointPricing pricing = test_pricing("b300", "best", "auto", Basis::calibrated);
  in.pricing = &pricing;
  in.par = {2, 2, 4};
  in.weights = WeightDtype::fp8;
  const StepTimes one = decode_step(in, 8, 1 << 20, 1);
  const StepTimes four = decode_step(in, 8, 1 << 20, 4);
  // dense re-reads nothing extra either (one KV stream per group), so both stay well under 4x
  CHECK(four.attn_global_cisa < 2.0 * one.attn_global_cisa);
  CHECK(four.attn_global_dense < 2.0 * one.attn_global_dense);
  CHECK(four.layers >= one.layers);
  // the scenario keys: mtp_accepted is required with mtp_tokens > 1 and bounded by it
  const std::string head = "name: t\nmodel: nemotron3_ultra\nhardware: b300\nweights: fp8\nparallel: {tp: 2, dp: 2, ep: 4}\n";
  CHECK(contains(error_of(head + "workload: {mtp_tokens: 3}\n"), "give workload.mtp_accepted"));
  CHECK(contains(error_of(head + "workload: {mtp_tokens: 3, mtp_accepted: 3.5}\n"), "cannot exceed"));
  const PlanScenario base = scenario_from_text(head + "workload: {batch: 8}\n");
  const PlanScenario mtp = scenario_from_text(head + "workload: {batch: 8, mtp_tokens: 3, mtp_accepted: 2.4}\n");
  const PlanRow r1 = evaluate_plan(base).front(), r3 = evaluate_plan(mtp).front();
  CHECK(r3.tokens_per_s_per_gpu_cisa > r1.tokens_per_s_per_gpu_cisa);
  CHECK(r3.tpot_s_cisa < r1.tpot_s_cisa);
  CHECK(replica_tokens_per_s(2.0, 0.03, 8, 4096, 2.0) == Approx(8 / loaded_tpot_s(2.0, 0.03, 8, 4096, 2.0)));
}

TEST_CASE("TPOT is the inter-token latency of a decode step; constraints filter on it", "[plan][perf][tpot]") {
  const std::string head = "name: t\nmodel: nemotron3_ultra\nhardware: b300\nweights: fp8\nparallel: {tp: 2, dp: 2, ep: 4}\n";
  const PlanScenario sc = scenario_from_text(head + "workload: {batch: 8, mtp_tokens: 3, mtp_accepted: 2.4}\n");
  const PlanRow r = evaluate_plan(sc).front();
  CHECK(r.tpot_s_cisa == Approx(r.decode_step_s_cisa / 2.4).epsilon(1e-12));
  CHECK(r.tpot_s_dense == Approx(r.decode_step_s_dense / 2.4).epsilon(1e-12));
  CHECK(r.tokens_per_s_per_user_cisa == Approx(1.0 / r.tpot_s_cisa).epsilon(1e-12));
  CHECK(r.tpot_interleaved_s_cisa ==
        Approx(loaded_tpot_s(r.ttft_s_cisa, r.decode_step_s_cisa, r.batch_cisa, sc.output_tokens, 2.4)).epsilon(1e-12));
  CHECK(r.tpot_interleaved_s_cisa > r.tpot_s_cisa);
  // A target between the two figures: met on TPOT (the standard metric), not on the interleaved one.
  const double target_ms = 0.5 * (r.tpot_s_cisa + r.tpot_interleaved_s_cisa) * 1e3;
  const std::string tgt = "constraints: {tpot_ms: " + std::to_string(target_ms) + "}\n";
  const PlanRow met = evaluate_plan(scenario_from_text(head + "workload: {batch: 8, mtp_tokens: 3, mtp_accepted: 2.4}\n" + tgt)).front();
  CHECK(met.feasible_cisa);
  // Missed targets read rounded: "TPOT 12.3 ms > target 1 ms".
  const PlanRow missed =
      evaluate_plan(scenario_from_text(head + "workload: {batch: 8}\nconstraints: {tpot_ms: 0.001, ttft_s: 1000}\n")).front();
  CHECK_FALSE(missed.feasible_cisa);
  INFO(missed.reason_cisa);
  CHECK(contains(missed.reason_cisa, "ms > target 0.001 ms"));
  CHECK_FALSE(contains(missed.reason_cisa, "000000"));
}
