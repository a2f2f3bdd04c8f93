// cisa-sim profiles: list the implementation profiles (models/impl), or show one resolved on a card
// with every figure's value, label and source (MEAS / PUB / XFER / EST).
#include <fmt/format.h>

#include <boost/program_options.hpp>
#include <iostream>

#include "cisa/errors.hpp"
#include "cisa/presets.hpp"
#include "model/pricing.hpp"
#include "cli/cli_util.hpp"
#include "cli/commands.hpp"

namespace po = boost::program_options;

namespace cisa::cli {

namespace {

std::string roles(const ImplProfile& p) {
  return std::string(p.prices_dense ? "dense" : "") + (p.prices_dense && p.prices_cisa ? "+" : "") +
         (p.prices_cisa ? "cisa" : "");
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ",") + s;
  return out;
}

void show(const std::string& name, const std::string& card, Pricer& pricer) {
  const ImplProfile& p = pricer.impls().at(name);
  const ResolvedImpl& r = pricer.resolved(card, name);
  std::cout << fmt::format("{} ({}), roles {}, runs on {}; on {}: {}\n", p.display_name, name, roles(p),
                           joined(p.archs), card, r.runs_on_card ? "runs" : "does NOT run here (figures transferred)");
  if (!p.description.empty()) std::cout << "  " << p.description << "\n";
  std::cout << fmt::format("  tiles {}-{} rows, GQA packing {}, L2 sharing of selected pages {} ({})\n",
                           p.tile_rows_min, p.tile_rows_max, p.gqa_packing ? "yes" : "no", to_string(p.l2_sharing),
                           p.l2_sharing_source);
  if (p.l2_sharing != L2Sharing::none && !p.selected_schedule_source.empty())
    std::cout << fmt::format(
        "  schedule of shared selected pages per tile class: 16 rows {}, 32 {}, 64 {}, 128 {} "
        "({})\n",
        to_string(p.selected_schedule[0]), to_string(p.selected_schedule[1]),
        to_string(p.selected_schedule[2]), to_string(p.selected_schedule[3]),
        p.selected_schedule_source);
  std::cout << fmt::format("  split-KV {}{}\n", p.split_kv == SplitKv::always   ? "in prefill and decode"
                           : p.split_kv == SplitKv::decode ? "in decode only"
                           : p.split_kv == SplitKv::waves  ? "in prefill and decode, and to fill the last wave of a large grid"
                                                           : "by FlashAttention-2's heuristic (both phases)",
                           p.split_kv_source.empty() ? "" : " (" + p.split_kv_source + ")");
  if (p.prefill_ctas_per_sm > 1)
    std::cout << fmt::format(
        "  prefill attention: {} CTAs resident per SM; a last round with fewer runs each "
        "CTA faster, a lone one at 1-{}x the per-SM visit time (point: the middle) ({})\n",
        p.prefill_ctas_per_sm, p.prefill_ctas_per_sm, p.prefill_ctas_per_sm_source);
  if (p.decode_visits_context)
    std::cout << fmt::format("  decode visits every page of the context ({})\n", p.decode_visits_source);
  if (p.dense_rows_packed)
    std::cout << fmt::format("  dense query rows packed across positions ({})\n",
                             p.dense_rows_source);
  if (p.decode_tile_rows > 0)
    std::cout << fmt::format("  decode packs at most {} query heads per work item; L2 sharing between a KV group's "
                             "items {} ({})\n",
                             p.decode_tile_rows, to_string(p.decode_tile_sharing), p.decode_tile_source);
  if (p.prices_cisa)
    std::cout << "  selection kernels (scoring, top-k, setup): " << r.selection_impl << "\n";
  if (r.scoring_prefill_term)
    std::cout << fmt::format("  prefill scoring: representative reads and key writes {}\n",
                             r.scoring_prefill_streams == ScoringStreams::shared
                                 ? "share the HBM (their times add)"
                                 : "overlap (the slower sets the time)");
  std::cout << "\n";
  for (const auto& u : r.used) {
    const Band b = band_of(u.figure);
    std::cout << fmt::format("  {:<34} {:>10.4g}  {:<5} band x{:.2f}-{:.2f}\n      {}\n", u.field, u.figure.value,
                             to_string(u.figure.label()), b.lo, b.hi, u.figure.source);
  }
}

}  // namespace

int cmd_profiles(int argc, char** argv) {
  return guarded("profiles", [&]() {
    std::string name, card = "h200_sxm";
    po::options_description opts("cisa-sim profiles options");
    opts.add_options()("help,h", "show this help")("show", po::value(&name), "one profile's figures, resolved on --gpu")(
        "gpu", po::value(&card), "GPU preset to resolve on (default h200_sxm)");
    po::variables_map vm;
    po::store(po::command_line_parser(argc, argv).options(opts).run(), vm);
    if (vm.count("help")) {
      std::cout << "List the implementation profiles (models/impl): how each kernel family uses a card.\n"
                   "Scenarios pick them with implementation: {dense: NAME|best, cisa: NAME|auto}.\n\n"
                << opts;
      return kExitOk;
    }
    po::notify(vm);
    Pricer pricer(shipped_cards(), shipped_impls(), Basis::calibrated);
    if (!pricer.cards().count(card)) (void)gpu_preset(card);  // InputError with the known names
    if (!name.empty()) {
      if (!pricer.impls().count(name)) (void)impl_preset(name);  // InputError with a suggestion
      try {
        show(name, card, pricer);
      } catch (const std::invalid_argument& e) {
        throw InputError({"command line", 0, "--show"}, e.what());
      }
      return kExitOk;
    }
    std::cout << fmt::format("{:<24} {:<10} {:<16} {:>9} {:>9}  {}\n", "profile", "roles", "runs on", "MMA TF/s",
                             "read TB/s", "on " + card + " (label of the MMA rate)");
    for (const auto& [n, p] : pricer.impls()) {
      const ResolvedImpl& r = pricer.resolved(card, n);
      std::cout << fmt::format("{:<24} {:<10} {:<16} {:>9.0f} {:>9.2f}  {}{}\n", n, roles(p), joined(p.archs),
                               r.mma_tflops.value, r.read_bw_tbs.value, to_string(r.mma_tflops.label()),
                               r.runs_on_card ? "" : " (does not run on this card)");
    }
    std::cout << "\nbest dense on " << card << ": " << joined(pricer.best_candidates(card))
              << " (the fastest per point); auto CISA: " << pricer.auto_cisa(card)
              << "\nEvery figure with its source: cisa-sim profiles --show NAME [--gpu GPU]\n";
    return kExitOk;
  });
}

}  // namespace cisa::cli
