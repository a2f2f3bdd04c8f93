#include "model/implementation.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "model/hardware.hpp"

namespace cisa {

std::string to_string(ScoringStreams s) {
  return s == ScoringStreams::shared ? "shared" : "overlapped";
}

std::string to_string(L2Sharing s) {
  switch (s) {
    case L2Sharing::none:
      return "none";
    case L2Sharing::shared:
      return "shared";
    case L2Sharing::unknown:
      return "unknown";
  }
  return "unknown";
}

std::string to_string(SelectedSchedule s) {
  switch (s) {
    case SelectedSchedule::staggered:
      return "staggered";
    case SelectedSchedule::convoy:
      return "convoy";
    case SelectedSchedule::unknown:
      return "unknown";
  }
  return "?";
}

namespace {

const Hardware& card_named(const CardCatalog& cards, const std::string& name,
                           const std::string& what) {
  const auto it = cards.find(name);
  if (it == cards.end())
    throw std::invalid_argument(what + " was given on card '" + name +
                                "', which is no known GPU preset");
  return it->second;
}

double read_bw_of(const Hardware& h) {
  return h.has_card ? h.card.read_bw_tbs.value : h.hbm_bw_tbs.value;
}
double write_bw_of(const Hardware& h) {
  return h.has_card ? h.card.write_bw_tbs.value : h.hbm_bw_tbs.value;
}

// Factor and rule text for moving a figure from `src` to `dst`.
std::pair<double, std::string> transfer_factor(Transfer rule, const Hardware& src,
                                               const Hardware& dst) {
  switch (rule) {
    case Transfer::same:
      return {1.0, "same value"};
    case Transfer::mma:
      return {dst.bf16_tflops.value / src.bf16_tflops.value,
              "same fraction of the dense BF16 peak"};
    case Transfer::read_bw:
      return {read_bw_of(dst) / read_bw_of(src), "same fraction of the card's read bandwidth"};
    case Transfer::write_bw:
      return {write_bw_of(dst) / write_bw_of(src), "same fraction of the card's write bandwidth"};
    case Transfer::sm_time: {
      const double per_sm_src = src.bf16_tflops.value / src.sms.value;
      const double per_sm_dst = dst.bf16_tflops.value / dst.sms.value;
      return {per_sm_src / per_sm_dst, "SM time scales with 1 / (BF16 peak per SM)"};
    }
  }
  return {1.0, "same value"};
}

}  // namespace

Figure figure_on_card(const PerCard& pc, Transfer rule, const Hardware& card,
                      const CardCatalog& cards, const std::string& what) {
  if (pc.empty()) throw std::invalid_argument(what + " is given for no card");
  for (const auto& [name, f] : pc.cards)
    if (name == card.name) return f;
  const std::pair<std::string, Figure>* src = &pc.cards.front();
  for (const auto& entry : pc.cards)
    if (!card.arch.empty() && card_named(cards, entry.first, what).arch == card.arch) {
      src = &entry;
      break;
    }
  const Hardware& from = card_named(cards, src->first, what);
  const auto [factor, text] = transfer_factor(rule, from, card);
  return transferred(src->second, factor, text, from.name);
}

namespace {

struct Resolver {
  const Hardware& card;
  const CardCatalog& cards;
  ResolvedImpl& out;
  std::string prefix;        // "profile.field" naming
  std::string label_prefix;  // "" or "XFER: <profile>'s selection kernels; "

