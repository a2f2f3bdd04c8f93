// Implementation profiles: loading (and refusing bad ones), transfer rules and labels, the dense
// baseline, uncertainty bands, and the invariant that a card at least as good on every datasheet
// figure is never predicted slower on any component.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "catch.hpp"
#include "cisa/errors.hpp"
#include "cisa/evaluate.hpp"
#include "cisa/presets.hpp"
#include "cisa/results.hpp"
#include "cisa/scenario.hpp"
#include "model/pricing.hpp"
#include "profile_figures.hpp"

using namespace cisa;
namespace fs = std::filesystem;

namespace {

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// A minimal valid dense profile; tests break one thing at a time.
const std::string kDense =
    "name: tdense\nroles: [dense]\narchs: [hopper]\n"
    "attention:\n"
    "  tile_rows: {min: 128, max: 128}\n"
    "  l2_sharing: {value: shared, source: \"EST: test\"}\n"
    "  page_visit_ns: {none: contiguous}\n"
    "  mma_tflops:\n    h200_sxm: {value: 500, source: \"MEAS: test\"}\n"
    "  read_bw_tbs:\n    h200_sxm: {value: 4.0, source: \"MEAS: test\"}\n"
    "  floor_us:\n    h200_sxm: {value: 5, source: \"EST: test\"}\n";

std::string profile_error(const std::string& text) {
  try {
    const YamlDoc doc = parse_yaml(text, "profile.yaml");
    (void)parse_impl(doc, doc.root, "");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string replaced(std::string s, const std::string& from, const std::string& to) {
  const auto at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

Point point(const std::string& card, Phase phase, int r, std::int64_t L, std::int64_t K, int G) {
  Point p;
  p.hardware = card;
  p.geo.q_heads = r;
  p.geo.kv_heads = 1;
  p.work.phase = phase;
  p.work.context_tokens = L;
  p.work.batch = 16;
  p.cisa.budget_chunks = K;
  p.cisa.qshare_g = phase == Phase::decode ? 1 : G;
  return p;
}

}  // namespace

TEST_CASE("every shipped profile resolves on every shipped card with labelled, positive figures",
          "[profiles]") {
  Pricer pricer(shipped_cards(), shipped_impls(), Basis::calibrated);
  REQUIRE(pricer.impls().size() >= 6);
  for (const auto& [card, hw] : pricer.cards())
    for (const auto& [name, prof] : pricer.impls()) {
      const ResolvedImpl& r = pricer.resolved(card, name);
      INFO(name << " on " << card);
      CHECK(!r.used.empty());
      for (const auto& u : r.used) {
        INFO(u.field << " = " << u.figure.value << " (" << u.figure.source << ")");
        CHECK(std::isfinite(u.figure.value));
        CHECK(u.figure.value > 0);
        CHECK(u.figure.label() != Label::GIVEN);
        // A figure for another card than the one it was given for is always labelled XFER.
        bool own = false;
        for (const PerCard* pc : {&prof.mma_tflops, &prof.read_bw_tbs})
          for (const auto& [c, f] : pc->cards) own = own || c == card;
        if (u.field == "attention.mma_tflops" && !own) CHECK(u.figure.label() == Label::XFER);
      }
    }
}

TEST_CASE("transfer rules: same fraction of the datasheet, labelled with source and factor",
          "[profiles]") {
  Pricer pricer(shipped_cards(), shipped_impls(), Basis::calibrated);
  const Hardware& h200 = pricer.cards().at("h200_sxm");
  const Hardware& h100 = pricer.cards().at("h100_sxm");
  const Hardware& b200 = pricer.cards().at("b200");
  const Hardware& b300 = pricer.cards().at("b300");
  // The card bench of a card nobody measured: the H200's fraction of the datasheet.
  CHECK(b200.card.read_bw_tbs.value ==
        Approx(h200.card.read_bw_tbs.value * b200.hbm_bw_tbs.value / 4.8));
  CHECK(b200.card.read_bw_tbs.label() == Label::XFER);
  // A card that was measured keeps its own figures (the H100, session 20).
  CHECK(h100.card.read_bw_tbs.label() == Label::MEAS);
  CHECK(h100.card.read_bw_tbs.value != Approx(h200.card.read_bw_tbs.value * 3.35 / 4.8));
  CHECK(b300.card.kernel_floor_us.value == h200.card.kernel_floor_us.value);
  // Our kernels' MMA rate moves with the dense BF16 peak; their read rate with the card's.
  const ResolvedImpl& ours_h200 = pricer.resolved("h200_sxm", "cisa_kernels");
  const ResolvedImpl& ours_b300 = pricer.resolved("b300", "cisa_kernels");
  CHECK(ours_h200.mma_tflops.label() == Label::MEAS);
  CHECK(ours_b300.mma_tflops.value == Approx(ours_h200.mma_tflops.value * 2250 / 989.4));
  CHECK(ours_b300.read_bw_tbs.value ==
        Approx(ours_h200.read_bw_tbs.value * b300.card.read_bw_tbs.value /
               h200.card.read_bw_tbs.value));
  CHECK(contains(ours_b300.mma_tflops.source, "XFER: "));
  CHECK(contains(ours_b300.mma_tflops.source, "on h200_sxm"));
  // A card of the same architecture is the preferred source: cuDNN on the B300 from the B200.
  const ResolvedImpl& cudnn_b300 = pricer.resolved("b300", "cudnn");
  CHECK(contains(cudnn_b300.mma_tflops.source, "on b200"));
  // Page-visit SM time scales with 1 / (BF16 peak per SM).
  CHECK(ours_b300.page_visit_ns[3].value ==
        Approx(ours_h200.page_visit_ns[3].value * (989.4 / 132) / (2250.0 / 160)));
  // Where a profile runs: auto picks ours on Hopper and FA4 on Blackwell.
  CHECK(pricer.auto_cisa("h200_sxm") == "cisa_kernels");
  CHECK(pricer.auto_cisa("b300") == "fa4");
}

TEST_CASE("the dense baseline is the fastest dense implementation known on the card",
          "[profiles]") {
  Pricer pricer(shipped_cards(), shipped_impls(), Basis::calibrated);
  const auto known = pricer.best_candidates("h200_sxm");
  CHECK(std::find(known.begin(), known.end(), "fa3") ==
        known.end());  // XFER on the H200: not "known"
  Point p = point("h200_sxm", Phase::terminal_prefill, 4, 1 << 20, 4096, 16);
  const Prediction pr = predict(p, pricer.for_point(p));
  CHECK(pr.dense_impl == "cudnn");  // 591 vs 365 TF/s (MEAS) in compute-bound prefill
  CHECK(pr.cisa_impl == "cisa_kernels");
  CHECK(pr.dense.attention < pr.dense_own_attention);
  // Naming the baseline prices it as named.
  p.dense_impl = "fa2";
  CHECK(predict(p, pricer.for_point(p)).dense_impl == "fa2");
  // A dense-only profile cannot run CISA, a CISA-only one cannot be the baseline.
  p.cisa_impl = "cudnn";
  CHECK_THROWS_AS(pricer.for_point(p), std::invalid_argument);
  p.cisa_impl = "cisa_kernels";
  p.dense_impl = "flex";
  CHECK_THROWS_AS(pricer.for_point(p), std::invalid_argument);
  p.dense_impl = "nonesuch";
  CHECK_THROWS_AS(pricer.for_point(p), std::invalid_argument);
}

TEST_CASE("a card at least as good on every datasheet figure is never slower on any component",
          "[profiles][invariants]") {
  Pricer pricer(shipped_cards(), shipped_impls(), Basis::calibrated);
  // Hopper -> Blackwell: every datasheet figure is larger. (H100 vs H200 share the dense peak, and
  // their own published/measured figures differ by shape within their bands: no order there.)
  const std::pair<const char*, const char*> pairs[] = {
      {"h200_sxm", "b300"}, {"h100_sxm", "b200"}, {"h200_sxm", "b200"}, {"h100_sxm", "b300"}};
  for (const auto& [slow, fast] : pairs)
    for (const char* impl : {"cisa_kernels", "flex", "fa3"})
      for (const char* dense : {"cisa_kernels", "cudnn", "fa2"})
        for (Phase phase : {Phase::terminal_prefill, Phase::decode})
          for (int r : {4, 32})
            for (std::int64_t L : {std::int64_t{1} << 17, std::int64_t{1} << 20})
              for (std::int64_t K : {2048, 4096})
                for (int G : {1, 4, 16}) {
                  Point a = point(slow, phase, r, L, K, G), b = point(fast, phase, r, L, K, G);
                  a.cisa_impl = b.cisa_impl = impl;
                  a.dense_impl = b.dense_impl = dense;
                  const Prediction x = predict(a, pricer.for_point(a)),
                                   y = predict(b, pricer.for_point(b));
                  INFO(slow << " vs " << fast << ", " << impl << "/" << dense << ", "
                            << to_string(phase) << " r " << r << " L " << L << " K " << K << " G "
                            << G);
                  const double tol = 1 + 1e-9;
                  CHECK(y.dense.attention <= x.dense.attention * tol);
                  CHECK(y.cisa.attention <= x.cisa.attention * tol);
                  CHECK(y.cisa.scoring <= x.cisa.scoring * tol);
                  CHECK(y.cisa.topk <= x.cisa.topk * tol);
                  // Setup is the host's copy and launch latency, no datasheet figure: where the
                  // two cards' figures were measured on different hosts (the H100 vs the H200
                  // the Blackwell cards transfer from), host noise may order them either way,
                  // within the slower card's band.
                  const bool one_host = std::string(slow) == "h200_sxm";
                  CHECK(y.cisa.setup <= (one_host ? x.cisa.setup : x.cisa_hi.setup) * tol);
                  CHECK(y.cisa.other <= x.cisa.other * tol);
                }
}

TEST_CASE("uncertainty bands: lo <= point <= hi; MEAS bands from the recorded spread",
          "[profiles]") {
  Figure meas{4.0, "MEAS: probe; spread 10.0%"};
  CHECK(band_of(meas).hi == Approx(1.05));
  Figure tight{4.0, "MEAS: probe; spread 0.2%"};
  CHECK(band_of(tight).hi == Approx(1.03));  // at least the 3 % drift between machine starts
  // A fitted figure: its fit's rms relative residual (a spread, where recorded, wins).
  CHECK(band_of(Figure{4.0, "MEAS: grid fit, rms residual 7.2 %; median of 5"}).hi == Approx(1.072));
  CHECK(band_of(Figure{4.0, "MEAS: fit, rms residual 40.0 %"}).hi == Approx(1.15));  // at most 15 %
  CHECK(band_of(Figure{4.0, "MEAS: fit, rms residual 7.2 %; spread 10.0%"}).hi == Approx(1.05));
  CHECK(band_of(Figure{4.0, "MEAS: fit, rms residual x %"}).hi == Approx(1.05));  // unreadable: default
  CHECK(band_of(Figure{4.0, "XFER: x"}).hi == Approx(1.2));
  CHECK(band_of(Figure{4.0, "DS: datasheet"}).hi == 1.0);
  Figure ranged{4.0, "PUB: x", 3.0, 5.0};
  CHECK(band_of(ranged).lo == Approx(0.75));
  // Every band column of a run brackets its point value.
  const Scenario sc = load_scenario("", {"sweep.G=[1,4,16]"});
  const Table t = evaluate_scenario(sc);
  for (const auto& name : band_columns()) {
    const auto& v = std::get<std::vector<double>>(t.find(name)->data);
    const auto& lo = std::get<std::vector<double>>(t.find(name + "_lo")->data);
    const auto& hi = std::get<std::vector<double>>(t.find(name + "_hi")->data);
    for (std::size_t i = 0; i < v.size(); ++i) {
      INFO(name << " row " << i);
      if (std::isnan(v[i])) continue;
      CHECK(lo[i] <= v[i] * (1 + 1e-12));
      CHECK(v[i] <= hi[i] * (1 + 1e-12));
    }
  }
}

TEST_CASE("no silent fallback: a figure a profile lacks stops the run, naming it", "[profiles]") {
  // Drop the read rate: the profile loads (figures are per card) but cannot price anything.
  const std::string text =
      replaced(kDense, "  read_bw_tbs:\n    h200_sxm: {value: 4.0, source: \"MEAS: test\"}\n", "");
  const YamlDoc doc = parse_yaml(text, "p.yaml");
  ImplCatalog impls = shipped_impls();
  impls.emplace("tdense", parse_impl(doc, doc.root, ""));
  Pricer pricer(shipped_cards(), impls, Basis::calibrated);
  Point p = point("h200_sxm", Phase::decode, 4, 1 << 20, 4096, 1);
  p.dense_impl = "tdense";
  try {
    pricer.for_point(p);
    FAIL("no error");
  } catch (const std::invalid_argument& e) {
    CHECK(contains(e.what(), "tdense"));
    CHECK(contains(e.what(), "read_bw_tbs"));
  }
  // Through a scenario: exit-2 error at the implementation key.
  const fs::path dir = fs::temp_directory_path() / "cisa_test_profiles";
  fs::create_directories(dir);
  std::ofstream(dir / "tdense.yaml") << text;
  std::ofstream(dir / "s.yaml")
      << "name: t\nmodel: inkling_small\ntp: 8\nhardware: h200_sxm\nimplementation: {dense: "
      << (dir / "tdense.yaml").string() << "}\n";
  try {
    load_scenario((dir / "s.yaml").string(), {});
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(contains(e.what(), "s.yaml:5"));
    CHECK(contains(e.what(), "read_bw_tbs"));
  }
}

TEST_CASE("bad profiles are refused with the field and what to do", "[profiles]") {
  CHECK(profile_error(kDense).empty());
  CHECK(contains(profile_error(replaced(kDense, "roles: [dense]\n", "")), "roles"));
  CHECK(contains(profile_error(replaced(kDense, "roles: [dense]", "roles: [sparse]")),
                 "expected dense or cisa"));
  CHECK(contains(profile_error(replaced(kDense, "archs: [hopper]", "archs: [ampere]")),
                 "expected hopper or blackwell"));
  CHECK(contains(
      profile_error(replaced(kDense, "    h200_sxm: {value: 500", "    h200_sx: {value: 500")),
      "h200_sxm"));
  CHECK(
      contains(profile_error(replaced(kDense, "\"MEAS: test\"}\n  read", "\"measured\"}\n  read")),
               "label"));
  CHECK(contains(profile_error(replaced(kDense, "{value: 500, source", "{value: -5, source")),
                 "> 0"));
  CHECK(contains(profile_error(replaced(kDense, "{value: 500, source",
                                        "{value: 500, lo: 600, hi: 700, source")),
                 "lo <= value <= hi"));
  CHECK(contains(
      profile_error(replaced(kDense, "  l2_sharing: {value: shared, source: \"EST: test\"}\n", "")),
      "l2_sharing"));
  CHECK(contains(profile_error(replaced(kDense, "value: shared", "value: sometimes")),
                 "shared, none or unknown"));
  CHECK(contains(profile_error(replaced(kDense, "  page_visit_ns: {none: contiguous}\n", "")),
                 "page_visit_ns"));
  CHECK(contains(profile_error(replaced(kDense, "max: 128}", "max: 100}")), "power of two"));
  CHECK(contains(profile_error(replaced(kDense, "min: 128, max: 128", "min: 128, max: 64")),
                 "min must be <= max"));
  CHECK(contains(profile_error(replaced(kDense, "roles: [dense]", "roles: [dense, cisa]")),
                 "selection"));
  CHECK(contains(
      profile_error(kDense + "selection_from: cisa_kernels\nselection: {score_bytes: 4}\n"),
      "not both"));
  CHECK(contains(profile_error(kDense + "selection: {score_bytes: 3}\n"), "2 or 4"));
  CHECK(contains(profile_error(kDense + "atention: {}\n"), "did you mean"));
  // Prefill scoring figures need the form they were fitted with; only the two forms exist.
  const std::string prefill =
      "selection:\n  scoring_prefill_floor_us:\n    h200_sxm: {value: 17, source: \"MEAS: test\"}\n";
  CHECK(contains(profile_error(kDense + prefill), "scoring_prefill_streams"));
  CHECK(profile_error(kDense + prefill + "  scoring_prefill_streams: shared\n").empty());
  CHECK(profile_error(kDense + prefill + "  scoring_prefill_streams: overlapped\n").empty());
  CHECK(contains(profile_error(kDense + prefill + "  scoring_prefill_streams: both\n"),
                 "expected shared"));
  // selection_from must name a profile with kernels of its own (resolution time).
  const std::string cisa =
      replaced(
          replaced(
              replaced(kDense, "roles: [dense]", "roles: [cisa]"), "  floor_us:",
              "  gather_bw_tbs:\n    h200_sxm: {value: 4.0, source: \"MEAS: test\"}\n  floor_us:"),
          "source: \"EST: test\"}\n  page",
          "source: \"EST: test\", schedule: {m16: staggered, m32: staggered, m64: staggered, m128: "
          "staggered, source: \"EST: t\"}}\n  page") +
      "selection_from: nonesuch\n";
  const YamlDoc doc = parse_yaml(cisa, "p.yaml");
  ImplCatalog impls = shipped_impls();
  impls.emplace("tdense", parse_impl(doc, doc.root, ""));
  Pricer pricer(shipped_cards(), impls, Basis::calibrated);
  try {
    pricer.resolved("h200_sxm", "tdense");
    FAIL("no error");
  } catch (const std::invalid_argument& e) {
    CHECK(contains(e.what(), "nonesuch"));
  }
}

TEST_CASE("split-KV policy: cuDNN splits the KV length in decode only, FA2 by its own heuristic",
          "[profiles]") {
  Pricer pricer(shipped_cards(), shipped_impls(), Basis::calibrated);
  // One sequence, 4 q heads on one KV head, 256 new tokens: 8 query tiles of 128 rows, a short
  // grid.
  Point p = point("h200_sxm", Phase::terminal_prefill, 4, 1 << 17, 2048, 4);
  p.work.batch = 1;
  p.work.prefill_tokens = 256;
  p.dense_impl = "cudnn";
  const Prediction cudnn = predict(p, pricer.for_point(p));
  CHECK(cudnn.cost.splits_dense == 1);
  p.dense_impl = "fa2";
  CHECK(predict(p, pricer.for_point(p)).cost.splits_dense > 1);
  // With no split the short grid fills a fraction of the SMs: same work per CTA, same time as 16x
  // the batch.
  Point full = p;
  full.dense_impl = "cudnn";
  full.work.batch = 16;
  const double t_full = predict(full, pricer.for_point(full)).dense.attention;
  CHECK(cudnn.dense.attention > 0.5 * t_full);
  // Decode: one position per sequence, the KV length is split for cuDNN too.
  Point d = point("h200_sxm", Phase::decode, 4, 1 << 19, 2048, 1);
  d.dense_impl = "cudnn";
  CHECK(predict(d, pricer.for_point(d)).cost.splits_dense > 1);
  // FA2 decode: its num_splits_heuristic on 2 x 132 slots. 48 blocks (24 sequences x 2 KV heads):
  // 5 pieces (wave efficiency 240/264 = 0.91 >= 0.85 of the best, 1.0 at 11); 8 blocks over 1,024
  // key blocks: 28 (224/264 = 0.848 >= 0.85 x 0.97, the best, at 32: 33 gives the same blocks
  // per piece as 32 and is skipped); 216 blocks fill 80 % of the slots: no split.
  Point f = point("h200_sxm", Phase::decode, 8, 98304, 2048, 1);
  f.geo.kv_heads = 2;
  f.geo.q_heads = 16;
  f.dense_impl = "fa2";
  f.work.batch = 24;
  CHECK(predict(f, pricer.for_point(f)).cost.splits_dense == 5);
  f.geo.kv_heads = 1;
  f.geo.q_heads = 8;
  f.work.batch = 8;
  f.work.context_tokens = 131072;
  CHECK(predict(f, pricer.for_point(f)).cost.splits_dense == 28);
  f.work.batch = 216;
  CHECK(predict(f, pricer.for_point(f)).cost.splits_dense == 1);
  // The loader: a value other than always / decode / fa2, or no source, is refused.
  CHECK(profile_error(replaced(kDense, "  page_visit_ns:",
                               "  split_kv: {value: decode, source: \"EST: t\"}\n  page_visit_ns:"))
            .empty());
  CHECK(contains(
      profile_error(replaced(kDense, "  page_visit_ns:",
                             "  split_kv: {value: prefill, source: \"EST: t\"}\n  page_visit_ns:")),
      "always"));
  CHECK(contains(profile_error(replaced(
                     kDense, "  page_visit_ns:", "  split_kv: {value: decode}\n  page_visit_ns:")),
                 "source"));
}

TEST_CASE("scenarios choose implementations, sweep them and record them per point",
          "[profiles][scenario]") {
  const Scenario sc =
      load_scenario("", {"implementation.dense=fa2", "sweep.cisa_impl=[cisa_kernels, flex, fa3]"});
  const Table t = evaluate_scenario(sc);
  const auto& dense = std::get<std::vector<std::string>>(t.find("dense_impl")->data);
  const auto& cisa = std::get<std::vector<std::string>>(t.find("cisa_impl")->data);
  std::set<std::string> seen(cisa.begin(), cisa.end());
  CHECK(seen == std::set<std::string>{"cisa_kernels", "flex", "fa3"});
  for (const auto& d : dense) CHECK(d == "fa2");
  // The attributes name every figure used with its label.
  const Attributes a = provenance(sc, "test");
  CHECK(a.count("implementation_figures.h200_sxm.flex"));
  CHECK(contains(a.at("implementation_figures.h200_sxm.fa3"), "label: XFER"));
  CHECK(contains(a.at("implementation_figures.h200_sxm.cisa_kernels"), "label: MEAS"));
}

TEST_CASE("the representative update is its own kernel with its own fixed cost",
          "[profiles][traffic]") {
  Pricer pricer(shipped_cards(), shipped_impls(), Basis::calibrated);
  // Decode at 2^19 tokens: the new token completes a chunk in every sequence; at 2^19 + 1 none
  // does.
  Point fills = point("h200_sxm", Phase::decode, 4, 1 << 19, 2048, 1);
  Point none = point("h200_sxm", Phase::decode, 4, (1 << 19) + 1, 2048, 1);
  const PointPricing pp = pricer.for_point(fills);
  const Prediction a = predict(fills, pp), b = predict(none, pricer.for_point(none));
  CHECK(a.cost.other.launches == 1);
  CHECK(a.cost.rep_update.launches == 1);
  CHECK(a.cost.rep_update.ctas == 2);  // 16 (sequence, KV head) pairs, 8 per CTA
  CHECK(b.cost.other.launches == 1);
  CHECK(b.cost.rep_update.launches == 0);
  CHECK(a.cost.bytes_cisa.other == a.cost.other.dram_bytes + a.cost.rep_update.dram_bytes);
  // The update's own floor prices its launch: changing it moves `other` by exactly the change.
  Rates r = pp.cisa[1].rates;
  const KernelShape& sh = pp.cisa[1].shape;
  const double t0 = cisa_times(a.cost, sh, r).other;
  r.rep_update_floor_s += 3e-6;
  CHECK(cisa_times(a.cost, sh, r).other - t0 == Approx(3e-6).margin(1e-12));
  CHECK(cisa_times(b.cost, sh, r).other == Approx(cisa_times(b.cost, sh, pp.cisa[1].rates).other));
  // A profile without its own figure (the archived calibration of session 4) prices the update at
  // the projection's floor (XFER rule).
  Point old = fills;
  old.cisa_impl = "cisa_kernels_2026_11_30b";
  const Rates ro = pricer.for_point(old).cisa[1].rates;
  CHECK(ro.projection_floor_s > 0);
  CHECK(ro.rep_update_floor_s == ro.projection_floor_s);
  // Its projection figures are transferred from session 12's fit (labelled XFER), and the decode
  // step's two from them.
  int xfer = 0;
  for (const UsedFigure& u : pricer.resolved("h200_sxm", "cisa_kernels_2026_11_30b").used)
    if (u.field.rfind("other.projection_", 0) == 0 && u.figure.label() == Label::XFER) ++xfer;
  CHECK(xfer == 5);
  // A profile without projection figures prices the projection at other_floor_us and the card's
  // streaming read and GEMM rates, each labelled XFER.
  ImplCatalog impls = shipped_impls();
  ImplProfile bare = impls.at("cisa_kernels_2026_11_30b");
  bare.name = "tnoproj";
  bare.projection_floor_us = bare.projection_read_bw_tbs = bare.projection_mma_tflops = PerCard{};
  impls.emplace("tnoproj", bare);
  Pricer p2(shipped_cards(), impls, Basis::calibrated);
  Point np = fills;
  np.cisa_impl = "tnoproj";
  const Rates rn = p2.for_point(np).cisa[1].rates;
  CHECK(rn.projection_read_Bps == rn.read_bw_Bps);
  CHECK(rn.projection_flops == rn.gemm_flops);
  CHECK(rn.projection_floor_s > 0);
  xfer = 0;
  for (const UsedFigure& u : p2.resolved("h200_sxm", "tnoproj").used)
    if (u.field.rfind("other.projection_", 0) == 0 && u.figure.label() == Label::XFER) ++xfer;
  CHECK(xfer == 4);  // read and MMA rates, the decode floor and read rate
}

namespace {
const std::string kDecFloor =
    "  projection_decode_floor_us:\n    h200_sxm: {value: 8.1, source: \"MEAS: test\"}\n";
const std::string kDecRead =
    "  projection_decode_read_bw_tbs:\n    h200_sxm: {value: 2.9, source: \"MEAS: test\"}\n";

// A profile whose selection figures come from a calibration file (its selection block).
std::string with_calibration(const std::string& selection) {
  const fs::path dir = fs::temp_directory_path() / "cisa_test_projection_decode";
  fs::create_directories(dir);
  const fs::path cal = dir / "cal.yaml";
  std::ofstream(cal) << "calibration:\n  card_name: h200_sxm\n  implementation:\n"
                     << "    name: tdense\n    selection:\n"
                     << selection;
  return kDense + "calibrations: [" + cal.string() + "]\n";
}
std::string calibration_error(const std::string& selection) {
  return profile_error(with_calibration(selection));
}
}  // namespace

TEST_CASE("the decode projection's floor and read rate come together or not at all", "[profiles]") {
  CHECK(profile_error(kDense + "selection:\n" + kDecFloor + kDecRead).empty());
  // One without the other: refused at the one given, naming file, line and field.
  const std::string floor_only = profile_error(kDense + "selection:\n" + kDecFloor);
  CHECK(contains(floor_only, "profile.yaml:16: field 'selection.projection_decode_floor_us'"));
  CHECK(contains(floor_only, "without 'projection_decode_read_bw_tbs'"));
  const std::string read_only = profile_error(kDense + "selection:\n" + kDecRead);
  CHECK(contains(read_only, "profile.yaml:16: field 'selection.projection_decode_read_bw_tbs'"));
  CHECK(contains(read_only, "without 'projection_decode_floor_us'"));
  // Bad values, like every figure.
  const std::string both = kDense + "selection:\n" + kDecFloor + kDecRead;
  CHECK(contains(profile_error(replaced(both, "value: 8.1", "value: -8.1")),
                 "profile.yaml:16: field 'selection.projection_decode_floor_us.h200_sxm'"));
  CHECK(contains(profile_error(replaced(both, "value: 2.9", "value: 0")), "finite number > 0"));
  CHECK(contains(profile_error(replaced(both, "value: 2.9", "value: .inf")), "finite number"));
  CHECK(contains(profile_error(replaced(both, "{value: 2.9, source: \"MEAS: test\"}",
                                        "{value: 2.9, source: \"fitted\"}")),
                 "needs a source"));
  // Given for different cards: refused.
  CHECK(contains(
      profile_error(replaced(both, "    h200_sxm: {value: 2.9", "    h100_sxm: {value: 2.9")),
      "different cards"));
  // From a calibration file: the same rules, located in that file.
  const std::string cal_floor =
      "      projection_decode_floor_us: {value: 8.1, source: \"MEAS: test\"}\n";
  const std::string cal_read =
      "      projection_decode_read_bw_tbs: {value: 2.9, source: \"MEAS: test\"}\n";
  CHECK(calibration_error(cal_floor + cal_read).empty());
  const YamlDoc doc = parse_yaml(with_calibration(cal_floor + cal_read), "profile.yaml");
  const ImplProfile p = parse_impl(doc, doc.root, "");
  REQUIRE(p.projection_decode_floor_us.cards.size() == 1);
  CHECK(p.projection_decode_floor_us.cards[0].first == "h200_sxm");
  CHECK(p.projection_decode_floor_us.cards[0].second.value == 8.1);
  CHECK(p.projection_decode_read_bw_tbs.cards[0].second.label() == Label::MEAS);
  const std::string e = calibration_error(cal_floor);
  CHECK(contains(
      e, "cal.yaml:6: field 'calibration.implementation.selection.projection_decode_floor_us'"));
  CHECK(contains(e, "without 'projection_decode_read_bw_tbs'"));
  CHECK(contains(
      calibration_error(cal_floor + replaced(cal_read, "value: 2.9", "value: -1")),
      "cal.yaml:7: field 'calibration.implementation.selection.projection_decode_read_bw_tbs'"));
}

TEST_CASE("decode points price the projection at the decode figures; prefill points do not",
          "[profiles][traffic]") {
  // The shipped profile without decode figures (as before any card measured them) and a copy with
  // them, as a calibration gives them.
  ImplCatalog impls = shipped_impls();
  ImplProfile none = impls.at("cisa_kernels");
  none.name = "tnodec";
  none.projection_decode_floor_us = {};
  none.projection_decode_read_bw_tbs = {};
  impls.emplace("tnodec", none);
  ImplProfile dec = none;
  dec.name = "tdecproj";
  dec.projection_decode_floor_us = test::h200_figure(7.5);
  dec.projection_decode_read_bw_tbs = test::h200_figure(2.5);
  impls.emplace("tdecproj", dec);
  Pricer pricer(shipped_cards(), impls, Basis::calibrated);
  // Decode at 2^19 + 1 tokens: no chunk completes, `other` is the projection alone.
  Point d0 = point("h200_sxm", Phase::decode, 4, (1 << 19) + 1, 2048, 1);
  Point p0 = point("h200_sxm", Phase::terminal_prefill, 4, 1 << 19, 2048, 4);
  d0.cisa_impl = p0.cisa_impl = "tnodec";
  Point d1 = d0, p1 = p0;
  d1.cisa_impl = p1.cisa_impl = "tdecproj";
  const Prediction a0 = predict(d0, pricer.for_point(d0)), a1 = predict(d1, pricer.for_point(d1));
  const Prediction b0 = predict(p0, pricer.for_point(p0)), b1 = predict(p1, pricer.for_point(p1));
  REQUIRE(a1.cost.cisa_decode_kernel);
  REQUIRE(a1.cost.rep_update.launches == 0);
  REQUIRE(a1.cost.other.launches == 1);
  CHECK(a1.cisa.other == Approx(7.5e-6 + a1.cost.other.dram_bytes / 2.5e12));
  CHECK(a1.cisa.other != a0.cisa.other);
  CHECK(a1.cisa_lo.other < a1.cisa.other);
  CHECK(a1.cisa_hi.other > a1.cisa.other);
  // Prefill `other` and every other component are unchanged, bit for bit.
  CHECK(b1.cisa.other == b0.cisa.other);
  CHECK(b1.cisa_lo.other == b0.cisa_lo.other);
  CHECK(b1.cisa_hi.other == b0.cisa_hi.other);
  CHECK(a1.cisa.attention == a0.cisa.attention);
  CHECK(a1.cisa.scoring == a0.cisa.scoring);
  // The figures used say where they came from: MEAS with them, XFER without.
  auto label_of = [&](const std::string& impl, const std::string& field,
                      const std::string& card = "h200_sxm") {
    for (const UsedFigure& u : pricer.resolved(card, impl).used)
      if (u.field == field) return std::string(to_string(u.figure.label())) + " " + u.figure.source;
    return std::string("absent");
  };
  CHECK(label_of("tdecproj", "other.projection_decode_floor_us").rfind("MEAS", 0) == 0);
  CHECK(label_of("tdecproj", "other.projection_decode_read_bw_tbs").rfind("MEAS", 0) == 0);
  const std::string xf = label_of("tnodec", "other.projection_decode_floor_us");
  CHECK(xf.rfind("XFER", 0) == 0);
  CHECK(contains(xf, "other.projection_floor_us"));
  CHECK(contains(label_of("tnodec", "other.projection_decode_read_bw_tbs"),
                 "other.projection_read_bw_tbs"));
  // Without them the decode figures are the prefill projection's (the same values, not 0 or inf).
  const ResolvedImpl& k = pricer.resolved("h200_sxm", "tnodec");
  CHECK_FALSE(k.projection_decode_term);
  CHECK(k.projection_decode_floor_us.value == k.projection_floor_us.value);
  CHECK(k.projection_decode_read_bw_tbs.value == k.projection_read_bw_tbs.value);
  CHECK_FALSE(pricer.for_point(d0).cisa[1].rates.projection_decode_own);
  // The output file's figure list names them, labelled.
  const Attributes attrs = provenance(load_scenario("", {}), "test");
  REQUIRE(attrs.count("implementation_figures.h200_sxm.cisa_kernels"));
  const std::string figs = attrs.at("implementation_figures.h200_sxm.cisa_kernels");
  CHECK(contains(figs, "other.projection_decode_floor_us: {value: "));
  CHECK(contains(figs, "other.projection_decode_read_bw_tbs: {value: "));
  // The shipped profile: measured on the H100 (session 20 on) and the H200 (session 25); a card
  // that measured none (B300) takes them moved by the transfer rules, labelled so.
  CHECK(contains(figs.substr(figs.find("other.projection_decode_floor_us")), "label: MEAS"));
  CHECK(label_of("cisa_kernels", "other.projection_decode_floor_us").rfind("MEAS", 0) == 0);
  CHECK(label_of("cisa_kernels", "other.projection_decode_floor_us", "b300").rfind("XFER", 0) == 0);
}

TEST_CASE("the decode step scores with its own kernel: its own fixed cost and read rate",
          "[profiles][traffic]") {
  Pricer pricer(shipped_cards(), shipped_impls(), Basis::calibrated);
  const Point dec = point("h200_sxm", Phase::decode, 8, 1 << 19, 2048, 1);
  const Point pre = point("h200_sxm", Phase::terminal_prefill, 8, 1 << 19, 2048, 4);
  const PointPricing pd = pricer.for_point(dec), pp = pricer.for_point(pre);
  const Prediction a = predict(dec, pd), b = predict(pre, pp);
  REQUIRE(a.cost.cisa_decode_kernel);
  REQUIRE(!b.cost.cisa_decode_kernel);
  const KernelShape& sh = pd.cisa[1].shape;
  Rates r = pd.cisa[1].rates;
  const double t0 = cisa_times(a.cost, sh, r).scoring, p0 = cisa_times(b.cost, sh, r).scoring;
  // The decode kernel's fixed cost and read rate move the decode scoring time by exactly their
  // terms (one launch, every CTA streaming), and leave prefill alone.
  r.scoring_decode_floor_s += 2e-6;
  CHECK(cisa_times(a.cost, sh, r).scoring - t0 == Approx(2e-6).margin(1e-12));
  const double reads = a.cost.scoring.dram_bytes - a.cost.scoring.dram_write_bytes;
  REQUIRE(reads > 0);
  const double before = cisa_times(a.cost, sh, r).scoring;
  r.scoring_decode_read_bw_Bps *= 0.5;
  CHECK(cisa_times(a.cost, sh, r).scoring - before ==
        Approx(reads / pd.cisa[1].rates.scoring_decode_read_bw_Bps));
  CHECK(cisa_times(b.cost, sh, r).scoring == p0);
  // A profile without the figures prices the decode kernel at the scoring kernel's, and says so.
  Point old = dec;
  old.cisa_impl = "cisa_kernels_2026_12_01";
  const Rates ro = pricer.for_point(old).cisa[1].rates;
  CHECK(ro.scoring_decode_floor_s == ro.scoring_floor_s);
  CHECK(ro.scoring_decode_read_bw_Bps == ro.scoring_read_bw_Bps);
  bool labelled = false;
  for (const auto& u : pricer.resolved("h200_sxm", "cisa_kernels_2026_12_01").used)
    if (u.field == "scoring.decode_floor_us") labelled = u.figure.label() == Label::XFER;
  CHECK(labelled);
}

TEST_CASE(
    "the decode step's top-k has terms of its own; without them, the prefill fit's, labelled XFER",
    "[profiles][traffic]") {
  Pricer pricer(shipped_cards(), shipped_impls(), Basis::calibrated);
  const Point dec = point("h200_sxm", Phase::decode, 8, 1 << 20, 2048, 1);
  const Point pre = point("h200_sxm", Phase::terminal_prefill, 8, 1 << 19, 2048, 4);
  const PointPricing pd = pricer.for_point(dec), pp = pricer.for_point(pre);
  const Prediction a = predict(dec, pd), b = predict(pre, pp);
  REQUIRE(a.cost.cisa_decode_kernel);
  const KernelShape& sh = pd.cisa[1].shape;
  Rates r = pd.cisa[1].rates;
  r.topk_decode_own = true;
  r.topk_decode_floor_s = 5e-6;
  r.topk_decode_cluster_s = 0.2e-6;
  r.topk_decode_keys_per_s_per_sm = 10e9;
  const TopkTerms t = topk_terms(topk_work(a.cost, sh), sh);
  REQUIRE(t.waves == 1);
  REQUIRE(t.cluster_waves > 0);  // 1M context, 8 rows: a row spreads over several CTAs
  const double want =
      5e-6 + t.cluster_waves * 0.2e-6 + t.key_passes / 10e9 + topk_id_time(t, r);
  CHECK(cisa_times(a.cost, sh, r).topk ==
        Approx(std::max(want, a.cost.topk.dram_bytes / r.read_bw_Bps)).epsilon(0.02));
  // Prefill is priced by the prefill terms whatever the decode ones are.
  CHECK(cisa_times(b.cost, sh, r).topk == cisa_times(b.cost, sh, pd.cisa[1].rates).topk);
  // A profile without the decode figures: the decode top-k is priced as before, and says which
  // terms.
  Point old = dec;
  old.cisa_impl = "cisa_kernels_2026_12_01d";
  CHECK_FALSE(pricer.for_point(old).cisa[1].rates.topk_decode_own);
  bool labelled = false;
  for (const auto& u : pricer.resolved("h200_sxm", "cisa_kernels_2026_12_01d").used)
    if (u.field == "topk.decode_floor_us") labelled = u.figure.label() == Label::XFER;
  CHECK(labelled);
}

TEST_CASE("a profile without its own setup bandwidth copies at the card's host-to-device bandwidth",
          "[profiles]") {
  ImplCatalog impls = shipped_impls();
  ImplProfile& k = impls.at("cisa_kernels");
  k.setup_bw_gbs = PerCard{};
  const CardCatalog cards = shipped_cards();
  Pricer pricer(cards, impls, Basis::calibrated);
  const Point p = point("h200_sxm", Phase::terminal_prefill, 8, 1 << 19, 2048, 1);
  const Rates& r = pricer.for_point(p).cisa[1].rates;
  CHECK(r.setup_Bps == Approx(cards.at("h200_sxm").card.h2d_bw_gbs.value * 1e9));
  bool labelled = false;
  for (const auto& u : pricer.resolved("h200_sxm", "cisa_kernels").used)
    if (u.field == "setup.bw_gbs") labelled = u.figure.label() == Label::XFER;
  CHECK(labelled);
  // A card without the probe: the run stops naming it.
  CardCatalog bare = cards;
  bare.at("h200_sxm").card.h2d_bw_gbs = Figure{};
  Pricer none(bare, impls, Basis::calibrated);
  std::string message;
  try {
    none.for_point(p);
  } catch (const std::invalid_argument& e) {
    message = e.what();
  }
  CHECK(contains(message, "h2d_bw_gbs"));
}

TEST_CASE("Flex's decode visits every page of the context; the loader checks decode_visits",
          "[profiles]") {
  Pricer pricer(shipped_cards(), shipped_impls(), Basis::calibrated);
  auto flex_decode = [&](std::int64_t L, std::int64_t K, const std::string& impl) {
    Point p = point("h200_sxm", Phase::decode, 8, L, K, 1);
    p.cisa_impl = impl;
    return predict(p, pricer.for_point(p));
  };
  const Prediction a = flex_decode(1 << 17, 2048, "flex"), b = flex_decode(1 << 17, 4096, "flex"),
                   c = flex_decode(1 << 19, 2048, "flex");
  CHECK(a.cost.attention_cisa.page_visits ==
        16.0 * (1 << 17) / 16.0);  // B = 16, one visit per 16-token page
  CHECK(a.cost.cisa_decode_kernel);
  CHECK(b.cisa.attention == Approx(a.cisa.attention).epsilon(0.02));  // K hardly matters ...
  CHECK(c.cisa.attention > 3.5 * a.cisa.attention);                   // ... the context does
  // This project's kernels visit only the selected pages.
  const Prediction own = flex_decode(1 << 19, 2048, "cisa_kernels");
  CHECK(own.cost.attention_cisa.page_visits < 16.0 * (2048 + 128 + 2));
  CHECK(profile_error(
            replaced(kDense, "  page_visit_ns:",
                     "  decode_visits: {value: context, source: \"EST: t\"}\n  page_visit_ns:"))
            .empty());
  CHECK(contains(profile_error(replaced(
                     kDense, "  page_visit_ns:",
                     "  decode_visits: {value: all, source: \"EST: t\"}\n  page_visit_ns:")),
                 "selected"));
  CHECK(contains(profile_error(replaced(kDense, "  page_visit_ns:",
                                        "  decode_visits: {value: context}\n  page_visit_ns:")),
                 "source"));
}

TEST_CASE("cuDNN decode packs at most 16 query heads per work item; the loader checks decode_tiles",
          "[profiles]") {
  ImplCatalog impls = shipped_impls();
  REQUIRE(impls.at("cudnn").decode_tile_rows == 16);
  ImplProfile one_item = impls.at("cudnn");  // the same kernel with one item per KV group
  one_item.decode_tile_rows = 0;
  impls.emplace("cudnn_one_item", one_item);
  Pricer pricer(shipped_cards(), impls, Basis::calibrated);
  // K/V bytes from DRAM of dense decode, r query heads on one KV head, at bound b.
  auto kv = [&](int r, const std::string& impl, Bound b) {
    Point p = point("h200_sxm", Phase::decode, r, 1 << 19, 2048, 1);
    p.dense_impl = impl;
    PointPricing at = pricer.for_point(p);
    for (auto& d : at.dense) d.fill(d[static_cast<int>(b)]);
    return predict(p, at).cost.bytes_dense.kv;
  };
  // r <= 16: one item streams each KV group's history.
  for (int r : {4, 8, 16})
    CHECK(kv(r, "cudnn", Bound::point) == Approx(kv(r, "cudnn_one_item", Bound::point)).epsilon(1e-12));
  // r = 32: two items; the second item's re-reads hit L2 (lo), half of them (point), none (hi).
  const double one = kv(32, "cudnn_one_item", Bound::point);
  CHECK(one == Approx(kv(16, "cudnn", Bound::point)).epsilon(1e-12));
  CHECK(kv(32, "cudnn", Bound::lo) == Approx(one).epsilon(0.01));
  CHECK(kv(32, "cudnn", Bound::point) == Approx(1.5 * one).epsilon(0.01));
  CHECK(kv(32, "cudnn", Bound::hi) == Approx(2.0 * one).epsilon(0.01));
  // The prediction's band carries it: the dense time's lo / hi ends price the two extremes.
  Point d = point("h200_sxm", Phase::decode, 32, 1 << 19, 2048, 1);
  d.dense_impl = "cudnn";
  const Prediction band = predict(d, pricer.for_point(d));
  CHECK(band.dense_hi.attention > 1.6 * band.dense_lo.attention);
  CHECK(band.dense_lo.attention < band.dense.attention);
  CHECK(band.dense.attention < band.dense_hi.attention);
  // Prefill is untouched.
  Point pf = point("h200_sxm", Phase::terminal_prefill, 32, 1 << 17, 2048, 4);
  pf.work.prefill_tokens = 256;
  pf.dense_impl = "cudnn";
  const double a = predict(pf, pricer.for_point(pf)).cost.bytes_dense.kv;
  pf.dense_impl = "cudnn_one_item";
  CHECK(a == predict(pf, pricer.for_point(pf)).cost.bytes_dense.kv);
  // The loader.
  const std::string at = "  page_visit_ns:";
  CHECK(profile_error(replaced(kDense, at,
                               "  decode_tiles: {rows: 16, l2_sharing: none, source: \"EST: t\"}\n" + at))
            .empty());
  CHECK(contains(profile_error(replaced(kDense, at,
                                        "  decode_tiles: {rows: 16, l2_sharing: some, source: \"EST: t\"}\n" + at)),
                 "shared, none or unknown"));
  CHECK(contains(profile_error(replaced(kDense, at, "  decode_tiles: {rows: 16, l2_sharing: none}\n" + at)),
                 "source"));
  CHECK(contains(profile_error(replaced(kDense, at,
                                        "  decode_tiles: {rows: 16, l2_sharing: none, source: \"t\", x: 1}\n" + at)),
                 "x"));
  CHECK(!profile_error(replaced(kDense, at,
                                "  decode_tiles: {rows: 0, l2_sharing: none, source: \"EST: t\"}\n" + at))
             .empty());
}

TEST_CASE("cuDNN and FA2 pack dense query rows across positions; the loader checks dense_rows",
          "[profiles]") {
  ImplCatalog impls = shipped_impls();
  REQUIRE(impls.at("cudnn").dense_rows_packed);
  REQUIRE(impls.at("fa2").dense_rows_packed);
  REQUIRE_FALSE(impls.at("cisa_kernels").dense_rows_packed);  // the kernels' plan: whole positions
  ImplProfile whole = impls.at("cudnn");
  whole.dense_rows_packed = false;
  impls.emplace("cudnn_whole_positions", whole);
  Pricer pricer(shipped_cards(), impls, Basis::calibrated);
  // Dense prefill of P positions, r heads on one KV head: issued FLOPs and row tiles.
  auto dense = [&](int r, int P, const std::string& impl) {
    Point p = point("h200_sxm", Phase::terminal_prefill, r, 1 << 18, 2048, 4);
    p.work.prefill_tokens = P;
    p.dense_impl = impl;
    return predict(p, pricer.for_point(p)).cost.attention_dense;
  };
  // r = 13: whole positions put 9 positions (117 rows) in a 128-row tile, 203 tiles for 1,824
  // positions; packed rows need ceil(13 x 1824 / 128) = 186. Issued FLOPs scale with the tiles
  // (each streams about the same history at 256K).
  const double packed = dense(13, 1824, "cudnn").flops_issued,
               cut = dense(13, 1824, "cudnn_whole_positions").flops_issued;
  CHECK(packed / cut == Approx(186.0 / 203.0).epsilon(0.01));
  // r = 8 divides the tile: the two cuts are the same tiles.
  CHECK(dense(8, 1024, "cudnn").flops_issued ==
        Approx(dense(8, 1024, "cudnn_whole_positions").flops_issued).epsilon(1e-9));
  // Useful FLOPs do not depend on the cut.
  CHECK(dense(13, 1824, "cudnn").flops_useful ==
        Approx(dense(13, 1824, "cudnn_whole_positions").flops_useful).epsilon(1e-12));
  // Decode (one position) is one tile either way.
  Point d = point("h200_sxm", Phase::decode, 13, 1 << 18, 2048, 1);
  d.dense_impl = "cudnn";
  const double dp = predict(d, pricer.for_point(d)).cost.attention_dense.flops_issued;
  d.dense_impl = "cudnn_whole_positions";
  CHECK(dp == predict(d, pricer.for_point(d)).cost.attention_dense.flops_issued);
  // The loader.
  const std::string at = "  page_visit_ns:";
  CHECK(profile_error(
            replaced(kDense, at, "  dense_rows: {value: packed, source: \"MEAS: t\"}\n" + at))
            .empty());
  CHECK(contains(profile_error(replaced(
                     kDense, at, "  dense_rows: {value: folded, source: \"MEAS: t\"}\n" + at)),
                 "positions"));
  CHECK(contains(profile_error(replaced(kDense, at, "  dense_rows: {value: packed}\n" + at)),
                 "source"));
  CHECK(contains(profile_error(replaced(
                     kDense, at, "  dense_rows: {value: packed, source: \"x\", by: 1}\n" + at)),
                 "by"));
}

TEST_CASE("the dense side kept between points equals the dense side priced afresh", "[profiles]") {
  // predict keeps the last dense sides per thread, keyed by the pricing's id and what the dense
  // traffic reads; a copied pricing has no id, so it is priced in full every time.
  Pricer pricer(shipped_cards(), shipped_impls(), Basis::calibrated);
  auto same = [](const Prediction& a, const Prediction& b) {
    CHECK(a.dense_impl == b.dense_impl);
    CHECK(a.dense.attention == b.dense.attention);
    CHECK(a.dense_lo.attention == b.dense_lo.attention);
    CHECK(a.dense_hi.attention == b.dense_hi.attention);
    CHECK(a.cost.bytes_dense.total() == b.cost.bytes_dense.total());
    CHECK(a.cost.attention_dense.dram_bytes == b.cost.attention_dense.dram_bytes);
    CHECK(a.cost.splits_dense == b.cost.splits_dense);
    CHECK((a.dense_own_attention == b.dense_own_attention ||
           (std::isnan(a.dense_own_attention) && std::isnan(b.dense_own_attention))));
  };
  for (const char* card : {"h200_sxm", "b300"})
    for (Phase ph : {Phase::terminal_prefill, Phase::decode, Phase::mtp})
      for (std::int64_t L : {std::int64_t(1) << 17, std::int64_t(1) << 20})
        for (int batch : {1, 16}) {
          for (std::int64_t K : {512, 2048, 4096})
            for (int G : {1, 4, 16}) {
              Point p = point(card, ph, 32, L, K, G);
              p.work.batch = batch;
              p.work.prefill_tokens = 1024;
              p.work.mtp_tokens = 2;
              const PointPricing& kept = pricer.for_point(p);
              REQUIRE(kept.id.value != 0);
              const PointPricing fresh = kept;  // a copy: no id
              REQUIRE(fresh.id.value == 0);
              INFO(card << " phase " << static_cast<int>(ph) << " L " << L << " B " << batch
                        << " K " << K << " G " << G);
              const Prediction a = predict(p, kept), b = predict(p, fresh);
              same(a, b);
              same(predict(p, kept), b);  // a second time: from the kept side
            }
        }
  // A copy that its owner changes is priced with the change (no stale answer).
  Point d = point("h200_sxm", Phase::decode, 32, 1 << 19, 2048, 1);
  d.dense_impl = "cudnn";
  const PointPricing& kept = pricer.for_point(d);
  const double before = predict(d, kept).dense.attention;
  PointPricing slow = kept;
  for (auto& c : slow.dense)
    for (auto& b : c) b.rates.attention_read_Bps *= 0.5;
  CHECK(predict(d, slow).dense.attention > 1.5 * before);
  CHECK(predict(d, kept).dense.attention == before);
}

TEST_CASE("the low end of a sharing kernel's band reads each wave's union of picks once",
          "[profiles][traffic]") {
  // Session 21: DRAM-bound CISA prefill at ~1M tokens ran faster than the fixed-point sharing
  // estimate allows on both Hoppers; the band's low end is the compulsory misses alone.
  ImplCatalog impls = shipped_impls();
  ImplProfile none = impls.at("cisa_kernels");
  none.name = "tnoshare";
  none.l2_sharing = L2Sharing::none;
  impls.emplace("tnoshare", none);
  Pricer pricer(shipped_cards(), impls, Basis::calibrated);
  Point p = point("h100_sxm", Phase::terminal_prefill, 4, 1 << 20, 4096, 4);
  const Prediction shared = predict(p, pricer.for_point(p));
  p.cisa_impl = "tnoshare";
  const Prediction alone = predict(p, pricer.for_point(p));
  INFO("shared lo/point/hi " << shared.cisa_lo.attention << " " << shared.cisa.attention << " "
                             << shared.cisa_hi.attention << "; none lo/point "
                             << alone.cisa_lo.attention << " " << alone.cisa.attention);
  CHECK(shared.cisa_lo.attention < 0.9 * shared.cisa.attention);  // lockstep: far fewer DRAM bytes
  CHECK(shared.cisa.attention <= alone.cisa.attention);
  // A kernel that does not share keeps the band of its figures alone (no lockstep low end).
  CHECK(alone.cisa_lo.attention > 0.9 * alone.cisa.attention);
  CHECK(shared.cisa_lo.scoring == alone.cisa_lo.scoring);
}

TEST_CASE("the 32-row decode attention's floor and gather rate come together or not at all",
          "[profiles]") {
  const std::string floor =
      "  decode_m32_floor_us:\n    h200_sxm: {value: 14.0, source: \"MEAS: test\"}\n";
  const std::string gather =
      "  decode_m32_gather_bw_tbs:\n    h200_sxm: {value: 3.0, source: \"MEAS: test\"}\n";
  CHECK(profile_error(kDense + floor + gather).empty());
  const std::string floor_only = profile_error(kDense + floor);
  CHECK(contains(floor_only, "profile.yaml:15: field 'attention.decode_m32_floor_us'"));
  CHECK(contains(floor_only, "without 'decode_m32_gather_bw_tbs'"));
  CHECK(contains(profile_error(kDense + gather), "without 'decode_m32_floor_us'"));
  CHECK(contains(profile_error(kDense + floor + replaced(gather, "value: 3.0", "value: -3")),
                 "field 'attention.decode_m32_gather_bw_tbs.h200_sxm'"));
  // From a calibration file: the same rule, located in that file.
  const fs::path dir = fs::temp_directory_path() / "cisa_test_decode_m32";
  fs::create_directories(dir);
  const fs::path cal = dir / "cal.yaml";
  std::ofstream(cal) << "calibration:\n  card_name: h200_sxm\n  implementation:\n"
                     << "    name: tdense\n    attention:\n"
                     << "      decode_m32_floor_us: {value: 14.0, source: \"MEAS: test\"}\n";
  const std::string e = profile_error(kDense + "calibrations: [" + cal.string() + "]\n");
  CHECK(
      contains(e, "cal.yaml:6: field 'calibration.implementation.attention.decode_m32_floor_us'"));
  CHECK(contains(e, "without 'decode_m32_gather_bw_tbs'"));
  std::ofstream(cal, std::ios::app)
      << "      decode_m32_gather_bw_tbs: {value: 3.0, source: \"MEAS: test\"}\n";
  const YamlDoc doc = parse_yaml(kDense + "calibrations: [" + cal.string() + "]\n", "profile.yaml");
  const ImplProfile p = parse_impl(doc, doc.root, "");
  REQUIRE(p.attention_decode_m32_gather_bw_tbs.cards.size() == 1);
  CHECK(p.attention_decode_m32_gather_bw_tbs.cards[0].second.value == 3.0);
}

TEST_CASE("the top-k output pass per CTA prices the cards that measured it; per-SM calibrations keep theirs",
          "[profiles]") {
  Pricer pricer(shipped_cards(), shipped_impls(), Basis::calibrated);
  const Rates h100 = pricer.for_point(point("h100_sxm", Phase::terminal_prefill, 8, 1 << 19, 2048, 4)).cisa[1].rates;
  const Rates h200 = pricer.for_point(point("h200_sxm", Phase::terminal_prefill, 8, 1 << 19, 2048, 4)).cisa[1].rates;
  const Rates b300 = pricer.for_point(point("b300", Phase::terminal_prefill, 8, 1 << 19, 2048, 4)).cisa[1].rates;
  // Both shipped calibrations (session 25) measured the per-CTA rate; the B300 measured neither
  // form and takes the per-CTA one, transferred.
  CHECK(h100.topk_ids_per_s_per_cta > 0);
  CHECK(h100.topk_ids_per_s_per_sm == 0);
  CHECK(h200.topk_ids_per_s_per_cta > 0);
  CHECK(b300.topk_ids_per_s_per_cta > 0);
  CHECK(b300.topk_ids_per_s_per_sm == 0);
  // A profile whose calibration measured the per-SM form (session 17's, archived) keeps it.
  Point old = point("h200_sxm", Phase::terminal_prefill, 8, 1 << 19, 2048, 4);
  old.cisa_impl = "cisa_kernels_2026_12_04c";
  const Rates h200_old = pricer.for_point(old).cisa[1].rates;
  CHECK(h200_old.topk_ids_per_s_per_cta == 0);
  CHECK(h200_old.topk_ids_per_s_per_sm > 0);
  // The time uses the form the rates carry, never both.
  TopkTerms t;
  t.ids = 1000;
  t.row_ids = 4000;
  CHECK(topk_id_time(t, h100) == Approx(4000 / h100.topk_ids_per_s_per_cta));
  CHECK(topk_id_time(t, h200_old) == Approx(1000 / h200_old.topk_ids_per_s_per_sm));
}

TEST_CASE("the schedule of shared selected pages per tile class: convoy, staggered or the middle",
          "[profiles][traffic]") {
  // Session 26: 16-row launches of this project's kernels count about the staggered estimate,
  // 32- and 64-row ones lie between it and the per-wave union of picks (the convoy), 128-row ones
  // about the union; the point follows the profile's class.
  ImplCatalog impls = shipped_impls();
  const auto variant = [&](const std::string& name, SelectedSchedule s) {
    ImplProfile v = impls.at("cisa_kernels");
    v.name = name;
    for (auto& c : v.selected_schedule) c = s;
    impls.emplace(name, v);
  };
  variant("tstag", SelectedSchedule::staggered);
  variant("tconvoy", SelectedSchedule::convoy);
  variant("tmiddle", SelectedSchedule::unknown);
  Pricer pricer(shipped_cards(), impls, Basis::calibrated);
  for (int r : {4, 16}) {  // 16-row and 64-row tiles (G 4)
    Point p = point("h100_sxm", Phase::terminal_prefill, r, 1 << 20, 2048, 4);
    p.work.batch = 2;
    auto bytes = [&](const std::string& impl) {
      p.cisa_impl = impl;
      return predict(p, pricer.for_point(p)).cost.attention_cisa.dram_bytes;
    };
    auto lo_time = [&](const std::string& impl) {
      p.cisa_impl = impl;
      return predict(p, pricer.for_point(p)).cisa_lo.attention;
    };
    const double stag = bytes("tstag"), convoy = bytes("tconvoy"), middle = bytes("tmiddle");
    INFO("r " << r << ": staggered " << stag << ", convoy " << convoy << ", middle " << middle);
    CHECK(convoy < 0.9 * stag);
    CHECK(middle == Approx(0.5 * (stag + convoy)).epsilon(1e-6));
    // The band's low end is the convoy at every schedule; the shipped profile picks per class.
    CHECK(lo_time("tstag") == lo_time("tconvoy"));
    CHECK(bytes("cisa_kernels") == (r == 4 ? stag : middle));
  }
}

TEST_CASE("a CISA profile sharing selected pages states their schedule per tile class",
          "[profiles]") {
  const std::string cisa =
      replaced(
          replaced(kDense, "roles: [dense]", "roles: [dense, cisa]"), "  floor_us:",
          "  gather_bw_tbs:\n    h200_sxm: {value: 4.0, source: \"MEAS: test\"}\n  floor_us:") +
      "selection_from: cisa_kernels\n";
  const std::string shared = "{value: shared, source: \"EST: test\"}";
  const std::string sched =
      "{value: shared, source: \"EST: test\", schedule: {m16: staggered, m32: unknown, "
      "m64: convoy, m128: convoy, source: \"EST: t\"}}";
  CHECK(contains(profile_error(cisa), "schedule"));  // shared, no schedule
  CHECK(profile_error(replaced(cisa, shared, sched)).empty());
  CHECK(profile_error(replaced(cisa, shared, "{value: none, source: \"EST: test\"}")).empty());
  CHECK(profile_error(kDense).empty());  // dense only: no selected pages
  CHECK(contains(
      profile_error(replaced(cisa, shared, replaced(sched, "m64: convoy", "m64: lockstep"))),
      "expected staggered"));
  CHECK(contains(profile_error(replaced(cisa, shared, replaced(sched, "m128: convoy, ", ""))),
                 "m128"));
  CHECK(
      contains(profile_error(replaced(cisa, shared, replaced(sched, ", source: \"EST: t\"}", "}"))),
               "source"));
  CHECK(contains(profile_error(replaced(cisa, shared, replaced(sched, "m16:", "m8:"))), "m8"));
  const YamlDoc doc = parse_yaml(replaced(cisa, shared, sched), "p.yaml");
  const ImplProfile p = parse_impl(doc, doc.root, "");
  CHECK(p.selected_schedule[0] == SelectedSchedule::staggered);
  CHECK(p.selected_schedule[1] == SelectedSchedule::unknown);
  CHECK(p.selected_schedule[3] == SelectedSchedule::convoy);
}

TEST_CASE("visit rounds: one CTA per SM gives the waves; co-resident CTAs price a lone last round",
          "[profiles][roofline]") {
  for (double ctas : {1.0, 100.0, 132.0, 133.0, 1000.0})
    CHECK(visit_rounds(ctas, 132, 1, 1.7) == std::ceil(ctas / 132));
  // Two per SM: full rounds cost two CTA-times; a busiest SM with two CTAs as well, whatever the
  // lone figure; one CTA alone costs the lone figure (1 = the SM's share, 2 = no gain).
  CHECK(visit_rounds(256, 132, 2, 1.5) == 2.0);
  CHECK(visit_rounds(1024, 132, 2, 1.5) == 8.0);
  CHECK(visit_rounds(128, 132, 2, 1.5) == 1.5);
  CHECK(visit_rounds(288, 132, 2, 1.5) == 3.5);
  CHECK(visit_rounds(128, 132, 2, 1.0) == 1.0);
  CHECK(visit_rounds(128, 132, 2, 2.0) == 2.0);
  // Four per SM: a last round of two CTAs on the busiest SM lies between lone and four.
  CHECK(visit_rounds(200, 132, 4, 2.5) == Approx(2.5 + 1.0 * (4 - 2.5) / 3));
}

TEST_CASE("Flex prefill: a lone CTA per SM is priced between the per-SM visit time and twice it",
          "[profiles]") {
  // impl_fit's two prefill shapes (r 8, G 16: 128-row blocks): 64K B 8 fills two CTAs per SM, 1M B
  // 4 one; the lone shape's time per visit sits in [1, 2] x the per-SM figure, point 1.5.
  Pricer pricer(shipped_cards(), shipped_impls(), Basis::calibrated);
  auto flex = [&](std::int64_t L, int B, std::int64_t K) {
    Point p = point("h200_sxm", Phase::terminal_prefill, 8, L, K, 16);
    p.work.batch = B;
    p.work.prefill_tokens = 512;
    p.cisa_impl = "flex";
    return predict(p, pricer.for_point(p));
  };
  const Prediction two = flex(1 << 16, 8, 2048), lone = flex(1 << 20, 4, 4096);
  const auto per_visit = [](const Prediction& x, double t) {
    return t / x.cost.attention_cisa.page_visits;
  };
  REQUIRE(two.cost.attention_cisa.tile_rows == 128);
  const double r_point = per_visit(lone, lone.cisa.attention) / per_visit(two, two.cisa.attention);
  // 64K: 256 CTAs of 264 slots (two rounds' time); 1M: 128 lone CTAs (1.5 of one round) for
  // twice the visits per CTA: per visit 1.5 / 2 x 2 = 1.5 x the 64K shape's.
  CHECK(r_point == Approx(1.5).epsilon(0.02));
  CHECK(per_visit(lone, lone.cisa_lo.attention) / per_visit(two, two.cisa_lo.attention) ==
        Approx(1.0).epsilon(0.05));
  // The high end: a lone CTA gains nothing (2 per-SM visit times, 4/3 of the point's 1.5; the
  // per-visit figure's own band adds 5 %, and the 64K shape may bind on the band's slow gather).
  CHECK(lone.cisa_hi.attention / lone.cisa.attention >= 4.0 / 3.0);
  // The loader: 1-8 with a source.
  const auto with = [&](const std::string& v) {
    return replaced(kDense,
                    "  page_visit_ns:", "  prefill_ctas_per_sm: " + v + "\n  page_visit_ns:");
  };
  CHECK(profile_error(with("{value: 2, source: \"EST: t\"}")).empty());
  CHECK(contains(profile_error(with("{value: 0, source: \"EST: t\"}")), "prefill_ctas_per_sm"));
  CHECK(contains(profile_error(with("{value: 9, source: \"EST: t\"}")), "prefill_ctas_per_sm"));
  CHECK(contains(profile_error(with("{value: 2}")), "source"));
  CHECK(contains(profile_error(with("{value: 2, source: \"EST: t\", per: sm}")), "per"));
  const YamlDoc doc = parse_yaml(with("{value: 3, source: \"EST: t\"}"), "p.yaml");
  CHECK(parse_impl(doc, doc.root, "").prefill_ctas_per_sm == 3);
}
