// Runs the probes and renders a `calibration:` YAML block (MEAS values with method and spread;
// values not measured here are carried over from `base` and say so). Throws InputError without a GPU.
#pragma once

#include <string>

#include "cisa/hardware.hpp"

namespace cisa::gpu {

std::string calibration_yaml(const Hardware& base, const std::string& base_name);

}  // namespace cisa::gpu
