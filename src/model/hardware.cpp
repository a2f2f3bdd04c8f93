#include "model/hardware.hpp"

#include <cctype>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace cisa {

std::string to_string(Basis b) {
  return b == Basis::calibrated ? "calibrated" : "speed_of_light";
}

Basis parse_basis(const std::string& s) {
  if (s == "calibrated") return Basis::calibrated;
  if (s == "speed_of_light") return Basis::speed_of_light;
  throw std::invalid_argument("unknown basis '" + s + "' (expected calibrated or speed_of_light)");
}

namespace {

// Value at one end of the band. `rate`: larger is faster (lo time takes the high end).
double at(const Figure& f, Bound b, bool rate) {
  if (b == Bound::point) return f.value;
  const Band band = band_of(f);
  const bool fast = b == Bound::lo;
  return f.value * ((fast == rate) ? band.hi : band.lo);
}

void need(const Figure& f, const std::string& what, const std::string& who) {
  if (!(f.value > 0) || !std::isfinite(f.value))
    throw std::invalid_argument(who + ": " + what + " must be a finite number > 0, got " +
                                std::to_string(f.value));
}

}  // namespace

CardBench transfer_card(const Hardware& from, const Hardware& to) {
  if (!from.has_card)
    throw std::invalid_argument("card '" + from.name + "' has no measured bench to transfer");
  const CardBench& s = from.card;
  CardBench c;
  c.basis = "transferred from " + from.name + " (" + s.basis + ") by fraction of the datasheet";
  const double bw = to.hbm_bw_tbs.value / from.hbm_bw_tbs.value;
  const double mma = to.bf16_tflops.value / from.bf16_tflops.value;
  const std::string bw_rule = "same fraction of the datasheet HBM bandwidth";
  c.read_bw_tbs = transferred(s.read_bw_tbs, bw, bw_rule, from.name);
  c.write_bw_tbs = transferred(s.write_bw_tbs, bw, bw_rule, from.name);
  c.copy_bw_tbs = transferred(s.copy_bw_tbs, bw, bw_rule, from.name);
  c.gemm_bf16_tflops = transferred(s.gemm_bf16_tflops, mma,
                                   "same fraction of the datasheet dense BF16 peak", from.name);
  const std::string same = "same time (EST: launch path and host copy alike across these cards)";
  c.launch_overhead_us = transferred(s.launch_overhead_us, 1.0, same, from.name);
  c.kernel_floor_us = transferred(s.kernel_floor_us, 1.0, same, from.name);
  c.h2d_bw_gbs = transferred(s.h2d_bw_gbs, 1.0, same, from.name);
  c.h2d_latency_us = transferred(s.h2d_latency_us, 1.0, same, from.name);
  return c;
}

Rates card_rates(const Hardware& hw, Basis basis, Bound b) {
  Rates r;
  r.basis = basis;
  r.sms = static_cast<int>(hw.sms.value);
  r.l2_capacity_bytes = std::isnan(hw.l2_mb.value) ? 0.0 : hw.l2_mb.value * 1e6;
  if (basis == Basis::speed_of_light) {
    r.read_bw_Bps = r.write_bw_Bps = hw.hbm_bw_tbs.value * 1e12;
    r.gemm_flops = hw.bf16_tflops.value * 1e12;
    r.projection_read_Bps = r.read_bw_Bps;
    r.projection_flops = r.gemm_flops;
    r.source = "speed of light: datasheet bandwidth and BF16 rate of " + hw.display_name;
    return r;
  }
  if (!hw.has_card)
    throw std::invalid_argument(
        "GPU '" + hw.name +
        "' has no card bench: run `cisa-sim calibrate` on it, add "
        "`card: {transfer_from: <measured card>}` to its preset, or use basis: speed_of_light");
  const CardBench& c = hw.card;
  for (const auto& [f, what] : {std::pair{&c.read_bw_tbs, "card.read_bw_tbs"},
                                {&c.write_bw_tbs, "card.write_bw_tbs"},
                                {&c.gemm_bf16_tflops, "card.gemm_bf16_tflops"},
                                {&c.kernel_floor_us, "card.kernel_floor_us"}})
    need(*f, what, "GPU '" + hw.name + "'");
  r.read_bw_Bps = at(c.read_bw_tbs, b, true) * 1e12;
  r.write_bw_Bps = at(c.write_bw_tbs, b, true) * 1e12;
  r.gemm_flops = at(c.gemm_bf16_tflops, b, true) * 1e12;
  r.launch_s = at(c.launch_overhead_us, b, false) * 1e-6;
  r.projection_floor_s = r.rep_update_floor_s = at(c.kernel_floor_us, b, false) * 1e-6;
  r.projection_read_Bps = r.read_bw_Bps;
  r.projection_flops = r.gemm_flops;
  r.source = "card: " + c.basis;
  return r;
}

