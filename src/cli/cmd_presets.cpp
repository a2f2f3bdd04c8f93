// cisa-sim presets: list the embedded model and GPU presets, or show one.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <boost/program_options.hpp>
#include <cmath>
#include <iostream>

#include "cisa/errors.hpp"
#include "cisa/presets.hpp"
#include "model/hardware.hpp"
#ifdef CISA_HAVE_PLAN
#include "plan/deploy.hpp"
#endif
#include "cli/cli_util.hpp"
#include "cli/commands.hpp"

namespace po = boost::program_options;

namespace cisa::cli {

namespace {

// A GPU preset as written, then its card bench as the model uses it (a transferred bench is not in
// the file: it is computed from the measured card's by the rule in each source).
void show_gpu(const Hardware& h) {
  std::cout << h.yaml;
  if (!h.has_card || h.card_transfer_from.empty()) return;
  std::cout << "# card bench as used (" << h.card.basis << "):\n";
  const std::pair<const char*, const Figure*> rows[] = {
      {"read_bw_tbs", &h.card.read_bw_tbs},       {"write_bw_tbs", &h.card.write_bw_tbs},
      {"copy_bw_tbs", &h.card.copy_bw_tbs},       {"gemm_bf16_tflops", &h.card.gemm_bf16_tflops},
      {"launch_overhead_us", &h.card.launch_overhead_us}, {"kernel_floor_us", &h.card.kernel_floor_us},
      {"h2d_bw_gbs", &h.card.h2d_bw_gbs},         {"h2d_latency_us", &h.card.h2d_latency_us}};
  for (const auto& [key, f] : rows)
    std::cout << fmt::format("#   {}: {{value: {:.4g}, source: \"{}\"}}\n", key, f->value, f->source.substr(0, 160));
}

}  // namespace

int cmd_presets(int argc, char** argv) {
  return guarded("presets", [&]() {
    std::string show, device;
    po::options_description opts("cisa-sim presets options");
    opts.add_options()("help,h", "show this help")("show", po::value(&show),
                                                   "print one preset's YAML (with sources)")(
        "for-device", po::value(&device),
        "print the GPU preset that prices this CUDA device name (as nvidia-smi prints it)");
    po::variables_map vm;
    po::store(po::command_line_parser(argc, argv).options(opts).run(), vm);
    if (vm.count("help")) {
      std::cout << "List the model and GPU presets compiled into cisa-sim (models/llm, models/gpu).\n\n" << opts;
      return kExitOk;
    }
    po::notify(vm);
    const auto models = model_preset_names();
    const auto gpus = gpu_preset_names();
    if (vm.count("for-device")) {
      // The same check --measure makes (is_card), so the device scripts never keep a list of their
      // own.
      for (const auto& g : gpus)
        if (is_card(gpu_preset(g), device)) return std::cout << g << "\n", kExitOk;
      throw InputError({"command line", 0, "--for-device"},
                       fmt::format("no GPU preset is the card '{}' (presets: {})", device,
                                   fmt::join(gpus, ", ")));
    }
    if (!show.empty()) {
      for (const auto& m : models)
        if (m == show) return std::cout << model_preset(m).yaml, kExitOk;
      for (const auto& g : gpus)
        if (g == show) return show_gpu(gpu_preset(g)), kExitOk;
      std::vector<std::string> all = models;
      all.insert(all.end(), gpus.begin(), gpus.end());
      const std::string hint = did_you_mean(show, all);
      throw InputError({"command line", 0, "--show"}, "no preset '" + show + "'" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
    }
    auto num = [](double v) { return std::isnan(v) ? std::string("n/a") : fmt::format("{:g}", v); };
    std::cout << fmt::format("{:<16} {:<27} {:>6} {:>6} {:>6} {:>4} {:>4} {:>4} {:>8} {:>8} {:>3}  {}\n", "model", "name",
                             "layers", "global", "hidden", "Hq", "Hkv", "d", "params/B", "active/B", "tp", "per rank");
    for (const auto& name : models) {
      const ModelPreset m = model_preset(name);
      const int tp = static_cast<int>(m.default_tp.value);
      const Geometry g = m.per_rank(tp);
      std::cout << fmt::format("{:<16} {:<27} {:>6} {:>6} {:>6} {:>4} {:>4} {:>4} {:>8} {:>8} {:>3}  {}q/{}kv r={}\n",
                               name, m.display_name, num(m.layers.value), num(m.global_attn_layers.value),
                               num(m.hidden.value), num(m.q_heads.value), num(m.kv_heads.value), num(m.head_dim.value),
                               num(m.total_params_b.value), num(m.active_params_b.value), tp, g.q_heads, g.kv_heads,
                               g.heads_per_group());
    }
    std::cout << "\n"
              << fmt::format("{:<10} {:<20} {:>6} {:>8} {:>8} {:>5} {:>6} {:>12} {:>12}  {}\n", "gpu", "name", "HBM/GB",
                             "BW TB/s", "BF16 TF", "SMs", "L2 MB", "read TB/s", "GEMM TF", "card bench");
    for (const auto& name : gpus) {
      const Hardware h = gpu_preset(name);
      std::cout << fmt::format("{:<10} {:<20} {:>6} {:>8} {:>8} {:>5} {:>6} {:>12} {:>12}  {}\n", name, h.display_name,
                               num(h.hbm_gb.value), num(h.hbm_bw_tbs.value), num(h.bf16_tflops.value), num(h.sms.value),
                               num(h.l2_mb.value), h.has_card ? num(h.card.read_bw_tbs.value) : "-",
                               h.has_card ? num(h.card.gemm_bf16_tflops.value) : "-",
                               !h.has_card ? "none (speed of light only)"
                               : h.card_transfer_from.empty() ? "MEAS" : "XFER from " + h.card_transfer_from);
    }
#ifdef CISA_HAVE_PLAN
    std::cout << "\n" << fmt::format("{:<16} {:<34} {:<18} {:>9} {:>5}\n", "deploy model", "name", "attention preset", "sublayers", "wts");
    for (const auto& name : plan::deploy_preset_names()) {
      const plan::DeployModel d = plan::deploy_preset(name);
      int layers = 0;
      for (const auto& g : d.layers) layers += static_cast<int>(g.count.value);
      std::cout << fmt::format("{:<16} {:<34} {:<18} {:>9} {:>5}\n", name, d.display_name, d.attn.name, layers,
                               plan::to_string(d.weight_dtype));
    }
    std::cout << "(whole-model descriptions for `cisa-sim plan`, models/deploy/)\n";
#endif
    std::cout << "\nEvery number carries its source: cisa-sim presets --show NAME; kernel efficiencies: cisa-sim profiles\n";
    return kExitOk;
  });
}

}  // namespace cisa::cli
