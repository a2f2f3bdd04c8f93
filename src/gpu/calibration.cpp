#include "gpu/calibration.hpp"

#include <fmt/format.h>

#include <iostream>
#include <sstream>

#include "cisa/errors.hpp"
#include "cisa/evaluate.hpp"
#include "cisa/presets.hpp"
#include "cisa/version.hpp"
#include "gpu/probe.hpp"
#include "model/projection_fit.hpp"
#ifdef CISA_HAVE_MEASURE
#include "gpu/kernel_rates.hpp"
#endif

namespace cisa::gpu {

#ifdef CISA_HAVE_MEASURE
namespace {

// One grid of the index projection's cuBLAS GEMM timed as the measure path calls it and fitted in
// `form`. `note` carries the method (ok) or why no figure is written.
ProjectionFit calibrate_projection_grid(const std::string& what,
                                        const std::vector<GemmShape>& shapes, ProjectionForm form) {
  std::cerr << "  " << what << " (cuBLAS GEMM, " << shapes.size() << " shapes) ... " << std::flush;
  std::vector<ProjectionSample> samples;
  std::string list;
  for (const GemmTiming& t : probe_projection_gemm(shapes)) {
    samples.push_back({double(t.shape.m), double(t.shape.n), double(t.shape.k), t.ms * 1e-3});
    list += fmt::format("{}{}x{}x{}: {:.1f} us", list.empty() ? "" : "; ", t.shape.m, t.shape.n,
                        t.shape.k, t.ms * 1e3);
  }
  ProjectionFit pf = fit_projection(samples, form);
  const bool flops = form == ProjectionForm::bytes_and_flops;
  const std::string method =
      "cuBLAS BF16 GEMM out[m x n] = W[m x k] X[k x n] (fp32 accumulate) as the measure path's "
      "index projection calls it, each after a 256 MiB L2-flush memset, median of 9, " +
      fmt::format("{} {} shapes (m x n x k): ", shapes.size(), what) + list +
      fmt::format(
          "; t = floor + {} by least squares of relative residuals: rms {:.1f} %, median "
          "{:.1f} %, worst {:.1f} %; the band is the rms: residual spread {:.1f}%",
          flops ? "max(bytes / read rate, FLOPs / MMA rate)"
                : "bytes / read rate (FLOPs negligible: no MMA term)",
          100 * pf.rms_rel, 100 * pf.median_rel, 100 * pf.worst_rel, 200 * pf.rms_rel);
  pf.note = pf.ok ? method : pf.note + "; " + method;
  std::cerr << fmt::format("floor {:.1f} us, {:.2f} TB/s", pf.floor_s * 1e6, pf.read_Bps / 1e12)
            << (flops ? fmt::format(", {:.0f} TF/s", pf.mma_flops / 1e12) : std::string())
            << fmt::format(" (rms {:.1f} %)\n", 100 * pf.rms_rel);
  return pf;
}

// The prefill grid: session 11's fit set of its 180-shape grid (m 128-512) and m 1,024 (8 KV
// heads), n 1K-64K tokens: 32 shapes, bytes and FLOPs.
ProjectionFit calibrate_projection() {
  std::vector<GemmShape> shapes;
  for (int m : {128, 256, 512, 1024})
    for (int k : {4096, 8192})
      for (int n : {1024, 4096, 16384, 65536}) shapes.push_back({m, n, k});
  return calibrate_projection_grid("index projection", shapes, ProjectionForm::bytes_and_flops);
}

// The decode step's skinny GEMMs (one column per sequence, n = batch): 24 shapes, bytes alone.
ProjectionFit calibrate_projection_decode() {
  std::vector<GemmShape> shapes;
  for (int m : {128, 256, 512, 1024})
    for (int k : {4096, 8192})
      for (int n : {4, 32, 256}) shapes.push_back({m, n, k});
  ProjectionFit pf =
      calibrate_projection_grid("decode index projection", shapes, ProjectionForm::bytes_only);
  if (pf.ok && !(pf.floor_s > 0)) {  // the profile takes both figures or neither
    pf.ok = false;
    pf.note = "the fitted floor is 0; " + pf.note;
  }
  return pf;
}

}  // namespace
#endif

std::string calibration_yaml(const std::string& card_name) {
  const DeviceInfo dev = query_device();
  if (!dev.available)
    throw InputError({"command line", 0, "calibrate"}, dev.reason + " (calibrate needs a GPU)");
  std::cerr << "calibrating " << dev.name << " (" << dev.sms << " SMs)\n";
  const std::string date = utc_now_iso8601();
  const std::string tag = "MEAS: cisa-sim calibrate " + tool_version() + " (git " + git_hash() +
                          ") on " + dev.name + ", " + date;
  std::cerr << "  read bandwidth ... " << std::flush;
  const auto rd = probe_read_bandwidth_tbs();
  std::cerr << fmt::format("{:.3f} TB/s\n  write bandwidth ... ", rd.value) << std::flush;
  const auto wr = probe_write_bandwidth_tbs();
  std::cerr << fmt::format("{:.3f} TB/s\n  copy bandwidth ... ", wr.value) << std::flush;
  const auto cp = probe_copy_bandwidth_tbs();
  std::cerr << fmt::format("{:.3f} TB/s\n  BF16 GEMM ... ", cp.value) << std::flush;
  const auto mm = probe_gemm_bf16_tflops();
  std::cerr << fmt::format("{:.1f} TF/s\n  launch overhead ... ", mm.value) << std::flush;
  const auto lo = probe_launch_overhead_us();
  std::cerr << fmt::format("{:.2f} us\n  isolated kernel floor ... ", lo.value) << std::flush;
  const auto kf = probe_kernel_floor_us();
  std::cerr << fmt::format("{:.2f} us\n  host-to-device copy ... ", kf.value) << std::flush;
  const auto hl = probe_h2d_latency_us();
  const auto hb = probe_h2d_bandwidth_gbs();
  std::cerr << fmt::format("{:.2f} us + {:.1f} GB/s\n", hl.value, hb.value);
  auto fig = [&](const char* indent, const char* key, const ProbeResult& r) {
    return fmt::format("{}{}: {{value: {:.4g}, source: \"{}; {}; spread {:.1f}%\"}}\n", indent, key,
                       r.value, tag, r.method, 100 * r.spread);
  };
  std::ostringstream y;
  y << "# Written by cisa-sim calibrate on " << date << " for " << dev.name << ".\n"
    << "# `card:` the card's own microbenchmarks (read by its GPU preset); `implementation:` this\n"
    << "# project's kernel classes on it (read by models/impl/cisa_kernels.yaml).\n"
    << "calibration:\n"
    << "  card_name: " << card_name << "\n"
    << "  basis: \"measured on " << dev.name << " by cisa-sim calibrate " << tool_version() << ", "
    << date << "\"\n"
    << "  card:\n"
    << fig("    ", "read_bw_tbs", rd) << fig("    ", "write_bw_tbs", wr)
    << fig("    ", "copy_bw_tbs", cp) << fig("    ", "gemm_bf16_tflops", mm)
    << fig("    ", "launch_overhead_us", lo) << fig("    ", "kernel_floor_us", kf)
    << fig("    ", "h2d_bw_gbs", hb) << fig("    ", "h2d_latency_us", hl);
#ifdef CISA_HAVE_MEASURE
  std::cerr << "  kernel classes (attention, floors, top-k, scoring) ... " << std::flush;
  const ImplProfile kernels = impl_preset("cisa_kernels");
  KernelShape shape = structure_of(kernels);  // the profile's structure, as the model resolves it
  shape.l2_capacity_bytes = dev.l2_bytes;
  Rates card;
  card.read_bw_Bps = rd.value * 1e12;
  card.write_bw_Bps = wr.value * 1e12;
  card.gemm_flops = mm.value * 1e12;
  card.setup_Bps = hb.value * 1e9;  // the setup copy runs at the card's host-to-device bandwidth
  card.setup_inline_bytes = kernels.setup_inline_bytes;  // smaller copies: the small-copy latency
  card.sms = dev.sms;
  const KernelRates kr = measure_kernel_rates(dev.sms, shape, card);
  std::cerr << fmt::format(
      "  {:.1f} TF/s, {:.2f} TB/s; page visit ns*SM (16/32/64/128 rows): {:.0f} {:.0f} {:.0f} "
      "{:.0f}; floors "
      "{:.1f}/{:.1f}/{:.1f} us; top-k {:.2f} (L2 {:.2f}) key-passes/ns/SM, {:.3f} IDs/ns/CTA; "
      "scoring "
      "{:.2f}/{:.2f} TB/s; setup {:.1f} us + {:.1f} GB/s\n",
      kr.attention_tflops, kr.attention_read_bw_tbs, kr.attention_page_ns[0],
      kr.attention_page_ns[1], kr.attention_page_ns[2], kr.attention_page_ns[3],
      kr.attention_floor_us, kr.scoring_floor_us, kr.topk_floor_us,
      kr.topk_elem_passes_per_ns_per_sm, kr.topk_l2_elem_passes_per_ns_per_sm,
      kr.topk_out_ids_per_ns_per_cta, kr.scoring_read_bw_tbs, kr.scoring_write_bw_tbs,
      kr.setup_floor_us, hb.value);
  const ProjectionFit pf = calibrate_projection();
  const ProjectionFit pd = calibrate_projection_decode();
  auto meas = [&](const char* indent, const char* key, double v, const std::string& method) {
    return v > 0 ? fmt::format("{}{}: {{value: {:.4g}, source: \"{}; {}\"}}\n", indent, key, v, tag,
                               method)
                 : fmt::format("{}# {}: not written: the measurement was not physical ({})\n",
                               indent, key, method);
  };
  const char* a = "      ";
  const char* v = "        ";
  y << "  implementation:\n    name: cisa_kernels\n    basis: \"this project's kernels (kernels/) "
       "on "
    << dev.name
    << "; steps timed with each repetition queued behind a 1 ms spin kernel after its L2 flush "
       "(the host's submission not timed; src/gpu/synthetic.cuh Timer)\"\n    attention:\n"
    << meas(a, "mma_tflops", kr.attention_tflops, kr.attention_method)
    << meas(a, "read_bw_tbs", kr.attention_read_bw_tbs, kr.attention_read_method)
    << meas(a, "gather_bw_tbs", kr.attention_gather_bw_tbs, kr.attention_gather_method)
    << meas(a, "floor_us", kr.attention_floor_us, kr.floor_method + ", per attention launch")
    << meas(a, "decode_floor_us", kr.attention_decode_floor_us, kr.attention_decode_method)
    << meas(a, "decode_gather_bw_tbs", kr.attention_decode_gather_bw_tbs,
            kr.attention_decode_method)
    << meas(a, "decode_m32_floor_us", kr.attention_decode_m32_floor_us,
            kr.attention_decode_m32_method)
    << meas(a, "decode_m32_gather_bw_tbs", kr.attention_decode_m32_gather_bw_tbs,
            kr.attention_decode_m32_method)
    << a << "page_visit_ns:\n"
    << meas(v, "m16", kr.attention_page_ns[0], kr.attention_page_method)
    << meas(v, "m32", kr.attention_page_ns[1], kr.attention_page_method)
    << meas(v, "m64", kr.attention_page_ns[2], kr.attention_page_method)
    << meas(v, "m128", kr.attention_page_ns[3], kr.attention_page_method) << "    selection:\n"
    << meas(a, "scoring_read_bw_tbs", kr.scoring_read_bw_tbs, kr.scoring_method)
    << meas(a, "scoring_write_bw_tbs", kr.scoring_write_bw_tbs, kr.scoring_method)
    << meas(a, "scoring_floor_us", kr.scoring_floor_us,
            kr.floor_method + ", scoring component (2 launches) less its CTA's 2 load steps")
    << meas(a, "scoring_step_us", kr.scoring_tile_us,
            "cisa_kernels step of one selection with N_e = 257 (a CTA walks 4 tiles of 64 "
            "representatives) vs "
            "N_e = 112 (2 tiles): time difference / 2, median of 31")
    << meas(a, "topk_keys_per_ns_per_sm", kr.topk_elem_passes_per_ns_per_sm, kr.topk_method)
    << meas(a, "topk_l2_keys_per_ns_per_sm", kr.topk_l2_elem_passes_per_ns_per_sm,
            kr.topk_l2_method)
    << meas(a, "topk_ids_per_ns_per_cta", kr.topk_out_ids_per_ns_per_cta, kr.topk_method)
    << meas(a, "topk_floor_us", kr.topk_floor_us, kr.topk_method)
    << meas(a, "topk_cta_us", kr.topk_cta_us, kr.topk_method)
    << meas(a, "topk_cluster_us", kr.topk_cluster_us, kr.topk_method)
    << meas(a, "topk_decode_floor_us", kr.topk_decode_floor_us, kr.topk_decode_method)
    << (kr.topk_decode_floor_us > 0 && kr.topk_decode_cluster_us <= 0
            ? std::string(a) +
                  "# topk_decode_cluster_us: not written: the decode fit found no merge cost (no "
                  "such term)\n"
            : meas(a, "topk_decode_cluster_us", kr.topk_decode_cluster_us, kr.topk_decode_method))
    << meas(a, "topk_decode_keys_per_ns_per_sm", kr.topk_decode_keys_per_ns_per_sm,
            kr.topk_decode_method)
    << meas(a, "setup_latency_us", kr.setup_floor_us, kr.setup_method)
    << meas(a, "projection_floor_us", pf.ok ? pf.floor_s * 1e6 : 0.0, pf.note)
    << meas(a, "projection_read_bw_tbs", pf.ok ? pf.read_Bps / 1e12 : 0.0, pf.note)
    << meas(a, "projection_mma_tflops", pf.ok ? pf.mma_flops / 1e12 : 0.0, pf.note)
    << meas(a, "projection_decode_floor_us", pd.ok ? pd.floor_s * 1e6 : 0.0, pd.note)
    << meas(a, "projection_decode_read_bw_tbs", pd.ok ? pd.read_Bps / 1e12 : 0.0, pd.note) << a
    << "# other_floor_us (the form before the projection figures; not used with them): "
    << fmt::format("{:.4g}", kr.other_floor_us) << " (" << kr.other_method << ")\n"
    << meas(a, "rep_update_floor_us", kr.rep_update_floor_us, kr.rep_update_method)
    << meas(a, "scoring_decode_floor_us", kr.scoring_decode_floor_us, kr.scoring_decode_method)
    << meas(a, "scoring_decode_read_bw_tbs", kr.scoring_decode_read_bw_tbs,
            kr.scoring_decode_method)
    << (kr.scoring_prefill_floor_us > 0
            ? fmt::format("{}scoring_prefill_streams: {}  # the form of the fit below\n", a,
                          to_string(kr.scoring_prefill_streams))
            : std::string())
    << meas(a, "scoring_prefill_floor_us", kr.scoring_prefill_floor_us, kr.scoring_prefill_method)
    << meas(a, "scoring_prefill_read_bw_tbs", kr.scoring_prefill_read_bw_tbs,
            kr.scoring_prefill_method)
    << meas(a, "scoring_prefill_write_bw_tbs", kr.scoring_prefill_write_bw_tbs,
            kr.scoring_prefill_method)
    << (kr.scoring_prefill_floor_us > 0 && kr.scoring_prefill_query_us <= 0
            ? std::string(a) +
                  "# scoring_prefill_query_us: not written: the fit found no per-query cost (no "
                  "such term)\n"
            : meas(a, "scoring_prefill_query_us", kr.scoring_prefill_query_us,
                   kr.scoring_prefill_method))
    << (kr.scoring_prefill_floor_us > 0 && kr.scoring_prefill_mma_tflops <= 0
            ? std::string(a) +
                  "# scoring_prefill_mma_tflops: not written: no shape was bound by its MMAs (no "
                  "such term)\n"
            : meas(a, "scoring_prefill_mma_tflops", kr.scoring_prefill_mma_tflops,
                   kr.scoring_prefill_method));
#endif
  return y.str();
}

}  // namespace cisa::gpu