Rates make_rates(const Hardware& hw, const ResolvedImpl& im, Basis basis, Bound b) {
  Rates r = card_rates(hw, basis, b);
  if (basis == Basis::speed_of_light) {
    // Datasheet peaks everywhere; no floors; top-k limited by shared-memory bandwidth
    // (128 B/clock/SM = 32 fp32 keys at an assumed 1.98 GHz boost clock).
    r.attention_flops = r.gemm_flops;
    r.attention_read_Bps = r.attention_gather_Bps = r.scoring_read_bw_Bps =
        r.scoring_decode_read_bw_Bps = r.read_bw_Bps;
    r.scoring_write_bw_Bps = r.write_bw_Bps;
    r.topk_keys_per_s_per_sm = r.topk_l2_keys_per_s_per_sm = 32.0 * 1.98e9;
    r.topk_ids_per_s_per_sm = INFINITY;
    r.setup_Bps = INFINITY;
    r.source += "; structure of implementation " + im.name;
    return r;
  }
  const std::string who = "implementation '" + im.name + "' on " + hw.name;
  need(im.mma_tflops, "mma_tflops", who);
  need(im.read_bw_tbs, "read_bw_tbs", who);
  r.attention_flops = at(im.mma_tflops, b, true) * 1e12;
  r.attention_read_Bps = at(im.read_bw_tbs, b, true) * 1e12;
  if (im.prices_cisa) {
    need(im.gather_bw_tbs, "gather_bw_tbs", who);
    r.attention_gather_Bps = at(im.gather_bw_tbs, b, true) * 1e12;
    r.attention_decode_own = im.attention_decode_term;
    if (im.attention_decode_term) {
      r.attention_decode_floor_s = at(im.attention_decode_floor_us, b, false) * 1e-6;
      r.attention_decode_gather_Bps = at(im.attention_decode_gather_bw_tbs, b, true) * 1e12;
      r.attention_decode_m32_floor_s = at(im.attention_decode_m32_floor_us, b, false) * 1e-6;
      r.attention_decode_m32_gather_Bps = at(im.attention_decode_m32_gather_bw_tbs, b, true) * 1e12;
    }
  }
  r.attention_floor_s = at(im.attention_floor_us, b, false) * 1e-6;
  if (im.page_visits)
    for (int i = 0; i < 4; ++i) r.attention_page_s[i] = at(im.page_visit_ns[i], b, false) * 1e-9;
  if (im.page_visits && im.page_visit_decode)
    r.attention_page_decode_s = at(im.page_visit_decode_ns, b, false) * 1e-9;
  // A lone CTA on an SM hides less latency than ctas_per_sm co-resident ones: its time per visit
  // lies between the per-SM figure (it alone keeps the SM as busy) and ctas_per_sm times it (no
  // gain at all); the point takes the middle, as an unknown schedule does.
  r.attention_ctas_per_sm = im.prefill_ctas_per_sm;
  const double o = im.prefill_ctas_per_sm;
  r.attention_lone_cta = b == Bound::lo ? 1.0 : b == Bound::hi ? o : 0.5 * (1.0 + o);
  if (im.has_selection) {
    r.scoring_read_bw_Bps = at(im.scoring_read_bw_tbs, b, true) * 1e12;
    r.scoring_write_bw_Bps = at(im.scoring_write_bw_tbs, b, true) * 1e12;
    r.scoring_floor_s = at(im.scoring_floor_us, b, false) * 1e-6;
    r.scoring_step_s = im.scoring_step_term ? at(im.scoring_step_us, b, false) * 1e-6 : 0.0;
    r.topk_keys_per_s_per_sm = at(im.topk_keys_per_ns_per_sm, b, true) * 1e9;
    r.topk_l2_keys_per_s_per_sm = at(im.topk_l2_keys_per_ns_per_sm, b, true) * 1e9;
    if (im.topk_ids_per_cta_term)
      r.topk_ids_per_s_per_cta = at(im.topk_ids_per_ns_per_cta, b, true) * 1e9;
    else
      r.topk_ids_per_s_per_sm = at(im.topk_ids_per_ns_per_sm, b, true) * 1e9;
    r.topk_floor_s = at(im.topk_floor_us, b, false) * 1e-6;
    r.topk_cta_s = im.topk_cta_term ? at(im.topk_cta_us, b, false) * 1e-6 : 0.0;
    r.topk_cluster_s = im.topk_cluster_term ? at(im.topk_cluster_us, b, false) * 1e-6 : 0.0;
    r.topk_decode_own = im.topk_decode_term;
    if (im.topk_decode_term) {
      r.topk_decode_floor_s = at(im.topk_decode_floor_us, b, false) * 1e-6;
      r.topk_decode_cluster_s =
          im.topk_decode_cluster_term ? at(im.topk_decode_cluster_us, b, false) * 1e-6 : 0.0;
      r.topk_decode_keys_per_s_per_sm = at(im.topk_decode_keys_per_ns_per_sm, b, true) * 1e9;
    }
    r.setup_latency_s = at(im.setup_latency_us, b, false) * 1e-6;
    if (im.setup_inline_bytes > 0) {
      need(hw.card.h2d_latency_us, "card.h2d_latency_us (the small descriptor copy's latency)",
           who);
      r.setup_inline_bytes = im.setup_inline_bytes;
      r.setup_small_latency_s = at(hw.card.h2d_latency_us, b, false) * 1e-6;
    }
    if (!im.setup_bw_term)
      need(hw.card.h2d_bw_gbs, "card.h2d_bw_gbs (the setup copy's bandwidth)", who);
    r.setup_Bps =
        (im.setup_bw_term ? at(im.setup_bw_gbs, b, true) : at(hw.card.h2d_bw_gbs, b, true)) * 1e9;
    r.projection_floor_s = at(im.projection_floor_us, b, false) * 1e-6;
    if (im.projection_term) {
      r.projection_read_Bps = at(im.projection_read_bw_tbs, b, true) * 1e12;
      r.projection_flops = at(im.projection_mma_tflops, b, true) * 1e12;
    }
    r.projection_decode_own = im.projection_decode_term;
    if (im.projection_decode_term) {
      r.projection_decode_floor_s = at(im.projection_decode_floor_us, b, false) * 1e-6;
      r.projection_decode_read_Bps = at(im.projection_decode_read_bw_tbs, b, true) * 1e12;
    }
    // A profile without its own figure prices the update's launch at the projection's (XFER rule).
    r.rep_update_floor_s =
        im.rep_update_term ? at(im.rep_update_floor_us, b, false) * 1e-6 : r.projection_floor_s;
    // Likewise the decode scoring kernel at the scoring kernel's figures.
    r.scoring_decode_read_bw_Bps = im.scoring_decode_term
                                       ? at(im.scoring_decode_read_bw_tbs, b, true) * 1e12
                                       : r.scoring_read_bw_Bps;
    r.scoring_decode_floor_s = im.scoring_decode_term
                                   ? at(im.scoring_decode_floor_us, b, false) * 1e-6
                                   : r.scoring_floor_s;
    r.scoring_prefill_own = im.scoring_prefill_term;
    if (im.scoring_prefill_term) {
      r.scoring_prefill_shared = im.scoring_prefill_streams == ScoringStreams::shared;
      r.scoring_prefill_floor_s = at(im.scoring_prefill_floor_us, b, false) * 1e-6;
      r.scoring_prefill_read_bw_Bps = at(im.scoring_prefill_read_bw_tbs, b, true) * 1e12;
      r.scoring_prefill_write_bw_Bps = at(im.scoring_prefill_write_bw_tbs, b, true) * 1e12;
      r.scoring_prefill_query_s =
          im.scoring_prefill_query_term ? at(im.scoring_prefill_query_us, b, false) * 1e-6 : 0.0;
      r.scoring_prefill_flops =
          im.scoring_prefill_mma_term ? at(im.scoring_prefill_mma_tflops, b, true) * 1e12 : 0.0;
    }
  }
  r.source += "; implementation " + im.name;
  return r;
}

