// Routing report -> cisa::Table (HDF5 groups "routing", "curve", "init") and a readable summary.
#pragma once

#include <string>
#include <vector>

#include "cisa/table.hpp"
#include "route/route.hpp"

namespace cisa::route {

struct ReportTables {
  cisa::Table routing, curve, init;
};
ReportTables make_tables(const std::vector<LayerReport>& layers, const RouteConfig& cfg);
std::string summary_text(const std::vector<LayerReport>& layers, const RouteConfig& cfg);

}  // namespace cisa::route
