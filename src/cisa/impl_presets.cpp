// Implementation profiles from YAML (models/impl/*.yaml, embedded; or a user's file). A profile
// gives each figure per card; measured figures may instead come from calibration files written
// by `cisa-sim calibrate` (their `implementation:` block), listed under `calibrations:`.
#include <algorithm>
#include <cmath>
#include <exception>
#include <functional>
#include <optional>
#include <system_error>
#include <thread>

#include "cisa/embedded.hpp"
#include "cisa/presets.hpp"

namespace cisa {

namespace {

const std::string kImplDir = "models/impl/";

struct FieldSpec {
  const char* path;  // dotted, under the profile root
  PerCard ImplProfile::*member;
  PerCard* (*indexed)(ImplProfile&);  // for the page-visit array
};

PerCard* visit16(ImplProfile& p) {
  return &p.page_visit_ns[0];
}
PerCard* visit32(ImplProfile& p) {
  return &p.page_visit_ns[1];
}
PerCard* visit64(ImplProfile& p) {
  return &p.page_visit_ns[2];
}
PerCard* visit128(ImplProfile& p) {
  return &p.page_visit_ns[3];
}
PerCard* visit_decode(ImplProfile& p) {
  return &p.page_visit_decode_ns;
}

const std::vector<FieldSpec>& attention_fields() {
  static const std::vector<FieldSpec> f = {
      {"mma_tflops", &ImplProfile::mma_tflops, nullptr},
      {"read_bw_tbs", &ImplProfile::read_bw_tbs, nullptr},
      {"gather_bw_tbs", &ImplProfile::gather_bw_tbs, nullptr},
      {"floor_us", &ImplProfile::attention_floor_us, nullptr},
      {"decode_floor_us", &ImplProfile::attention_decode_floor_us, nullptr},
      {"decode_gather_bw_tbs", &ImplProfile::attention_decode_gather_bw_tbs, nullptr},
      {"decode_m32_floor_us", &ImplProfile::attention_decode_m32_floor_us, nullptr},
      {"decode_m32_gather_bw_tbs", &ImplProfile::attention_decode_m32_gather_bw_tbs, nullptr},
  };
  return f;
}
const std::vector<FieldSpec>& visit_fields() {
  static const std::vector<FieldSpec> f = {{"m16", nullptr, visit16},
                                           {"m32", nullptr, visit32},
                                           {"m64", nullptr, visit64},
                                           {"m128", nullptr, visit128},
                                           {"decode", nullptr, visit_decode}};
  return f;
}
const std::vector<FieldSpec>& selection_fields() {
  static const std::vector<FieldSpec> f = {
      {"scoring_read_bw_tbs", &ImplProfile::scoring_read_bw_tbs, nullptr},
      {"scoring_write_bw_tbs", &ImplProfile::scoring_write_bw_tbs, nullptr},
      {"scoring_floor_us", &ImplProfile::scoring_floor_us, nullptr},
      {"scoring_step_us", &ImplProfile::scoring_step_us, nullptr},
      {"topk_keys_per_ns_per_sm", &ImplProfile::topk_keys_per_ns_per_sm, nullptr},
      {"topk_l2_keys_per_ns_per_sm", &ImplProfile::topk_l2_keys_per_ns_per_sm, nullptr},
      {"topk_ids_per_ns_per_sm", &ImplProfile::topk_ids_per_ns_per_sm, nullptr},
      {"topk_ids_per_ns_per_cta", &ImplProfile::topk_ids_per_ns_per_cta, nullptr},
      {"topk_floor_us", &ImplProfile::topk_floor_us, nullptr},
      {"topk_cta_us", &ImplProfile::topk_cta_us, nullptr},
      {"topk_cluster_us", &ImplProfile::topk_cluster_us, nullptr},
      {"topk_decode_floor_us", &ImplProfile::topk_decode_floor_us, nullptr},
      {"topk_decode_cluster_us", &ImplProfile::topk_decode_cluster_us, nullptr},
      {"topk_decode_keys_per_ns_per_sm", &ImplProfile::topk_decode_keys_per_ns_per_sm, nullptr},
      {"setup_latency_us", &ImplProfile::setup_latency_us, nullptr},
      {"setup_bw_gbs", &ImplProfile::setup_bw_gbs, nullptr},
      {"other_floor_us", &ImplProfile::other_floor_us, nullptr},
      {"projection_floor_us", &ImplProfile::projection_floor_us, nullptr},
      {"projection_read_bw_tbs", &ImplProfile::projection_read_bw_tbs, nullptr},
      {"projection_mma_tflops", &ImplProfile::projection_mma_tflops, nullptr},
      {"projection_decode_floor_us", &ImplProfile::projection_decode_floor_us, nullptr},
      {"projection_decode_read_bw_tbs", &ImplProfile::projection_decode_read_bw_tbs, nullptr},
      {"rep_update_floor_us", &ImplProfile::rep_update_floor_us, nullptr},
      {"scoring_decode_floor_us", &ImplProfile::scoring_decode_floor_us, nullptr},
      {"scoring_decode_read_bw_tbs", &ImplProfile::scoring_decode_read_bw_tbs, nullptr},
      {"scoring_prefill_floor_us", &ImplProfile::scoring_prefill_floor_us, nullptr},
      {"scoring_prefill_read_bw_tbs", &ImplProfile::scoring_prefill_read_bw_tbs, nullptr},
      {"scoring_prefill_write_bw_tbs", &ImplProfile::scoring_prefill_write_bw_tbs, nullptr},
      {"scoring_prefill_query_us", &ImplProfile::scoring_prefill_query_us, nullptr},
      {"scoring_prefill_mma_tflops", &ImplProfile::scoring_prefill_mma_tflops, nullptr},
  };
  return f;
}

std::vector<std::string> names_of(const std::vector<FieldSpec>& specs,
                                  std::vector<std::string> extra) {
  for (const auto& s : specs) extra.emplace_back(s.path);
  return extra;
}

PerCard& slot(ImplProfile& p, const FieldSpec& s) {
  return s.indexed ? *s.indexed(p) : p.*(s.member);
}

// Figures of one form that a block gives together or not at all (the decode projection's floor
// and read rate were fitted as one form).
void require_pair(const YamlDoc& doc, const YAML::Node& blk, const std::string& field,
                  const char* a, const char* b) {
  if (!blk || !blk.IsMap() || bool(blk[a]) == bool(blk[b])) return;
  const char* given = blk[a] ? a : b;
  const char* missing = blk[a] ? b : a;
  throw InputError(locate(doc, blk[given], field + "." + given),
                   std::string("given without '") + missing +
                       "': the two were fitted as one form (floor + bytes / read rate); give "
                       "both or neither");
}

void require_projection_decode_pair(const YamlDoc& doc, const YAML::Node& blk,
                                    const std::string& field) {
  require_pair(doc, blk, field, "projection_decode_floor_us", "projection_decode_read_bw_tbs");
}

std::vector<std::string> card_names(const PerCard& pc) {
  std::vector<std::string> out;
  for (const auto& [card, f] : pc.cards) out.push_back(card);
  std::sort(out.begin(), out.end());
  return out;
}

Figure positive_figure(const YamlDoc& doc, const YAML::Node& map, const std::string& key,
                       const std::string& field) {
  const Figure f = read_figure(doc, map, key, field);
  if (!(f.value > 0) || !std::isfinite(f.value))
    throw InputError(locate(doc, map[key], field + "." + key), "must be a finite number > 0");
  if (f.label() == Label::GIVEN)
    throw InputError(
        locate(doc, map[key], field + "." + key),
        "needs a source that starts with its label: MEAS, PUB, XFER, EST, DS or CALC (e.g. "
        "{value: 1.0, source: \"PUB: paper, table 2\"})");
  return f;
}

// `field: {card: {value, source}, ...}` -> appends to the per-card figure.
void read_per_card(const YamlDoc& doc, const YAML::Node& n, const std::string& field,
                   PerCard& out) {
  require_map(doc, n, field);
  const auto cards = gpu_preset_names();
  for (const auto& kv : n) {
    const std::string card = kv.first.as<std::string>();
    bool known = false;
    for (const auto& c : cards) known = known || c == card;
    if (!known)
      require_keys_known(doc, n, field, cards);  // names the unknown card, with a suggestion
    for (const auto& [c, f] : out.cards)
      if (c == card)
        throw InputError(locate(doc, kv.first, field + "." + card), "card given twice");
    out.cards.emplace_back(card, positive_figure(doc, n, card, field));
  }
}

void read_block(const YAML::Node& blk, const std::string& field,
                const std::vector<FieldSpec>& specs, ImplProfile& p,
                const std::function<void(const YAML::Node&, const std::string&, PerCard&)>& read) {
  for (const auto& s : specs)
    if (const YAML::Node v = blk[s.path]) read(v, field + "." + s.path, slot(p, s));
}

int tile_rows(const YamlDoc& doc, const YAML::Node& n, const std::string& field) {
  const std::int64_t v = get_int(doc, n, field);
  if (v < 16 || v > 256 || (v & (v - 1)) != 0)
    throw InputError(locate(doc, n, field),
                     "must be a power of two in [16, 256], got " + std::to_string(v));
  return static_cast<int>(v);
}

int small_int(const YamlDoc& doc, const YAML::Node& n, const std::string& field, int lo, int hi) {
  const std::int64_t v = get_int(doc, n, field);
  if (v < lo || v > hi)
    throw InputError(locate(doc, n, field),
                     "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return static_cast<int>(v);
}

L2Sharing l2_sharing_value(const YamlDoc& doc, const YAML::Node& n, const std::string& field) {
  const std::string v = get_string(doc, n, field);
  if (v == "shared") return L2Sharing::shared;
  if (v == "none") return L2Sharing::none;
  if (v == "unknown") return L2Sharing::unknown;
  throw InputError(locate(doc, n, field), "expected shared, none or unknown, got '" + v + "'");
}

// `scoring_prefill_streams: shared|overlapped` (the form the prefill scoring figures were fitted
// with); two sources of one profile must agree.
void read_scoring_streams(const YamlDoc& doc, const YAML::Node& n, const std::string& field, ImplProfile& p) {
  const std::string v = get_string(doc, n, field);
  if (v != "shared" && v != "overlapped")
    throw InputError(locate(doc, n, field),
                     "expected shared (representative reads and key writes add) or overlapped (the "
                     "slower sets the time), got '" + v + "'");
  const ScoringStreams s = v == "shared" ? ScoringStreams::shared : ScoringStreams::overlapped;
  if (p.scoring_prefill_streams && *p.scoring_prefill_streams != s)
    throw InputError(locate(doc, n, field),
                     "disagrees with another source of this profile (" + to_string(*p.scoring_prefill_streams) + ")");
  p.scoring_prefill_streams = s;
}

// Decode work items: at most `rows` query heads each; whether a KV group's items share its
// history in L2.
void parse_decode_tiles(const YamlDoc& doc, const YAML::Node& dt, const std::string& field,
                        ImplProfile& p) {
  require_keys_known(doc, dt, field, {"rows", "l2_sharing", "source"});
  for (const char* k : {"rows", "l2_sharing", "source"})
    if (!dt[k])
      throw InputError(locate(doc, dt, field),
                       std::string("missing '") + k +
                           "': give {rows: N, l2_sharing: shared|none|unknown, source: \"...\"}");
  p.decode_tile_rows = tile_rows(doc, dt["rows"], field + ".rows");
  p.decode_tile_sharing = l2_sharing_value(doc, dt["l2_sharing"], field + ".l2_sharing");
  p.decode_tile_source = get_string(doc, dt["source"], field + ".source");
}

// How co-resident CTAs walk their selected pages, per tile class: {m16: S, m32: S, m64: S,
// m128: S, source: "..."} with S staggered, convoy or unknown; all four classes and the source.
void parse_selected_schedule(const YamlDoc& doc, const YAML::Node& n, const std::string& field,
                             ImplProfile& p) {
  const auto& classes = kTileClassNames;
  require_keys_known(doc, n, field, {classes[0], classes[1], classes[2], classes[3], "source"});
  for (int i = 0; i < 4; ++i) {
    const YAML::Node v = n[classes[i]];
    if (!v)
      throw InputError(locate(doc, n, field),
                       std::string("missing '") + classes[i] +
                           "': give {m16: S, m32: S, m64: S, m128: S, source: \"...\"} "
                           "with S staggered, convoy or unknown");
    const std::string s = get_string(doc, v, field + "." + classes[i]);
    if (s != "staggered" && s != "convoy" && s != "unknown")
      throw InputError(locate(doc, v, field + "." + classes[i]),
                       "expected staggered (CTAs at their own points), convoy (in step: a wave "
                       "reads its selections' union once) or unknown, got '" +
                           s + "'");
    p.selected_schedule[i] = s == "staggered" ? SelectedSchedule::staggered
                             : s == "convoy"  ? SelectedSchedule::convoy
                                              : SelectedSchedule::unknown;
  }
  if (!n["source"]) throw InputError(locate(doc, n, field), "missing 'source'");
  p.selected_schedule_source = get_string(doc, n["source"], field + ".source");
}

// A structural choice {value: one of `allowed`, source: "..."}; `hint` says what each value means.
struct Choice {
  std::string value, source;
};
Choice choice(const YamlDoc& doc, const YAML::Node& n, const std::string& field,
              const std::vector<std::string>& allowed, const std::string& hint) {
  require_keys_known(doc, n, field, {"value", "source"});
  Choice c{get_string(doc, n["value"], field + ".value"), ""};
  if (std::find(allowed.begin(), allowed.end(), c.value) == allowed.end())
    throw InputError(locate(doc, n["value"], field + ".value"),
                     "must be " + hint + ", got '" + c.value + "'");
  if (!n["source"])
    throw InputError(locate(doc, n, field), "missing source: say where this comes from");
  c.source = get_string(doc, n["source"], field + ".source");
  return c;
}

void parse_attention(const YamlDoc& doc, const YAML::Node& a, const std::string& field,
                     ImplProfile& p) {
  require_keys_known(
      doc, a, field,
      names_of(attention_fields(), {"tile_rows", "gqa_packing", "l2_sharing", "split_min_tokens",
                                    "split_kv", "decode_visits", "dense_rows", "decode_tiles",
                                    "page_visit_ns", "prefill_ctas_per_sm"}));
  if (const YAML::Node t = a["tile_rows"]) {
    require_keys_known(doc, t, field + ".tile_rows", {"min", "max"});
    if (!t["min"] || !t["max"])
      throw InputError(locate(doc, t, field + ".tile_rows"), "give both min and max");
    p.tile_rows_min = tile_rows(doc, t["min"], field + ".tile_rows.min");
    p.tile_rows_max = tile_rows(doc, t["max"], field + ".tile_rows.max");
    if (p.tile_rows_min > p.tile_rows_max)
      throw InputError(locate(doc, t, field + ".tile_rows"), "min must be <= max");
  }
  if (a["gqa_packing"]) p.gqa_packing = get_bool(doc, a["gqa_packing"], field + ".gqa_packing");
  if (a["split_min_tokens"])
    p.split_min_tokens =
        small_int(doc, a["split_min_tokens"], field + ".split_min_tokens", 16, 1 << 20);
  if (const YAML::Node o = a["prefill_ctas_per_sm"]) {  // co-resident prefill attention CTAs
    const std::string f = field + ".prefill_ctas_per_sm";
    require_keys_known(doc, o, f, {"value", "source"});
    if (!o["value"] || !o["source"])
      throw InputError(locate(doc, o, f), "give {value: N (1-8), source: \"...\"}");
    p.prefill_ctas_per_sm = small_int(doc, o["value"], f + ".value", 1, 8);
    p.prefill_ctas_per_sm_source = get_string(doc, o["source"], f + ".source");
  }
  if (const YAML::Node sk = a["split_kv"]) {  // which phases split the KV length to fill the SMs
    const Choice c = choice(doc, sk, field + ".split_kv", {"always", "decode", "fa2", "waves"},
                            "always (prefill and decode split the KV length when the grid is "
                            "short), decode, fa2 (FlashAttention-2's split heuristic) or waves "
                            "(always, and many works split to fill the last wave)");
    p.split_kv = c.value == "always"   ? SplitKv::always
                 : c.value == "decode" ? SplitKv::decode
                 : c.value == "fa2"    ? SplitKv::fa2
                                       : SplitKv::waves;
    p.split_kv_source = c.source;
  }
  if (const YAML::Node dv = a["decode_visits"]) {  // which pages a decode work item walks
    const Choice c = choice(doc, dv, field + ".decode_visits", {"selected", "context"},
                            "selected (the K + W selected pages) or context (every page of the "
                            "context, e.g. a block-mask row walked whole)");
    p.decode_visits_context = c.value == "context";
    p.decode_visits_source = c.source;
  }
  if (const YAML::Node dr = a["dense_rows"]) {  // how the dense path cuts query rows into tiles
    const Choice c = choice(doc, dr, field + ".dense_rows", {"positions", "packed"},
                            "positions (whole positions, all r heads of each, in a tile) or "
                            "packed (a KV group's r x P rows packed across positions)");
    p.dense_rows_packed = c.value == "packed";
    p.dense_rows_source = c.source;
  }
  if (const YAML::Node dt = a["decode_tiles"]) parse_decode_tiles(doc, dt, field + ".decode_tiles", p);
  const YAML::Node l2 = a["l2_sharing"];
  if (!l2)
    throw InputError(locate(doc, a, field + ".l2_sharing"),
                     "missing: say whether co-resident CTAs share selected pages in L2 "
                     "({value: shared|none|unknown, source: \"...\"})");
  require_keys_known(doc, l2, field + ".l2_sharing", {"value", "source", "schedule"});
  p.l2_sharing = l2_sharing_value(doc, l2["value"], field + ".l2_sharing.value");
  if (!l2["source"]) throw InputError(locate(doc, l2, field + ".l2_sharing"), "missing 'source'");
  p.l2_sharing_source = get_string(doc, l2["source"], field + ".l2_sharing.source");
  if (const YAML::Node sc = l2["schedule"])
    parse_selected_schedule(doc, sc, field + ".l2_sharing.schedule", p);
  const auto per_card = [&](const YAML::Node& n, const std::string& f, PerCard& out) {
    read_per_card(doc, n, f, out);
  };
  read_block(a, field, attention_fields(), p, per_card);
  require_pair(doc, a, field, "decode_m32_floor_us", "decode_m32_gather_bw_tbs");
  const YAML::Node pv = a["page_visit_ns"];
  if (!pv)
    throw InputError(locate(doc, a, field + ".page_visit_ns"),
                     "missing: per-tile-class page-visit SM time {m16: {card: ...}, ...}, or "
                     "{none: \"reason\"} when the kernel reads contiguous K/V");
  if (pv["none"]) {
    require_keys_known(doc, pv, field + ".page_visit_ns", {"none"});
    p.page_visits = false;
  } else {
    require_keys_known(doc, pv, field + ".page_visit_ns", names_of(visit_fields(), {}));
    p.page_visits = true;
    read_block(pv, field + ".page_visit_ns", visit_fields(), p, per_card);
  }
}

void parse_selection(const YamlDoc& doc, const YAML::Node& s, const std::string& field,
                     ImplProfile& p) {
  require_keys_known(doc, s, field,
                     names_of(selection_fields(),
                              {"score_tile_rows", "score_pages_per_tile", "score_tiles_per_cta",
                               "topk_radix_passes", "topk_cluster_above", "topk_few_rows_slice",
                               "topk_ctas_per_sm", "score_bytes", "setup_inline_bytes",
                               "scoring_prefill_streams"}));
  if (s["scoring_prefill_streams"])
    read_scoring_streams(doc, s["scoring_prefill_streams"], field + ".scoring_prefill_streams", p);
  if (s["score_tile_rows"])
    p.score_tile_rows = small_int(doc, s["score_tile_rows"], field + ".score_tile_rows", 1, 1024);
  if (s["score_pages_per_tile"])
    p.score_pages_per_tile =
        small_int(doc, s["score_pages_per_tile"], field + ".score_pages_per_tile", 1, 4096);
  if (s["score_tiles_per_cta"])
    p.score_tiles_per_cta =
        small_int(doc, s["score_tiles_per_cta"], field + ".score_tiles_per_cta", 1, 1024);
  if (s["topk_radix_passes"])
    p.topk_radix_passes =
        small_int(doc, s["topk_radix_passes"], field + ".topk_radix_passes", 1, 8);
  if (s["topk_few_rows_slice"])
    p.topk_few_rows_slice =
        small_int(doc, s["topk_few_rows_slice"], field + ".topk_few_rows_slice", 0, 1 << 30);
  if (s["topk_ctas_per_sm"])
    p.topk_ctas_per_sm = small_int(doc, s["topk_ctas_per_sm"], field + ".topk_ctas_per_sm", 1, 32);
  if (s["setup_inline_bytes"])
    p.setup_inline_bytes =
        small_int(doc, s["setup_inline_bytes"], field + ".setup_inline_bytes", 0, 1 << 20);
  if (s["topk_cluster_above"])
    p.topk_cluster_above =
        small_int(doc, s["topk_cluster_above"], field + ".topk_cluster_above", 0, 1 << 30);
  if (s["score_bytes"]) {
    const std::int64_t b = get_int(doc, s["score_bytes"], field + ".score_bytes");
    if (b != 2 && b != 4)
      throw InputError(locate(doc, s["score_bytes"], field + ".score_bytes"), "must be 2 or 4");
    p.score_bytes = static_cast<double>(b);
  }
  read_block(s, field, selection_fields(), p,
             [&](const YAML::Node& n, const std::string& f, PerCard& out) {
               read_per_card(doc, n, f, out);
             });
  require_projection_decode_pair(doc, s, field);
}

// A calibration file's `implementation: {name: <profile>, attention: {...}, selection: {...}}`
// block: single figures measured on the file's card.
void merge_calibration(const YamlDoc& referrer, const YAML::Node& ref, const std::string& field,
                       ImplProfile& p) {
  const std::string path = get_string(referrer, ref, field);
  YamlDoc cal;
  try {
    const auto text = embedded_text(path);
    cal = text ? parse_yaml(*text, "<embedded>/" + path) : load_yaml_file(path);
  } catch (const InputError& e) {
    throw InputError(locate(referrer, ref, field),
                     std::string("cannot load the calibration file: ") + e.what());
  }
  const YAML::Node root = cal.root["calibration"];
  if (!root)
    throw InputError(locate(cal, cal.root, "calibration"), "missing 'calibration:' mapping");
  if (!root["card_name"])
    throw InputError(locate(cal, root, "calibration.card_name"),
                     "missing: the GPU preset measured");
  const std::string card = get_string(cal, root["card_name"], "calibration.card_name");
  const YAML::Node im = root["implementation"];
  if (!im) return;  // a card-only calibration (built without the kernels): nothing for the profile
  const std::string f0 = "calibration.implementation";
  require_keys_known(cal, im, f0, {"name", "basis", "attention", "selection"});
  if (!im["name"] || get_string(cal, im["name"], f0 + ".name") != p.name)
    throw InputError(locate(cal, im, f0 + ".name"),
                     "must name the profile '" + p.name + "' that lists this file");
  const auto single = [&](const YAML::Node& blk, const std::string& f,
                          const std::vector<FieldSpec>& specs) {
    if (!blk) return;
    require_keys_known(cal, blk, f, names_of(specs, {"page_visit_ns", "scoring_prefill_streams"}));
    for (const auto& s : specs) {
      if (!blk[s.path]) continue;
      PerCard& pc = slot(p, s);
      for (const auto& [c, fig] : pc.cards)
        if (c == card)
          throw InputError(locate(cal, blk[s.path], f + "." + s.path),
                           "also given in the profile for " + card + ": keep one");
      pc.cards.emplace_back(card, positive_figure(cal, blk, s.path, f));
    }
  };
  single(im["attention"], f0 + ".attention", attention_fields());
  if (im["attention"] && im["attention"]["page_visit_ns"])
    single(im["attention"]["page_visit_ns"], f0 + ".attention.page_visit_ns", visit_fields());
  single(im["selection"], f0 + ".selection", selection_fields());
  require_pair(cal, im["attention"], f0 + ".attention", "decode_m32_floor_us",
               "decode_m32_gather_bw_tbs");
  const YAML::Node sel = im["selection"];
  require_projection_decode_pair(cal, sel, f0 + ".selection");
  if (sel && sel["scoring_prefill_streams"])
    read_scoring_streams(cal, sel["scoring_prefill_streams"], f0 + ".selection.scoring_prefill_streams", p);
  if (sel && sel["scoring_prefill_floor_us"] && !p.scoring_prefill_streams)
    throw InputError(locate(cal, sel, f0 + ".selection.scoring_prefill_streams"),
                     "missing: the form the scoring_prefill_* figures were fitted with (shared: reads and "
                     "writes add, as calibrate fits since session 14; overlapped: the slower sets the time)");
}

YamlDoc embedded_impl_doc(const std::string& name) {
  const auto text = embedded_text(kImplDir + name + ".yaml");
  if (!text) throw std::logic_error("embedded profile missing: " + name);
  return parse_yaml(*text, "<embedded>/" + kImplDir + name + ".yaml");
}

}  // namespace

ImplProfile parse_impl(const YamlDoc& doc, const YAML::Node& node, const std::string& prefix) {
  const auto field = [&](const std::string& k) { return prefix.empty() ? k : prefix + "." + k; };
  require_map(doc, node, prefix.empty() ? "profile" : prefix);
  require_keys_known(doc, node, prefix,
                     {"name", "display_name", "description", "roles", "archs", "superseded_by",
                      "attention", "selection", "selection_from", "calibrations"});
  ImplProfile p;
  if (!node["name"]) throw InputError(locate(doc, node, field("name")), "missing 'name'");
  p.name = get_string(doc, node["name"], field("name"));
  p.display_name =
      node["display_name"] ? get_string(doc, node["display_name"], field("display_name")) : p.name;
  p.description =
      node["description"] ? get_string(doc, node["description"], field("description")) : "";
  if (node["superseded_by"])
    p.superseded_by = get_string(doc, node["superseded_by"], field("superseded_by"));
  const YAML::Node roles = node["roles"];
  if (!roles || !roles.IsSequence() || roles.size() == 0)
    throw InputError(locate(doc, roles ? roles : node, field("roles")),
                     "expected a list: [dense], [cisa] or [dense, cisa]");
  for (std::size_t i = 0; i < roles.size(); ++i) {
    const std::string r = get_string(doc, roles[i], field("roles"));
    if (r == "dense")
      p.prices_dense = true;
    else if (r == "cisa")
      p.prices_cisa = true;
    else
      throw InputError(locate(doc, roles[i], field("roles")),
                       "expected dense or cisa, got '" + r + "'");
  }
  const YAML::Node archs = node["archs"];
  if (!archs || !archs.IsSequence() || archs.size() == 0)
    throw InputError(
        locate(doc, archs ? archs : node, field("archs")),
        "expected a list of the architectures its kernels run on: [hopper], [blackwell] or both");
  for (std::size_t i = 0; i < archs.size(); ++i) {
    const std::string a = get_string(doc, archs[i], field("archs"));
    if (a != "hopper" && a != "blackwell")
      throw InputError(locate(doc, archs[i], field("archs")),
                       "expected hopper or blackwell, got '" + a + "'");
    p.archs.push_back(a);
  }
  if (!node["attention"])
    throw InputError(locate(doc, node, field("attention")), "missing 'attention' block");
  parse_attention(doc, node["attention"], field("attention"), p);
  if (node["selection"] && node["selection_from"])
    throw InputError(locate(doc, node["selection_from"], field("selection_from")),
                     "give either 'selection' (its own kernels) or 'selection_from' (another "
                     "profile's), not both");
  if (node["selection_from"])
    p.selection_from = get_string(doc, node["selection_from"], field("selection_from"));
  if (node["selection"]) parse_selection(doc, node["selection"], field("selection"), p);
  if (p.prices_cisa && !node["selection"] && !node["selection_from"])
    throw InputError(locate(doc, node, field("selection")),
                     "a profile that prices CISA needs 'selection' (scoring, top-k, setup) or "
                     "'selection_from: <profile>'");
  if (p.prices_cisa && p.l2_sharing == L2Sharing::shared && p.selected_schedule_source.empty())
    throw InputError(
        locate(doc, node["attention"]["l2_sharing"], field("attention.l2_sharing")),
        "shared selected pages need their schedule per tile class: schedule: {m16: S, "
        "m32: S, m64: S, m128: S, source: \"...\"} with S staggered, convoy or unknown");
  if (const YAML::Node cals = node["calibrations"]) {
    if (!cals.IsSequence())
      throw InputError(locate(doc, cals, field("calibrations")), "expected a list of files");
    for (std::size_t i = 0; i < cals.size(); ++i)
      merge_calibration(doc, cals[i], field("calibrations") + "[" + std::to_string(i) + "]", p);
  }
  if (card_names(p.projection_decode_floor_us) != card_names(p.projection_decode_read_bw_tbs))
    throw InputError(locate(doc, node["selection"] ? node["selection"] : node,
                            field("selection.projection_decode_floor_us")),
                     "projection_decode_floor_us and projection_decode_read_bw_tbs are given for "
                     "different cards: give both for each card (one form, fitted together)");
  if (!p.scoring_prefill_floor_us.empty() && !p.scoring_prefill_streams)
    throw InputError(locate(doc, node["selection"] ? node["selection"] : node, field("selection.scoring_prefill_streams")),
                     "missing: the form the scoring_prefill_* figures were fitted with (shared or overlapped)");
  p.yaml = doc.text;
  return p;
}

std::vector<std::string> impl_preset_names() {
  return embedded_yaml_names(kImplDir);
}

ImplProfile impl_preset(const std::string& name) {
  for (const auto& k : impl_preset_names())
    if (k == name) {
      const YamlDoc doc = embedded_impl_doc(name);
      return parse_impl(doc, doc.root, "");
    }
  std::string msg = "unknown implementation '" + name + "'";
  const std::string hint = did_you_mean(name, impl_preset_names());
  if (!hint.empty()) msg += " (did you mean '" + hint + "'?)";
  throw InputError(msg + "; see `cisa-sim profiles`");
}

// Every shipped profile, parsed on two threads when the machine has two cores or more: the
// parse (YAML, ~50 ms) runs at every run's start with nothing else to do, one core idle. Each
// profile is parsed on its own; the catalogue and the error of a bad profile (the first in name
// order) are what a serial parse gives.
ImplCatalog shipped_impls() {
  const std::vector<std::string> names = impl_preset_names();
  const std::size_t n = names.size();
  std::vector<std::optional<ImplProfile>> parsed(n);
  std::vector<std::exception_ptr> failed(n);
  auto parse = [&](std::size_t first, std::size_t step) {
    for (std::size_t i = first; i < n; i += step) {
      try {
        const YamlDoc doc = embedded_impl_doc(names[i]);
        parsed[i] = parse_impl(doc, doc.root, "");
      } catch (...) {
        failed[i] = std::current_exception();
      }
    }
  };
  std::thread other;
  if (n > 1 && std::thread::hardware_concurrency() > 1) {
    try {
      other = std::thread(parse, 1, 2);  // the odd names
    } catch (const std::system_error&) {
      // No thread: this one parses them all.
    }
  }
  parse(0, other.joinable() ? 2 : 1);
  if (other.joinable()) other.join();
  ImplCatalog out;
  for (std::size_t i = 0; i < n; ++i) {
    if (failed[i]) std::rethrow_exception(failed[i]);
    out.emplace(names[i], std::move(*parsed[i]));
  }
  return out;
}

CardCatalog shipped_cards() {
  CardCatalog out;
  for (const auto& n : gpu_preset_names()) out.emplace(n, gpu_preset(n));
  return out;
}

}  // namespace cisa