KernelShape kernel_shape(const ResolvedImpl& im, const Rates& rates, Bound b) {
  KernelShape s = structure_of(im);
  s.sms = rates.sms;
  s.l2_reuse = rates.l2_reuse;
  s.l2_capacity_bytes = rates.l2_capacity_bytes;
  s.share_selected =
      im.l2_sharing == L2Sharing::shared || (im.l2_sharing == L2Sharing::unknown && b != Bound::hi);
  // Where the CTAs share pages, the fixed-point estimate of how many (shared_selected_in_l2) is no
  // bound: held-out points at 0.8-1M tokens and batch 2 ran at 4.5-5.7 TB/s of its DRAM bytes on
  // the H200 and 3.3-4.9 on the H100 (above either card's read rate: NOTES session 21). The low
  // end takes the compulsory misses alone, each wave's union of picks (selected_union_floor).
  // The point follows the profile's schedule per tile class; the band's high end shares nothing
  // (the staggered formula with no shared pages), so its weight stays 1.
  for (int i = 0; i < 4; ++i) {
    const SelectedSchedule sc = im.selected_schedule[i];
    s.selected_staggered[i] = !s.share_selected || b == Bound::hi                ? 1.0
                              : b == Bound::lo || sc == SelectedSchedule::convoy ? 0.0
                              : sc == SelectedSchedule::unknown                  ? 0.5
                                                                                 : 1.0;
  }
  switch (im.decode_tile_sharing) {
    case L2Sharing::shared:
      s.decode_tile_reuse = 1.0;
      break;
    case L2Sharing::none:
      s.decode_tile_reuse = 0.0;
      break;
    case L2Sharing::unknown:
      s.decode_tile_reuse = b == Bound::lo ? 1.0 : b == Bound::hi ? 0.0 : 0.5;
      break;
  }
  return s;
}

std::string card_model_word(const std::string& display_name) {
  std::istringstream words(display_name);
  for (std::string w; words >> w;)
    if (w.size() >= 2 && std::isalpha(static_cast<unsigned char>(w[0])) &&
        std::isdigit(static_cast<unsigned char>(w[1])))
      return w;
  return display_name;
}

bool is_card(const Hardware& hw, const std::string& device_name) {
  const std::string& shown = hw.display_name.empty() ? hw.name : hw.display_name;
  const std::string word = card_model_word(shown);
  if (word.empty() || device_name.find(word) == std::string::npos) return false;
  // PCIe and NVL boards of the same chip have other clocks, power and memory than the SXM ones.
  for (const char* form : {"PCIe", "NVL"})
    if (device_name.find(form) != std::string::npos && shown.find(form) == std::string::npos)
      return false;
  return true;
}

}  // namespace cisa
