// Turns the implementation names of a point into pricings on its card: resolves each profile for
// the card (transfer rules, labels), builds its rates and kernel structure at the lo / point / hi
// ends of the uncertainty band, and picks the dense candidates. Pure: catalogs in, numbers out.
#pragma once

#include <array>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "model/hardware.hpp"
#include "model/implementation.hpp"
#include "model/point.hpp"

namespace cisa {

class Pricer {
 public:
  Pricer(CardCatalog cards, ImplCatalog impls, Basis basis);

  // Pricings for the point's card and implementations (cached). Throws std::invalid_argument
  // naming the implementation when it is unknown, cannot price its side, or lacks a figure.
  const PointPricing& for_point(const Point& p);
  const ResolvedImpl& resolved(const std::string& card, const std::string& impl);
  // The dense baseline candidates of "best" on a card: dense profiles with a MEAS or PUB
  // attention figure for this very card; when none has one, every dense profile (XFER).
  std::vector<std::string> best_candidates(const std::string& card);
  // "auto" CISA implementation of a card: cisa_kernels on Hopper, fa4 on Blackwell.
  std::string auto_cisa(const std::string& card);

  const CardCatalog& cards() const { return cards_; }
  const ImplCatalog& impls() const { return impls_; }
  Basis basis() const { return basis_; }

 private:
  std::array<Pricing, 3> pricings(const std::string& card, const std::string& impl);
  CardCatalog cards_;
  ImplCatalog impls_;
  Basis basis_;
  std::map<std::pair<std::string, std::string>, ResolvedImpl> resolved_;
  std::map<std::tuple<std::string, std::string, std::string>, PointPricing> points_;
};

}  // namespace cisa