  Figure get(const PerCard& pc, Transfer rule, const std::string& field) {
    Figure f = figure_on_card(pc, rule, card, cards, prefix + field);
    if (!label_prefix.empty() && f.label() != Label::XFER) f.source = label_prefix + f.source;
    out.used.push_back({field, f});
    return f;
  }
};

// Records (provenance only) that `field` is priced at `from`'s value, under the given XFER rule;
// returns the labelled figure.
Figure out_xfer(ResolvedImpl& o, const std::string& field, const Figure& from,
                const std::string& rule) {
  Figure f = from;
  f.source = rule + from.source;
  o.used.push_back({field, f});
  return f;
}

bool known_here(const PerCard& pc, const std::string& card) {
  for (const auto& [name, f] : pc.cards)
    if (name == card && (f.label() == Label::MEAS || f.label() == Label::PUB)) return true;
  return false;
}

// Decode steps of 32-row (and wider) tiles: the profile's own figures (measured on some card,
// transferred to others by their rules), else its 16-row decode figures (labelled XFER).
void resolve_decode_m32(const ImplProfile& p, Resolver& r) {
  ResolvedImpl& o = r.out;
  if (!p.attention_decode_m32_floor_us.empty() && !p.attention_decode_m32_gather_bw_tbs.empty()) {
    o.attention_decode_m32_floor_us =
        r.get(p.attention_decode_m32_floor_us, Transfer::same, "attention.decode_m32_floor_us");
    o.attention_decode_m32_gather_bw_tbs =
        r.get(p.attention_decode_m32_gather_bw_tbs, Transfer::read_bw,
              "attention.decode_m32_gather_bw_tbs");
    return;
  }
  const std::string rule =
      " of the same profile (the 16-row decode class; no 32-row decode figure); ";
  o.attention_decode_m32_floor_us =
      out_xfer(o, "attention.decode_m32_floor_us", o.attention_decode_floor_us,
               "XFER: attention.decode_floor_us" + rule);
  o.attention_decode_m32_gather_bw_tbs =
      out_xfer(o, "attention.decode_m32_gather_bw_tbs", o.attention_decode_gather_bw_tbs,
               "XFER: attention.decode_gather_bw_tbs" + rule);
}

// The decode step's projection: its own floor and read rate, else the prefill projection's
// (labelled XFER: the same values; the roofline then prices decode as prefill).
void resolve_projection_decode(const ImplProfile& p, Resolver& r) {
  ResolvedImpl& o = r.out;
  o.projection_decode_term =
      !p.projection_decode_floor_us.empty() && !p.projection_decode_read_bw_tbs.empty();
  if (o.projection_decode_term) {
    o.projection_decode_floor_us =
        r.get(p.projection_decode_floor_us, Transfer::same, "other.projection_decode_floor_us");
    o.projection_decode_read_bw_tbs = r.get(p.projection_decode_read_bw_tbs, Transfer::read_bw,
                                            "other.projection_decode_read_bw_tbs");
    return;
  }
  const std::string rule = " of the same profile (no decode figure of its own); ";
  o.projection_decode_floor_us =
      out_xfer(o, "other.projection_decode_floor_us", o.projection_floor_us,
               "XFER: the projection's floor (" +
                   std::string(o.projection_term ? "other.projection_floor_us" : "other.floor_us") +
                   ")" + rule);
  if (o.projection_term)
    o.projection_decode_read_bw_tbs =
        out_xfer(o, "other.projection_decode_read_bw_tbs", o.projection_read_bw_tbs,
                 "XFER: the projection's read rate (other.projection_read_bw_tbs)" + rule);
  else if (r.card.has_card)
    o.projection_decode_read_bw_tbs =
        out_xfer(o, "other.projection_decode_read_bw_tbs", r.card.card.read_bw_tbs,
                 "XFER: the projection's read rate, the card's streaming read rate "
                 "(card.read_bw_tbs; no projection figure)" +
                     rule);
}

// The index projection: its own floor and rates, else the older profile's floor with the card's
// streaming read and GEMM rates (each labelled XFER); then the decode step's.
void resolve_projection(const ImplProfile& p, Resolver& r) {
  ResolvedImpl& o = r.out;
  o.projection_term = !p.projection_floor_us.empty() && !p.projection_read_bw_tbs.empty() &&
                      !p.projection_mma_tflops.empty();
  if (o.projection_term) {
    o.projection_floor_us =
        r.get(p.projection_floor_us, Transfer::same, "other.projection_floor_us");
    o.projection_read_bw_tbs =
        r.get(p.projection_read_bw_tbs, Transfer::read_bw, "other.projection_read_bw_tbs");
    o.projection_mma_tflops =
        r.get(p.projection_mma_tflops, Transfer::mma, "other.projection_mma_tflops");
  } else {
    o.projection_floor_us = r.get(p.other_floor_us, Transfer::same, "other.floor_us");
    if (r.card.has_card) {
      out_xfer(o, "other.projection_read_bw_tbs", r.card.card.read_bw_tbs,
               "XFER: the card's streaming read rate (card.read_bw_tbs; no projection figure); ");
      out_xfer(o, "other.projection_mma_tflops", r.card.card.gemm_bf16_tflops,
               "XFER: the card's cuBLAS GEMM rate (card.gemm_bf16_tflops; no projection figure); ");
    }
  }
  resolve_projection_decode(p, r);
}

void resolve_selection(const ImplProfile& p, Resolver& r) {
  ResolvedImpl& o = r.out;
  o.has_selection = true;
  o.score_tile_rows = p.score_tile_rows;
  o.score_pages_per_tile = p.score_pages_per_tile;
  o.score_tiles_per_cta = p.score_tiles_per_cta;
  o.topk_radix_passes = p.topk_radix_passes;
  o.topk_cluster_above = p.topk_cluster_above;
  o.topk_few_rows_slice = p.topk_few_rows_slice;
  o.topk_ctas_per_sm = p.topk_ctas_per_sm;
  o.setup_inline_bytes = p.setup_inline_bytes;
  o.score_bytes = p.score_bytes;
  o.scoring_read_bw_tbs = r.get(p.scoring_read_bw_tbs, Transfer::read_bw, "scoring.read_bw_tbs");
  o.scoring_write_bw_tbs =
      r.get(p.scoring_write_bw_tbs, Transfer::write_bw, "scoring.write_bw_tbs");
  o.scoring_floor_us = r.get(p.scoring_floor_us, Transfer::same, "scoring.floor_us");
  o.scoring_step_term =
      !p.scoring_step_us.empty();  // structure: the CTA walks dependent load steps
  if (o.scoring_step_term)
    o.scoring_step_us = r.get(p.scoring_step_us, Transfer::same, "scoring.step_us");
  o.topk_keys_per_ns_per_sm =
      r.get(p.topk_keys_per_ns_per_sm, Transfer::same, "topk.keys_per_ns_per_sm");
  o.topk_l2_keys_per_ns_per_sm =
      r.get(p.topk_l2_keys_per_ns_per_sm, Transfer::same, "topk.l2_keys_per_ns_per_sm");
  // The card's own form; a card that measured neither takes the per-CTA figure (transferred) when
  // some card measured it, else the per-SM one.
  o.topk_ids_per_cta_term = known_here(p.topk_ids_per_ns_per_cta, r.card.name) ||
                            (!known_here(p.topk_ids_per_ns_per_sm, r.card.name) &&
                             !p.topk_ids_per_ns_per_cta.empty());
  if (o.topk_ids_per_cta_term)
    o.topk_ids_per_ns_per_cta =
        r.get(p.topk_ids_per_ns_per_cta, Transfer::same, "topk.ids_per_ns_per_cta");
  else
    o.topk_ids_per_ns_per_sm =
        r.get(p.topk_ids_per_ns_per_sm, Transfer::same, "topk.ids_per_ns_per_sm");
  o.topk_floor_us = r.get(p.topk_floor_us, Transfer::same, "topk.floor_us");
  o.topk_cta_term = !p.topk_cta_us.empty();
  if (o.topk_cta_term) o.topk_cta_us = r.get(p.topk_cta_us, Transfer::sm_time, "topk.cta_us");
  o.topk_cluster_term = !p.topk_cluster_us.empty();
  if (o.topk_cluster_term)
    o.topk_cluster_us = r.get(p.topk_cluster_us, Transfer::sm_time, "topk.cluster_us");
  o.setup_latency_us = r.get(p.setup_latency_us, Transfer::same, "setup.latency_us");
  // The step's copy is a pinned host-to-device copy: without a figure of its own it runs at the
  // card's host-to-device bandwidth (a 256 MiB probe: steadier than a solve from two step copies).
  o.setup_bw_term = !p.setup_bw_gbs.empty();
  if (o.setup_bw_term)
    o.setup_bw_gbs = r.get(p.setup_bw_gbs, Transfer::same, "setup.bw_gbs");
  else if (r.card.has_card && r.card.card.h2d_bw_gbs.value > 0)
    out_xfer(o, "setup.bw_gbs", r.card.card.h2d_bw_gbs,
             "XFER: the card's host-to-device bandwidth (card.h2d_bw_gbs); ");
  resolve_projection(p, r);
  // A figure the profile lacks for a kernel of its own is priced at a sibling's (the rule is
  // named).
  auto sibling = [&](const std::string& field, const Figure& from, const std::string& from_field) {
    out_xfer(o, field, from,
             "XFER: " + from_field + " of the same profile (no figure of its own); ");
  };
  o.rep_update_term = !p.rep_update_floor_us.empty();
  if (o.rep_update_term)
    o.rep_update_floor_us =
        r.get(p.rep_update_floor_us, Transfer::same, "other.rep_update_floor_us");
  else
    sibling("other.rep_update_floor_us", o.projection_floor_us, "other.projection_floor_us");
  o.scoring_decode_term =
      !p.scoring_decode_floor_us.empty() && !p.scoring_decode_read_bw_tbs.empty();
  if (o.scoring_decode_term) {
    o.scoring_decode_floor_us =
        r.get(p.scoring_decode_floor_us, Transfer::same, "scoring.decode_floor_us");
    o.scoring_decode_read_bw_tbs =
        r.get(p.scoring_decode_read_bw_tbs, Transfer::read_bw, "scoring.decode_read_bw_tbs");
  } else {
    sibling("scoring.decode_floor_us", o.scoring_floor_us, "scoring.floor_us");
    sibling("scoring.decode_read_bw_tbs", o.scoring_read_bw_tbs, "scoring.read_bw_tbs");
  }
  o.scoring_prefill_term = !p.scoring_prefill_floor_us.empty() && !p.scoring_prefill_read_bw_tbs.empty() &&
                           !p.scoring_prefill_write_bw_tbs.empty();
  if (o.scoring_prefill_term) {
    o.scoring_prefill_floor_us = r.get(p.scoring_prefill_floor_us, Transfer::same, "scoring.prefill_floor_us");
    o.scoring_prefill_read_bw_tbs =
        r.get(p.scoring_prefill_read_bw_tbs, Transfer::read_bw, "scoring.prefill_read_bw_tbs");
    o.scoring_prefill_write_bw_tbs =
        r.get(p.scoring_prefill_write_bw_tbs, Transfer::write_bw, "scoring.prefill_write_bw_tbs");
    o.scoring_prefill_streams = p.scoring_prefill_streams.value_or(ScoringStreams::shared);
    // Structure, as topk.cluster_us: absent when the fit found no per-query cost.
    o.scoring_prefill_query_term = !p.scoring_prefill_query_us.empty();
    if (o.scoring_prefill_query_term)
      o.scoring_prefill_query_us = r.get(p.scoring_prefill_query_us, Transfer::same, "scoring.prefill_query_us");
    o.scoring_prefill_mma_term = !p.scoring_prefill_mma_tflops.empty();
    if (o.scoring_prefill_mma_term)
      o.scoring_prefill_mma_tflops =
          r.get(p.scoring_prefill_mma_tflops, Transfer::mma, "scoring.prefill_mma_tflops");
    else if (r.card.has_card)
      out_xfer(o, "scoring.prefill_mma_tflops", r.card.card.gemm_bf16_tflops,
               "XFER: the card's cuBLAS GEMM rate (card.gemm_bf16_tflops; no scoring MMA figure); ");
  }
  o.topk_decode_term = !p.topk_decode_floor_us.empty() && !p.topk_decode_keys_per_ns_per_sm.empty();
  if (o.topk_decode_term) {
    o.topk_decode_floor_us = r.get(p.topk_decode_floor_us, Transfer::same, "topk.decode_floor_us");
    // Structure, as topk.cluster_us: absent when the decode fit found no merge cost.
    o.topk_decode_cluster_term = !p.topk_decode_cluster_us.empty();
    if (o.topk_decode_cluster_term)
      o.topk_decode_cluster_us =
          r.get(p.topk_decode_cluster_us, Transfer::sm_time, "topk.decode_cluster_us");
    o.topk_decode_keys_per_ns_per_sm =
        r.get(p.topk_decode_keys_per_ns_per_sm, Transfer::same, "topk.decode_keys_per_ns_per_sm");
  } else {  // the decode step's top-k at the prefill fit's terms, scores at the L2 key rate
    sibling("topk.decode_floor_us", o.topk_floor_us,
            "topk.floor_us (+ topk.cta_us for the first wave)");
    if (o.topk_cluster_term)
      sibling("topk.decode_cluster_us", o.topk_cluster_us, "topk.cluster_us");
    sibling("topk.decode_keys_per_ns_per_sm", o.topk_l2_keys_per_ns_per_sm,
            "topk.l2_keys_per_ns_per_sm");
  }
}

}  // namespace

ResolvedImpl resolve_impl(const ImplProfile& p, const Hardware& card, const CardCatalog& cards,
                          const ImplCatalog& impls) {
  ResolvedImpl o;
  o.name = p.name;
  o.prices_dense = p.prices_dense;
  o.prices_cisa = p.prices_cisa;
  o.tile_rows_min = p.tile_rows_min;
  o.tile_rows_max = p.tile_rows_max;
  o.gqa_packing = p.gqa_packing;
  o.l2_sharing = p.l2_sharing;
  for (int i = 0; i < 4; ++i) o.selected_schedule[i] = p.selected_schedule[i];
  o.split_min_tokens = p.split_min_tokens;
  o.prefill_ctas_per_sm = p.prefill_ctas_per_sm;
  o.split_kv = p.split_kv;
  o.decode_visits_context = p.decode_visits_context;
  o.dense_rows_packed = p.dense_rows_packed;
  o.decode_tile_rows = p.decode_tile_rows;
  o.decode_tile_sharing = p.decode_tile_sharing;
  o.page_visits = p.page_visits;
  for (const auto& a : p.archs) o.runs_on_card = o.runs_on_card || a == card.arch;
  o.known_on_card = known_here(p.mma_tflops, card.name) || known_here(p.read_bw_tbs, card.name);
  Resolver r{card, cards, o, "implementation '" + p.name + "': attention.", ""};
  o.mma_tflops = r.get(p.mma_tflops, Transfer::mma, "attention.mma_tflops");
  o.read_bw_tbs = r.get(p.read_bw_tbs, Transfer::read_bw, "attention.read_bw_tbs");
  if (p.prices_cisa)
    o.gather_bw_tbs = r.get(p.gather_bw_tbs, Transfer::read_bw, "attention.gather_bw_tbs");
  o.attention_floor_us = r.get(p.attention_floor_us, Transfer::same, "attention.floor_us");
  if (p.prices_cisa) {
    o.attention_decode_term = !p.attention_decode_floor_us.empty() && !p.attention_decode_gather_bw_tbs.empty();
    if (o.attention_decode_term) {
      o.attention_decode_floor_us = r.get(p.attention_decode_floor_us, Transfer::same, "attention.decode_floor_us");
      o.attention_decode_gather_bw_tbs =
          r.get(p.attention_decode_gather_bw_tbs, Transfer::read_bw, "attention.decode_gather_bw_tbs");
      resolve_decode_m32(p, r);
    } else {
      out_xfer(o, "attention.decode_floor_us", o.attention_floor_us,
               "XFER: attention.floor_us of the same profile (no decode figure of its own); ");
      out_xfer(o, "attention.decode_gather_bw_tbs", o.gather_bw_tbs,
               "XFER: attention.gather_bw_tbs of the same profile (no decode figure of its own); ");
    }
  }
  if (p.page_visits) {
    for (int i = 0; i < 4; ++i)
      o.page_visit_ns[i] = r.get(p.page_visit_ns[i], Transfer::sm_time,
                                 std::string("attention.page_visit_ns.") + kTileClassNames[i]);
    o.page_visit_decode = !p.page_visit_decode_ns.empty();
    if (o.page_visit_decode)
      o.page_visit_decode_ns =
          r.get(p.page_visit_decode_ns, Transfer::sm_time, "attention.page_visit_ns.decode");
  }
  if (!p.prices_cisa) return o;
  if (p.selection_from.empty()) {
    r.prefix = "implementation '" + p.name + "': ";
    resolve_selection(p, r);
    o.selection_impl = p.name;
    return o;
  }
  const auto it = impls.find(p.selection_from);
  if (it == impls.end() || !it->second.selection_from.empty())
    throw std::invalid_argument("implementation '" + p.name + "': selection_from names '" +
                                p.selection_from +
                                "', which is no profile with selection kernels of its own");
  r.prefix = "implementation '" + p.selection_from + "' (selection kernels of '" + p.name + "'): ";
  r.label_prefix = "XFER: selection kernels of " + p.selection_from + " used by " + p.name + "; ";
  resolve_selection(it->second, r);
  o.selection_impl = p.selection_from;
  return o;
}

}  // namespace cisa
