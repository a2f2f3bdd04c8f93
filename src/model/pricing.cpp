#include "model/pricing.hpp"

#include <atomic>
#include <stdexcept>

namespace cisa {

Pricer::Pricer(CardCatalog cards, ImplCatalog impls, Basis basis)
    : cards_(std::move(cards)), impls_(std::move(impls)), basis_(basis) {}

const ResolvedImpl& Pricer::resolved(const std::string& card, const std::string& impl) {
  const auto key = std::make_pair(card, impl);
  if (const auto it = resolved_.find(key); it != resolved_.end()) return it->second;
  const auto ic = impls_.find(impl);
  if (ic == impls_.end()) {
    std::string known;
    for (const auto& [name, p] : impls_) known += (known.empty() ? "" : ", ") + name;
    throw std::invalid_argument("unknown implementation '" + impl + "' (known: " + known +
                                "; see `cisa-sim profiles`)");
  }
  const auto hc = cards_.find(card);
  if (hc == cards_.end()) throw std::logic_error("card not in catalog: " + card);
  return resolved_.emplace(key, resolve_impl(ic->second, hc->second, cards_, impls_)).first->second;
}

std::vector<std::string> Pricer::best_candidates(const std::string& card) {
  std::vector<std::string> known, all;
  for (const auto& [name, p] : impls_) {
    if (!p.prices_dense || !p.superseded_by.empty() || !resolved(card, name).runs_on_card) continue;
    all.push_back(name);
    if (resolved(card, name).known_on_card) known.push_back(name);
  }
  return known.empty() ? all : known;
}

std::string Pricer::auto_cisa(const std::string& card) {
  // The kernels a user of this card runs CISA with: this project's where they run (Hopper),
  // else the production paged kernel of the architecture (FA4 on Blackwell, as vLLM does).
  for (const char* name : {"cisa_kernels", "fa4", "fa3", "flex"})
    if (impls_.count(name) && resolved(card, name).runs_on_card) return name;
  throw std::invalid_argument("no shipped implementation runs CISA on " + card + "; name one with implementation.cisa");
}

std::array<Pricing, 3> Pricer::pricings(const std::string& card, const std::string& impl) {
  const ResolvedImpl& im = resolved(card, impl);
  const Hardware& hw = cards_.at(card);
  std::array<Pricing, 3> out;
  for (Bound b : {Bound::lo, Bound::point, Bound::hi}) {
    Pricing& p = out[static_cast<std::size_t>(b)];
    p.impl = impl;
    p.rates = make_rates(hw, im, basis_, b);
    p.shape = kernel_shape(im, p.rates, b);
  }
  return out;
}

const PointPricing& Pricer::for_point(const Point& p) {
  const auto key = std::make_tuple(p.hardware, p.dense_impl, p.cisa_impl);
  if (const auto it = points_.find(key); it != points_.end()) return it->second;
  PointPricing pp;
  static std::atomic<std::uint64_t> next_id{1};
  pp.id = PointPricing::Id(next_id.fetch_add(1));
  const std::string cisa_name = p.cisa_impl == "auto" ? auto_cisa(p.hardware) : p.cisa_impl;
  const ResolvedImpl& cisa = resolved(p.hardware, cisa_name);
  if (!cisa.prices_cisa)
    throw std::invalid_argument("implementation '" + cisa_name +
                                "' prices dense attention only: it cannot run CISA (implementation.cisa)");
  pp.cisa = pricings(p.hardware, cisa_name);
  const std::vector<std::string> dense =
      p.dense_impl == "best" ? best_candidates(p.hardware) : std::vector<std::string>{p.dense_impl};
  if (p.dense_impl != "best" && !resolved(p.hardware, p.dense_impl).prices_dense)
    throw std::invalid_argument("implementation '" + p.dense_impl +
                                "' has no dense kernel: it cannot be the dense baseline (implementation.dense)");
  for (const auto& name : dense) pp.dense.push_back(pricings(p.hardware, name));
  pp.has_own = cisa.prices_dense;
  if (pp.has_own) pp.own = pricings(p.hardware, cisa_name);
  return points_.emplace(key, std::move(pp)).first->second;
}

}  // namespace cisa
