#include "model/roofline.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

namespace cisa {

void ComponentTimes::add(const ComponentTimes& o) {
  attention += o.attention;
  scoring += o.scoring;
  topk += o.topk;
  setup += o.setup;
  other += o.other;
}

double achieved_bandwidth(double ctas, const Rates& rates) {
  return rates.read_bw_Bps *
         std::min(1.0, std::max(1.0, ctas) / (rates.bw_saturation_sm_fraction * rates.sms));
}

double visit_rounds(double ctas, double sms, int ctas_per_sm, double lone_cta) {
  if (ctas_per_sm <= 1) return std::ceil(ctas / sms);
  const double o = ctas_per_sm;
  const double full = std::floor(ctas / (o * sms));
  const double rest = ctas - full * o * sms;
  if (rest <= 0) return full * o;
  const double j = std::ceil(rest / sms);
  return full * o + lone_cta + (j - 1.0) * (o - lone_cta) / (o - 1.0);
}

double kernel_time(const KernelCost& k, double flop_rate, const Rates& rates,
                   const ClassRates& cls) {
  if (k.launches <= 0) return 0.0;
  const double sms = rates.sms;
  const double ctas = std::max(1.0, k.ctas);
  // Reads and writes share the HBM; each streams at its own rate, scaled by how much of the
  // bandwidth this many CTAs can keep in flight.
  const double share = achieved_bandwidth(ctas, rates) / rates.read_bw_Bps;
  const double waves = std::ceil(ctas / sms);
  const double fill = k.wave_fill > 0 ? k.wave_fill : ctas / (waves * sms);
  const double writes = std::min(k.dram_write_bytes, k.dram_bytes);
  const double t_read = (k.dram_bytes - writes) / cls.read_Bps, t_write = writes / cls.write_Bps;
  const double t_mem = (cls.overlap ? std::max(t_read, t_write) : t_read + t_write) / share;
  const double t_mma = k.flops_issued / (flop_rate * fill);
  // Page visits served from L2 at the kernel's measured per-visit SM time for its tile class.
  const double t_visit = cls.ctas_per_sm > 1
                             ? k.page_visits / ctas * cls.page_s *
                                   visit_rounds(ctas, sms, cls.ctas_per_sm, cls.lone_cta)
                             : k.page_visits * cls.page_s / (sms * fill);
  // Pipeline fill and drain: the stream of CTAs cannot finish sooner than one CTA's chain of
  // dependent load steps after it starts; that latency adds to the streaming time.
  const double t_fill = k.serial_steps * cls.step_s + k.summed_queries * cls.query_s;
  return std::max({t_mem, t_mma, t_visit}) + t_fill + k.launches * cls.floor_s;
}

double kernel_time(const KernelCost& k, double flop_rate, const Rates& rates) {
  return kernel_time(k, flop_rate, rates,
                     ClassRates{rates.read_bw_Bps, rates.write_bw_Bps, rates.launch_s});
}

bool topk_scores_in_l2(const ForwardCost& f, const KernelShape& sh, const Rates& rates) {
  // The scoring kernel writes f.eligible_chunks_sum scores just before top-k reads them; when they
  // fit in half the L2 (EST: the other half holds the representatives it streamed), top-k's one
  // full pass reads them from L2.
  return rates.l2_capacity_bytes > 0 &&
         sh.score_bytes * f.eligible_chunks_sum <= 0.5 * rates.l2_capacity_bytes;
}

TopkWork topk_work(const ForwardCost& f, const KernelShape& sh) {
  const double keys = f.eligible_chunks_sum / f.topk_rows;           // N_e per row
  const double ids = f.topk.dram_write_bytes / (4.0 * f.topk_rows);  // page IDs written per row
  const double occ = std::max(1, sh.topk_ctas_per_sm), sms = std::max(1, sh.sms);
  double split = (sh.topk_cluster_above > 0 && keys > sh.topk_cluster_above) ? 2.0 : 1.0;
  // Few rows: a row spreads over ceil(N_e / slice) CTAs when every row's CTAs fit one per SM.
  if (sh.topk_few_rows_slice > 0) {
    const double c = std::ceil(keys / sh.topk_few_rows_slice);
    if (c > split && f.topk_rows * c <= sms) split = c;
  }
  TopkWork w{f.topk_rows * split, keys / split, ids / split, split, 0, 0};
  w.waves = std::ceil(w.ctas / (occ * sms));
  w.per_sm = std::ceil(w.ctas / (sms * w.waves));
  return w;
}

TopkTerms topk_terms(const TopkWork& w, const KernelShape& sh) {
  return TopkTerms{w.waves, w.waves * (w.cluster - 1.0),
                   w.waves * w.per_sm * w.keys_per_cta * sh.topk_radix_passes,
                   w.waves * w.per_sm * w.ids_per_cta, w.waves * w.ids_per_cta * w.cluster};
}

namespace {
// Every input topk_terms(topk_work(f, sh), sh) reads (doubles by their bits).
struct TopkKey {
  std::uint64_t keys = 0, rows = 0, id_bytes = 0;
  int radix_passes = 0, sms = 0, cluster_above = 0, few_rows_slice = 0, ctas_per_sm = 0;
  bool operator==(const TopkKey&) const = default;
};

// topk_terms of (f, sh), the last answer kept per thread: a point's lo / point / hi ends ask with
// the same traffic and top-k shape (only the rates differ), so two of its three calls reuse it.
TopkTerms topk_terms_of(const ForwardCost& f, const KernelShape& sh) {
  const TopkKey key{std::bit_cast<std::uint64_t>(f.eligible_chunks_sum),
                    std::bit_cast<std::uint64_t>(f.topk_rows),
                    std::bit_cast<std::uint64_t>(f.topk.dram_write_bytes),
                    sh.topk_radix_passes,
                    sh.sms,
                    sh.topk_cluster_above,
                    sh.topk_few_rows_slice,
                    sh.topk_ctas_per_sm};
  thread_local TopkKey last_key;
  thread_local TopkTerms last{};
  thread_local bool have = false;
  if (!have || !(key == last_key)) {
    last = topk_terms(topk_work(f, sh), sh);
    last_key = key;
    have = true;
  }
  return last;
}
}  // namespace

double topk_id_time(const TopkTerms& t, const Rates& rates) {
  return rates.topk_ids_per_s_per_cta > 0 ? t.row_ids / rates.topk_ids_per_s_per_cta
                                          : t.ids / rates.topk_ids_per_s_per_sm;
}

double topk_time(const ForwardCost& f, const KernelShape& sh, const Rates& rates) {
  if (f.topk.launches <= 0 || f.topk_rows <= 0) return 0.0;
  // Scores read from L2 pass at least as fast as from DRAM: the L2 figure is fitted on decode
  // top-k grids (few rows, calibrate) and comes out below the prefill grid's DRAM-path rate on both
  // Hoppers (9.3 and 8.2 vs 13.4 key-passes/ns/SM), which priced in-L2 prefill rows 6-14 % slow
  // (median; up to 68 % at 134 rows of 65K keys, held-out v27 on the H100; NOTES session 22).
  const double rate = topk_scores_in_l2(f, sh, rates)
                          ? std::max(rates.topk_l2_keys_per_s_per_sm, rates.topk_keys_per_s_per_sm)
                          : rates.topk_keys_per_s_per_sm;
  // Per wave: a fixed part per CTA (co-resident CTAs overlap it), merges with the other CTAs of
  // the row's cluster, then the busiest SM's CTAs' radix passes over their scores and output
  // passes (translating and writing page IDs) at the SM's rates.
  const TopkTerms t = topk_terms_of(f, sh);
  const double t_mem = f.topk.dram_bytes / achieved_bandwidth(f.topk_rows, rates);
  if (f.cisa_decode_kernel && rates.topk_decode_own) {
    // The decode step's top-k (measured on its own grid): its fixed time covers the launch and the
    // first wave; a later wave costs the prefill fit's CTA time.
    const double t_dec =
        (t.waves - 1.0) * rates.topk_cta_s + t.cluster_waves * rates.topk_decode_cluster_s +
        t.key_passes / rates.topk_decode_keys_per_s_per_sm + topk_id_time(t, rates);
    return std::max(t_dec, t_mem) + f.topk.launches * rates.topk_decode_floor_s;
  }
  const double t_sm = t.waves * rates.topk_cta_s + t.cluster_waves * rates.topk_cluster_s +
                      t.key_passes / rate + topk_id_time(t, rates);
  return std::max(t_sm, t_mem) + f.topk.launches * rates.topk_floor_s;
}

double setup_time(const ForwardCost& f, const Rates& rates) {
  if (f.setup.launches <= 0) return 0.0;
  // One pinned host-to-device copy of the step's descriptors per forward (the window and tail page
  // IDs are appended on the device inside the top-k kernel: its bytes are counted there). Queued
  // behind kernels, a copy of at most setup_inline_bytes takes the card's small-copy latency.
  const double copies = f.setup.launches, bytes = f.setup_h2d_bytes / copies;
  const bool small = rates.setup_inline_bytes > 0 && bytes <= rates.setup_inline_bytes;
  return copies *
         ((small ? rates.setup_small_latency_s : rates.setup_latency_s) + bytes / rates.setup_Bps);
}

double projection_time(const ForwardCost& f, const Rates& rates) {
  // cuBLAS fills the SMs at every shape calibrate measured (tiles and split-K of its choosing):
  // all bytes at the projection's read rate, FLOPs at its MMA rate, whichever is slower. A decode
  // step's skinny GEMM (one column per sequence) takes its own floor and read rate where the
  // profile has them; its FLOPs stay bounded by the projection's MMA rate (on calibrate's decode
  // grid, n <= 256, bytes bind below a read rate of ~4 TB/s; a larger batch may meet the bound).
  const bool decode = f.cisa_decode_kernel && rates.projection_decode_own;
  const double read = decode ? rates.projection_decode_read_Bps : rates.projection_read_Bps;
  const double floor = decode ? rates.projection_decode_floor_s : rates.projection_floor_s;
  return kernel_time(f.other, rates.projection_flops, rates, ClassRates{read, read, floor});
}

double rep_update_time(const ForwardCost& f, const Rates& rates) {
  return kernel_time(f.rep_update, rates.gemm_flops, rates,
                     ClassRates{rates.read_bw_Bps, rates.write_bw_Bps, rates.rep_update_floor_s});
}

namespace {
ClassRates attention_class(const KernelCost& k, double read_Bps, const Rates& rates,
                           bool decode_kernel = false) {
  const int tile = tile_class_index(k.tile_rows);
  const double page_s = decode_kernel && rates.attention_page_decode_s >= 0
                            ? rates.attention_page_decode_s
                            : rates.attention_page_s[tile];
  ClassRates c{read_Bps, rates.write_bw_Bps, rates.attention_floor_s, page_s};
  if (!decode_kernel) {  // the prefill kernel's occupancy (a decode kernel is fitted at its own)
    c.ctas_per_sm = rates.attention_ctas_per_sm;
    c.lone_cta = rates.attention_lone_cta;
  }
  return c;
}
}  // namespace

double dense_attention_time(const ForwardCost& f, const Rates& rates) {
  return kernel_time(f.attention_dense, rates.attention_flops, rates,
                     attention_class(f.attention_dense, rates.attention_read_Bps, rates));
}

ComponentTimes cisa_times(const ForwardCost& f, const KernelShape& sh, const Rates& rates) {
  ComponentTimes t;
  // Selected pages are gathered at the implementation's page-gather rate, its dense prefix (short
  // contexts) streams at the dense rate: one effective rate for the kernel's reads. A decode step
  // with selections takes its own fitted floor and gather rate, where the profile has them (a step
  // without selections runs the dense path: its figures stay the dense ones).
  const KernelCost& a = f.attention_cisa;
  const bool own_decode = f.cisa_decode_kernel && rates.attention_decode_own && f.selections > 0;
  // Decode tiles of 32 rows or more run another kernel (two warps of rows, its own occupancy and
  // split counts): its own decode figures (make_rates fills them with every decode figure: the
  // profile's own, else the 16-row ones, labelled XFER).
  const bool wide = own_decode && a.tile_rows > 16;
  const double gather = !own_decode ? rates.attention_gather_Bps
                        : wide      ? rates.attention_decode_m32_gather_Bps
                                    : rates.attention_decode_gather_Bps;
  const double reads = a.dram_bytes - a.dram_write_bytes;
  const double prefix = std::min(f.cisa_dense_prefix_bytes, reads);
  const double secs = prefix / rates.attention_read_Bps + (reads - prefix) / gather;
  const double read_Bps = secs > 0 ? reads / secs : gather;
  ClassRates cls = attention_class(a, read_Bps, rates, f.cisa_decode_kernel);
  if (own_decode)
    cls.floor_s = wide ? rates.attention_decode_m32_floor_s : rates.attention_decode_floor_s;
  t.attention = kernel_time(a, rates.attention_flops, rates, cls);
  // The scoring kernel class streams representatives in and scores out at its own rates; a decode
  // step scores with its own kernel (one GEMV launch: its fixed cost and read rate, no tile steps).
  // Prefill scoring with figures of its own: its fixed cost, the summed index queries' chain, and
  // representative reads and key writes in the form the figures were fitted with.
  const ClassRates scoring =
      f.cisa_decode_kernel
          ? ClassRates{rates.scoring_decode_read_bw_Bps, rates.scoring_write_bw_Bps,
                       rates.scoring_decode_floor_s, 0.0, 0.0}
      : rates.scoring_prefill_own
          ? ClassRates{rates.scoring_prefill_read_bw_Bps, rates.scoring_prefill_write_bw_Bps,
                       rates.scoring_prefill_floor_s, 0.0, rates.scoring_step_s, rates.scoring_prefill_query_s, !rates.scoring_prefill_shared}
          : ClassRates{rates.scoring_read_bw_Bps, rates.scoring_write_bw_Bps, rates.scoring_floor_s,
                       0.0, rates.scoring_step_s};
  // Prefill tiles with few rows are compute-bound on the scoring kernel's own MMA rate (issued
  // FLOPs: whole warpgroups), where the profile has one.
  const bool own_mma =
      !f.cisa_decode_kernel && rates.scoring_prefill_own && rates.scoring_prefill_flops > 0;
  t.scoring = kernel_time(f.scoring, own_mma ? rates.scoring_prefill_flops : rates.gemm_flops, rates,
                          scoring);
  t.topk = topk_time(f, sh, rates);
  t.setup = setup_time(f, rates);
  t.other = projection_time(f, rates) + rep_update_time(f, rates);
  return t;
}

}  // namespace cisa
