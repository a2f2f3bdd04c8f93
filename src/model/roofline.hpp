// From bytes to time: each kernel class takes max(DRAM bytes / effective bandwidth,
// issued FLOPs / effective MMA rate) plus its launch overheads. GPU busy = sum of components.
#pragma once

#include "model/hardware.hpp"
#include "model/traffic.hpp"

namespace cisa {

struct ComponentTimes {  // seconds
  double attention = 0, scoring = 0, topk = 0, setup = 0, other = 0;
  double busy() const { return attention + scoring + topk + setup + other; }
  void add(const ComponentTimes& o);
};

// Streaming bandwidth reached by `ctas` concurrently running CTAs: HBM saturates once enough
// bytes are in flight (Little's law), which a pipelined kernel reaches on a fraction of the SMs.
double achieved_bandwidth(double ctas, const Rates& rates);

// What one kernel class achieves: read and write streaming rates and the fixed cost per launch.
struct ClassRates {
  double read_Bps, write_Bps, floor_s;
  double page_s = 0;  // SM-seconds per page visit (attention; 0 = no such term)
  double step_s = 0;  // one dependent load step of a CTA (scoring; 0 = no such term)
  double query_s = 0;  // per index query a thread adds to its selection's sum (prefill scoring)
  bool overlap = false;  // reads and writes use different limits: the slower one sets the time
  int ctas_per_sm = 1;   // CTAs resident per SM (page visits: visit_rounds)
  double lone_cta = 1;   // a lone CTA's time per visit, in per-SM visit times (1..ctas_per_sm)
};

// Rounds of page visits, in CTA visit-lists at the per-SM visit rate: with one CTA per SM, the
// waves; with o resident, a full round of o x SMs CTAs costs o, and a last round whose busiest SM
// holds j < o CTAs costs lone + (j - 1)(o - lone) / (o - 1) (a lone CTA runs faster than its
// share of a full SM, but hides less latency).
double visit_rounds(double ctas, double sms, int ctas_per_sm, double lone_cta);

// Time of one kernel class. A kernel with fewer CTAs than SMs reaches that share of the
// bandwidth; compute suffers wave quantization (the last partial wave idles SMs).
double kernel_time(const KernelCost& k, double flop_rate, const Rates& rates,
                   const ClassRates& cls);
// The same with the card's streaming rates and launch overhead (the planner's generic kernel).
double kernel_time(const KernelCost& k, double flop_rate, const Rates& rates);

// Top-k: radix select is bound by per-row shared-memory passes; rows whose scores the scoring
// kernel left in L2 run at the L2 rate.
// How top-k lays a forward's rows on CTAs (this project's topk_plan): a row runs on a cluster of
// CTAs, each with a slice of its keys and of the IDs it writes; CTAs run in waves of
// topk_ctas_per_sm x SMs.
struct TopkWork {
  double ctas = 0;          // CTAs launched (rows x cluster)
  double keys_per_cta = 0;  // eligible keys per CTA
  double ids_per_cta = 0;   // page IDs written per CTA (selected + window + tail)
  double cluster = 1;       // CTAs per row (merging their histograms)
  double waves = 0;         // waves of co-resident CTAs
  double per_sm = 0;        // CTAs on the busiest SM in a wave (<= topk_ctas_per_sm)
};
TopkWork topk_work(const ForwardCost& f, const KernelShape& sh);
// The top-k time's terms along the busiest SM, as the calibration fits them: t = floor + waves x
// CTA time + cluster_waves x per-CTA merge time + key_passes / key rate + ids / ID rate.
struct TopkTerms {
  double waves = 0;
  double cluster_waves = 0;  // waves x (cluster - 1): the other CTAs of a row to merge with
  double key_passes = 0;     // waves x per_sm x keys per CTA x radix passes
  double ids = 0;            // waves x per_sm x IDs per CTA
  // waves x IDs per row (a row's whole list, whatever its CTAs): the output pass as each CTA of a
  // cluster pays it (the phase clocks at four K, NOTES "Session 25: top-k"): the form of a profile
  // with an ID rate per CTA (Rates::topk_ids_per_s_per_cta)
  double row_ids = 0;
};
TopkTerms topk_terms(const TopkWork& w, const KernelShape& sh);
double topk_time(const ForwardCost& f, const KernelShape& sh, const Rates& rates);
// The output pass's share of it: row_ids / the per-CTA ID rate where the profile has one, else ids /
// the per-SM rate.
double topk_id_time(const TopkTerms& t, const Rates& rates);
bool topk_scores_in_l2(const ForwardCost& f, const KernelShape& sh, const Rates& rates);

// Setup: one pinned host-to-device copy of the step's descriptors.
double setup_time(const ForwardCost& f, const Rates& rates);
// The two kernels of `other`: the index projection (cuBLAS) and the representative update.
double projection_time(const ForwardCost& f, const Rates& rates);
double rep_update_time(const ForwardCost& f, const Rates& rates);

// Dense attention with one implementation's rates, and the CISA components with another's.
double dense_attention_time(const ForwardCost& f, const Rates& rates);
ComponentTimes cisa_times(const ForwardCost& f, const KernelShape& sh, const Rates& rates);

}  // namespace cisa
