// Runs the probes and renders a `calibration:` YAML block for the GPU preset `card_name`: the
// card's microbenchmarks and, with the kernels built, this project's kernel classes (MEAS values
// with method and spread; nothing carried over). Throws InputError without a GPU.
#pragma once

#include <string>

#include "model/hardware.hpp"

namespace cisa::gpu {

std::string calibration_yaml(const std::string& card_name);

}  // namespace cisa::gpu
